/**
 * The container's FROM-scratch layout, built as a directory (no Docker engine here): the deno
 * binary (standing in for the compiled one; /usr/local/bin/privitty-edge(d) link to it, as the
 * image links them to /edge-gateway), the program as one bundle, the glibc libraries `ldd`
 * lists, /tmp 1777 and a data dir owned by 1000. Run under chroot as UID 1000 with the daemon's
 * permission set, it starts as the product documents it (docs/product-compat.md#container): the
 * `docker run` line (PRIVITTY_* variables, the data volume), `docker exec … privitty-edge`, the
 * compose
 * `command:` array; a root-owned volume stops the start saying exactly what to chown.
 */
import assert from "node:assert/strict";
import { freePort } from "../_helpers/ports.ts";
import { type Relay, startRelay } from "../_helpers/relay.ts";
import { makeTempDir } from "../_helpers/temp.ts";
import { daemonFlags } from "../_helpers/permissions.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const DATA = "/var/lib/privitty";

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

/** An empty data volume at /var/lib/privitty, owned by `uid` with `mode`. */
async function freshVolume(root: string, uid: number, mode: number): Promise<void> {
  await Deno.remove(`${root}${DATA}`, { recursive: true }).catch(() => {});
  await Deno.mkdir(`${root}${DATA}`, { recursive: true });
  await Deno.chown(`${root}${DATA}`, uid, uid);
  await Deno.chmod(`${root}${DATA}`, mode);
}

async function buildLayout(root: string, certFile: string): Promise<void> {
  await copyInto(root, Deno.execPath(), "/deno");
  await Deno.chmod(`${root}/deno`, 0o755);
  await Deno.mkdir(`${root}/usr/local/bin`, { recursive: true });
  for (const name of ["edge-gateway", "privitty-edged", "privitty-edge"]) {
    await Deno.symlink("/deno", `${root}/usr/local/bin/${name}`);
  }
  await run("bash", [`${ROOT}scripts/bundle.sh`, `${root}/edge-gateway.bundle.js`], {
    DENO: Deno.execPath(),
  });
  const libs = (await run("ldd", [Deno.execPath()])).match(/\/[^\s]+/g) ?? [];
  for (const lib of new Set(libs)) await copyInto(root, lib);
  await Deno.mkdir(`${root}/tmp`, { mode: 0o1777 });
  await Deno.chmod(`${root}/tmp`, 0o1777);
  await Deno.mkdir(`${root}/proc`);
  await freshVolume(root, 1000, 0o700); // the image's directory, which a new volume copies
  await Deno.copyFile(certFile, `${root}/relay-ca.pem`);
  await Deno.chmod(`${root}/relay-ca.pem`, 0o644);
}

/** A process in the chroot, as UID 1000, with its output collected. */
interface Jailed {
  readonly child: Deno.ChildProcess;
  log(): string;
  /** Resolves with the exit code once stdout and stderr are drained. */
  readonly exited: Promise<number>;
}

/**
 * Runs `program` (a path in the chroot: /deno or one of its product-named links) as
 * `deno run <daemon permissions> /edge-gateway.bundle.js <args>`: the image's binary with `args`.
 */
async function jail(
  root: string,
  relay: Relay,
  program: string,
  args: string[],
  env: Record<string, string>,
): Promise<Jailed> {
  const flags = await daemonFlags(DATA, `${DATA}/files`);
  const child = new Deno.Command("chroot", {
    args: [
      "--userspec=1000:1000",
      root,
      program,
      "run",
      ...flags,
      "/edge-gateway.bundle.js",
      ...args,
    ],
    clearEnv: true,
    env: {
      ...IMAGE_ENV,
      PRIVITTY_SERVER: relay.httpOrigin,
      DENO_CERT: "/relay-ca.pem",
      HOME: "/tmp",
      DENO_DIR: "/tmp/deno",
      DENO_NO_UPDATE_CHECK: "1",
      NO_COLOR: "1",
      ...env,
    },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let text = "";
  const drained = Promise.all([child.stdout, child.stderr].map(async (s) => {
    for await (const c of s.pipeThrough(new TextDecoderStream())) text += c;
  }));
  const exited = child.status.then(async (s) => {
    await drained;
    return s.code;
  });
  return { child, log: () => text, exited };
}

/** Polls `/health` until 200 or the process exits; returns the last body. */
async function healthy(url: string, daemon: Jailed): Promise<Record<string, unknown>> {
  let done = false;
  daemon.exited.then(() => done = true);
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline && !done) {
    const body = await fetch(`${url}/health`).then(async (r) => {
      if (r.status === 200) return await r.json();
      await r.body?.cancel();
      return undefined;
    }, () => undefined);
    if (body !== undefined) return body;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`no healthy /health at ${url}:\n${daemon.log()}`);
}

async function stop(daemon: Jailed): Promise<number> {
  try {
    daemon.child.kill("SIGTERM");
  } catch { /* already exited */ }
  return await daemon.exited;
}

async function rpc(url: string, method: string, params: unknown[]): Promise<unknown> {
  const res = await fetch(`${url}/rpc`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", method, params, id: 1 }),
  });
  return (await res.json()).result;
}

/** What the image's final stage sets that the daemon reads (the Dockerfile's `PRIVITTY_HOST`). */
const IMAGE_ENV: Record<string, string> = (() => {
  const text = Deno.readTextFileSync(new URL("../../Dockerfile", import.meta.url));
  const host = /^ENV PRIVITTY_HOST=(\S+)$/m.exec(text)?.[1];
  if (host === undefined) throw new Error("the Dockerfile sets no PRIVITTY_HOST");
  return { PRIVITTY_HOST: host };
})();

/**
 * The product's docker run line (docs/product-compat.md#container): no command, so the image's
 * ENTRYPOINT + CMD.
 */
const DOCKER_RUN_ENV = {
  PRIVITTY_PROFILE: "gateway01",
  PRIVITTY_LICENSE_URL: "https://plm.privittytech.com/v1/license/TOKEN123",
};

Deno.test({
  name: "the scratch-image layout starts as the product documents it, under chroot as UID 1000",
  ignore: Deno.uid() !== 0,
  async fn(t) {
    await using relay = await startRelay();
    await using tmp = await makeTempDir("scratch");
    const root = tmp.path;
    await Deno.chmod(root, 0o755);
    await buildLayout(root, relay.certFile);
    await run("mount", ["-t", "proc", "proc", `${root}/proc`]); // private mount namespace of the test runner
    const started: Jailed[] = [];
    const start = async (program: string, args: string[], env: Record<string, string>) => {
      const j = await jail(root, relay, program, args, env);
      started.push(j);
      return j;
    };
    try {
      await t.step(
        "docker run -e PRIVITTY_PROFILE … -v privitty-data:/var/lib/privitty",
        async () => {
          // ENTRYPOINT ["/edge-gateway"] + CMD ["serve"]; it listens on 0.0.0.0:7200 (-p maps it).
          const daemon = await start("/deno", ["serve"], DOCKER_RUN_ENV);
          const url = "http://127.0.0.1:7200";
          const health = await healthy(url, daemon);
          assert.deepEqual([health.status, health.service], ["ok", "privitty-edged"]);
          assert.equal(await rpc(url, "get_config", [1, "displayname"]), "gateway01");

          // docker exec privitty-edged privitty-edge health (docs/product-compat.md#container): the
          // CLI by its product name.
          const exec = await start("/usr/local/bin/privitty-edge", ["health"], {});
          assert.equal(await exec.exited, 0, exec.log());
          assert.match(exec.log(), /^service:\s+privitty-edged$/m);

          assert.equal(await stop(daemon), 0, daemon.log());
          assert.equal(Deno.statSync(`${root}${DATA}/accounts`).uid, 1000, "state written as 1000");
          assert.match(
            Deno.readTextFileSync(`${root}${DATA}/device-fingerprint`),
            /^[0-9a-f]{64}\n$/,
            "the device fingerprint is stored in the volume",
          );
        },
      );

      await t.step("compose command: [--listen, 0.0.0.0:7200, --accounts, …, --cors]", async () => {
        // compose's command: replaces CMD, so the entry point gets the array as its arguments.
        const port = freePort();
        const daemon = await start("/deno", [
          "--listen",
          `127.0.0.1:${port}`,
          "--accounts",
          DATA,
          "--cors",
        ], {});
        const url = `http://127.0.0.1:${port}`;
        await healthy(url, daemon);
        const cors = await fetch(`${url}/health`, { headers: { Origin: "http://hmi.local" } });
        await cors.body?.cancel();
        assert.equal(cors.headers.get("access-control-allow-origin"), "*");
        assert.equal(await rpc(url, "get_config", [1, "displayname"]), "gateway01", "same account");
        assert.equal(await stop(daemon), 0, daemon.log());
      });

      await t.step(
        "a root-owned volume stops the start saying what to chown; after it, it runs",
        async () => {
          await freshVolume(root, 0, 0o755);
          const refused = await start("/deno", ["serve"], DOCKER_RUN_ENV);
          assert.equal(await refused.exited, 1, refused.log());
          assert.match(
            refused.log(),
            /Accounts directory \/var\/lib\/privitty is not writable by UID 1000, the user the daemon runs as \(it is owned by UID 0, mode 0755\)/,
          );
          const chown = /as root, (chown -R 1000:1000 \/var\/lib\/privitty);/.exec(refused.log());
          assert.ok(chown, refused.log());
          assert.match(
            refused.log(),
            /docker run --rm -v <volume>:\/var\/lib\/privitty busybox chown/,
          );
          // Run exactly what it says, as root, on the volume (here: its path under the chroot).
          const [cmd, ...cargs] = chown[1].split(" ");
          await run(cmd, cargs.map((a) => a === DATA ? `${root}${DATA}` : a));
          const daemon = await start("/deno", ["serve"], DOCKER_RUN_ENV);
          await healthy("http://127.0.0.1:7200", daemon);
          assert.equal(await stop(daemon), 0, daemon.log());
        },
      );
    } finally {
      for (const j of started) {
        try {
          j.child.kill("SIGKILL");
        } catch { /* already exited */ }
        await j.exited;
      }
      await run("umount", [`${root}/proc`]).catch(() => {});
    }
  },
});
