/** Tests of body_decoders.ts: the same bytes as parser.ts's whole-body decoding, in any pieces. */
import assert from "node:assert/strict";
import { bodyDecoder } from "../../src/mime/body_decoders.ts";
import { concatBytes } from "../../src/bytes.ts";
import { MimeParseError } from "../../src/mime/parser.ts";

async function decode(encoding: string, text: string, size: number): Promise<Uint8Array> {
  const out: Uint8Array[] = [];
  const d = bodyDecoder(encoding, { write: (b) => void out.push(b.slice()) });
  const bytes = new TextEncoder().encode(text);
  for (let i = 0; i < bytes.length; i += size) await d.write(bytes.subarray(i, i + size));
  await d.end();
  return concatBytes(out);
}

Deno.test("base64 decodes across pieces and skips line ends and stray characters", async () => {
  const data = new Uint8Array(1000).map((_, i) => i % 256);
  const b64 = btoa(String.fromCharCode(...data)).replace(/(.{76})/g, "$1\r\n") + "\r\n";
  for (const size of [1, 3, 77, 100_000]) assert.deepEqual(await decode("base64", b64, size), data);
  assert.deepEqual(await decode("BASE64", "aGV*sbG8=", 2), new TextEncoder().encode("hello"));
  await assert.rejects(decode("base64", "aGVsb", 2), MimeParseError);
});

Deno.test("quoted-printable decodes escapes and soft line breaks cut between pieces", async () => {
  const qp = "caf=C3=A9 =\r\nsoft=3D=\nend\r\nx=4";
  const want = new TextEncoder().encode("café soft=end\r\nx=4");
  for (const size of [1, 2, 5, 100]) {
    assert.deepEqual(await decode("quoted-printable", qp, size), want);
  }
});

Deno.test("7bit, 8bit and unknown encodings pass the bytes through", async () => {
  for (const e of ["7bit", "8bit", "x-unknown"]) {
    assert.deepEqual(await decode(e, "a=b\r\nc", 2), new TextEncoder().encode("a=b\r\nc"));
  }
});
