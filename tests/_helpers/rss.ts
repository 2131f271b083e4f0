/** Resident memory of a process from Linux's /proc: for tests' logs and the benchmarks. */

/** Peak (VmHWM) and current (VmRSS) resident memory of `pid` in MB. */
export async function rssMb(pid: number): Promise<{ peak: number; now: number }> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+)`, "m").exec(status)?.[1] ?? 0);
  return { peak: Math.round(kb("VmHWM") / 1024), now: Math.round(kb("VmRSS") / 1024) };
}
