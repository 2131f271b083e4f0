/** Waits for a promise at most `ms`; the timer is always cleared (no leak in tests). */

export async function withinMs<T>(p: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<undefined>((r) => timer = setTimeout(() => r(undefined), ms)),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** An AbortSignal that fires after `ms` or when `parent` aborts; `dispose` clears the timer. */
export function deadline(
  ms: number,
  parent?: AbortSignal,
): { signal: AbortSignal; abort(): void; dispose(): void } {
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(), ms);
  const onParent = () => ctl.abort();
  parent?.addEventListener("abort", onParent, { once: true });
  if (parent?.aborted) ctl.abort();
  return {
    signal: ctl.signal,
    abort: () => ctl.abort(),
    dispose() {
      clearTimeout(timer);
      parent?.removeEventListener("abort", onParent);
    },
  };
}

/** Resolves after `ms`, or at once when `signal` aborts (the timer is cleared either way). */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
  });
}
