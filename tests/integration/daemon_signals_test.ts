/**
 * The daemon started as a user or systemd starts it (`deno task start`, in a process group of its
 * own) finishes its shutdown and exits 0 when the whole group is signalled twice in a row, as
 * systemd's default stop and Ctrl-C in a terminal do (the task runner forwards each signal too).
 */
import assert from "node:assert/strict";
import { spawnDaemon } from "../_helpers/daemon.ts";
import { NO_RELAY, startRelay } from "../_helpers/relay.ts";
import { makeTempDir } from "../_helpers/temp.ts";

/** Signals the process group `pgid` twice in a row from one shell, as systemd and Ctrl-C do. */
async function signalGroupTwice(pgid: number, signal: Deno.Signal): Promise<void> {
  const name = signal.replace(/^SIG/, "");
  const out = await new Deno.Command("bash", {
    args: ["-c", `kill -s ${name} -- -${pgid} && kill -s ${name} -- -${pgid}`],
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
      await signalGroupTwice(daemon.pid, signal);
      const code = await daemon.exited;
      const log = daemon.output();
      assert.equal(code, 0, `${signal}: exit ${code}\n${log}`);
      assert.match(log, new RegExp(`received ${signal}; shutting down`));
      // The second signal is logged when it lands during the shutdown; a shutdown that finished
      // first is just as good (tests/shutdown_test.ts covers a signal during it deterministically).
      assert.match(log, /\[daemon\] stopped/);
      assert.doesNotMatch(log, / ERROR /);
    }
  },
});
