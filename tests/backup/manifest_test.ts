/** Which entry names a restore may write: the account's files, never a path elsewhere. */
import assert from "node:assert/strict";
import { parseManifest, restorableEntry } from "../../src/backup/manifest.ts";

Deno.test("only the database, the index, the license and blob names are restorable", () => {
  for (
    const ok of [
      "accounts/accounts.json",
      "accounts/1/gateway.db",
      "privitty.lic",
      "accounts/1/blobs/0123456789abcdef0123456789abcdef.prv",
      "accounts/1/blobs/0123456789abcdef0123456789abcdef",
    ]
  ) assert.equal(restorableEntry(ok), true, ok);
  for (
    const bad of [
      "machine-id",
      "device-fingerprint",
      "gateway.lock",
      "files/x.txt",
      "accounts/1/blobs/../../../etc/passwd",
      "accounts/1/blobs/.write-123",
      "/etc/passwd",
      "accounts/1/gateway.db-wal",
      "manifest.json",
    ]
  ) assert.equal(restorableEntry(bad), false, bad);
});

Deno.test("a manifest of another format is not a backup of this gateway", () => {
  const bytes = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));
  assert.equal(
    parseManifest(bytes({ format: 1, addr: "a@b", journalPosition: 3 }), "f").addr,
    "a@b",
  );
  assert.throws(
    () => parseManifest(bytes({ format: 2 }), "f"),
    /manifest this gateway does not know/,
  );
  assert.throws(() => parseManifest(new Uint8Array([1, 2]), "f"), /unreadable manifest/);
  const newer = {
    format: 1,
    addr: "a@b",
    journalPosition: 3,
    schemaVersion: 9999,
    gatewayVersion: "9.0.0",
  };
  assert.throws(
    () => parseManifest(bytes(newer), "f"),
    /backup f was written by a newer gateway \(database schema 9999; this one knows up to \d+ and 9\.0\.0 wrote it\)/,
  );
});
