/** unlessDiskFull: a start-up write that can wait gives way to a full disk, and only to it. */
import assert from "node:assert/strict";
import { DiskFullError } from "../../src/errors.ts";
import { setLogSink } from "../../src/log.ts";
import { unlessDiskFull } from "../../src/provision/unless_disk_full.ts";

Deno.test("unlessDiskFull() falls back and says what waits on a full disk; other errors pass", async () => {
  const lines: string[] = [];
  const prev = setLogSink((l) => lines.push(l));
  try {
    assert.equal(await unlessDiskFull("x", () => 1, () => 2), 1);
    const full = () => {
      throw new Error("write", { cause: new DiskFullError("os error 28") });
    };
    assert.equal(await unlessDiskFull("the display name", full, () => 2), 2);
    assert.match(
      lines.join("\n"),
      /WARN .*the disk is full: the display name is left for the next start/,
    );
    await assert.rejects(
      () => unlessDiskFull("x", () => Promise.reject(new Error("permission denied")), () => 2),
      /permission denied/,
    );
  } finally {
    setLogSink(prev);
  }
});
