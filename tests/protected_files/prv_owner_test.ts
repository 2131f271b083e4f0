/**
 * The owner's protect step on a full disk (issue 18 §3): when the sent file cannot be recorded,
 * secure_send_file answers the disk-full error and leaves no `.prv` behind; once space is back
 * the same call works.
 */
import assert from "node:assert/strict";
import { DiskFullError } from "../../src/errors.ts";
import { plainFile, protect, prvPair } from "./_pair.ts";

const RULES = { allow_download: false, allow_forward: false, duration_minutes: 0 };

Deno.test("protect() that cannot record the file leaves no .prv, and works once space is back", async () => {
  await using p = await prvPair();
  const path = await plainFile(p, "report.csv", new TextEncoder().encode("a,b\n1,2\n"));
  const store = p.alice.store.protectedFiles;
  const insertSent = store.insertSent.bind(store);
  store.insertSent = () => {
    throw new DiskFullError("database or disk is full");
  };
  await assert.rejects(() => protect(p, path, RULES), DiskFullError);
  const names = () => [...Deno.readDirSync(p.filesDir)].map((e) => e.name).sort();
  assert.deepEqual(names(), ["report.csv"], "no .prv and no temporary file stay behind");

  store.insertSent = insertSent;
  const r = await protect(p, path, RULES);
  assert.deepEqual(names(), ["report.csv", "report.csv.prv"]);
  assert.equal(p.alice.protectedFiles.fileIdByPath(r.encrypted_path), r.file_id);
});
