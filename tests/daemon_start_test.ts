/** Tests of the daemon's start: the listen address is checked before anything is provisioned. */
import assert from "node:assert/strict";
import { checkListenAddress } from "../src/daemon_start.ts";
import { describeError, StartupError } from "../src/errors.ts";

Deno.test("checkListenAddress() refuses a port in use with one clear message", () => {
  using taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = taken.addr.port;
  assert.throws(() => checkListenAddress({ host: "127.0.0.1", port }), (err: Error) => {
    assert.ok(err instanceof StartupError);
    const text = describeError(err);
    assert.match(
      text,
      new RegExp(
        `^cannot listen on 127\\.0\\.0\\.1:${port}: Address already in use \\(os error \\d+\\); ` +
          "another program is listening there: stop it or choose another --port$",
      ),
    );
    assert.equal(text.split("Address already in use").length, 2, "the OS error once");
    return true;
  });
});

Deno.test("checkListenAddress() leaves a free port free for the server", () => {
  const probe = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = probe.addr.port;
  probe.close();
  checkListenAddress({ host: "127.0.0.1", port });
  using again = Deno.listen({ hostname: "127.0.0.1", port });
  assert.equal(again.addr.port, port);
});

Deno.test("describeError() keeps the cause chain but not a cause the message already quotes", () => {
  const os = new Error("Address already in use (os error 98)");
  const err = new StartupError(`cannot listen on h:1: ${os.message}`, undefined, { cause: os });
  assert.equal(describeError(err), "cannot listen on h:1: Address already in use (os error 98)");
  const chained = new Error("outer", { cause: new Error("inner", { cause: "root" }) });
  assert.equal(describeError(chained), "outer: inner: root");
});
