/** Tests of config.ts: every input validated, named in its error, with the accepted form. */
import assert from "node:assert/strict";
import {
  DAEMON_ENV_ALLOW,
  DAEMON_ENV_VARS,
  parseConfig,
  parseListen,
  parseRelayTarget,
  productEnvName,
  shadowedEnvInputs,
} from "../src/config.ts";
import { ConfigError } from "../src/errors.ts";

const env = (vars: Record<string, string>) => (name: string) => vars[name];

Deno.test("parseConfig() applies the contract's defaults", () => {
  const c = parseConfig([], env({}));
  assert.equal(c.port, 7200);
  assert.equal(c.host, "127.0.0.1", "loopback unless told (the container image sets 0.0.0.0)");
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
    [
      ["--data-dir", "/d", "--files-dir", "/d"],
      {},
      /--files-dir "\/d" is not valid: it is or contains the data directory \/d, and files there may be sent to peers; expected a directory outside the data directory's state \(default: \/d\/files\)/,
    ],
    [
      ["--data-dir", "/srv/d"],
      { EDGE_FILES_DIR: "/srv" },
      /EDGE_FILES_DIR "\/srv" is not valid: it is or contains/,
    ],
    [["--data-dir", "/d", "--files-dir", "/"], {}, /is or contains the data directory/],
    [["--data-dir", "/d", "--files-dir", "/d/x/.."], {}, /is or contains the data directory/],
    [
      ["--data-dir", "/d", "--files-dir", "/d/accounts"],
      {},
      /lies in the state of the data directory/,
    ],
    [["--data-dir", "/d", "--files-dir", "/d/accounts/1/blobs"], {}, /lies in the state of/],
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

Deno.test("--listen HOST:PORT and --accounts DIR set what --host/--port and --data-dir set (product-compat.md#daemon-flags)", () => {
  const c = parseConfig(
    ["--listen", "0.0.0.0:7200", "--accounts", "/var/lib/privitty", "--cors"],
    env({}),
  );
  assert.deepEqual([c.host, c.port, c.dataDir, c.filesDir, c.cors], [
    "0.0.0.0",
    7200,
    "/var/lib/privitty",
    "/var/lib/privitty/files",
    true,
  ]);
  const v6 = parseConfig(["--listen=[::1]:7201", "--accounts=/d"], env({}));
  assert.deepEqual([v6.host, v6.port, v6.dataDir], ["::1", 7201, "/d"]);
  assert.deepEqual(parseListen("127.0.0.1:8080"), { host: "127.0.0.1", port: 8080 });
  assert.deepEqual(parseListen(":7200"), { host: "0.0.0.0", port: 7200 });
  assert.deepEqual(parseListen("gw.local:7200"), { host: "gw.local", port: 7200 });
});

Deno.test("a flag and its product alias together, or a bad --listen, are clear errors", () => {
  const bad: [string[], RegExp][] = [
    [
      ["--port", "7200", "--listen", "0.0.0.0:7200"],
      /--listen and --port both set the listen address; give only one/,
    ],
    [["--listen", "0.0.0.0:7200", "--host", "::"], /--listen and --host both set/],
    [
      ["--data-dir", "/a", "--accounts", "/b"],
      /--accounts and --data-dir both set the data directory/,
    ],
    [["--listen", "7200"], /--listen "7200" is not valid; expected HOST:PORT/],
    [["--listen", "::1:7200"], /--listen "::1:7200" is not valid; expected HOST:PORT/],
    [["--listen", "0.0.0.0:99999"], /--listen "0.0.0.0:99999": port "99999" is not valid/],
    [["--accounts", "rel"], /--accounts "rel" is not valid; expected an absolute directory path/],
    [["--accounts"], /--accounts needs a value/],
  ];
  for (const [args, re] of bad) {
    assert.throws(
      () => parseConfig(args, env({})),
      (e: Error) => e instanceof ConfigError && re.test(e.message),
      args.join(" "),
    );
  }
});

Deno.test("every EDGE_ input has a PRIVITTY_ twin; EDGE_ wins when both are set (product-compat.md#environment)", () => {
  const product = parseConfig(
    [],
    env({
      PRIVITTY_PROFILE: "gateway01",
      PRIVITTY_LICENSE_URL: "https://plm.privittytech.com/v1/license/TOKEN123",
      PRIVITTY_SERVER: "relay.example.org",
      PRIVITTY_DATA_DIR: "/p",
      PRIVITTY_FILES_DIR: "/pf",
      PRIVITTY_LOG_LEVEL: "debug",
      PRIVITTY_SSE_PING_MS: "500",
      PRIVITTY_ALLOW_PLAINTEXT_MAIL: "true",
    }),
  );
  assert.deepEqual(
    [
      product.profile,
      product.licenseUrl,
      product.relay.host,
      product.dataDir,
      product.filesDir,
      product.logLevel,
      product.ssePingMs,
      product.allowPlaintextMail,
    ],
    [
      "gateway01",
      "https://plm.privittytech.com/v1/license/TOKEN123",
      "relay.example.org",
      "/p",
      "/pf",
      "debug",
      500,
      true,
    ],
  );
  const both = env({ EDGE_PROFILE: "edge", PRIVITTY_PROFILE: "privitty", PRIVITTY_DATA_DIR: "/p" });
  const c = parseConfig([], both);
  assert.equal(c.profile, "edge");
  assert.equal(c.dataDir, "/p");
  assert.deepEqual(shadowedEnvInputs(both), [
    "EDGE_PROFILE is set, so PRIVITTY_PROFILE is ignored",
  ]);
  assert.deepEqual(shadowedEnvInputs(env({ EDGE_PROFILE: "x", PRIVITTY_PROFILE: "x" })), []);
  assert.equal(parseConfig(["--data-dir", "/flag"], both).dataDir, "/flag", "flags still win");
});

Deno.test("a bad PRIVITTY_ value is named with its EDGE_ twin", () => {
  const bad: [Record<string, string>, RegExp][] = [
    [{ PRIVITTY_DATA_DIR: "x" }, /PRIVITTY_DATA_DIR \(twin of EDGE_DATA_DIR\) "x" is not valid/],
    [{ PRIVITTY_LOG_LEVEL: "loud" }, /PRIVITTY_LOG_LEVEL \(twin of EDGE_LOG_LEVEL\) "loud"/],
    [
      { PRIVITTY_LICENSE_URL: "ftp://x" },
      /PRIVITTY_LICENSE_URL \(twin of EDGE_LICENSE_URL\) "ftp:\/\/x" is not valid/,
    ],
    [{ PRIVITTY_SERVER: "http://relay.example.org" }, /PRIVITTY_SERVER \(twin of EDGE_SERVER\)/],
    [{ PRIVITTY_ALLOW_PLAINTEXT_MAIL: "maybe" }, /PRIVITTY_ALLOW_PLAINTEXT_MAIL \(twin of/],
  ];
  for (const [vars, re] of bad) {
    assert.throws(
      () => parseConfig([], env(vars)),
      (e: Error) => e instanceof ConfigError && re.test(e.message),
      JSON.stringify(vars),
    );
  }
});

Deno.test("the permission set allows exactly the EDGE_ inputs, their PRIVITTY_ twins and the CLI's", async () => {
  assert.equal(productEnvName("EDGE_PROFILE"), "PRIVITTY_PROFILE");
  assert.deepEqual(DAEMON_ENV_ALLOW.length, DAEMON_ENV_VARS.length * 2);
  const script = await Deno.readTextFile(new URL("../scripts/permissions.sh", import.meta.url));
  const allowed = /^DAEMON_ENV_ALLOW="([^"]*)"/m.exec(script)![1].split(",");
  assert.deepEqual(
    allowed.sort(),
    [
      ...DAEMON_ENV_ALLOW,
      "EDGE_URL",
      "PRIVITTY_URL",
      "EDGE_TOKEN",
      "PRIVITTY_TOKEN",
      "NODE_V8_COVERAGE",
    ].sort(),
  );
});

Deno.test("parseConfig() lists EDGE_LICENSE_TRUSTED_KEYS files (comma-separated, trimmed)", () => {
  assert.deepEqual(parseConfig([], env({})).licenseTrustedKeys, []);
  const c = parseConfig([], env({ EDGE_LICENSE_TRUSTED_KEYS: " /k/a.pem, ,/k/b.pem ," }));
  assert.deepEqual(c.licenseTrustedKeys, ["/k/a.pem", "/k/b.pem"]);
  const twin = parseConfig([], env({ PRIVITTY_LICENSE_TRUSTED_KEYS: "/k/p.pem" }));
  assert.deepEqual(twin.licenseTrustedKeys, ["/k/p.pem"], "the product's twin name");
});

Deno.test("--cors: bare is any origin, =<origins> a list, junk is refused naming the form", () => {
  const cfg = (args: string[]) => parseConfig(args, () => undefined);
  assert.equal(cfg([]).cors, false);
  assert.equal(cfg(["--cors"]).cors, true);
  assert.equal(cfg(["--cors=false"]).cors, false);
  assert.deepEqual(cfg(["--cors=https://a.example,http://10.0.0.5:8080"]).cors, [
    "https://a.example",
    "http://10.0.0.5:8080",
  ]);
  assert.throws(() => cfg(["--cors=https://a.example/app"]), /--cors origin .* no path/);
  assert.throws(() => cfg(["--cors=a.example"]), /--cors origin "a.example" is not valid/);
});

Deno.test("--allowed-hosts / EDGE_ALLOWED_HOSTS (or PRIVITTY_ALLOWED_HOSTS): a list, or *", () => {
  const env = (vars: Record<string, string>) => (n: string) => vars[n];
  assert.deepEqual(parseConfig([], env({})).allowedHosts, []);
  assert.deepEqual(
    parseConfig(["--allowed-hosts", "GW.example.org, *.edge.example"], env({})).allowedHosts,
    ["gw.example.org", "*.edge.example"],
  );
  assert.deepEqual(
    parseConfig([], env({ PRIVITTY_ALLOWED_HOSTS: "gw.example.org" })).allowedHosts,
    ["gw.example.org"],
  );
  assert.equal(parseConfig([], env({ EDGE_ALLOWED_HOSTS: "*" })).allowedHosts, "*");
  assert.throws(
    () => parseConfig([], env({ EDGE_ALLOWED_HOSTS: "bad host" })),
    /EDGE_ALLOWED_HOSTS "bad host" is not valid/,
  );
});

Deno.test("API tokens: EDGE_API_TOKEN or EDGE_API_TOKENS_FILE, not both; short tokens refused", () => {
  const env = (vars: Record<string, string>) => (n: string) => vars[n];
  const off = parseConfig([], env({}));
  assert.deepEqual([off.apiToken, off.apiTokensFile], [undefined, undefined]);
  assert.equal(
    parseConfig([], env({ PRIVITTY_API_TOKEN: "t".repeat(16) })).apiToken,
    "t".repeat(16),
  );
  assert.equal(
    parseConfig([], env({ EDGE_API_TOKENS_FILE: "/etc/edge/tokens" })).apiTokensFile,
    "/etc/edge/tokens",
  );
  assert.throws(
    () => parseConfig([], env({ EDGE_API_TOKEN: "t".repeat(16), EDGE_API_TOKENS_FILE: "/x" })),
    /both set; give one/,
  );
  assert.throws(() => parseConfig([], env({ EDGE_API_TOKEN: "short" })), /too short/);
  assert.throws(
    () => parseConfig([], env({ EDGE_API_TOKENS_FILE: "tokens" })),
    /expected an absolute file path/,
  );
});

Deno.test("EDGE_HOST (the image's PRIVITTY_HOST) sets the listen address; flags win", () => {
  const env = (vars: Record<string, string>) => (n: string) => vars[n];
  assert.equal(parseConfig([], env({ PRIVITTY_HOST: "0.0.0.0" })).host, "0.0.0.0");
  assert.equal(parseConfig(["--host", "::1"], env({ PRIVITTY_HOST: "0.0.0.0" })).host, "::1");
  assert.equal(
    parseConfig(["--listen", "127.0.0.1:7300"], env({ EDGE_HOST: "0.0.0.0" })).host,
    "127.0.0.1",
  );
});

Deno.test("--import-backup / EDGE_IMPORT_BACKUP need an absolute path and the passphrase", () => {
  const none = parseConfig([], env({}));
  assert.equal(none.importBackup, undefined);
  assert.equal(none.backupPassphrase, undefined);
  const byEnv = parseConfig(
    [],
    env({ EDGE_IMPORT_BACKUP: "/b/x.bak", EDGE_BACKUP_PASSPHRASE: "pw" }),
  );
  assert.equal(byEnv.importBackup, "/b/x.bak");
  assert.equal(byEnv.backupPassphrase, "pw");
  const twins = parseConfig(
    [],
    env({ PRIVITTY_IMPORT_BACKUP: "/b/y.bak", PRIVITTY_BACKUP_PASSPHRASE: "pw2" }),
  );
  assert.equal(twins.importBackup, "/b/y.bak");
  assert.equal(twins.backupPassphrase, "pw2");
  const flag = parseConfig(
    ["--import-backup", "/b/z.bak"],
    env({ EDGE_IMPORT_BACKUP: "/b/x.bak", EDGE_BACKUP_PASSPHRASE: "pw" }),
  );
  assert.equal(flag.importBackup, "/b/z.bak", "the flag wins");
  assert.throws(
    () => parseConfig(["--import-backup=x.bak"], env({ EDGE_BACKUP_PASSPHRASE: "pw" })),
    /--import-backup "x\.bak" is not valid; expected an absolute file path/,
  );
  assert.throws(
    () => parseConfig([], env({ EDGE_IMPORT_BACKUP: "/b/x.bak" })),
    /EDGE_IMPORT_BACKUP needs the backup's passphrase in EDGE_BACKUP_PASSPHRASE \(or PRIVITTY_BACKUP_PASSPHRASE\)/,
  );
  // The passphrase alone (for the CLI's backup commands) starts nothing and is not kept.
  assert.equal(parseConfig([], env({ EDGE_BACKUP_PASSPHRASE: "pw" })).backupPassphrase, undefined);
});

Deno.test("the direct path: an ephemeral UDP port by default, HOST:PORT, off, and a STUN server", () => {
  const d = parseConfig([], env({}));
  assert.deepEqual(d.p2pListen, { host: "0.0.0.0", port: 0 });
  assert.equal(d.stunServer, undefined);
  const f = parseConfig(["--p2p-listen", "[::]:7201", "--stun=stun.example.org:3478"], env({}));
  assert.deepEqual(f.p2pListen, { host: "::", port: 7201 });
  assert.deepEqual(f.stunServer, { host: "stun.example.org", port: 3478 });
  assert.equal(parseConfig([], env({ EDGE_P2P_LISTEN: "off" })).p2pListen, null);
  const twin = parseConfig([], env({ PRIVITTY_P2P_LISTEN: "10.0.0.2:7300" }));
  assert.deepEqual(twin.p2pListen, { host: "10.0.0.2", port: 7300 });
  const stunEnv = parseConfig([], env({ EDGE_STUN_SERVER: "203.0.113.1:3478" }));
  assert.deepEqual(stunEnv.stunServer, { host: "203.0.113.1", port: 3478 });
  assert.equal(
    parseConfig(["--p2p-listen", "off"], env({ EDGE_P2P_LISTEN: "0.0.0.0:7300" })).p2pListen,
    null,
    "the flag wins",
  );
  assert.throws(
    () => parseConfig(["--p2p-listen", "7201"], env({})),
    (e) => e instanceof ConfigError && /--p2p-listen "7201".*HOST:PORT/.test(e.message),
  );
  assert.throws(
    () => parseConfig([], env({ EDGE_STUN_SERVER: "stun.example.org:0" })),
    (e) => e instanceof ConfigError && /EDGE_STUN_SERVER/.test(e.message),
  );
});
