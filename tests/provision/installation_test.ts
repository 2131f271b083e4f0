/**
 * The installation identity at start (docs/identity.md): created once in the account database,
 * the same on every start of the same data; a new fingerprint (MAC) changes nothing and logs
 * nothing; another machine id is recorded as a move with one warning.
 */
import assert from "node:assert/strict";
import { setLogSink } from "../../src/log.ts";
import { openInstallation } from "../../src/provision/installation.ts";
import { ConfigKey, Store } from "../../src/store/mod.ts";

Deno.test("openInstallation(): one identity per database; a new MAC is silent, a new machine id a move", async () => {
  const lines: string[] = [];
  const prev = setLogSink((l) => lines.push(l));
  const s = Store.open(":memory:");
  try {
    const id = s.config.get(ConfigKey.INSTALLATION_ID)!;
    assert.match(id, /^[0-9a-f]{32}$/);
    assert.match(s.config.get(ConfigKey.INSTALLATION_SECRET)!, /^[0-9a-f]{64}$/);
    const first = await openInstallation(s, { fingerprint: "f1", machineId: "m1" }, "/b", 1);
    assert.equal(first.installationId, id);
    assert.equal(first.moved, undefined);
    const newMac = await openInstallation(s, { fingerprint: "f2", machineId: "m1" }, "/b", 2);
    assert.deepEqual(newMac.keys, first.keys);
    assert.equal(newMac.moved, undefined);
    assert.deepEqual(lines, [], "nothing to say for a new MAC");
    const moved = await openInstallation(s, { fingerprint: "f3", machineId: "m2" }, "/b", 3);
    assert.deepEqual(moved.moved, { from: "m1", to: "m2", at: 3 });
    assert.notDeepEqual(moved.keys.recipient, first.keys.recipient);
    assert.deepEqual(moved.keys.owner, first.keys.owner);
    assert.equal(lines.length, 1);
    assert.match(lines[0], /WARN .*this installation moved to another machine/);
    const later = await openInstallation(s, { fingerprint: "f3", machineId: "m2" }, "/b", 4);
    assert.deepEqual(later.moved, moved.moved, "kept until a license activation settles it");
    assert.equal(s.config.get(ConfigKey.INSTALLATION_ID), id, "never replaced");
  } finally {
    s.close();
    setLogSink(prev);
  }
});
