/**
 * The host's hold on this machine's memory, for the `.prv` benchmark: whether the kernel hands
 * free memory back to a hypervisor (virtio-balloon free page reporting), what that costs a new
 * file's page cache, and an opt-in switch (`BENCH_HOST_MEMORY`, root) that stops it for a run.
 */

/** The kernel's page-reporting parameter: reporting covers free blocks of 2^order pages. */
export const PAGE_REPORTING_ORDER = "/sys/module/page_reporting/parameters/page_reporting_order";
/** Above the kernel's largest block order (10): no free block qualifies, nothing is reported. */
export const NO_REPORTING_ORDER = 11;
/** How long freed memory is left alone before it counts as handed back (reporting runs ~2 s). */
export const COLD_AFTER_MS = 3_000;

/** How the host holds memory during a run. */
export type HostMemoryMode =
  /** The kernel reports free memory to the host (this VM as it runs): fresh pages are slow. */
  | "reported"
  /** Reporting stopped for the run (`BENCH_HOST_MEMORY`): memory stays the guest's, like bare metal. */
  | "kept"
  /** No page reporting in this kernel (bare metal, or a VM without it). */
  | "absent";

/** The page-reporting order, or undefined when the kernel has no page reporting. */
export function reportingOrder(path = PAGE_REPORTING_ORDER): number | undefined {
  let text: string;
  try {
    text = Deno.readTextFileSync(path);
  } catch {
    return undefined;
  }
  const order = Number(text.trim());
  return Number.isInteger(order) ? order : undefined;
}

/** The mode the machine is in now. */
export function hostMemoryMode(path = PAGE_REPORTING_ORDER): HostMemoryMode {
  const order = reportingOrder(path);
  if (order === undefined) return "absent";
  return order >= NO_REPORTING_ORDER ? "kept" : "reported";
}

/**
 * Runs `fn` with page reporting stopped (order set above the largest block), then puts the
 * order back, whatever `fn` does. Needs root; throws a clear error otherwise. Without page
 * reporting it just runs `fn`.
 */
export async function withMemoryKept<T>(
  fn: () => Promise<T>,
  path = PAGE_REPORTING_ORDER,
): Promise<T> {
  const before = reportingOrder(path);
  if (before === undefined) return await fn();
  try {
    Deno.writeTextFileSync(path, String(NO_REPORTING_ORDER));
  } catch (err) {
    throw new Error(
      `BENCH_HOST_MEMORY: cannot stop free page reporting (${path}: ${
        (err as Error).message
      }); run the benchmark as root, or without BENCH_HOST_MEMORY`,
    );
  }
  try {
    return await fn();
  } finally {
    Deno.writeTextFileSync(path, String(before));
  }
}

/**
 * Size of the probe file: this VM's kernel keeps a pool of freed memory unreported (a few hundred
 * MiB measured), so only a write larger than that shows the cost (64 and 256 MiB did not).
 */
export const PROBE_MIB = 1024;

/** Page-cache cost of writing a new file: ms per MiB into memory just freed, and freed a while ago. */
export interface PageCacheCost {
  readonly warmMsPerMiB: number;
  readonly coldMsPerMiB: number;
}

/**
 * Writes a new `mib` MiB file in `dir` (no flush) three times: the first frees its pages, the
 * second is timed right after (memory just freed: still the guest's), the third after
 * COLD_AFTER_MS of rest (memory the host may have taken back). Files are removed; `sleep` is
 * injectable for tests.
 */
export async function pageCacheCost(
  dir: string,
  mib = PROBE_MIB,
  sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms)),
): Promise<PageCacheCost> {
  const block = new Uint8Array(1 << 20);
  crypto.getRandomValues(block.subarray(0, 65_536));
  const writeNew = async (): Promise<number> => {
    const path = `${dir}/page-cache-${crypto.randomUUID()}`;
    const t0 = performance.now();
    const file = await Deno.open(path, { write: true, createNew: true });
    try {
      for (let i = 0; i < mib; i++) {
        for (let at = 0; at < block.byteLength;) at += await file.write(block.subarray(at));
      }
    } finally {
      file.close();
    }
    const ms = performance.now() - t0;
    await Deno.remove(path);
    return ms;
  };
  await writeNew();
  const warm = await writeNew();
  await sleep(COLD_AFTER_MS);
  const cold = await writeNew();
  return { warmMsPerMiB: warm / mib, coldMsPerMiB: cold / mib };
}

/** Which modes the prv benchmark runs in, from `BENCH_HOST_MEMORY` (unset: as the machine is). */
export function requestedModes(value: string | undefined): ("as-is" | "kept")[] {
  switch ((value ?? "").trim()) {
    case "":
      return ["as-is"];
    case "keep":
      return ["kept"];
    case "both":
      return ["kept", "as-is"];
    default:
      throw new Error(`BENCH_HOST_MEMORY=${value}: use "keep", "both" or leave it unset`);
  }
}
