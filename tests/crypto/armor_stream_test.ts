/** Tests of armor_stream.ts: the same bytes as dearmor() whatever the pieces, and its errors. */
import assert from "node:assert/strict";
import { ArmorError, armorMessage, dearmor } from "../../src/crypto/armor.ts";
import { ArmorDecoder } from "../../src/crypto/armor_stream.ts";
import { concatBytes } from "../../src/bytes.ts";

const enc = new TextEncoder();

/** Feeds `text` in pieces of `size` bytes; returns the binary written. */
async function decode(text: string, size: number): Promise<Uint8Array> {
  const out: Uint8Array[] = [];
  const d = new ArmorDecoder({ write: (b) => void out.push(b.slice()) });
  const bytes = enc.encode(text);
  for (let i = 0; i < bytes.length; i += size) await d.write(bytes.subarray(i, i + size));
  await d.end();
  return concatBytes(out);
}

const binary = new Uint8Array(700_000).map((_, i) => (i * 7) % 256);

Deno.test("ArmorDecoder reads what armorMessage() wrote, in any pieces, as dearmor() does", async () => {
  const text = armorMessage(binary);
  for (const size of [1, 63, 65_536, text.length]) {
    if (size === 1) {
      const small = armorMessage(binary.subarray(0, 3000));
      assert.deepEqual(await decode(small, 1), dearmor(small));
      continue;
    }
    assert.deepEqual(await decode(text, size), binary);
  }
});

Deno.test("ArmorDecoder skips armor headers and text around the armor, takes LF lines", async () => {
  const body = armorMessage(binary.subarray(0, 10_000)).replace(
    "-----\r\n\r\n",
    "-----\r\nVersion: x\r\nComment: y\r\n\r\n",
  );
  const text = ("preamble\n" + body + "trailing text\n").replaceAll("\r\n", "\n");
  assert.deepEqual(await decode(text, 100), binary.subarray(0, 10_000));
  assert.deepEqual(await decode(text, 100), dearmor(text));
});

Deno.test("ArmorDecoder refuses a wrong checksum, a missing END, bad base64 and no armor", async () => {
  const text = armorMessage(binary.subarray(0, 5000));
  const lines = text.split("\r\n");
  const crcAt = lines.findIndex((l) => l.startsWith("="));
  const wrongCrc = [...lines.slice(0, crcAt), "=AAAA", ...lines.slice(crcAt + 1)].join("\r\n");
  await assert.rejects(decode(wrongCrc, 50), /checksum/);
  await assert.rejects(decode(text.slice(0, text.indexOf("=")), 50), /END PGP MESSAGE/);
  const bad = [...lines.slice(0, 3), "not*base64", ...lines.slice(3)].join("\r\n");
  await assert.rejects(decode(bad, 50), ArmorError);
  await assert.rejects(decode("hello\r\n", 3), /BEGIN PGP MESSAGE/);
});
