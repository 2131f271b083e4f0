/** Tests of schema migrations on older databases with data, and of the new tables' rules. */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { MIGRATIONS } from "../../src/store/migrations.ts";
import { Store } from "../../src/store/mod.ts";
import { withTempDir } from "../_helpers/temp.ts";

/** Writes a database exactly as version 1 left it, with messages (one Message-ID twice). */
function writeVersion1(path: string): void {
  const db = new DatabaseSync(path);
  db.exec(MIGRATIONS[0]);
  db.exec("PRAGMA user_version = 1");
  db.exec(`INSERT INTO config (key, value) VALUES ('addr', 'me@relay.test')`);
  const insert = db.prepare(
    "INSERT INTO msgs (rfc724_mid, chat_id, from_id, text, timestamp, state) VALUES (?, ?, ?, ?, ?, ?)",
  );
  insert.run("a@x", 10, 11, "first", 1000, 1);
  insert.run("b@x", 10, 1, "second", 1001, 20);
  insert.run("a@x", 10, 11, "first again", 1002, 1);
  insert.run("", 10, 11, "no id", 1003, 1);
  insert.run("", 10, 11, "no id either", 1004, 1);
  db.close();
}

Deno.test("migration 2 upgrades a version-1 file database and keeps its data", async () => {
  await withTempDir((dir) => {
    const path = `${dir}/gateway.db`;
    writeVersion1(path);
    const store = Store.open(path);
    try {
      assert.equal(
        store.db.get<{ user_version: number }>("PRAGMA user_version")?.user_version,
        MIGRATIONS.length,
      );
      assert.equal(store.config.get("addr"), "me@relay.test");
      const first = store.msgs.get(10)!;
      assert.equal(first.text, "first");
      assert.equal(first.viewtype, "Text");
      assert.equal(first.downloadState, "Done");
      assert.equal(first.file, "");
      assert.equal(first.hidden, false);
      assert.equal(store.msgs.get(11)?.state, 20);
      // The second copy of "a@x" was a duplicate delivery: only the first one is kept.
      assert.equal(store.msgs.get(12), undefined);
      assert.equal(store.msgs.byRfc724Mid("a@x")?.id, 10);
      assert.equal(store.countMessages(), 4, "messages without Message-ID are all kept");
      // New tables number from 10, like msgs.
      assert.equal(store.contacts.insert({ addr: "p@relay.test" }), 10);
      assert.equal(store.chats.insert({ type: 100, contactId: 10 }), 10);
    } finally {
      store.close();
    }
    const again = Store.open(path);
    try {
      assert.equal(
        again.contacts.get(10)?.addr,
        "p@relay.test",
        "reopening migrates nothing twice",
      );
    } finally {
      again.close();
    }
  });
});

Deno.test("migration 2 tables are STRICT and every table has the documented constraints", () => {
  const store = Store.open(":memory:");
  try {
    const strict = store.db.all<{ name: string; strict: number }>(
      "SELECT name, strict FROM pragma_table_list WHERE schema = 'main' AND name NOT LIKE 'sqlite_%'",
    );
    for (const t of strict) assert.equal(t.strict, 1, `${t.name} is STRICT`);
    assert.throws(() => store.db.run("INSERT INTO contacts (addr, verified) VALUES ('x', 'yes')"));
    assert.throws(
      () => store.db.run("INSERT INTO securejoin_tokens (kind, token) VALUES ('other', 't')"),
      /CHECK/,
    );
    store.msgs.insert({ rfc724Mid: "m@x", chatId: 10, fromId: 1, state: 10, timestamp: 1 });
    assert.throws(
      () => store.msgs.insert({ rfc724Mid: "m@x", chatId: 10, fromId: 1, state: 10, timestamp: 1 }),
      /UNIQUE/,
    );
    store.contacts.insert({ addr: "a@x", fingerprint: "F".repeat(40) });
    assert.throws(
      () => store.contacts.insert({ addr: "b@x", fingerprint: "F".repeat(40) }),
      /UNIQUE/,
    );
    store.contacts.insert({ addr: "c@x" });
    assert.throws(() => store.contacts.insert({ addr: "c@x" }), /UNIQUE/, "one address-only c@x");
    store.contacts.insert({ addr: "c@x", fingerprint: "E".repeat(40) });
  } finally {
    store.close();
  }
});

Deno.test("Db opens in WAL mode with synchronous=FULL (a commit is on disk when it returns)", async () => {
  await withTempDir((dir) => {
    const store = Store.open(`${dir}/g.db`);
    try {
      assert.equal(
        store.db.get<{ journal_mode: string }>("PRAGMA journal_mode")?.journal_mode,
        "wal",
      );
      assert.equal(store.db.get<{ synchronous: number }>("PRAGMA synchronous")?.synchronous, 2);
    } finally {
      store.close();
    }
  });
});

Deno.test("migration 9 brings contacts 'seen' in the future back to the present", async () => {
  await withTempDir((dir) => {
    const path = `${dir}/gateway.db`;
    const db = new DatabaseSync(path);
    for (const m of MIGRATIONS.slice(0, 8)) db.exec(m);
    db.exec("PRAGMA user_version = 8");
    const now = Math.floor(Date.now() / 1000);
    const insert = db.prepare(
      "INSERT INTO contacts (addr, fingerprint, last_seen) VALUES ('a@x', ?, ?)",
    );
    insert.run("F".repeat(40), now + 365 * 24 * 3600);
    insert.run("E".repeat(40), 1000);
    db.close();
    const store = Store.open(path);
    try {
      const [future, past] = [store.contacts.get(10)!, store.contacts.get(11)!];
      assert.ok(future.lastSeen <= Math.floor(Date.now() / 1000), `${future.lastSeen}`);
      assert.ok(future.lastSeen >= now);
      assert.equal(past.lastSeen, 1000, "past dates untouched");
    } finally {
      store.close();
    }
  });
});

Deno.test("migration 17 keeps contacts (capability off) and adds the transfers table", async () => {
  await withTempDir((dir) => {
    const path = `${dir}/gateway.db`;
    const db = new DatabaseSync(path);
    assert.match(MIGRATIONS[16], /CREATE TABLE transfers/, "the transfers migration is the 17th");
    for (const m of MIGRATIONS.slice(0, 16)) db.exec(m);
    db.exec("PRAGMA user_version = 16");
    db.prepare("INSERT INTO contacts (addr, fingerprint) VALUES ('a@x', ?)").run("F".repeat(40));
    db.close();
    const store = Store.open(path);
    try {
      assert.equal(store.contacts.get(10)?.addr, "a@x");
      assert.equal(store.contacts.hasLargeFiles(10), false);
      store.contacts.setLargeFiles("F".repeat(40), true);
      assert.equal(store.contacts.hasLargeFiles(10), true);
      assert.deepEqual(store.transfers.active("out"), []);
    } finally {
      store.close();
    }
  });
});

Deno.test("migration 18 keeps transfer rows (path relay) and records the path that carries one", async () => {
  await withTempDir((dir) => {
    const path = `${dir}/gateway.db`;
    const db = new DatabaseSync(path);
    assert.match(MIGRATIONS[17], /ADD COLUMN path/, "the transfer path migration is the 18th");
    for (const m of MIGRATIONS.slice(0, 17)) db.exec(m);
    db.exec("PRAGMA user_version = 17");
    db.prepare(
      "INSERT INTO transfers (id, direction, state, size, sha256, part_size, parts, created_at, " +
        "updated_at) VALUES (?, 'out', 'active', 10, ?, 5, 2, 1, 1)",
    ).run("0".repeat(32), "a".repeat(64));
    db.close();
    const store = Store.open(path);
    try {
      const t = store.transfers.get("out", "0".repeat(32))!;
      assert.deepEqual([t.state, t.size, t.path], ["active", 10, "relay"]);
      store.transfers.setPath("out", t.id, "", "direct");
      assert.equal(store.transfers.get("out", t.id)?.path, "direct");
      assert.throws(
        () => store.db.run("UPDATE transfers SET path = 'carrier pigeon'"),
        /CHECK/,
      );
    } finally {
      store.close();
    }
  });
});
