/**
 * The daemon survives running out of file descriptors: with a low `ulimit -n`, connections are
 * opened until its accept fails; once they are closed it serves again (before, the failed
 * accept ended the HTTP server's loop as an unhandled rejection and the daemon exited 1).
 */
import assert from "node:assert/strict";
import { spawnDaemon } from "../_helpers/daemon.ts";
import { poll } from "../_helpers/poll.ts";
import { NO_RELAY, startRelay } from "../_helpers/relay.ts";
import { makeTempDir } from "../_helpers/temp.ts";

Deno.test({
  name: "daemon keeps serving after accept fails for want of file descriptors",
  ignore: NO_RELAY,
  async fn() {
    await using relay = await startRelay();
    await using tmp = await makeTempDir("fd-exhaustion");
    await using daemon = spawnDaemon({ relay, dataDir: `${tmp.path}/data`, fileLimit: 200 });
    await daemon.waitHealthy();
    const sockets: Deno.TcpConn[] = [];
    try {
      for (let i = 0; i < 400 && !/accept failed/.test(daemon.output()); i++) {
        sockets.push(await Deno.connect({ hostname: "127.0.0.1", port: daemon.port }));
        if (i % 20 === 19) await new Promise((r) => setTimeout(r, 50)); // let it accept
      }
      const failed = await poll(
        () => Promise.resolve(daemon.output()),
        (out) => /accept failed; retrying with back-off/.test(out),
        10_000,
      );
      assert.match(
        failed,
        /WARN .*accept failed; retrying with back-off .*(open files|os error 24)/,
      );
    } finally {
      for (const s of sockets) s.close();
    }
    const health = await poll(
      () => fetch(`${daemon.url}/health`).then((r) => (r.body?.cancel(), r.status), () => 0),
      (status) => status === 200,
      30_000,
    );
    assert.equal(health, 200, daemon.output());
    const recovered = await poll(
      () => Promise.resolve(daemon.output()),
      (out) => /accept works again/.test(out),
      10_000,
    );
    assert.match(recovered, /INFO .*accept works again failed_accepts=\d+/);
    // One line when it started failing, one when it recovered: not one per failed accept.
    assert.equal(daemon.output().match(/accept failed/g)?.length, 1);
    assert.equal(await daemon.stop(), 0, daemon.output());
  },
});
