/** Tests of chat_assignment.ts: which chat a received chat message belongs to. */
import assert from "node:assert/strict";
import {
  assignChat,
  isValidGroupId,
  listIdOf,
  listNameOf,
} from "../../../src/core/receive/assignment.ts";
import type { ReadMail } from "../../../src/core/receive/mail_reader.ts";
import { MimeHeaders, parseMime } from "../../../src/mime/parser.ts";

function mail(headers: [string, string][], o: { encrypted?: boolean; signed?: boolean } = {}) {
  const h = new MimeHeaders(headers.map(([k, v]) => [k.toLowerCase(), v]));
  return {
    messageId: "m@x",
    from: { addr: "alice@x", name: "" },
    headers: h,
    content: parseMime(new TextEncoder().encode("\r\n")),
    encrypted: o.encrypted ?? true,
    ...((o.signed ?? true) ? { signer: "A".repeat(40) } : {}),
    gossip: [],
    sentAt: 0,
  } satisfies ReadMail;
}

Deno.test("assignChat() sends mail without group headers to the 1:1 chat", () => {
  assert.deepEqual(assignChat(mail([])), { kind: "single" });
});

Deno.test("assignChat() takes a valid Chat-Group-ID of signed, encrypted mail as a group", () => {
  const m = mail([["Chat-Group-ID", "wcRER5K_DK_tF9vEkoP5ij9B"], ["Chat-Group-Name", "Team"]]);
  assert.deepEqual(assignChat(m), {
    kind: "group",
    grpid: "wcRER5K_DK_tF9vEkoP5ij9B",
    name: "Team",
  });
});

Deno.test("assignChat() ignores an invalid group id and group ids on unsigned mail", () => {
  assert.deepEqual(assignChat(mail([["Chat-Group-ID", "short"]])), { kind: "single" });
  assert.deepEqual(assignChat(mail([["Chat-Group-ID", "a b c d e f g h i j"]])), {
    kind: "single",
  });
  const unsigned = mail([["Chat-Group-ID", "wcRER5K_DK_tF9vEkoP5ij9B"]], { signed: false });
  assert.deepEqual(assignChat(unsigned), { kind: "single" });
});

Deno.test("assignChat() checks Chat-List-ID before Chat-Group-ID (channels)", () => {
  const m = mail([
    ["Chat-List-ID", "Test Channel <b5cuxl63smn1I35Z0RkrS-_l>"],
    ["Chat-Group-ID", "wcRER5K_DK_tF9vEkoP5ij9B"],
  ]);
  assert.deepEqual(assignChat(m), {
    kind: "channel",
    listId: "b5cuxl63smn1I35Z0RkrS-_l",
    name: "Test Channel",
  });
  assert.deepEqual(assignChat(mail([["Chat-List-ID", "<>"]])), {
    kind: "discard",
    reason: "empty List-ID",
  });
});

Deno.test("isValidGroupId(), listIdOf() and listNameOf() follow Delta Chat", () => {
  assert.equal(isValidGroupId("wcRER5K_DK_tF9vEkoP5ij9B"), true);
  assert.equal(isValidGroupId("0123456789"), false);
  assert.equal(isValidGroupId("x".repeat(33)), false);
  assert.equal(listIdOf("Name <id-1>"), "id-1");
  assert.equal(listIdOf("bare-id"), "bare-id");
  assert.equal(listNameOf("My Channel <id-1>"), "My Channel");
});
