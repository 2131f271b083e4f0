/**
 * A small tmpfs for full-disk tests (issue 18 §3): mounted inside the test namespace (root, a
 * private mount namespace: scripts/test.sh), filled to the last byte by a file the test deletes
 * to give the space back, unmounted at the end.
 */
import { NO_RELAY } from "./relay.ts";
import { makeTempDir } from "./temp.ts";

/** True when a test may mount a tmpfs: only in the namespace of a full `deno task test` run. */
export const NO_TMPFS = NO_RELAY;

/** A mounted tmpfs; `await using` unmounts it and removes its mount point. */
export interface Tmpfs extends AsyncDisposable {
  /** The mount point. */
  readonly path: string;
}

async function sh(...cmd: string[]): Promise<void> {
  const out = await new Deno.Command(cmd[0], { args: cmd.slice(1) }).output();
  if (!out.success) throw new Error(`${cmd.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
}

/** Mounts a tmpfs of `size` (mount's form: `48m`) on a fresh temp dir. */
export async function mountTmpfs(prefix: string, size: string): Promise<Tmpfs> {
  const tmp = await makeTempDir(prefix);
  const path = `${tmp.path}/mnt`;
  await Deno.mkdir(path);
  try {
    await sh("mount", "-t", "tmpfs", "-o", `size=${size}`, "tmpfs", path);
  } catch (err) {
    await tmp.cleanup();
    throw err;
  }
  return {
    path,
    async [Symbol.asyncDispose]() {
      await sh("umount", "-l", path).catch(() => {});
      await tmp.cleanup();
    },
  };
}

/** Writes `path` until the file system has no block left; returns the bytes written. */
export function fillDisk(path: string): number {
  const f = Deno.openSync(path, { write: true, create: true });
  let n = 0;
  try {
    for (const size of [1 << 20, 64 << 10, 4 << 10, 512, 1]) {
      const chunk = new Uint8Array(size);
      try {
        for (;;) n += f.writeSync(chunk);
      } catch { /* ENOSPC: next smaller chunk */ }
    }
  } finally {
    f.close();
  }
  return n;
}
