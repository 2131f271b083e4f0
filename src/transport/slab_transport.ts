/**
 * An imapflow transport for implicit-TLS endpoints over `Deno.connectTls` that reads into 4 MiB
 * slabs, so socket reads leave no pieces in the C allocator's heap (BENCHMARKS.md, Inbox flood).
 */
import { createStreamsTransport, type ImapTransport } from "imapflow";

/**
 * Size of each slab. At least glibc's mmap threshold (`MALLOC_MMAP_THRESHOLD_=4194304`,
 * scripts/start.sh): a slab is mapped on its own and unmapped when the last view of it is
 * collected. Through `node:tls` every read allocated a buffer of its own from the heap; after a
 * flood of large mails tens of MB stayed there, free but in pieces.
 */
export const SLAB_BYTES = 4 * 1024 * 1024;

/** Most bytes asked for by one read; a new slab starts when less than this is left. */
export const READ_BYTES = 64 * 1024;

/** What the slab reader reads from (a `Deno.Conn`). */
export interface ByteSource {
  read(p: Uint8Array): Promise<number | null>;
}

/**
 * A stream of the bytes of `source`, each chunk a view of the current slab (the reads fill a slab
 * from its start; imapflow keeps views, so a slab is never written twice).
 */
export function slabReadable(
  source: ByteSource,
  slabBytes = SLAB_BYTES,
): ReadableStream<Uint8Array> {
  const readBytes = Math.min(READ_BYTES, slabBytes);
  let slab = new Uint8Array(0);
  let used = 0;
  return new ReadableStream<Uint8Array>({
    async pull(ctl) {
      if (slab.length - used < readBytes) {
        slab = new Uint8Array(slabBytes);
        used = 0;
      }
      const n = await source.read(slab.subarray(used, used + readBytes));
      if (n === null) return ctl.close();
      ctl.enqueue(slab.subarray(used, used + n));
      used += n;
    },
  });
}

/**
 * The imapflow `transport` option for implicit TLS (`secure`), verified against the system roots
 * and `DENO_CERT` as `node:tls` is (tls_options.ts). It cannot upgrade a connection: STARTTLS
 * endpoints keep imapflow's own socket.
 */
export function slabTlsTransport(): ImapTransport {
  return createStreamsTransport({
    open({ host, port, secure }) {
      if (!secure) throw new Error("the slab transport only opens implicit-TLS connections");
      const connecting = Deno.connectTls({ hostname: host.replace(/^\[|\]$/g, ""), port });
      let conn: Deno.TlsConn | undefined;
      return {
        opened: connecting.then((c) => {
          conn = c;
          return { readable: slabReadable(c), writable: c.writable, tls: { authorized: true } };
        }),
        close: () => {
          try {
            conn?.close();
          } catch {
            // already closed
          }
        },
      };
    },
  });
}
