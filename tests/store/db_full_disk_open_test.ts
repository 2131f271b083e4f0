/**
 * Opening the account database on a full disk (issue 18 §3, a start on a full disk): SQLite
 * cannot create the WAL index file, so the store opens with the index in memory, reads work,
 * writes answer DiskFullError, and once space returns a write commits, the disk state says ok
 * and the database is shared again (another connection reads it). A migration a full disk keeps
 * out is a DiskFullError, not "disk I/O error". On a real tmpfs (root, the test namespace).
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { DiskFullError } from "../../src/errors.ts";
import { setLogSink } from "../../src/log.ts";
import { Db } from "../../src/store/mod.ts";
import { MIGRATIONS } from "../../src/store/migrations.ts";
import { fillDisk, mountTmpfs, NO_TMPFS } from "../_helpers/tmpfs.ts";

function quiet(lines: string[] = []): () => void {
  const prev = setLogSink((line) => void lines.push(line));
  return () => setLogSink(prev);
}

Deno.test({
  name: "a database on a full disk opens, reads, refuses writes, and is shared once space is back",
  ignore: NO_TMPFS,
  async fn() {
    const lines: string[] = [];
    const restore = quiet(lines);
    await using fs = await mountTmpfs("db-full", "4m");
    const path = `${fs.path}/gateway.db`;
    try {
      const first = new Db(path);
      first.run("INSERT INTO config (key, value) VALUES ('k', 'v')");
      first.close(); // the last connection removes -wal and -shm
      assert.deepEqual([...Deno.readDirSync(fs.path)].map((e) => e.name), ["gateway.db"]);
      fillDisk(`${fs.path}/filler`);

      const db = new Db(path);
      try {
        assert.equal(db.disk.word, "full");
        assert.match(lines.join("\n"), /the disk is full/);
        const row = db.get<{ value: string }>("SELECT value FROM config WHERE key = 'k'");
        assert.equal(row?.value, "v");
        assert.throws(
          () => db.run("INSERT INTO config (key, value) VALUES ('k2', ?)", "x".repeat(20_000)),
          DiskFullError,
        );
        assert.equal(db.probeSpace(), false);
        assert.equal(db.disk.word, "full");

        await Deno.remove(`${fs.path}/filler`);
        assert.equal(db.probeSpace(), true);
        assert.equal(db.disk.word, "ok");
        db.run("INSERT INTO config (key, value) VALUES ('k2', 'w')");
        // Shared again: another connection reads while this one is open.
        const other = new DatabaseSync(path, { readOnly: true });
        try {
          const n = other.prepare("SELECT count(*) AS n FROM config WHERE key IN ('k', 'k2')")
            .get() as { n: number };
          assert.equal(n.n, 2);
        } finally {
          other.close();
        }
        const ok = db.get<{ integrity_check: string }>("PRAGMA integrity_check");
        assert.equal(ok?.integrity_check, "ok");
      } finally {
        db.close();
      }
    } finally {
      restore();
    }
  },
});

Deno.test({
  name: "a new database a full disk keeps out is a DiskFullError, and nothing stays open",
  ignore: NO_TMPFS,
  async fn() {
    const restore = quiet();
    await using fs = await mountTmpfs("db-full-new", "4m");
    const path = `${fs.path}/gateway.db`;
    try {
      Deno.writeFileSync(path, new Uint8Array()); // as provisioning creates it
      fillDisk(`${fs.path}/filler`);
      assert.throws(() => new Db(path), DiskFullError);
      await Deno.remove(`${fs.path}/filler`);
      const db = new Db(path); // no lock left behind: it opens and migrates
      try {
        const v = db.get<{ user_version: number }>("PRAGMA user_version")?.user_version;
        assert.equal(v, MIGRATIONS.length);
      } finally {
        db.close();
      }
    } finally {
      restore();
    }
  },
});
