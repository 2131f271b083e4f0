/**
 * Temporary directories for tests: short paths under /tmp (unix socket paths are limited to
 * 107 bytes), or under the run's own dir that scripts/test.sh exports as EDGE_TEST_TMP (so that
 * it can clean up after a crashed test), removed by `cleanup()` or at the end of `await using`.
 */

/** A temporary directory that is removed with everything in it on cleanup. */
export interface TempDir extends AsyncDisposable {
  /** Absolute path, e.g. `/tmp/edge-k3j9x2`. */
  readonly path: string;
  /** Removes the directory; safe to call more than once. */
  cleanup(): Promise<void>;
}

/** Creates a fresh directory `<EDGE_TEST_TMP or /tmp>/<prefix>-XXXXXX`. */
export async function makeTempDir(prefix = "edge"): Promise<TempDir> {
  const base = Deno.env.get("EDGE_TEST_TMP") || "/tmp";
  const path = await Deno.makeTempDir({ dir: base, prefix: `${prefix}-` });
  const cleanup = async () => {
    await Deno.remove(path, { recursive: true }).catch((e) => {
      if (!(e instanceof Deno.errors.NotFound)) throw e;
    });
  };
  return { path, cleanup, [Symbol.asyncDispose]: cleanup };
}

/** Runs `fn` with a fresh temporary directory and removes the directory afterwards. */
export async function withTempDir<T>(
  fn: (path: string) => Promise<T> | T,
  prefix = "edge",
): Promise<T> {
  await using dir = await makeTempDir(prefix);
  return await fn(dir.path);
}
