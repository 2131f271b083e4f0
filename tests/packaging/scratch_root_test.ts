/**
 * The container's FROM-scratch layout, built as a directory (no Docker engine here): the deno
 * binary, the program as one bundle, the glibc libraries `ldd` lists, /tmp 1777 and a data dir
 * owned by 1000. Run under chroot as UID 1000 with the daemon's permission set, it provisions
 * against the test relay and answers /health; SIGTERM ends it with exit code 0.
 */
import assert from "node:assert/strict";
import { freePort } from "../_helpers/ports.ts";
import { startRelay } from "../_helpers/relay.ts";
import { makeTempDir } from "../_helpers/temp.ts";
import { daemonFlags } from "../_helpers/permissions.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

async function run(cmd: string, args: string[], env: Record<string, string> = {}): Promise<string> {
  const out = await new Deno.Command(cmd, { args, env, stdout: "piped", stderr: "piped" }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  if (!out.success) throw new Error(`${cmd} ${args.join(" ")} failed:\n${text}`);
  return text;
}

/** Copies `file` to the same path under `root`, creating parents. */
async function copyInto(root: string, file: string, as = file): Promise<void> {
  await Deno.mkdir(`${root}${as.slice(0, as.lastIndexOf("/"))}`, { recursive: true });
  await Deno.copyFile(await Deno.realPath(file), `${root}${as}`);
}

async function buildLayout(root: string, certFile: string): Promise<void> {
  await copyInto(root, Deno.execPath(), "/deno");
  await Deno.chmod(`${root}/deno`, 0o755);
  await run("bash", [`${ROOT}scripts/bundle.sh`, `${root}/edge-gateway.bundle.js`], {
    DENO: Deno.execPath(),
  });
  const libs = (await run("ldd", [Deno.execPath()])).match(/\/[^\s]+/g) ?? [];
  for (const lib of new Set(libs)) await copyInto(root, lib);
  await Deno.mkdir(`${root}/tmp`, { mode: 0o1777 });
  await Deno.chmod(`${root}/tmp`, 0o1777);
  await Deno.mkdir(`${root}/proc`);
  await Deno.mkdir(`${root}/var/lib/privitty/files`, { recursive: true });
  for (const d of ["/var/lib/privitty", "/var/lib/privitty/files"]) {
    await Deno.chown(`${root}${d}`, 1000, 1000);
    await Deno.chmod(`${root}${d}`, 0o700);
  }
  await Deno.copyFile(certFile, `${root}/relay-ca.pem`);
  await Deno.chmod(`${root}/relay-ca.pem`, 0o644);
}

Deno.test({
  name: "the scratch-image layout runs the gateway under chroot as UID 1000 and answers /health",
  ignore: Deno.uid() !== 0,
  async fn() {
    await using relay = await startRelay();
    await using tmp = await makeTempDir("scratch");
    const root = tmp.path;
    await Deno.chmod(root, 0o755);
    await buildLayout(root, relay.certFile);
    await run("mount", ["-t", "proc", "proc", `${root}/proc`]); // private mount namespace of the test runner
    const port = freePort();
    const flags = await daemonFlags("/var/lib/privitty", "/var/lib/privitty/files");
    const child = new Deno.Command("chroot", {
      args: [
        "--userspec=1000:1000",
        root,
        "/deno",
        "run",
        ...flags,
        "/edge-gateway.bundle.js",
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        String(port),
      ],
      clearEnv: true,
      env: {
        EDGE_PROFILE: "scratch",
        EDGE_SERVER: relay.httpOrigin,
        DENO_CERT: "/relay-ca.pem",
        HOME: "/tmp",
        DENO_DIR: "/tmp/deno",
        DENO_NO_UPDATE_CHECK: "1",
        NO_COLOR: "1",
      },
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    let log = "";
    const drained = Promise.all([child.stdout, child.stderr].map(async (s) => {
      for await (const c of s.pipeThrough(new TextDecoderStream())) log += c;
    }));
    try {
      let status = 0;
      const deadline = Date.now() + 60_000;
      while (Date.now() < deadline && status !== 200) {
        status = await fetch(`http://127.0.0.1:${port}/health`).then(async (r) => {
          await r.body?.cancel();
          return r.status;
        }, () => 0);
        if (status !== 200) await new Promise((r) => setTimeout(r, 200));
      }
      assert.equal(status, 200, log);
      child.kill("SIGTERM");
      const { code } = await child.status;
      await drained;
      assert.equal(code, 0, log);
      const owner = Deno.statSync(`${root}/var/lib/privitty/accounts`).uid;
      assert.equal(owner, 1000, "the daemon wrote its state as UID 1000");
    } finally {
      try {
        child.kill("SIGKILL");
      } catch { /* already exited */ }
      await run("umount", [`${root}/proc`]).catch(() => {});
    }
  },
});
