/**
 * `deno task cli` (scripts/cli.sh): the CLI from source reads the `--accounts` directory it is
 * pointed at, writes only the `--out` file, hands `serve` to the daemon's own start script, and
 * answers a daemon run without the daemon's permissions with one clear line. Loopback only.
 */
import assert from "node:assert/strict";
import { DataDirLayout } from "../../src/constants.ts";
import { Store } from "../../src/store/mod.ts";
import { freePort } from "../_helpers/ports.ts";
import { makeTempDir } from "../_helpers/temp.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

/**
 * Runs `deno task cli ARGS` from `cwd` (the caller's directory: deno sets INIT_CWD to it unless
 * it is set, as it is when the tests themselves run under `deno task`); no daemon at EDGE_URL.
 */
async function taskCli(cwd: string, args: string[], env: Record<string, string> = {}) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["task", "--quiet", "--config", `${ROOT}deno.json`, "cli", ...args],
    cwd,
    env: { NO_COLOR: "1", INIT_CWD: cwd, EDGE_URL: `http://127.0.0.1:${freePort()}`, ...env },
    stdin: "null",
  }).output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

/** The deno command line scripts/cli.sh would run, from a stand-in deno that prints it. */
async function cliFlags(cwd: string, args: string[], env: Record<string, string> = {}) {
  await using bin = await makeTempDir("cli-deno");
  const fake = `${bin.path}/deno`;
  await Deno.writeTextFile(fake, '#!/bin/sh\nprintf "%s\\n" "$@"\n');
  await Deno.chmod(fake, 0o755);
  const out = await new Deno.Command("bash", {
    args: [`${ROOT}scripts/cli.sh`, ...args],
    cwd: ROOT,
    env: { DENO: fake, INIT_CWD: cwd, ...env },
    clearEnv: true,
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  return new TextDecoder().decode(out.stdout).trimEnd().split("\n");
}

Deno.test("cli.sh grants reading --accounts and writing --out only, both made absolute", async () => {
  const plain = await cliFlags("/home/u", ["chats"]);
  assert.deepEqual(plain, [
    "run",
    "--no-prompt",
    "--allow-net",
    "--allow-env=EDGE_URL,PRIVITTY_URL,EDGE_TOKEN,PRIVITTY_TOKEN,EDGE_BACKUP_PASSPHRASE,PRIVITTY_BACKUP_PASSPHRASE",
    "--allow-sys=networkInterfaces",
    "--allow-read=/etc/machine-id",
    `${ROOT}main.ts`,
    "chats",
  ]);
  const named = await cliFlags("/home/u", ["--accounts", "data", "view", "7", "--out=f.pdf"], {
    EDGE_LICENSE_TRUSTED_KEYS: "keys/a.pem, /k/b.pem",
  });
  assert.deepEqual(named.slice(1, 7), [
    "--no-prompt",
    "--allow-net",
    "--allow-env=EDGE_URL,PRIVITTY_URL,EDGE_TOKEN,PRIVITTY_TOKEN,EDGE_BACKUP_PASSPHRASE,PRIVITTY_BACKUP_PASSPHRASE,EDGE_LICENSE_TRUSTED_KEYS",
    "--allow-sys=networkInterfaces",
    "--allow-read=/etc/machine-id,/home/u/data,/home/u/keys/a.pem,/k/b.pem",
    "--allow-write=/home/u/f.pdf",
  ]);
  assert.deepEqual(named.slice(8), [
    "--accounts",
    "/home/u/data",
    "view",
    "7",
    "--out=/home/u/f.pdf",
  ]);
});

Deno.test("cli.sh grants backup import reading its file and the data directory, writing only that", async () => {
  const flags = await cliFlags("/home/u", ["backup", "import", "b.bak", "--data-dir", "new"]);
  assert.deepEqual(flags.slice(5, 7), [
    "--allow-read=/etc/machine-id,/home/u/new,/home/u/b.bak",
    "--allow-write=/home/u/new",
  ]);
  assert.deepEqual(flags.slice(8), [
    "backup",
    "import",
    "/home/u/b.bak",
    "--data-dir",
    "/home/u/new",
  ]);
});

Deno.test("deno task cli --accounts DIR license status reads DIR when no daemon answers", async () => {
  await using tmp = await makeTempDir("cli-accounts");
  const dir = `${tmp.path}/data`;
  await Deno.mkdir(`${dir}/accounts/1`, { recursive: true });
  Store.open(`${dir}/${DataDirLayout.DATABASE}`).close(); // a provisioned gateway's database
  for (const given of [dir, "data"]) { // absolute, and relative to the caller's directory
    const r = await taskCli(tmp.path, ["--accounts", given, "license", "status"]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^status: +no_license$/m);
    assert.match(r.stdout, new RegExp(`^source: +${dir}/privitty\\.lic$`, "m"));
    assert.doesNotMatch(r.stderr, /may not read|NotCapable/);
  }
});

Deno.test("deno task cli view <msg> --out F writes F", async () => {
  await using tmp = await makeTempDir("cli-view");
  const plaintext = "the protected file's plaintext\n";
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    const path = new URL(req.url).pathname;
    if (req.method === "POST" && path === "/auth") return Response.json({ token: "t" });
    if (path === "/stream/7" && req.headers.get("authorization") === "Bearer t") {
      return new Response(plaintext, { headers: { "x-prv-allow-download": "true" } });
    }
    return new Response("no", { status: 404 });
  });
  try {
    const url = `http://127.0.0.1:${server.addr.port}`;
    const r = await taskCli(tmp.path, ["--url", url, "view", "7", "--out", "plain.txt"]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, `wrote ${tmp.path}/plain.txt\n`);
    assert.equal(await Deno.readTextFile(`${tmp.path}/plain.txt`), plaintext);
  } finally {
    await server.shutdown();
  }
});

Deno.test("deno task cli serve runs the daemon through start.sh, with its permissions", async () => {
  await using tmp = await makeTempDir("cli-serve");
  const relay = freePort(); // nothing listens: registration fails after the daemon read its input
  const r = await taskCli(
    tmp.path,
    ["serve", "--data-dir", "gw", "--port", String(freePort()), "--host", "127.0.0.1"],
    { EDGE_PROFILE: "Test", EDGE_SERVER: `http://127.0.0.1:${relay}` },
  );
  assert.equal(r.code, 1, r.stderr);
  assert.doesNotMatch(r.stderr, /NotCapable|Requires .* access/);
  assert.match(r.stderr, /^edge-gateway: .*127\.0\.0\.1/m, "the daemon's own one-line error");
  assert.ok((await Deno.stat(`${tmp.path}/gw/device-fingerprint`)).isFile, "it provisioned");
});

Deno.test("deno task cli with daemon flags only says which task runs the daemon", async () => {
  await using tmp = await makeTempDir("cli-daemon");
  const r = await taskCli(tmp.path, ["--port", "7299"]);
  assert.equal(r.code, 2);
  assert.match(
    r.stderr,
    /^edge-gateway: this process lacks the daemon's permissions .*deno task start/m,
  );
  assert.doesNotMatch(r.stderr, /\n\s+at /, "no stack trace");
});
