/**
 * Golden tests of the wire shape of every event type (the product's published SSE shape):
 * `type`, `account_id: 1`, snake_case members, as one unnamed `id:`/`data:` frame (only `lag`
 * is a named event).
 */
import assert from "node:assert/strict";
import {
  type GatewayEvent,
  type GatewayEventKind,
  LAG_EVENT,
  toWire,
} from "../../src/events/types.ts";
import { sseFrame } from "../../src/http/events_route.ts";

/** One sample per union member (the type makes a new member without a sample a compile error). */
const SAMPLES: { [K in GatewayEventKind]: Extract<GatewayEvent, { kind: K }> } = {
  ConnectivityChanged: { kind: "ConnectivityChanged", connectivity: 4000 },
  ImapConnected: { kind: "ImapConnected", msg: "IMAP connected to x" },
  SmtpConnected: { kind: "SmtpConnected", msg: "SMTP connected to x" },
  ConfigureProgress: { kind: "ConfigureProgress", progress: 1000, comment: null },
  ImexProgress: { kind: "ImexProgress", progress: 500 },
  ImexFileWritten: { kind: "ImexFileWritten", path: "/data/files/edge-backup.bak" },
  Info: { kind: "Info", msg: "i" },
  Warning: { kind: "Warning", msg: "w" },
  Error: { kind: "Error", msg: "e" },
  IncomingMsg: { kind: "IncomingMsg", chatId: 7, msgId: 42 },
  MsgsChanged: { kind: "MsgsChanged", chatId: 7, msgId: 42 },
  MsgDelivered: { kind: "MsgDelivered", chatId: 7, msgId: 88 },
  MsgRead: { kind: "MsgRead", chatId: 7, msgId: 88 },
  MsgFailed: { kind: "MsgFailed", chatId: 7, msgId: 88 },
  MsgsNoticed: { kind: "MsgsNoticed", chatId: 7 },
  MsgDeleted: { kind: "MsgDeleted", chatId: 7, msgId: 42 },
  ReactionsChanged: { kind: "ReactionsChanged", chatId: 7, msgId: 42, contactId: 10 },
  IncomingReaction: {
    kind: "IncomingReaction",
    chatId: 7,
    contactId: 10,
    msgId: 42,
    reaction: "👍",
  },
  ChatModified: { kind: "ChatModified", chatId: 7 },
  ChatEphemeralTimerModified: { kind: "ChatEphemeralTimerModified", chatId: 7, timer: 60 },
  ContactsChanged: { kind: "ContactsChanged", contactId: 10 },
  SecurejoinInviterProgress: {
    kind: "SecurejoinInviterProgress",
    contactId: 10,
    chatType: 100,
    chatId: 7,
    progress: 1000,
  },
  SecurejoinJoinerProgress: {
    kind: "SecurejoinJoinerProgress",
    contactId: 10,
    chatType: 100,
    chatId: 7,
    progress: 400,
  },
  ViewerSessionStarted: { kind: "ViewerSessionStarted", expiresAt: 1700000000 },
  ViewerSessionEnded: { kind: "ViewerSessionEnded", reason: "expired" },
  ViewerFileStreamed: { kind: "ViewerFileStreamed", msgId: 42, bytes: 512 },
  MailQuarantined: { kind: "MailQuarantined", quarantineId: 3, messageId: "m@x", reason: "r" },
  PrivittyFileEncrypted: { kind: "PrivittyFileEncrypted", chatId: 7, msgId: 42 },
  PrivittyFileDecrypted: { kind: "PrivittyFileDecrypted", chatId: 7, msgId: 42 },
  PrivittyFileAccessRevoked: {
    kind: "PrivittyFileAccessRevoked",
    chatId: 7,
    contactId: 12,
    fileId: 3,
  },
  PrivittyFileAccessChanged: { kind: "PrivittyFileAccessChanged", chatId: 7, fileId: 3 },
  PrivittyAccessRenewRequested: {
    kind: "PrivittyAccessRenewRequested",
    chatId: 7,
    fileId: 3,
    requesterContactId: 12,
  },
  TransferProgress: {
    kind: "TransferProgress",
    chatId: 7,
    msgId: 42,
    transferId: "ab",
    direction: "out" as const,
    bytes: 5,
    total: 10,
    path: "relay" as const,
  },
  TransferDone: {
    kind: "TransferDone",
    chatId: 7,
    msgId: 42,
    transferId: "ab",
    direction: "out" as const,
    bytes: 5,
    total: 10,
    path: "relay" as const,
  },
  TransferFailed: {
    kind: "TransferFailed",
    reason: "no_space",
    chatId: 7,
    msgId: 42,
    transferId: "ab",
    direction: "out" as const,
    bytes: 5,
    total: 10,
    path: "relay" as const,
  },
  lag: { kind: "lag", dropped: 5, oldestAvailable: 9 },
};

/** The `data:` line of each, as the product's clients read it. */
const WIRE: Record<GatewayEventKind, string> = {
  ConnectivityChanged: '{"type":"ConnectivityChanged","account_id":1,"connectivity":4000}',
  ImapConnected: '{"type":"ImapConnected","account_id":1,"msg":"IMAP connected to x"}',
  SmtpConnected: '{"type":"SmtpConnected","account_id":1,"msg":"SMTP connected to x"}',
  ConfigureProgress: '{"type":"ConfigureProgress","account_id":1,"progress":1000,"comment":null}',
  ImexProgress: '{"type":"ImexProgress","account_id":1,"progress":500}',
  ImexFileWritten: '{"type":"ImexFileWritten","account_id":1,"path":"/data/files/edge-backup.bak"}',
  Info: '{"type":"Info","account_id":1,"msg":"i"}',
  Warning: '{"type":"Warning","account_id":1,"msg":"w"}',
  Error: '{"type":"Error","account_id":1,"msg":"e"}',
  IncomingMsg: '{"type":"IncomingMsg","account_id":1,"chat_id":7,"msg_id":42}',
  MsgsChanged: '{"type":"MsgsChanged","account_id":1,"chat_id":7,"msg_id":42}',
  MsgDelivered: '{"type":"MsgDelivered","account_id":1,"chat_id":7,"msg_id":88}',
  MsgRead: '{"type":"MsgRead","account_id":1,"chat_id":7,"msg_id":88}',
  MsgFailed: '{"type":"MsgFailed","account_id":1,"chat_id":7,"msg_id":88}',
  MsgsNoticed: '{"type":"MsgsNoticed","account_id":1,"chat_id":7}',
  MsgDeleted: '{"type":"MsgDeleted","account_id":1,"chat_id":7,"msg_id":42}',
  ReactionsChanged:
    '{"type":"ReactionsChanged","account_id":1,"chat_id":7,"msg_id":42,"contact_id":10}',
  IncomingReaction:
    '{"type":"IncomingReaction","account_id":1,"chat_id":7,"contact_id":10,"msg_id":42,"reaction":"👍"}',
  ChatModified: '{"type":"ChatModified","account_id":1,"chat_id":7}',
  ChatEphemeralTimerModified:
    '{"type":"ChatEphemeralTimerModified","account_id":1,"chat_id":7,"timer":60}',
  ContactsChanged: '{"type":"ContactsChanged","account_id":1,"contact_id":10}',
  SecurejoinInviterProgress:
    '{"type":"SecurejoinInviterProgress","account_id":1,"contact_id":10,"chat_type":100,"chat_id":7,"progress":1000}',
  SecurejoinJoinerProgress:
    '{"type":"SecurejoinJoinerProgress","account_id":1,"contact_id":10,"chat_type":100,"chat_id":7,"progress":400}',
  ViewerSessionStarted: '{"type":"ViewerSessionStarted","account_id":1,"expires_at":1700000000}',
  ViewerSessionEnded: '{"type":"ViewerSessionEnded","account_id":1,"reason":"expired"}',
  ViewerFileStreamed: '{"type":"ViewerFileStreamed","account_id":1,"msg_id":42,"bytes":512}',
  MailQuarantined:
    '{"type":"MailQuarantined","account_id":1,"quarantine_id":3,"message_id":"m@x","reason":"r"}',
  TransferProgress:
    '{"type":"TransferProgress","account_id":1,"chat_id":7,"msg_id":42,"transfer_id":"ab","direction":"out","bytes":5,"total":10,"path":"relay"}',
  TransferDone:
    '{"type":"TransferDone","account_id":1,"chat_id":7,"msg_id":42,"transfer_id":"ab","direction":"out","bytes":5,"total":10,"path":"relay"}',
  TransferFailed:
    '{"type":"TransferFailed","account_id":1,"reason":"no_space","chat_id":7,"msg_id":42,"transfer_id":"ab","direction":"out","bytes":5,"total":10,"path":"relay"}',
  PrivittyFileEncrypted: '{"type":"PrivittyFileEncrypted","account_id":1,"chat_id":7,"msg_id":42}',
  PrivittyFileDecrypted: '{"type":"PrivittyFileDecrypted","account_id":1,"chat_id":7,"msg_id":42}',
  PrivittyFileAccessRevoked:
    '{"type":"PrivittyFileAccessRevoked","account_id":1,"chat_id":7,"contact_id":12,"file_id":3}',
  PrivittyFileAccessChanged:
    '{"type":"PrivittyFileAccessChanged","account_id":1,"chat_id":7,"file_id":3}',
  PrivittyAccessRenewRequested:
    '{"type":"PrivittyAccessRenewRequested","account_id":1,"chat_id":7,"file_id":3,"requester_contact_id":12}',
  lag: '{"type":"lag","account_id":1,"dropped":5,"oldest_available":9}',
};

for (const kind of Object.keys(SAMPLES) as GatewayEventKind[]) {
  Deno.test(`toWire() and sseFrame() give ${kind} the published shape`, () => {
    const wire = toWire(SAMPLES[kind]);
    assert.equal(JSON.stringify(wire), WIRE[kind]);
    assert.equal(wire.type, kind);
    assert.equal(wire.account_id, 1);
    for (const name of Object.keys(wire)) assert.match(name, /^[a-z][a-z0-9_]*$/, "snake_case");
    const named = kind === LAG_EVENT ? `event: ${LAG_EVENT}\n` : "";
    assert.equal(sseFrame({ id: 3, event: wire }), `id: 3\n${named}data: ${WIRE[kind]}\n\n`);
  });
}

Deno.test("WireEvent narrows on type to its snake_case members (compile-time shape)", () => {
  const wire = toWire({ kind: "IncomingMsg", chatId: 7, msgId: 42 });
  if (wire.type !== "IncomingMsg") throw new Error("unreachable");
  const pair: [number, number] = [wire.chat_id, wire.msg_id];
  assert.deepEqual(pair, [7, 42]);
});
