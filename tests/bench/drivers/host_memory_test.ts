/** bench/drivers/host_memory.ts: the page-reporting switch always puts the order back; modes; the probe. */
import assert from "node:assert/strict";
import {
  hostMemoryMode,
  NO_REPORTING_ORDER,
  pageCacheCost,
  reportingOrder,
  requestedModes,
  withMemoryKept,
} from "../../../bench/drivers/host_memory.ts";
import { makeTempDir } from "../../_helpers/temp.ts";

Deno.test("hostMemoryMode reads the order: reported, kept above the largest block, absent", async () => {
  await using tmp = await makeTempDir("host-memory");
  const param = `${tmp.path}/page_reporting_order`;
  assert.equal(hostMemoryMode(param), "absent");
  assert.equal(reportingOrder(param), undefined);
  await Deno.writeTextFile(param, "9\n");
  assert.equal(hostMemoryMode(param), "reported");
  await Deno.writeTextFile(param, `${NO_REPORTING_ORDER}\n`);
  assert.equal(hostMemoryMode(param), "kept");
});

Deno.test("withMemoryKept stops reporting while the run lasts and restores the order, also on failure", async () => {
  await using tmp = await makeTempDir("host-memory");
  const param = `${tmp.path}/page_reporting_order`;
  await Deno.writeTextFile(param, "9\n");
  const seen = await withMemoryKept(() => Promise.resolve(hostMemoryMode(param)), param);
  assert.equal(seen, "kept");
  assert.equal(reportingOrder(param), 9);
  await assert.rejects(
    withMemoryKept(() => Promise.reject(new Error("run failed")), param),
    /run failed/,
  );
  assert.equal(reportingOrder(param), 9);
});

Deno.test("withMemoryKept without page reporting just runs", async () => {
  await using tmp = await makeTempDir("host-memory");
  assert.equal(await withMemoryKept(() => Promise.resolve(7), `${tmp.path}/none`), 7);
});

Deno.test("withMemoryKept names the cause when the order cannot be written, and runs nothing", async () => {
  // A numeric kernel parameter that is read-only even for root (the CI runs as root).
  const readOnly = "/proc/sys/kernel/ngroups_max";
  const before = reportingOrder(readOnly);
  assert.ok(before !== undefined, `${readOnly} is readable`);
  let ran = false;
  await assert.rejects(
    withMemoryKept(() => Promise.resolve(ran = true), readOnly),
    /cannot stop free page reporting .*ngroups_max.*run the benchmark as root/,
  );
  assert.equal(ran, false);
  assert.equal(reportingOrder(readOnly), before);
});

Deno.test("requestedModes: unset as-is, keep, both (kept first), anything else refused", () => {
  assert.deepEqual(requestedModes(undefined), ["as-is"]);
  assert.deepEqual(requestedModes("keep"), ["kept"]);
  assert.deepEqual(requestedModes("both"), ["kept", "as-is"]);
  assert.throws(() => requestedModes("off"), /use "keep", "both"/);
});

Deno.test("pageCacheCost writes three files, rests between the last two and leaves nothing", async () => {
  await using tmp = await makeTempDir("host-memory");
  const rests: number[] = [];
  const cost = await pageCacheCost(tmp.path, 2, (ms) => {
    rests.push(ms);
    return Promise.resolve();
  });
  assert.deepEqual(rests, [3_000]);
  assert.ok(cost.warmMsPerMiB > 0 && cost.coldMsPerMiB > 0);
  assert.deepEqual([...Deno.readDirSync(tmp.path)], []);
});
