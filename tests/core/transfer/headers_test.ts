/** The transfer headers: round trips and strict refusals (a header that does not parse is none). */
import assert from "node:assert/strict";
import {
  formatAnnounce,
  formatControl,
  formatPart,
  newTransferId,
  parseAnnounce,
  parseControl,
  parsePart,
} from "../../../src/core/transfer/headers.ts";

const ID = "0123456789abcdef0123456789abcdef";
const SHA = "ab".repeat(32);

Deno.test("announce, part and control headers read back what was written", () => {
  const a = {
    id: ID,
    size: 1000,
    sha256: SHA,
    partSize: 300,
    parts: 4,
    name: "Größe; =x.bin",
    mime: "application/pdf",
  };
  assert.deepEqual(parseAnnounce(formatAnnounce(a)), a);
  const p = { id: ID, index: 3, offset: 900, length: 100, sha256: SHA };
  assert.deepEqual(parsePart(formatPart(p)), p);
  const r = { id: ID, action: "request" as const, parts: [0, 1, 2, 5, 7, 8] };
  assert.match(formatControl(r), /parts=0-2,5,7-8$/);
  assert.deepEqual(parseControl(formatControl(r)), r);
  assert.deepEqual(parseControl(formatControl({ id: ID, action: "done" })), {
    id: ID,
    action: "done",
  });
  assert.match(newTransferId(), /^[0-9a-f]{32}$/);
});

Deno.test("headers that do not add up are refused", () => {
  const good = `id=${ID}; size=1000; sha256=${SHA}; part-size=300; parts=4; mime=a/b; name=eA`;
  assert.ok(parseAnnounce(good));
  for (
    const bad of [
      good.replace("parts=4", "parts=5"), // parts ≠ ⌈size / part-size⌉
      good.replace("part-size=300", "part-size=0"),
      good.replace(`id=${ID}`, "id=../../etc"),
      good.replace(`sha256=${SHA}`, "sha256=zz"),
      good.replace("size=1000", "size=-1"),
      good.replace("size=1000", "size=99999999999999999999"),
      "garbage",
    ]
  ) assert.equal(parseAnnounce(bad), undefined, bad);
  assert.equal(parsePart(`id=${ID}; index=1; offset=x; length=1; sha256=${SHA}`), undefined);
  assert.equal(parseControl(`id=${ID}; action=explode`), undefined);
  assert.equal(parseControl(`id=${ID}; action=request; parts=5-1`), undefined);
  assert.equal(parseControl(`id=${ID}; action=request; parts=0-99999`), undefined, "too many");
  assert.equal(parseControl(`id=${ID}; action=refused; reason=a b`), undefined);
});
