/**
 * The least a durable `.prv` writer must do (bench only, files up to 16 MiB): the whole file read
 * at once, every chunk sealed in flight together, both SHA-256 digests overlapped with the
 * sealing and the flush, one write, fdatasync, rename, directory fsync. No header, no key
 * derivation: what no implementation of the same durable result can go below on this machine.
 */
import { createHash } from "node:crypto";
import { CHUNK_SIZE } from "../../src/prv/mod.ts";

/** Largest file the floor is measured for (it holds the whole file in memory). */
export const FLOOR_MAX_BYTES = 16 << 20;

/**
 * Writes `src` sealed under `key` to `dest` durably; returns the ms it took and the two digests
 * (plaintext, output) it computed on the way, as `secure_send_file` must.
 */
export async function leastDurableWrite(
  src: string,
  dest: string,
  key: CryptoKey,
): Promise<{ ms: number; digests: [string, string] }> {
  const t0 = performance.now();
  const plain = await Deno.readFile(src);
  if (plain.byteLength > FLOOR_MAX_BYTES) throw new RangeError(`${src}: over 16 MiB`);
  const seals: Promise<ArrayBuffer>[] = [];
  for (let at = 0, i = 0; at < plain.byteLength; at += CHUNK_SIZE, i++) {
    const iv = new Uint8Array(12);
    new DataView(iv.buffer).setUint32(8, i);
    seals.push(
      crypto.subtle.encrypt({ name: "AES-GCM", iv }, key, plain.subarray(at, at + CHUNK_SIZE)),
    );
  }
  const plainDigest = createHash("sha256").update(plain).digest("hex");
  const parts = (await Promise.all(seals)).map((b) => new Uint8Array(b));
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  for (let at = 0, i = 0; i < parts.length; at += parts[i].byteLength, i++) out.set(parts[i], at);
  const tmp = `${dest}.tmp`;
  const file = await Deno.open(tmp, { write: true, createNew: true, mode: 0o600 });
  let digests: [string, string];
  try {
    for (let at = 0; at < out.byteLength;) at += await file.write(out.subarray(at));
    const synced = file.syncData();
    digests = [plainDigest, createHash("sha256").update(out).digest("hex")];
    await synced;
  } finally {
    file.close();
  }
  await Deno.rename(tmp, dest);
  const slash = dest.lastIndexOf("/");
  using dir = await Deno.open(slash > 0 ? dest.slice(0, slash) : ".", { read: true });
  await dir.syncData();
  return { ms: performance.now() - t0, digests };
}
