/**
 * `export_backup` through dispatch: Delta Chat's params, the file's path as the result, the admin
 * scope, and a clear -1 for a second export while one runs.
 */
import assert from "node:assert/strict";
import { dispatch } from "../../../src/rpc/dispatch.ts";
import { buildMethodTable } from "../../../src/rpc/methods/mod.ts";
import type { Services } from "../../../src/services.ts";
import { makeTempDir } from "../../_helpers/temp.ts";
import { makeSourceDir } from "../../backup/_backup_fixture.ts";
import { fakeServices } from "../_fake_services.ts";

const methods = buildMethodTable();

async function call(services: Services, params: unknown[], scopes?: ReadonlySet<never>) {
  const reply = await dispatch(
    JSON.stringify({ jsonrpc: "2.0", method: "export_backup", params, id: 1 }),
    services,
    methods,
    scopes,
  );
  assert.ok(reply.status === 200 && !Array.isArray(reply.body));
  return reply.body as { result?: unknown; error?: { code: number; message: string } };
}

Deno.test("export_backup [1, dir, passphrase] answers the file's path; one at a time", async () => {
  await using tmp = await makeTempDir("rpc-backup");
  const src = makeSourceDir(tmp.path);
  const base = fakeServices({ dataDir: src.dataDir });
  const services: Services = { ...base, store: src.store };
  try {
    const [first, second] = await Promise.all([
      call(services, [1, src.filesDir, "pw"]),
      call(services, [1, src.filesDir, "pw"]),
    ]);
    assert.match(String(first.result), /\/files\/edge-backup-[0-9-]+\.bak$/);
    assert.ok(Deno.statSync(String(first.result)).isFile);
    assert.equal(second.error?.code, -1);
    assert.match(second.error!.message, /a backup export is already running/);

    const bad = await call(services, [1, 7, "pw"]);
    assert.equal(bad.error?.code, -32602);
    const outside = await call(services, [1, tmp.path, "pw"]);
    assert.equal(outside.error?.code, -1);
    assert.match(outside.error!.message, /is not inside the files directory/);
    const readOnly = await call(services, [1, src.filesDir, "pw"], new Set(["read"]) as never);
    assert.equal(readOnly.error?.code, -32003);
    assert.match(readOnly.error!.message, /needs the "admin" scope/);
  } finally {
    base.store.close();
    src.store.close();
  }
});
