/** Tests of the size decision: one mail when it fits, else -1 naming file, sizes and who. */
import assert from "node:assert/strict";
import {
  checkMailSize,
  decideSize,
  largestFittingFile,
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

Deno.test("a mail over the limit is refused for every recipient (no peer takes parts yet)", () => {
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
