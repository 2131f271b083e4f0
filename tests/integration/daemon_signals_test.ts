/**
 * The daemon started as a user or systemd starts it (`deno task start`, in a process group of its
 * own) finishes its shutdown and exits 0 when the whole group is signalled twice in a row, as
 * systemd's default stop and Ctrl-C in a terminal do (the task runner forwards each signal too).
 */
import assert from "node:assert/strict";
import { spawnDaemon } from "../_helpers/daemon.ts";
import { NO_RELAY, startRelay } from "../_helpers/relay.ts";
import { makeTempDir } from "../_helpers/temp.ts";

async function signalGroup(pgid: number, signal: Deno.Signal): Promise<void> {
  const out = await new Deno.Command("kill", {
    args: ["-s", signal.replace(/^SIG/, ""), "--", `-${pgid}`],
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
}

Deno.test({
  name:
    "deno task start: two SIGTERMs or two SIGINTs to the process group end in a full shutdown, exit 0",
  ignore: NO_RELAY,
  async fn() {
    await using relay = await startRelay();
    await using tmp = await makeTempDir("signals");
    for (const signal of ["SIGTERM", "SIGINT"] as const) {
      await using daemon = spawnDaemon({
        relay,
        dataDir: `${tmp.path}/${signal}`,
        viaTask: true,
        ownProcessGroup: true,
        env: { EDGE_LOG_LEVEL: "info" },
      });
      await daemon.waitHealthy();
      await signalGroup(daemon.pid, signal);
      await signalGroup(daemon.pid, signal);
      const code = await daemon.exited;
      const log = daemon.output();
      assert.equal(code, 0, `${signal}: exit ${code}\n${log}`);
      assert.match(log, new RegExp(`received ${signal}; shutting down`));
      assert.match(log, new RegExp(`received ${signal} again`));
      assert.match(log, /\[daemon\] stopped/);
      assert.doesNotMatch(log, / ERROR /);
    }
  },
});
