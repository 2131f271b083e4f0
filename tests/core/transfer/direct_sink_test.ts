/** The direct path's sink: appends from the verified parts, records whole parts once synced. */
import assert from "node:assert/strict";
import { leadingBytes, PartialBlobSink } from "../../../src/core/transfer/direct_sink.ts";
import { makeTempDir } from "../../_helpers/temp.ts";

const T = { size: 25, partSize: 10, parts: 3 };

Deno.test("leadingBytes counts the parts set from part 0 without a gap", () => {
  assert.equal(leadingBytes(T, new Uint8Array([0b000])), 0);
  assert.equal(leadingBytes(T, new Uint8Array([0b101])), 10);
  assert.equal(leadingBytes(T, new Uint8Array([0b011])), 20);
  assert.equal(leadingBytes(T, new Uint8Array([0b111])), 25);
});

Deno.test("the sink records each part once its last byte is written, and resumes there", async () => {
  await using tmp = await makeTempDir("sink");
  const path = `${tmp.path}/.transfer-x.part`;
  const recorded: number[] = [];
  const sink = new PartialBlobSink(path, T, 0, (n) => recorded.push(n));
  assert.equal(await sink.resumeOffset(), 0);
  await sink.write(new Uint8Array(7).fill(1));
  await sink.write(new Uint8Array(7).fill(2)); // crosses the end of part 0
  sink.close();
  assert.deepEqual(recorded, [1]);
  // A new run starts from the recorded part: bytes 10.. are written again.
  const again = new PartialBlobSink(path, T, 10, (n) => recorded.push(n));
  assert.equal(await again.resumeOffset(), 10);
  await again.write(new Uint8Array(15).fill(3));
  again.close();
  assert.deepEqual(recorded, [1, 3]);
  const bytes = await Deno.readFile(path);
  assert.deepEqual([...bytes], [
    ...new Array(7).fill(1),
    ...new Array(3).fill(2),
    ...new Array(15).fill(3),
  ]);
  const back = new Uint8Array(await new Response(again.readBack(10)).arrayBuffer());
  assert.deepEqual([...back], [...bytes.subarray(0, 10)]);
});
