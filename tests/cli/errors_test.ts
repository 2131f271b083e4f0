/**
 * Exit codes and failure output of the CLI as a subprocess: 1 RPC/application error, 2 usage,
 * 3 unreachable (refused, timeout), 4 license required; `--json` errors; help and version.
 */
import assert from "node:assert/strict";
import { GATEWAY_VERSION, RpcCode } from "../../src/constants.ts";
import { type FakeDaemon, startFakeDaemon } from "./fixtures/fake_daemon.ts";
import { closedPortUrl, runCli } from "./fixtures/run_cli.ts";

const LICENSE_MESSAGE = 'License required: "secure_send_file" needs an active license, but the ' +
  "license status is no_license. Activate one with: edge-gateway license activate <url>";

async function withDaemon(test: (d: FakeDaemon) => Promise<void>): Promise<void> {
  const daemon = await startFakeDaemon({
    rpc: {
      secure_send_file: {
        error: { code: RpcCode.LICENSE_REQUIRED, message: LICENSE_MESSAGE },
      },
      send_msg: { error: { code: -1, message: "Chat 99 not found" } },
      get_info: { http: 500, body: "internal failure" },
      get_connectivity: { http: 200, body: "not json" },
      get_config: { hang: true },
      markseen_msgs: { error: { code: -1, message: "markseen_msgs: message 5 not found" } },
    },
    health: { status: 503, body: JSON.stringify({ status: "provisioning" }) },
  });
  try {
    await test(daemon);
  } finally {
    await daemon.close();
  }
}

Deno.test("a JSON-RPC error exits 1 with the method and message on stderr", async () => {
  await withDaemon(async (d) => {
    const run = await runCli(["--url", d.url, "send", "99", "hi"]);
    assert.equal(run.code, 1);
    assert.equal(run.stdout, "");
    assert.equal(run.stderr, "edge-gateway: send_msg failed: Chat 99 not found (code -1)\n");
    const prefixed = await runCli(["--url", d.url, "read", "5"]);
    assert.equal(
      prefixed.stderr,
      "edge-gateway: markseen_msgs failed: message 5 not found (code -1)\n",
      "the method is named once, not twice",
    );
    const unknown = await runCli(["--url", d.url, "rpc", "no_such_method"]);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /Method not found: no_such_method \(code -32601\)/);
  });
});

Deno.test("--json prints the JSON-RPC error object on stderr", async () => {
  await withDaemon(async (d) => {
    const run = await runCli(["--url", d.url, "--json", "send", "99", "hi"]);
    assert.equal(run.code, 1);
    assert.equal(run.stdout, "");
    assert.deepEqual(JSON.parse(run.stderr), { code: -1, message: "Chat 99 not found" });
  });
});

Deno.test("license required (-32001) exits 4 and shows the server's hint", async () => {
  await withDaemon(async (d) => {
    const params = '[1, 10, 12, "/srv/a.pdf", true, false, 0]';
    const run = await runCli(["--url", d.url, "rpc", "secure_send_file", params]);
    assert.equal(run.code, 4);
    assert.match(run.stderr, /license activate <url>/);
    assert.match(run.stderr, /\(code -32001\)/);
    const json = await runCli(["--url", d.url, "rpc", "secure_send_file", params, "--json"]);
    assert.equal(json.code, 4);
    assert.deepEqual(JSON.parse(json.stderr), { code: -32001, message: LICENSE_MESSAGE });
  });
});

Deno.test("an unexpected HTTP status or a non-JSON body exits 1", async () => {
  await withDaemon(async (d) => {
    const status = await runCli(["--url", d.url, "info"]);
    assert.equal(status.code, 1);
    assert.match(
      status.stderr,
      /get_info: the gateway answered HTTP 500 on \/rpc: internal failure/,
    );
    const body = await runCli(["--url", d.url, "connectivity"]);
    assert.equal(body.code, 1);
    assert.match(body.stderr, /invalid JSON: not json/);
  });
});

Deno.test("a refused connection exits 3 with 'cannot reach the gateway at URL'", async () => {
  const url = closedPortUrl();
  const run = await runCli(["info", "--url", url]);
  assert.equal(run.code, 3);
  assert.equal(
    run.stderr,
    `edge-gateway: cannot reach the gateway at ${url}/rpc: connection refused\n`,
  );
});

Deno.test("a request timeout exits 3", async () => {
  await withDaemon(async (d) => {
    // get_config hangs in the fake daemon: only the CLI's own timeout can end this run.
    const run = await runCli(["--url", d.url, "--timeout", "300", "config", "get", "addr"]);
    assert.equal(run.code, 3);
    assert.match(run.stderr, /cannot reach the gateway at .*\/rpc: no answer within 300 ms/);
  });
});

Deno.test("health exits 1 when unhealthy or unreachable (Docker HEALTHCHECK contract)", async () => {
  await withDaemon(async (d) => {
    const run = await runCli(["health", "--url", d.url]);
    assert.equal(run.code, 1);
    assert.match(run.stderr, /unhealthy: GET \/health answered HTTP 503/);
  });
  const down = await runCli(["health", "--url", closedPortUrl()]);
  assert.equal(down.code, 1);
  assert.match(down.stderr, /unhealthy: cannot reach the gateway at .*: connection refused/);
});

Deno.test("usage errors exit 2 and say exactly what is wrong", async () => {
  const url = closedPortUrl(); // usage errors never reach the network
  const cases: [string[], RegExp][] = [
    [["helth"], /unknown command 'helth' \(did you mean 'health'\?\)/],
    [["info", "--verbose"], /unknown option '--verbose' for 'info'/],
    [["send", "10"], /'send' is missing <text>/],
    [["send", "abc", "hi"], /chat must be a positive integer id, got 'abc'/],
    [["read", "1", "x"], /message must be a positive integer id, got 'x'/],
    [["info", "extra"], /'info' takes no arguments, got 1/],
    [["rpc", "get_info", "[1"], /json-params is not valid JSON/],
    [["rpc", "get_info", '{"a":1}'], /json-params must be a JSON array .* got an object/],
    [["config", "set", "addr", "x"], /config set does not exist: only 'config get <key>' does/],
    [["config", "put", "addr"], /unknown config action 'put'/],
    [["license", "renew"], /unknown license action 'renew'/],
    [["license", "activate"], /license activate needs a <url>/],
    [["events", "--since", "abc"], /--since needs an event id/],
    [["info", "--timeout", "soon"], /--timeout needs a whole number of milliseconds/],
    [["info", "--url"], /option --url needs a value/],
    [["info", "--json=yes"], /option --json takes no value/],
    [["serve"], /'serve' runs the daemon and must be the first argument/],
    [[], /missing command/],
  ];
  for (const [args, pattern] of cases) {
    const run = await runCli([...args, ...(args.includes("--url") ? [] : ["--url", url])]);
    assert.equal(run.code, 2, `exit code of ${JSON.stringify(args)}: ${run.stderr}`);
    assert.match(run.stderr, pattern, `stderr of ${JSON.stringify(args)}`);
    assert.equal(run.stdout, "");
  }
  const badUrl = await runCli(["info", "--url", "ftp://x"]);
  assert.equal(badUrl.code, 2);
  assert.match(badUrl.stderr, /--url must be an http:\/\/ or https:\/\/ URL/);
  const badEnv = await runCli(["info"], { EDGE_URL: "not a url" });
  assert.equal(badEnv.code, 2);
  assert.match(badEnv.stderr, /EDGE_URL is not a valid URL/);
});

Deno.test("--help lists every command with its HTTP equivalent; <command> --help too", async () => {
  const run = await runCli(["--help"]);
  assert.equal(run.code, 0);
  for (const text of ["health", "GET /health", "send-file <chat> <path>", "GET /events"]) {
    assert.ok(run.stdout.includes(text), `global help mentions ${text}`);
  }
  assert.match(run.stdout, /Exit codes: 0 ok, 1 .* 2 usage .* 3 .* 4 license required/);
  const send = await runCli(["send", "-h"]);
  assert.equal(send.code, 0);
  assert.match(send.stdout, /^usage: edge-gateway send <chat> <text>$/m);
  assert.match(send.stdout, /HTTP equivalent: POST \/rpc send_msg/);
  const license = await runCli(["help", "license"]);
  assert.equal(license.code, 0);
  assert.match(license.stdout, /license activate <url>\n.*\n\s+→ POST \/rpc license_activate/);
  const events = await runCli(["events", "--help"]);
  assert.match(events.stdout, /--type T/);
});

Deno.test("--version prints the gateway version", async () => {
  const run = await runCli(["--version"]);
  assert.equal(run.code, 0);
  assert.equal(run.stdout, `edge-gateway ${GATEWAY_VERSION}\n`);
});
