/** The log never stops the daemon: a sink that throws (stderr on a full disk) drops the line. */
import assert from "node:assert/strict";
import { logger, setLogSink } from "../src/log.ts";

Deno.test("a log write that fails is dropped; the next one is written", () => {
  const lines: string[] = [];
  let failing = true;
  const prev = setLogSink((line) => {
    if (failing) throw new Error("No space left on device (os error 28)");
    lines.push(line);
  });
  try {
    const log = logger("test");
    log.warn("lost"); // must not throw
    log.error("lost too", { n: 1 });
    failing = false;
    log.info("written");
    assert.equal(lines.length, 1);
    assert.match(lines[0], /INFO {2}\[test\] written$/);
  } finally {
    setLogSink(prev);
  }
});
