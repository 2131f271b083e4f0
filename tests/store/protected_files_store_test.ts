/** The protected-file store's lookups by the blob name's hash prefix (sent and received). */
import assert from "node:assert/strict";
import { withStore } from "./_store.ts";

const hex = (c: string) => c.repeat(64);

const sent = (prvSha256: string, fileUid: string) => ({
  fileUid,
  chatId: 10,
  path: `/files/${fileUid}.prv`,
  prvSha256,
  plaintextSha256: hex("0"),
  name: "a.pdf",
  mime: "application/pdf",
  size: 1,
  cek: new Uint8Array(32),
  allowDownload: false,
  allowForward: false,
  durationMinutes: 0,
  filePdu: "",
  createdAt: 1,
  keyTag: "",
});

const received = (prvSha256: string, msgId: number) => ({
  msgId,
  chatId: 10,
  ownerContactId: 11,
  fileUid: `uid-${msgId}`,
  prvSha256,
  s1: new Uint8Array(32),
  allowDownload: false,
  allowForward: false,
  durationMinutes: 0,
  name: "a.pdf",
  mime: "application/pdf",
  size: 1,
  receivedAt: 1,
  windowEnd: 0,
  deviceTag: "",
  filePdu: "",
  forwardPdu: "",
});

Deno.test("sent and received files are found by a hash prefix: the newest match, no other", () => {
  withStore((s) => {
    const a = `${"ab".repeat(16)}${hex("1").slice(32)}`;
    const b = `${"ab".repeat(16)}${hex("2").slice(32)}`; // same 32-char prefix, newer
    const other = hex("c");
    s.protectedFiles.insertSent(sent(a, "u1"), []);
    const newer = s.protectedFiles.insertSent(sent(b, "u2"), []);
    s.protectedFiles.insertSent(sent(other, "u3"), []);
    assert.equal(s.protectedFiles.sentByHashPrefix(a.slice(0, 32))?.id, newer);
    assert.equal(s.protectedFiles.sentByHashPrefix(other.slice(0, 32))?.prvSha256, other);
    assert.equal(s.protectedFiles.sentByHashPrefix(hex("d").slice(0, 32)), undefined);

    s.protectedFiles.insertReceived(received(a, 1));
    const r = s.protectedFiles.insertReceived(received(b, 2));
    assert.equal(s.protectedFiles.receivedByHashPrefix(b.slice(0, 32))?.id, r);
    assert.equal(s.protectedFiles.receivedByHashPrefix(hex("e").slice(0, 32)), undefined);
  });
});

Deno.test("a hash prefix is compared as text: no wildcard, nothing matched by a longer name", () => {
  withStore((s) => {
    const h = hex("a");
    s.protectedFiles.insertSent(sent(h, "u1"), []);
    for (const probe of ["%", "_", `${h.slice(0, 31)}_`, `${h.slice(0, 32)}.prv`, "photo.png"]) {
      assert.equal(s.protectedFiles.sentByHashPrefix(probe), undefined, probe);
    }
    assert.equal(s.protectedFiles.sentByHashPrefix(h)?.prvSha256, h);
  });
});

Deno.test("sentKeyByHashPrefix() gives the newest match's id, uid, wrapped key and name", () => {
  withStore((s) => {
    const a = `${"cd".repeat(16)}${hex("1").slice(32)}`;
    const b = `${"cd".repeat(16)}${hex("2").slice(32)}`;
    s.protectedFiles.insertSent(sent(a, "u1"), []);
    const newer = s.protectedFiles.insertSent(
      { ...sent(b, "u2"), cek: new Uint8Array(32).fill(7), name: "plan.png" },
      [],
    );
    const full = s.protectedFiles.sentByHashPrefix(a.slice(0, 32))!;
    assert.deepEqual(s.protectedFiles.sentKeyByHashPrefix(a.slice(0, 32)), {
      id: newer,
      fileUid: "u2",
      cek: new Uint8Array(32).fill(7),
      name: "plan.png",
      keyTag: "",
    });
    assert.equal(full.id, newer);
    for (const probe of ["%", `${a.slice(0, 31)}_`, hex("e").slice(0, 32)]) {
      assert.equal(s.protectedFiles.sentKeyByHashPrefix(probe), undefined, probe);
    }
  });
});
