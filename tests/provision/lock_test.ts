/** Tests of lock.ts: one gateway per data directory, across processes, released when one dies. */
import assert from "node:assert/strict";
import { StartupError } from "../../src/errors.ts";
import { DataDirLock } from "../../src/provision/lock.ts";
import { makeTempDir } from "../_helpers/temp.ts";

const LOCK_MODULE = new URL("../../src/provision/lock.ts", import.meta.url).href;

/** Deno code for a child that takes the lock on `dir`, reports, and then holds it or exits. */
function childCode(dir: string, hold: boolean): string {
  return `import { DataDirLock } from ${JSON.stringify(LOCK_MODULE)};
try {
  DataDirLock.acquire(${JSON.stringify(dir)});
  console.log("acquired");
  ${hold ? "setInterval(() => {}, 1000);" : ""}
} catch (e) { console.log(e.message); }`;
}

async function runChild(dir: string): Promise<string> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["eval", childCode(dir, false)],
    stdout: "piped",
  }).output();
  return new TextDecoder().decode(out.stdout).trim();
}

/** Starts a child that holds the lock; resolves once it reported. */
async function holdingChild(dir: string) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["eval", childCode(dir, true)],
    stdout: "piped",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    text += value;
  }
  reader.releaseLock();
  return { child, first: text.trim() };
}

Deno.test("DataDirLock is exclusive across processes; the message names the directory, file and pid", async () => {
  await using tmp = await makeTempDir("lock");
  const lock = DataDirLock.acquire(tmp.path);
  try {
    assert.equal(
      await runChild(tmp.path),
      `another gateway is already running on data directory ${tmp.path} ` +
        `(lock file ${tmp.path}/gateway.lock held by pid ${Deno.pid})`,
    );
  } finally {
    lock.release();
  }
  assert.equal(await runChild(tmp.path), "acquired");
  assert.equal(Deno.statSync(`${tmp.path}/gateway.lock`).mode! & 0o777, 0o600);
});

Deno.test("DataDirLock is released by the kernel when the holder is killed", async () => {
  await using tmp = await makeTempDir("lock");
  const { child, first } = await holdingChild(tmp.path);
  try {
    assert.equal(first, "acquired");
    assert.throws(
      () => DataDirLock.acquire(tmp.path),
      (e: Error) => e instanceof StartupError && e.message.endsWith(`held by pid ${child.pid})`),
    );
  } finally {
    child.kill("SIGKILL");
    await child.stdout.cancel().catch(() => {});
    await child.status;
  }
  // The stale file still names the dead pid; only the OS lock counts.
  const lock = DataDirLock.acquire(tmp.path);
  assert.equal(Deno.readTextFileSync(lock.path).trim(), String(Deno.pid));
  lock.release();
  lock.release(); // idempotent
});

Deno.test("DataDirLock refuses a second acquire in the same process too", async () => {
  await using tmp = await makeTempDir("lock");
  const lock = DataDirLock.acquire(tmp.path);
  try {
    assert.throws(() => DataDirLock.acquire(tmp.path), /already running/);
  } finally {
    lock.release();
  }
});
