/** Tests of config.ts: every input validated, named in its error, with the accepted form. */
import assert from "node:assert/strict";
import { parseConfig, parseRelayTarget } from "../src/config.ts";
import { ConfigError } from "../src/errors.ts";

const env = (vars: Record<string, string>) => (name: string) => vars[name];

Deno.test("parseConfig() applies the SPEC defaults", () => {
  const c = parseConfig([], env({}));
  assert.equal(c.port, 7200);
  assert.equal(c.host, "0.0.0.0");
  assert.equal(c.dataDir, "/var/lib/privitty");
  assert.equal(c.filesDir, "/var/lib/privitty/files");
  assert.equal(c.cors, false);
  assert.equal(c.ssePingMs, 15_000);
  assert.equal(c.relay.registerUrl, "https://nine.testrun.org/new");
  assert.equal(c.profile, undefined);
  assert.equal(c.allowPlaintextMail, false);
});

Deno.test("parseConfig() reads flags and environment; flags win", () => {
  const c = parseConfig(
    ["--port", "8080", "--host=127.0.0.1", "--data-dir", "/d", "--cors"],
    env({ EDGE_DATA_DIR: "/ignored", EDGE_PROFILE: " Gateway ", EDGE_FILES_DIR: "/f" }),
  );
  assert.deepEqual([c.port, c.host, c.dataDir, c.filesDir, c.cors, c.profile], [
    8080,
    "127.0.0.1",
    "/d",
    "/f",
    true,
    "Gateway",
  ]);
});

Deno.test("parseConfig() names the bad input and the accepted form", () => {
  const bad: [string[], Record<string, string>, RegExp][] = [
    [["--port", "99999"], {}, /--port "99999" is not valid; expected a TCP port 1-65535/],
    [
      ["--data-dir", "rel/dir"],
      {},
      /--data-dir "rel\/dir" is not valid; expected an absolute directory path/,
    ],
    [[], { EDGE_DATA_DIR: "x" }, /EDGE_DATA_DIR "x" is not valid/],
    [
      [],
      { EDGE_LOG_LEVEL: "loud" },
      /EDGE_LOG_LEVEL "loud" is not valid; expected debug\|info\|warn\|error/,
    ],
    [[], { EDGE_SSE_PING_MS: "0" }, /EDGE_SSE_PING_MS "0" is not valid/],
    [
      [],
      { EDGE_LICENSE_URL: "ftp://x" },
      /EDGE_LICENSE_URL "ftp:\/\/x" is not valid; expected an http\(s\) URL/,
    ],
    [[], { EDGE_ALLOW_PLAINTEXT_MAIL: "maybe" }, /EDGE_ALLOW_PLAINTEXT_MAIL "maybe" is not valid/],
    [["--bogus"], {}, /unknown option --bogus/],
    [["--port"], {}, /--port needs a value/],
    [["serve"], {}, /unexpected argument "serve"/],
  ];
  for (const [args, vars, re] of bad) {
    assert.throws(
      () => parseConfig(args, env(vars)),
      (e: Error) => e instanceof ConfigError && re.test(e.message),
      `${args} ${JSON.stringify(vars)}`,
    );
  }
});

Deno.test("parseRelayTarget() accepts a host name, an https URL and a loopback http URL", () => {
  assert.deepEqual(
    { ...parseRelayTarget("Relay.Example.org") },
    {
      input: "Relay.Example.org",
      host: "relay.example.org",
      registerUrl: "https://relay.example.org/new",
      origin: "https://relay.example.org",
    },
  );
  assert.equal(
    parseRelayTarget("https://relay.example.org/new").registerUrl,
    "https://relay.example.org/new",
  );
  assert.equal(
    parseRelayTarget("https://relay.example.org").registerUrl,
    "https://relay.example.org/new",
  );
  const local = parseRelayTarget("http://127.0.0.1:8080");
  assert.deepEqual([local.registerUrl, local.origin], [
    "http://127.0.0.1:8080/new",
    "http://127.0.0.1:8080",
  ]);
});

Deno.test("parseRelayTarget() refuses plain http to a non-loopback host and junk", () => {
  assert.throws(
    () => parseRelayTarget("http://relay.example.org"),
    /plain http for a non-loopback host/,
  );
  assert.throws(
    () => parseRelayTarget("not a host"),
    /EDGE_SERVER "not a host" is not valid; expected a host name/,
  );
});

Deno.test("parseConfig() lists EDGE_LICENSE_TRUSTED_KEYS files (comma-separated, trimmed)", () => {
  assert.deepEqual(parseConfig([], env({})).licenseTrustedKeys, []);
  const c = parseConfig([], env({ EDGE_LICENSE_TRUSTED_KEYS: " /k/a.pem, ,/k/b.pem ," }));
  assert.deepEqual(c.licenseTrustedKeys, ["/k/a.pem", "/k/b.pem"]);
});
