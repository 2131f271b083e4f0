/** Resident memory of a process from Linux's /proc: for tests' logs and the benchmarks. */

/** Peak (VmHWM) and current (VmRSS) resident memory of `pid` in MB. */
export async function rssMb(pid: number): Promise<{ peak: number; now: number }> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+)`, "m").exec(status)?.[1] ?? 0);
  return { peak: Math.round(kb("VmHWM") / 1024), now: Math.round(kb("VmRSS") / 1024) };
}

/**
 * Resident memory of `pid` by kind of mapping, in MB: `heap` (the C allocator's main heap,
 * `[heap]`), `anon` (anonymous mappings: V8's heap pages, other allocator arenas, large
 * allocations), `file` (the binary, libraries and other files) and `total`.
 */
export async function rssByKindMb(
  pid: number,
): Promise<{ heap: number; anon: number; file: number; total: number }> {
  const text = await Deno.readTextFile(`/proc/${pid}/smaps`);
  const kb = { heap: 0, anon: 0, file: 0 };
  let kind: keyof typeof kb = "anon";
  for (const line of text.split("\n")) {
    const map = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (map !== null) {
      const name = map[1];
      kind = name === "[heap]" ? "heap" : name === "" || name.startsWith("[") ? "anon" : "file";
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss !== null) kb[kind] += Number(rss[1]);
  }
  const mb = (n: number) => Math.round(n / 1024);
  return {
    heap: mb(kb.heap),
    anon: mb(kb.anon),
    file: mb(kb.file),
    total: mb(kb.heap + kb.anon + kb.file),
  };
}
