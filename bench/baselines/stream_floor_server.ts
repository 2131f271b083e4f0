/**
 * The least `/stream` server (bench only, bench/scenarios/prv_stream.ts): a bare `Deno.serve` that answers
 * every GET with `MIB` MiB decrypted from AES-256-GCM chunks held in memory, 64 KiB each, four
 * decryptions in flight, as a pull stream with a `Content-Length`. No routing, token, store, file
 * or header: what no HTTP server streaming the same decryption can go below on this machine.
 *   deno run --allow-net=127.0.0.1 bench/baselines/stream_floor_server.ts PORT MIB
 */
import { ivOf, randomAesKey } from "./raw_aes.ts";

const port = Number(Deno.args[0] ?? 7398);
const bytes = Number(Deno.args[1] ?? 1) * (1 << 20);
const CHUNK = 65_536;
const IN_FLIGHT = 4;

const key = await randomAesKey();
const count = Math.ceil(bytes / CHUNK);
const sealed: ArrayBuffer[] = [];
for (let i = 0; i < count; i++) {
  const plain = crypto.getRandomValues(new Uint8Array(Math.min(CHUNK, bytes - i * CHUNK)));
  sealed.push(await crypto.subtle.encrypt({ name: "AES-GCM", iv: ivOf(i) }, key, plain));
}

/** The plaintext as a pull stream, IN_FLIGHT decryptions ahead of the consumer. */
function plaintext(): ReadableStream<Uint8Array> {
  const ahead: Promise<ArrayBuffer>[] = [];
  let next = 0;
  const fill = () => {
    while (ahead.length < IN_FLIGHT && next < count) {
      const i = next++;
      ahead.push(crypto.subtle.decrypt({ name: "AES-GCM", iv: ivOf(i) }, key, sealed[i]));
    }
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      fill();
      const part = ahead.shift();
      if (part === undefined) return controller.close();
      controller.enqueue(new Uint8Array(await part));
      fill();
      if (ahead.length === 0 && next === count) controller.close();
    },
  }, { highWaterMark: 0 });
}

Deno.serve(
  { hostname: "127.0.0.1", port, onListen: () => console.log("listening") },
  () =>
    new Response(plaintext(), {
      headers: { "Content-Type": "application/octet-stream", "Content-Length": String(bytes) },
    }),
);
