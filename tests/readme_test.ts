/**
 * README's first five minutes, run literally: the command lines of the fenced blocks marked
 * `<!-- readme-test: NAME -->` run with `bash -c` in a copy of the checkout (symlinks, so its
 * `./.data` is the test's own), on a PATH without `deno` or `sudo` where `npx --yes deno@2.9.5`
 * is a stand-in for the registry's package (it runs this deno). Loopback only: the quick start's
 * relay is the test relay (EDGE_SERVER), dev starts its own.
 */
import assert from "node:assert/strict";
import { poll } from "./_helpers/poll.ts";
import { NO_RELAY, startRelay } from "./_helpers/relay.ts";
import { makeTempDir, type TempDir } from "./_helpers/temp.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const README = Deno.readTextFileSync(`${ROOT}README.md`);

/** The command line of the fenced block after `<!-- readme-test: name -->`. */
function readmeCommand(name: string): string {
  const block = new RegExp(`<!-- readme-test: ${name} -->\\s*\`\`\`sh\\n([^\`]*?)\\n\`\`\``)
    .exec(README)?.[1];
  assert.ok(block !== undefined, `README has a block marked readme-test: ${name}`);
  const lines = block.split("\n").filter((l) => l.trim() !== "");
  assert.equal(lines.length, 1, `one command line in block ${name}`);
  return lines[0];
}

/** A checkout of symlinks (its own `.data`) and a PATH whose `npx` runs this deno. */
async function sandbox(): Promise<TempDir & { env: Record<string, string>; dir: string }> {
  const tmp = await makeTempDir("readme");
  await Deno.chmod(tmp.path, 0o755); // the relay's postfix and dovecot users enter it
  const dir = `${tmp.path}/checkout`;
  await Deno.mkdir(dir);
  for await (const e of Deno.readDir(ROOT)) {
    if (e.name !== ".data") await Deno.symlink(`${ROOT}${e.name}`, `${dir}/${e.name}`);
  }
  const bin = `${tmp.path}/bin`;
  const denoDir = `${tmp.path}/deno-bin`; // what npx puts on the PATH of what it runs
  await Deno.mkdir(bin);
  await Deno.mkdir(denoDir);
  await Deno.symlink(Deno.execPath(), `${denoDir}/deno`);
  await Deno.writeTextFile(
    `${bin}/npx`,
    `#!/bin/sh\n[ "$1" = --yes ] && [ "$2" = deno@2.9.5 ] || { echo "npx stand-in: $*" >&2; exit 127; }\n` +
      `shift 2\nPATH="${denoDir}:$PATH" exec deno "$@"\n`,
  );
  await Deno.chmod(`${bin}/npx`, 0o755);
  const env = { PATH: `${bin}:/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin`, HOME: tmp.path };
  return Object.assign(tmp, { env, dir });
}

/** Runs `line` to its end; resolves with its exit code and output. */
async function run(line: string, cwd: string, env: Record<string, string>) {
  const out = await new Deno.Command("bash", { args: ["-c", line], cwd, env, clearEnv: true })
    .output();
  const dec = new TextDecoder();
  return { code: out.code, stdout: dec.decode(out.stdout), stderr: dec.decode(out.stderr) };
}

/** Starts `line` as a terminal would (a process group of its own); `ready` matches its stdout. */
function spawn(line: string, cwd: string, env: Record<string, string>, ready: RegExp) {
  const child = new Deno.Command("setsid", {
    args: ["bash", "-c", line],
    cwd,
    env,
    clearEnv: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let out = "";
  const err = new Response(child.stderr).text();
  const seen = (async () => {
    for await (const c of child.stdout.pipeThrough(new TextDecoderStream())) {
      out += c;
      if (ready.test(out)) return out;
    }
    throw new Error(`ended before ${ready}:\n${out}\n${await err}`);
  })();
  return {
    seen,
    /** Ctrl-C: SIGINT to the whole group, then its exit code. */
    async interrupt(): Promise<number> {
      try {
        Deno.kill(-child.pid, "SIGINT");
      } catch { /* ended */ }
      const status = await child.status;
      await child.stdout.cancel().catch(() => {});
      await err.catch(() => "");
      return status.code;
    },
  };
}

Deno.test("README's commands name no sudo and no bare deno (neither exists on a fresh machine)", () => {
  const blocks = [...README.matchAll(/```sh\n([^`]*?)```/g)].map((m) => m[1]);
  for (const line of blocks.join("\n").split("\n")) {
    assert.doesNotMatch(line, /^\s*(sudo|deno) /, line);
  }
});

Deno.test({
  name: "README's dev command, its first send and its curl call run as written",
  ignore: NO_RELAY,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await using box = await sandbox();
    const dev = spawn(readmeCommand("dev"), box.dir, box.env, /^dev: ready$/m);
    try {
      const out = await dev.seen;
      const send = readmeCommand("dev-send");
      const chat = /^dev: gateway 1 chat (\d+) is with gateway 2 /m.exec(out)?.[1];
      assert.match(
        send,
        new RegExp(` send ${chat} `),
        `README sends to the chat dev printed:\n${out}`,
      );
      const sent = await run(send, box.dir, box.env);
      assert.equal(sent.code, 0, sent.stderr);
      assert.match(sent.stdout, /\d+/, "the new message id");
      const called = await run(readmeCommand("call"), box.dir, box.env);
      assert.equal(called.code, 0, called.stderr);
      assert.equal(JSON.parse(called.stdout).result.configured_addr.includes("@"), true);
    } finally {
      assert.equal(await dev.interrupt(), 130);
      // dev stopped its relay (tests/scripts/dev_test.ts checks it by PID); should it not have,
      // stop it by its pid files.
      const relayDir = `${box.dir}/.data/relay`;
      if (await Deno.stat(`${relayDir}/relay.env`).then(() => true, () => false)) {
        await new Deno.Command(`${ROOT}scripts/relay/stop-relay.sh`, { args: [relayDir] }).output();
      }
    }
  },
});

Deno.test({
  name: "README's quick start runs as written and answers its curl call",
  ignore: NO_RELAY,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await using relay = await startRelay();
    await using box = await sandbox();
    const env = { ...box.env, EDGE_SERVER: relay.httpOrigin, ...relay.tlsEnv() };
    const start = spawn(readmeCommand("start"), box.dir, env, /$^/); // waits for /health instead
    start.seen.catch(() => {}); // it ends when interrupted, having never matched
    try {
      const call = readmeCommand("call");
      const answer = await poll(
        () => run(call, box.dir, env),
        (r) => r.code === 0 && r.stdout !== "",
        60_000,
        250,
      );
      const info = JSON.parse(answer.stdout).result;
      assert.match(info.configured_addr, /@_relay\.test$/);
      assert.ok((await Deno.stat(`${box.dir}/.data/gateway`)).isDirectory, "./.data/gateway");
    } finally {
      assert.equal(await start.interrupt(), 0);
    }
  },
});
