/**
 * The CLI and API tokens (docs/access.md; issue 18 §2): it sends EDGE_TOKEN (or PRIVITTY_TOKEN,
 * or `--token`) as `Authorization: Bearer` to /rpc, says which variable to set when the gateway
 * answers 401, and shows a scope refusal as the gateway words it. Run as a subprocess against the
 * real HTTP app with tokens on.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { ApiTokens } from "../../src/http/access.ts";
import { testApp } from "../http/_app.ts";
import { runCli } from "./fixtures/run_cli.ts";

const READER = "cli-reader-token-0123456789";
const SENDER = "cli-sender-token-0123456789";
const hex = (token: string) => createHash("sha256").update(token).digest("hex");

Deno.test("the CLI sends EDGE_TOKEN / PRIVITTY_TOKEN / --token; 401 and scope refusals are clear", async () => {
  const t = testApp({
    tokens: ApiTokens.parse(
      `reader read sha256:${hex(READER)}\nsender read,send sha256:${hex(SENDER)}\n`,
      "tokens",
    ),
  });
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    t.app.serverFetch,
  );
  const url = `http://127.0.0.1:${server.addr.port}`;
  try {
    const none = await runCli(["--url", url, "connectivity"]);
    assert.equal(none.code, 1, none.stderr);
    assert.match(none.stderr, /requires an API token: set EDGE_TOKEN or pass --token/);
    const wrong = await runCli(["--url", url, "connectivity"], {
      EDGE_TOKEN: "not-the-token-xxxx",
    });
    assert.equal(wrong.code, 1);
    assert.match(wrong.stderr, /refused the API token/);
    assert.doesNotMatch(wrong.stderr, /not-the-token/, "the token is never printed");
    for (
      const [args, env] of [
        [["connectivity"], { EDGE_TOKEN: READER }],
        [["connectivity"], { PRIVITTY_TOKEN: READER }],
        [["--token", READER, "connectivity"], {}],
      ] as const
    ) {
      const ok = await runCli(["--url", url, ...args], env);
      assert.equal(ok.code, 0, `${args.join(" ")} ${JSON.stringify(env)}: ${ok.stderr}`);
    }
    const refused = await runCli(["--url", url, "send", "10", "hi"], { EDGE_TOKEN: READER });
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /send_msg needs the "send" scope; this API token has read/);
    assert.match(refused.stderr, /code -32003/);
    const sender = await runCli(["--url", url, "send", "10", "hi"], { EDGE_TOKEN: SENDER });
    assert.doesNotMatch(sender.stderr, /scope|API token/, "a send token passes the scope check");
  } finally {
    await server.shutdown();
    t.close();
  }
});
