/** The full-disk watch: probes at start, then only while the disk state says full; ends on abort. */
import assert from "node:assert/strict";
import { DiskState, watchDiskSpace } from "../../src/store/mod.ts";
import { setLogSink } from "../../src/log.ts";

Deno.test("the watch probes at start and while the disk is full, and stops once it is not", async () => {
  const restore = setLogSink(() => {});
  try {
    const disk = new DiskState(); // a start: nothing known yet
    let probes = 0;
    let spaceAfter = 3;
    const db = {
      disk,
      probeSpace() {
        probes++;
        if (--spaceAfter > 0) {
          disk.noteFull("database or disk is full");
          return false;
        }
        disk.noteSpace();
        return true;
      },
    };
    const stop = new AbortController();
    let sleeps = 0;
    await watchDiskSpace(db, stop.signal, {
      sleep: () => {
        if (++sleeps === 10) stop.abort();
        return Promise.resolve();
      },
    });
    assert.equal(probes, 3);
    assert.equal(disk.word, "ok");
  } finally {
    setLogSink(restore);
  }
});
