/** Tests of the young-garbage hint (src/memory/young_gc.ts). */
import assert from "node:assert/strict";
import { YoungGarbageHint } from "../../src/memory/young_gc.ts";

/** What collectYoungGarbage() returns in a fresh `deno eval` run with `flags`. */
async function hintInChild(flags: string[]): Promise<string> {
  const url = new URL("../../src/memory/young_gc.ts", import.meta.url).href;
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "eval",
      ...flags,
      `const { collectYoungGarbage } = await import(${JSON.stringify(url)}); ` +
      "console.log(collectYoungGarbage());",
    ],
    stdout: "piped",
    stderr: "inherit",
  }).output();
  return new TextDecoder().decode(out.stdout).trim();
}

Deno.test("collectYoungGarbage() runs a GC only when the runtime exposes gc", async () => {
  assert.equal(await hintInChild([]), "false");
  assert.equal(await hintInChild(["--v8-flags=--expose-gc"]), "true");
});

Deno.test("YoungGarbageHint runs a minor GC each time `every` units add up, across calls", () => {
  const holder = globalThis as { gc?: unknown };
  const saved = holder.gc;
  const calls: unknown[] = [];
  holder.gc = (options: unknown) => calls.push(options);
  try {
    const hint = new YoungGarbageHint(10);
    hint.note(4);
    hint.note(4);
    assert.equal(calls.length, 0);
    hint.note(4); // 12: one hint, 2 carried over
    assert.deepEqual(calls, [{ type: "minor" }]);
    hint.note(7);
    assert.equal(calls.length, 1);
    hint.note(1); // 10 again
    assert.equal(calls.length, 2);
    hint.reset();
    hint.note(9);
    assert.equal(calls.length, 2, "reset starts afresh");
  } finally {
    if (saved === undefined) delete holder.gc;
    else holder.gc = saved;
  }
});
