/** Tests of MsgsStore: round trip, Message-ID lookups, forward-only state moves, listings. */
import assert from "node:assert/strict";
import { withStore } from "./_store.ts";

Deno.test("MsgsStore.insert() stores every field and get() reads it back", () => {
  withStore((s) => {
    const full = {
      rfc724Mid: "m1@x",
      chatId: 10,
      fromId: 11,
      text: "hello",
      timestamp: 100,
      state: 1,
      subject: "Message from Bob",
      timestampSent: 99,
      timestampRcvd: 100,
      viewtype: "File",
      file: "0123456789abcdef0123456789abcdef.pdf",
      fileName: "report.pdf",
      fileMime: "application/pdf",
      fileBytes: 42,
      hidden: false,
      isInfo: false,
      mdnRequested: true,
      error: "",
      inReplyTo: "m0@x",
      postMessageId: "",
      downloadState: "Done",
      fromFingerprint: "A".repeat(40),
      edited: false,
      quote: "what was asked",
      systemType: "EphemeralTimerChanged",
    };
    const id = s.msgs.insert(full);
    assert.equal(id, 10);
    assert.deepEqual(s.msgs.get(id), { id, ...full });
    const minimal = s.msgs.insert({ chatId: 10, fromId: 1, state: 10, timestamp: 5 });
    assert.deepEqual(s.msgs.get(minimal), {
      ...full,
      id: minimal,
      rfc724Mid: "",
      fromId: 1,
      text: "",
      timestamp: 5,
      state: 10,
      subject: "",
      timestampSent: 0,
      timestampRcvd: 0,
      viewtype: "Text",
      file: "",
      fileName: "",
      fileMime: "",
      fileBytes: 0,
      mdnRequested: false,
      inReplyTo: "",
      fromFingerprint: "",
      quote: "",
      systemType: "",
    });
  });
});

Deno.test("MsgsStore finds messages by Message-ID and by announced post-message id", () => {
  withStore((s) => {
    const pre = s.msgs.insert({
      rfc724Mid: "pre@x",
      postMessageId: "post@x",
      chatId: 10,
      fromId: 11,
      state: 1,
      timestamp: 1,
    });
    assert.equal(s.msgs.byRfc724Mid("pre@x")?.id, pre);
    assert.equal(s.msgs.byPostMessageId("post@x")?.id, pre);
    assert.equal(s.msgs.byRfc724Mid("post@x"), undefined);
    assert.equal(s.msgs.byRfc724Mid(""), undefined, "'' never matches");
    assert.equal(s.msgs.byPostMessageId(""), undefined);
  });
});

Deno.test("MsgsStore.moveState() moves only from the listed states", () => {
  withStore((s) => {
    const id = s.msgs.insert({ chatId: 10, fromId: 1, state: 10, timestamp: 1 });
    assert.equal(s.msgs.moveState(id, 20, [10]), true);
    assert.equal(s.msgs.moveState(id, 20, [10]), false);
    assert.equal(s.msgs.moveState(id, 28, [10, 20, 26]), true);
    assert.equal(s.msgs.moveState(id, 26, [10, 20]), false);
    assert.equal(s.msgs.get(id)?.state, 28);
    assert.equal(s.msgs.moveState(id, 20, []), false);
  });
});

Deno.test("MsgsStore listings skip hidden messages and sort by time, then id", () => {
  withStore((s) => {
    const at = (timestamp: number, extra: Record<string, unknown> = {}) =>
      s.msgs.insert({ chatId: 10, fromId: 11, state: 1, timestamp, ...extra });
    const late = at(300);
    const early = at(100);
    at(200, { hidden: true });
    const info = at(250, { isInfo: true, state: 16 });
    const sameTime = at(300);
    s.msgs.insert({ chatId: 11, fromId: 12, state: 1, timestamp: 400 });
    assert.deepEqual(s.msgs.stampsOfChat(10).map((m) => m.id), [early, info, late, sameTime]);
    assert.deepEqual(s.msgs.stampsOfChat(10, true).map((m) => m.id), [info]);
    assert.equal(s.msgs.lastOfChat(10)?.id, sameTime);
    assert.deepEqual(s.msgs.freshIds(), [15, sameTime, late, early]);
  });
});

Deno.test("MsgsStore.fileRefs() counts the messages that use a blob", () => {
  withStore((s) => {
    const blob = "0123456789abcdef0123456789abcdef.txt";
    const a = s.msgs.insert({ chatId: 10, fromId: 1, state: 10, timestamp: 1, file: blob });
    s.msgs.insert({ chatId: 10, fromId: 1, state: 10, timestamp: 2, file: blob });
    assert.equal(s.msgs.fileRefs(blob), 2);
    assert.equal(s.msgs.delete(a), true);
    assert.equal(s.msgs.delete(a), false);
    assert.equal(s.msgs.fileRefs(blob), 1);
    assert.equal(s.msgs.fileRefs(""), 0);
  });
});

Deno.test("MsgsStore.waitingForJoin() lists our unrendered pending messages; setRendered() once", () => {
  withStore((s) => {
    const wait1 = s.msgs.insert({ chatId: 10, fromId: 1, state: 10, timestamp: 5 });
    s.msgs.insert({ rfc724Mid: "sent@x", chatId: 10, fromId: 1, state: 10, timestamp: 6 });
    s.msgs.insert({ chatId: 10, fromId: 11, state: 1, timestamp: 7 });
    const wait2 = s.msgs.insert({ chatId: 11, fromId: 1, state: 10, timestamp: 8 });
    const failed = s.msgs.insert({ chatId: 10, fromId: 1, state: 24, timestamp: 9 });
    assert.deepEqual(s.msgs.waitingForJoin().map((m) => m.id), [wait1, wait2]);
    assert.deepEqual(s.msgs.waitingForJoin(10).map((m) => m.id), [wait1]);
    assert.equal(s.msgs.setRendered(wait1, "r1@x", "Message from Me"), true);
    assert.equal(s.msgs.setRendered(wait1, "r2@x", "again"), false, "rendered only once");
    assert.equal(s.msgs.setRendered(failed, "r3@x", ""), false, "a failed message stays failed");
    assert.deepEqual([s.msgs.get(wait1)!.rfc724Mid, s.msgs.get(wait1)!.subject], [
      "r1@x",
      "Message from Me",
    ]);
    assert.deepEqual(s.msgs.waitingForJoin().map((m) => m.id), [wait2]);
  });
});

Deno.test("MsgsStore.fileOf() reads the sender, chat and file of one message only", () => {
  withStore((s) => {
    const id = s.msgs.insert({
      chatId: 12,
      fromId: 1,
      state: 20,
      timestamp: 5,
      text: "a long text the viewer never needs",
      file: "0123456789abcdef0123456789abcdef.prv",
    });
    const bare = s.msgs.insert({ chatId: 12, fromId: 11, state: 10, timestamp: 6 });
    assert.deepEqual(s.msgs.fileOf(id), {
      fromId: 1,
      chatId: 12,
      file: "0123456789abcdef0123456789abcdef.prv",
    });
    assert.deepEqual(s.msgs.fileOf(bare), { fromId: 11, chatId: 12, file: "" });
    assert.equal(s.msgs.fileOf(bare + 1), undefined);
  });
});
