/** Tests of the streamed base64 lines: the same bytes as the whole-buffer encoders, any chunking. */
import assert from "node:assert/strict";
import { armorChunks, armorMessage } from "../../src/crypto/armor.ts";
import { base64LineChunks } from "../../src/crypto/base64_lines.ts";
import { renderChatMessage } from "../../src/mime/factory.ts";

async function* pieces(bytes: Uint8Array, sizes: readonly number[]): AsyncGenerator<Uint8Array> {
  let at = 0;
  for (let i = 0; at < bytes.length; i++) {
    const n = sizes[i % sizes.length];
    yield bytes.subarray(at, at + n);
    at += n;
  }
}

async function joined(chunks: AsyncIterable<Uint8Array>): Promise<string> {
  const parts: Uint8Array[] = [];
  for await (const c of chunks) parts.push(c);
  return new TextDecoder().decode(await new Blob(parts as BlobPart[]).bytes());
}

/** The attachment body renderChatMessage writes for `bytes`. */
function mimeBody(bytes: Uint8Array): string {
  const text = new TextDecoder().decode(renderChatMessage({
    from: { addr: "a@x.test" },
    to: [{ addr: "b@x.test" }],
    messageId: "<m@x.test>",
    date: new Date(0),
    subject: "s",
    autocryptKey: new Uint8Array(1),
    boundary: "B",
    text: "",
    file: { name: "f", mime: "application/octet-stream", bytes },
  }));
  return text.slice(text.lastIndexOf("base64\r\n\r\n") + 10, text.lastIndexOf("\r\n--B--"));
}

Deno.test("base64LineChunks matches the MIME body and the armor for any size and chunking", async () => {
  const data = crypto.getRandomValues(new Uint8Array(20_000));
  for (const n of [0, 1, 2, 3, 56, 57, 58, 113, 114, 1000, 20_000]) {
    const bytes = data.subarray(0, n);
    for (const sizes of [[n || 1], [1], [7, 57, 3], [4096, 1]]) {
      assert.equal(
        await joined(base64LineChunks(pieces(bytes, sizes), 76, false)),
        mimeBody(bytes),
        `${n} bytes in pieces of ${sizes}`,
      );
      assert.equal(
        await joined(armorChunks(pieces(bytes, sizes))),
        armorMessage(bytes),
        `armor of ${n} bytes in pieces of ${sizes}`,
      );
    }
  }
});
