import assert from "node:assert/strict";
import {
  type CachedOpen,
  type FileIdentity,
  identityOf,
  PrvOpenCache,
  RECENT_WRITE_MS,
} from "../../src/protected_files/prv_open_cache.ts";
import { openPrv } from "../../src/prv/mod.ts";
import { withTempDir } from "../_helpers/temp.ts";
import { encryptBytes, randomBytes } from "../prv/_prv.ts";

const { prv: PRV, enc: ENC } = await encryptBytes(randomBytes(70_000));
const OPEN: CachedOpen = { ...(await openPrv(PRV, ENC.cek)).verified, mime: "image/png" };
const ID: FileIdentity = { dev: 1, ino: 2, size: PRV.byteLength, mtimeMs: 3_000, ctimeMs: 3_000 };
/** A clock long after the file's last write. */
const LATER = { now: () => 1_000_000 };

Deno.test("PrvOpenCache hits for the same file identity and key only", () => {
  const cache = new PrvOpenCache(LATER);
  assert.equal(cache.get("/b/x.prv", ID, ENC.cek), undefined);
  cache.set("/b/x.prv", ID, ENC.cek, OPEN);
  assert.equal(cache.get("/b/x.prv", ID, ENC.cek), OPEN);
  assert.equal(cache.get("/b/x.prv", { ...ID }, new Uint8Array(ENC.cek)), OPEN, "by value");
  assert.equal(cache.get("/b/other.prv", ID, ENC.cek), undefined);
});

Deno.test("PrvOpenCache drops an entry whose file changed or was opened with another key", () => {
  const changes: Partial<FileIdentity>[] = [
    { dev: 9 },
    { ino: 9 },
    { size: ID.size - 1 },
    { mtimeMs: 9 },
    { ctimeMs: 9 },
  ];
  for (const change of changes) {
    const cache = new PrvOpenCache(LATER);
    cache.set("/b/x.prv", ID, ENC.cek, OPEN);
    assert.equal(cache.get("/b/x.prv", { ...ID, ...change }, ENC.cek), undefined);
    assert.equal(cache.size, 0, `dropped after ${JSON.stringify(change)}`);
    assert.equal(cache.get("/b/x.prv", ID, ENC.cek), undefined, "not back for the old file");
  }
  const cache = new PrvOpenCache(LATER);
  cache.set("/b/x.prv", ID, ENC.cek, OPEN);
  const other = new Uint8Array(ENC.cek);
  other[0] ^= 1;
  assert.equal(cache.get("/b/x.prv", ID, other), undefined);
  assert.equal(cache.size, 0);
});

Deno.test("PrvOpenCache keeps at most `limit` entries, the least recently used going first", () => {
  const cache = new PrvOpenCache({ ...LATER, limit: 3 });
  for (const name of ["a", "b", "c"]) cache.set(`/b/${name}`, ID, ENC.cek, OPEN);
  assert.equal(cache.get("/b/a", ID, ENC.cek), OPEN); // a is now the most recently used
  cache.set("/b/d", ID, ENC.cek, OPEN);
  assert.equal(cache.size, 3);
  assert.equal(cache.get("/b/b", ID, ENC.cek), undefined, "b was the least recently used");
  for (const name of ["a", "c", "d"]) assert.equal(cache.get(`/b/${name}`, ID, ENC.cek), OPEN);
  for (let i = 0; i < 100; i++) cache.set(`/b/many-${i}`, ID, ENC.cek, OPEN);
  assert.equal(cache.size, 3);
});

Deno.test("PrvOpenCache forgets a received file's entries and a path", () => {
  const cache = new PrvOpenCache(LATER);
  cache.set("/b/r1", ID, ENC.cek, OPEN, 7);
  cache.set("/b/r1-copy", ID, ENC.cek, OPEN, 7);
  cache.set("/b/r2", ID, ENC.cek, OPEN, 8);
  cache.set("/b/own", ID, ENC.cek, OPEN);
  cache.forgetFile(7);
  assert.equal(cache.size, 2);
  assert.equal(cache.get("/b/r1", ID, ENC.cek), undefined);
  assert.equal(cache.get("/b/r2", ID, ENC.cek), OPEN);
  cache.forgetPath("/b/own");
  assert.equal(cache.get("/b/own", ID, ENC.cek), undefined);
  assert.equal(cache.size, 1);
});

Deno.test("PrvOpenCache does not keep a file written moments ago (file times tick coarsely)", () => {
  const clock = { now: ID.mtimeMs + RECENT_WRITE_MS - 1 };
  const cache = new PrvOpenCache({ now: () => clock.now });
  assert.equal(cache.set("/b/x.prv", ID, ENC.cek, OPEN), false);
  assert.equal(cache.get("/b/x.prv", ID, ENC.cek), undefined);
  clock.now = ID.mtimeMs + RECENT_WRITE_MS;
  assert.equal(cache.set("/b/x.prv", ID, ENC.cek, OPEN), true);
  assert.equal(cache.get("/b/x.prv", ID, ENC.cek), OPEN);
});

Deno.test("identityOf() tells a file rewritten in place with the same size from the old one", async () => {
  await withTempDir(async (dir) => {
    const path = `${dir}/f.prv`;
    await Deno.writeFile(path, PRV);
    await Deno.utime(path, 1_000, 1_000);
    const before = identityOf(await Deno.stat(path));
    assert.equal(before.size, PRV.byteLength);
    assert.equal(before.mtimeMs, 1_000_000);
    const bytes = PRV.slice();
    bytes[100] ^= 1;
    await Deno.writeFile(path, bytes);
    const after = identityOf(await Deno.stat(path));
    assert.equal(after.size, before.size);
    assert.equal(after.ino, before.ino);
    assert.notEqual(after.mtimeMs, before.mtimeMs);
  }, "open-cache");
});
