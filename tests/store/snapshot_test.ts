/**
 * The online snapshot: a self-contained copy holding every commit made before it and nothing of a
 * transaction still open, with the journal position and schema version of the copy.
 */
import assert from "node:assert/strict";
import { ConfigKey, snapshotDatabase, Store } from "../../src/store/mod.ts";
import { withTempDir } from "../_helpers/temp.ts";

Deno.test("a snapshot holds what was committed, not an open transaction, in one file", async () => {
  await withTempDir(async (dir) => {
    const store = Store.open(`${dir}/live.db`);
    store.config.set(ConfigKey.ADDR, "a@b.test");
    store.events.save([{ id: 41, data: "{}" }], 10, 41);
    // A write transaction held open across the whole snapshot: none of it is copied.
    store.db.exec("BEGIN IMMEDIATE");
    store.config.set(ConfigKey.DISPLAY_NAME, "not yet committed");
    const facts = await snapshotDatabase(`${dir}/live.db`, `${dir}/copy.db`);
    store.db.exec("COMMIT");
    store.close();
    assert.equal(facts.journalPosition, 41);
    assert.ok(facts.schemaVersion > 0);
    assert.throws(() => Deno.statSync(`${dir}/copy.db-wal`), Deno.errors.NotFound);
    const copy = Store.openReadOnly(`${dir}/copy.db`);
    try {
      assert.equal(copy.config.get(ConfigKey.ADDR), "a@b.test");
      assert.notEqual(copy.config.get(ConfigKey.DISPLAY_NAME), "not yet committed");
    } finally {
      copy.close();
    }
  }, "snapshot");
});
