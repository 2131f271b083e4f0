/** Tests of BatchScanner: arrays, nesting, strings with brackets and commas, stopping, chunking. */
import assert from "node:assert/strict";
import { BatchScanner } from "../../src/http/batch_scan.ts";

const encoder = new TextEncoder();

/** Members of `text` counted up to `stopAt`, fed in one chunk. */
function count(text: string, stopAt: number): number {
  return new BatchScanner(stopAt).feed(encoder.encode(text));
}

Deno.test("BatchScanner counts top-level members only", () => {
  assert.equal(count("[]", 10), 0);
  assert.equal(count(" [ ] ", 10), 0);
  assert.equal(count('{"a":[1,2]}', 10), 0);
  assert.equal(count("", 10), 0);
  assert.equal(count("[{}]", 10), 1);
  assert.equal(count('[{"p":[1,2,3]},{"q":{"r":[4,5]}}, 6]', 10), 3);
  assert.equal(count('\n[{"s":"a,b],[c\\",d"}, {}]', 10), 2);
  assert.equal(count('[{"s":"\\\\"}, {"t":"é,ü"}]', 10), 2);
});

Deno.test("BatchScanner stops at the given count", () => {
  const huge = `[${"{},".repeat(500_000)}{}]`;
  const scanner = new BatchScanner(101);
  assert.equal(scanner.feed(encoder.encode(huge)), 101);
  assert.ok(scanner.done);
  assert.equal(count(`[${"{},".repeat(99)}{}]`, 101), 100);
  assert.equal(count("[{}]", 1), 1);
});

Deno.test("BatchScanner counts alike however the bytes are split into chunks", () => {
  const texts = [
    '  [ {"a":"x\\"],[,"}, [1,[2,3]] ,{"b":{"c":"\\\\"}}, "é,]" ]',
    '{"jsonrpc":"2.0","method":"m","params":[1,2],"id":1}',
    " \n [ \t ] ",
  ];
  for (const text of texts) {
    const bytes = encoder.encode(text);
    const whole = new BatchScanner(100).feed(bytes);
    for (let cut = 0; cut <= bytes.length; cut++) {
      for (const size of [1, 2, 3, 7]) {
        const scanner = new BatchScanner(100);
        scanner.feed(bytes.subarray(0, cut));
        for (let at = cut; at < bytes.length; at += size) {
          scanner.feed(bytes.subarray(at, at + size));
        }
        assert.equal(scanner.members, whole, `${text} cut at ${cut}, then ${size} at a time`);
      }
    }
  }
  assert.equal(new BatchScanner(100).feed(encoder.encode(texts[0])), 4);
});

Deno.test("BatchScanner is done once the array ends, and then ignores what follows", () => {
  const scanner = new BatchScanner(100);
  scanner.feed(encoder.encode("[1,2"));
  assert.ok(!scanner.done);
  scanner.feed(encoder.encode(",3] ,4,5"));
  assert.ok(scanner.done);
  assert.equal(scanner.feed(encoder.encode(",6,7")), 3);
});
