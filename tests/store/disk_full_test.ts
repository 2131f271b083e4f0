/**
 * A full disk as the store reports it: SQLite's SQLITE_FULL ("database or disk is full", made
 * here with `max_page_count`) and a file write's ENOSPC become a DiskFullError (JSON-RPC -1, a
 * message that says the disk is full), never "cannot rollback - no transaction is active"; the
 * store's disk state says full until a write commits again.
 */
import assert from "node:assert/strict";
import { DiskFullError, diskFullError } from "../../src/errors.ts";
import { RpcCode } from "../../src/constants.ts";
import { setLogSink } from "../../src/log.ts";
import { Db } from "../../src/store/mod.ts";

function quiet(): () => void {
  const prev = setLogSink(() => {});
  return () => setLogSink(prev);
}

/** A database that can grow by a few pages only: the next big write finds it "full". */
function smallDb(): Db {
  const db = new Db(":memory:");
  db.exec("CREATE TABLE t (v BLOB)");
  const pages = db.get<{ page_count: number }>("PRAGMA page_count")!.page_count;
  db.exec(`PRAGMA max_page_count = ${pages + 2}`);
  return db;
}

Deno.test("SQLITE_FULL in a transaction: DiskFullError with the real reason, nothing written", () => {
  const restore = quiet();
  const db = smallDb();
  try {
    db.run("INSERT INTO t (v) VALUES (?)", new Uint8Array(100));
    assert.equal(db.disk.word, "ok");
    assert.throws(
      () =>
        db.tx(() => {
          db.run("INSERT INTO t (v) VALUES (?)", new Uint8Array(10));
          db.run("INSERT INTO t (v) VALUES (?)", new Uint8Array(1024 * 1024));
        }),
      DiskFullError,
    );
    assert.equal(db.get<{ n: number }>("SELECT count(*) AS n FROM t")!.n, 1);
    assert.equal(db.disk.word, "full");
    // The connection is usable: no transaction was left open.
    db.run("INSERT INTO t (v) VALUES (?)", new Uint8Array(10));
    assert.equal(db.disk.word, "ok");
    assert.equal(
      db.get<{ integrity_check: string }>("PRAGMA integrity_check")!.integrity_check,
      "ok",
    );
  } finally {
    db.close();
    restore();
  }
});

Deno.test("DiskFullError's message names the full disk, not the rollback", () => {
  const restore = quiet();
  const db = smallDb();
  try {
    try {
      db.tx(() => db.run("INSERT INTO t (v) VALUES (?)", new Uint8Array(1024 * 1024)));
      assert.fail("no error");
    } catch (err) {
      assert.ok(err instanceof DiskFullError);
      assert.equal(err.code, RpcCode.APPLICATION);
      assert.match(err.message, /^the disk is full \(database or disk is full\)/);
      assert.doesNotMatch(err.message, /cannot rollback/);
    }
    // Outside a transaction too.
    assert.throws(
      () => db.run("INSERT INTO t (v) VALUES (?)", new Uint8Array(1024 * 1024)),
      DiskFullError,
    );
  } finally {
    db.close();
    restore();
  }
});

Deno.test("diskFullError() knows ENOSPC of a file write and finds it in a cause chain", () => {
  const enospc = Object.assign(new Error("No space left on device (os error 28)"), {
    code: "ENOSPC",
  });
  const found = diskFullError(new Error("cannot store the blob", { cause: enospc }));
  assert.ok(found instanceof DiskFullError);
  assert.equal(found.cause, enospc);
  assert.match(found.message, /the disk is full \(No space left on device/);
  assert.equal(diskFullError(new Error("No space left on device (os error 28)"))?.code, -1);
  assert.equal(diskFullError(new Error("database or disk is full"))?.code, -1);
  assert.equal(diskFullError(new Error("database is locked")), undefined);
  assert.equal(diskFullError("ENOSPC as a string is not an error"), undefined);
  const same = new DiskFullError("x");
  assert.equal(diskFullError(same), same);
});

Deno.test("ENOSPC from a real file write is recognised", async () => {
  // /dev/full answers every write with ENOSPC.
  let err: unknown;
  try {
    await Deno.writeFile("/dev/full", new Uint8Array(10));
  } catch (e) {
    err = e;
  }
  assert.ok(err !== undefined, "writing /dev/full failed");
  assert.ok(diskFullError(err) instanceof DiskFullError, String(err));
});
