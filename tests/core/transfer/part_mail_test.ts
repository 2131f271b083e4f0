/** A part's payload travels as binary literal data: the MIME parser gives back the same bytes. */
import assert from "node:assert/strict";
import { parseMime } from "../../../src/mime/parser.ts";
import { renderTransferMail } from "../../../src/core/transfer/part_mail.ts";
import { Header } from "../../../src/protocol.ts";
import { armorMessage } from "../../../src/crypto/armor.ts";

Deno.test("every byte value survives the inner MIME of a part; armor costs ~1.37×", () => {
  const body = new Uint8Array(300_000);
  for (let i = 0; i < body.length; i++) body[i] = (i * 7919) % 256;
  body.set([13, 10, 13, 10, 0x2d, 0x2d], 1000); // CRLF CRLF and "--" in the payload
  const inner = renderTransferMail({
    from: "a@x.test",
    to: ["b@x.test"],
    messageId: "t-1@x.test",
    date: new Date(0),
    header: [Header.EDGE_TRANSFER_PART, "id=x"],
    body,
  });
  const parsed = parseMime(inner);
  assert.equal(parsed.headers.get(Header.EDGE_TRANSFER_PART), "id=x");
  assert.equal(parsed.headers.get(Header.EDGE_CAPABILITIES), "large-files-1");
  assert.deepEqual(parsed.body, body);
  const ratio = armorMessage(inner).length / body.length;
  assert.ok(ratio > 1.3 && ratio < 1.4, `armor ratio ${ratio}`);
});
