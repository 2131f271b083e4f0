/**
 * Child of bench/scenarios/prv.ts: RSS of a fresh process while 1 GiB is decrypted, sampled every 16
 * chunks; prints {baseKb, peakKb, growthKb, ms, bytes}. Modes (argv[0]):
 * - `prv <path>`: openPrvFile + stream() of the whole file (CEK hex on stdin), bytes dropped;
 * - `prv-gc <path>`: the same with a forced full GC every 64 MiB (needs --expose-gc): what stays
 *   live, as opposed to garbage V8 has not collected yet;
 * - `raw <bytes>`: the baseline, WebCrypto AES-256-GCM decrypt of that many bytes in 64 KiB calls
 *   in memory, one after another.
 */
import { openPrvFile } from "../../src/prv/mod.ts";

const [mode, arg] = Deno.args;
const rssKb = () => Math.round(Deno.memoryUsage().rss / 1024);
const gc = (globalThis as { gc?: () => void }).gc;
const C = 65536;

async function prv(sample: () => void, warm: boolean): Promise<number> {
  const hex = cekHex ?? "";
  const cek = Uint8Array.from(hex.match(/../g)!, (h) => parseInt(h, 16));
  await using reader = await openPrvFile(arg, cek);
  if (warm) return (await reader.read(0, Math.min(reader.plaintextLength, 1 << 20))).byteLength;
  let bytes = 0, parts = 0;
  for await (const part of reader.stream()) {
    bytes += part.byteLength;
    if (++parts % 16 === 0) sample();
    if (mode === "prv-gc" && parts % 1024 === 0) gc!();
  }
  return bytes;
}

async function raw(sample: () => void, warm: boolean): Promise<number> {
  const key = await crypto.subtle.importKey("raw", new Uint8Array(32), "AES-GCM", false, [
    "decrypt",
    "encrypt",
  ]);
  const iv = new Uint8Array(12);
  const sealed = new Uint8Array(
    await crypto.subtle.encrypt({ name: "AES-GCM", iv }, key, new Uint8Array(C)),
  );
  const total = warm ? 1 << 20 : Number(arg);
  for (let i = 0; i < total / C; i++) {
    await crypto.subtle.decrypt({ name: "AES-GCM", iv }, key, sealed);
    if (i % 16 === 15) sample();
  }
  return total;
}

const cekHex = mode === "raw" ? undefined : (await new Response(Deno.stdin.readable).text()).trim();
const run = mode === "raw" ? raw : prv;
await run(() => {}, true); // warm-up: code paths and WebCrypto loaded, so the baseline is at rest
if (Deno.env.get("PRV_RSS_WARM_FULL")) await run(() => {}, false);
const baseKb = rssKb();
let peakKb = baseKb;
const t0 = performance.now();
const bytes = await run(() => (peakKb = Math.max(peakKb, rssKb())), false);
const ms = performance.now() - t0;
peakKb = Math.max(peakKb, rssKb());
console.log(JSON.stringify({ baseKb, peakKb, growthKb: peakKb - baseKb, ms, bytes }));
