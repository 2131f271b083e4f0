/** Tests of the size decision: one mail when it fits, parts to capable peers, else -1. */
import assert from "node:assert/strict";
import {
  checkMailSize,
  decideSize,
  largestFittingFile,
  MAX_PART_BYTES,
  type PartsQuestion,
  RELAY_HEADER_ROOM_BYTES,
} from "../../../src/core/send/size_limit.ts";
import { GatewayError } from "../../../src/errors.ts";
import type { ContactRecord } from "../../../src/store/mod.ts";

const bob = { addr: "bob@relay.test" } as ContactRecord;
const carol = { addr: "carol@relay.test" } as ContactRecord;

Deno.test("a mail within the limit, at it, or with the limit unknown goes as one mail", () => {
  const room = RELAY_HEADER_ROOM_BYTES;
  for (const [mailBytes, limit] of [[10, 11 + room], [11, 11 + room], [1e12, undefined]] as const) {
    assert.deepEqual(decideSize({ mailBytes, limit, recipients: [bob] }), { kind: "one-mail" });
  }
});

Deno.test("a mail over the limit without a file that may go as parts is refused for all", () => {
  const limit = 11 + RELAY_HEADER_ROOM_BYTES;
  assert.deepEqual(decideSize({ mailBytes: 12, limit, recipients: [bob, carol] }), {
    kind: "refuse",
    unreachable: [bob, carol],
  });
});

Deno.test("the refusal is -1 and names the file, its size, the mail's size, the limit and who", () => {
  const file = { name: "clip.mp4", bytes: 60_000_000 };
  assert.throws(() => checkMailSize(112_800_000, 31_457_280, { file }, [bob]), GatewayError);
  try {
    checkMailSize(112_800_000, 31_457_280, { file }, [bob]);
  } catch (e) {
    const m = (e as GatewayError).message;
    assert.equal((e as GatewayError).code, -1);
    for (const part of ["clip.mp4", "60000000 bytes", "112800000 bytes", "31457280", bob.addr]) {
      assert.ok(m.includes(part), `"${part}" in: ${m}`);
    }
    assert.ok(!m.includes("group member"), m);
  }
  try {
    checkMailSize(112_800_000, 31_457_280, { file, group: {} }, [bob, carol]);
    assert.fail("not refused");
  } catch (e) {
    const m = (e as GatewayError).message;
    assert.match(m, /group members bob@relay\.test, carol@relay\.test cannot receive/);
  }
  checkMailSize(100, 31_457_280, { file, group: {} }, [bob]); // fits: no throw
});

Deno.test("largestFittingFile: the last file size whose mail fits, none when nothing fits", () => {
  const room = RELAY_HEADER_ROOM_BYTES;
  const sizer = (n: number) => 1000 + 2 * n;
  assert.equal(largestFittingFile(sizer, 1000 + room + 21), 10);
  assert.equal(largestFittingFile(sizer, 1000 + room + 20), 10);
  assert.equal(largestFittingFile(sizer, 1000 + room), 0);
  assert.equal(largestFittingFile(sizer, 999 + room), undefined);
  try {
    checkMailSize(sizer(11), 1000 + room + 21, { file: { name: "f", bytes: 11 } }, [bob], sizer);
    assert.fail("not refused");
  } catch (e) {
    assert.match((e as Error).message, /the largest file that fits is 10 bytes$/);
  }
});

/** Parts of a file whose part mails cost 1000 bytes plus 1.4× their payload. */
function partsOf(fileBytes: number, capable: readonly ContactRecord[]): PartsQuestion {
  return {
    fileBytes,
    capable: (c) => capable.includes(c),
    partSizer: (n) => 1000 + Math.ceil(n * 1.4),
  };
}

Deno.test("a file over the limit to capable gateways goes as parts whose mails fit the limit", () => {
  const limit = 3 * 1024 * 1024;
  const d = decideSize({
    mailBytes: 15_000_000,
    limit,
    recipients: [bob, carol],
    parts: partsOf(8 * 1024 * 1024, [bob, carol]),
  });
  assert.equal(d.kind, "parts");
  if (d.kind !== "parts") return;
  assert.equal(d.partSize % 1024, 0);
  assert.ok(1000 + d.partSize * 1.4 <= limit - RELAY_HEADER_ROOM_BYTES, "a part mail fits");
  assert.ok(1000 + (d.partSize + 1024) * 1.4 > limit - RELAY_HEADER_ROOM_BYTES, "as large as fits");
  assert.ok(d.partSize > 1024 * 1024, "parts above 1 MiB here");
  assert.equal(d.parts, Math.ceil(8 * 1024 * 1024 / d.partSize));
});

Deno.test("parts are at most 8 MiB whatever the limit allows", () => {
  const d = decideSize({
    mailBytes: 1e12,
    limit: 100 * 1024 * 1024,
    recipients: [bob],
    parts: partsOf(1e11, [bob]),
  });
  assert.deepEqual(d.kind === "parts" && d.partSize, MAX_PART_BYTES);
});

Deno.test("a group member without the capability is named in the refusal, before anything", () => {
  const limit = 1024 * 1024;
  const file = { name: "big.bin", bytes: 8 * 1024 * 1024 };
  const d = decideSize({
    mailBytes: 16_000_000,
    limit,
    recipients: [bob, carol],
    parts: partsOf(file.bytes, [bob]),
  });
  assert.deepEqual(d, { kind: "refuse", unreachable: [carol] });
  assert.throws(
    () =>
      checkMailSize(16_000_000, limit, { file, group: {} }, [bob, carol], undefined, {
        ...partsOf(file.bytes, [bob]),
      }),
    (e: Error) =>
      e instanceof GatewayError && e.message.includes("group member carol@relay.test ") &&
      e.message.includes("(8388608 bytes)") && e.message.includes(`limit of ${limit} bytes`),
  );
});

Deno.test("a limit too small for the smallest part refuses even capable recipients", () => {
  const d = decideSize({
    mailBytes: 100_000,
    limit: 4096 + 10_000,
    recipients: [bob],
    parts: partsOf(50_000, [bob]),
  });
  assert.deepEqual(d, { kind: "refuse", unreachable: [bob] });
});
