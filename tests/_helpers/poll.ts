/** Polling for integration tests: repeat a probe until its value is what the test waits for. */

/**
 * Calls `fn` every `everyMs` until `ok` holds for its value or `timeoutMs` passed, and returns
 * the last value (the caller asserts on it, so a timeout fails with what was last seen).
 */
export async function poll<T>(
  fn: () => Promise<T>,
  ok: (v: T) => boolean,
  timeoutMs = 30_000,
  everyMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last = await fn();
  while (!ok(last) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, everyMs));
    last = await fn();
  }
  return last;
}
