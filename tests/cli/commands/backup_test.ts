/**
 * `backup export` against a fake daemon: the path the call answers; when the answer is lost (the
 * server closes a request after 30 s while the export goes on) the outcome from `/events`; a
 * refusal as it is; and no passphrase on the command line.
 */
import assert from "node:assert/strict";
import { type CliIo, runCli } from "../../../src/cli/mod.ts";
import type { GatewayEvent } from "../../../src/events/types.ts";
import { type RpcRoute, startFakeDaemon } from "../fixtures/fake_daemon.ts";

const FILE = "/data/files/edge-backup-2026-11-28-190000.bak";

async function exportWith(
  route: RpcRoute,
  events: GatewayEvent[],
  env = { EDGE_BACKUP_PASSPHRASE: "pw" },
) {
  const daemon = await startFakeDaemon({
    rpc: { export_backup: route },
    events: { list: events.map((event, i) => ({ id: i + 1, event })), perConnection: 100 },
  });
  let stdout = "";
  let stderr = "";
  const io: CliIo = {
    stdout: (t) => Promise.resolve(void (stdout += t)),
    stderr: (t) => Promise.resolve(void (stderr += t)),
    env: (name) => (env as Record<string, string>)[name],
  };
  try {
    const code = await runCli(["--url", daemon.url, "backup", "export", "/data/files"], io);
    return { code, stdout, stderr, calls: daemon.calls };
  } finally {
    await daemon.close();
  }
}

const DONE: GatewayEvent[] = [
  { kind: "ImexProgress", progress: 10 },
  { kind: "ImexFileWritten", path: FILE },
  { kind: "ImexProgress", progress: 1000 },
];

Deno.test("backup export prints the path export_backup answers, passphrase from the env", async () => {
  const run = await exportWith({ result: FILE }, []);
  assert.equal(run.code, 0, run.stderr);
  assert.equal(run.stdout, `${FILE}\n`);
  assert.deepEqual(run.calls, [{ method: "export_backup", params: [1, "/data/files", "pw"] }]);
});

Deno.test("a lost answer is taken from ImexFileWritten and ImexProgress 1000 (or 0)", async () => {
  const lost = await exportWith({ http: 502, body: "" }, DONE);
  assert.equal(lost.code, 0, lost.stderr);
  assert.equal(lost.stdout, `${FILE}\n`);
  assert.match(lost.stderr, /the answer was lost \(the export goes on in the gateway\)/);
  const failed = await exportWith({ http: 502, body: "" }, [{ kind: "ImexProgress", progress: 0 }]);
  assert.equal(failed.code, 1);
  assert.match(failed.stderr, /export_backup failed \(ImexProgress 0\)/);
});

Deno.test("a refusal is reported as it is; no passphrase is a usage error", async () => {
  const busy = await exportWith(
    { error: { code: -1, message: "export_backup: a backup export is already running" } },
    DONE, // another export's events are not taken for this one
  );
  assert.equal(busy.code, 1);
  assert.match(busy.stderr, /a backup export is already running \(code -1\)/);
  assert.equal(busy.stdout, "");
  const none = await exportWith({ result: FILE }, [], {} as { EDGE_BACKUP_PASSPHRASE: string });
  assert.equal(none.code, 2);
  assert.match(none.stderr, /set the backup's passphrase in EDGE_BACKUP_PASSPHRASE/);
  assert.deepEqual(none.calls, []);
});
