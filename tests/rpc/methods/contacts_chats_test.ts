/** Golden tests of the contact and chat methods through dispatch. */
import assert from "node:assert/strict";
import { BOB_FPR, call, result, rpcError, seeded } from "./_messaging.ts";

const BOB = {
  id: 10,
  address: "bob@relay.test",
  displayName: "Bob",
  authName: "Bob",
  name: "",
  nameAndAddr: "Bob (bob@relay.test)",
  color: "#6cb234",
  status: "",
  profileImage: null,
  isBlocked: false,
  isBot: false,
  isKeyContact: true,
  e2eeAvail: true,
  isVerified: false,
  verifierId: null,
  lastSeen: 1_700_000_000,
  wasSeenRecently: false,
  fingerprint: BOB_FPR,
};

Deno.test("get_contact_ids, lookup_contact_id_by_addr and get_contact answer Delta Chat shapes", async () => {
  const s = seeded();
  try {
    assert.deepEqual(await result(s, "get_contact_ids", [1, 0, null]), [10]);
    assert.deepEqual(await result(s, "get_contact_ids", [1, 2, null]), [10, 1]);
    assert.deepEqual(await result(s, "get_contact_ids", [1, 4, null]), []);
    assert.deepEqual(await result(s, "get_contact_ids", [1, 0, "nobody"]), []);
    assert.equal(await result(s, "lookup_contact_id_by_addr", [1, "BOB@relay.test"]), 10);
    assert.equal(await result(s, "lookup_contact_id_by_addr", [1, "me@relay.test"]), 1);
    assert.equal(await result(s, "lookup_contact_id_by_addr", [1, "x@relay.test"]), null);
    assert.deepEqual(await result(s, "get_contact", [1, 10]), BOB);
    s.core.contacts.markVerified(10);
    const verified = await result(s, "get_contact", [1, 10]) as Record<string, unknown>;
    assert.equal(verified.isVerified, true);
    assert.equal(verified.verifierId, 1);
    const self = await result(s, "get_contact", [1, 1]) as Record<string, unknown>;
    assert.equal(self.displayName, "Me");
    assert.equal(self.address, "me@relay.test");
    assert.equal(self.authName, "Edge One");
    assert.deepEqual(await rpcError(s, "get_contact", [1, 42]), {
      code: -1,
      message: "contact 42 not found",
    });
    assert.equal((await rpcError(s, "get_contact_ids", [1, "0", null])).code, -32602);
  } finally {
    s.store.close();
  }
});

Deno.test("create_chat_by_contact_id gets or creates; unknown contacts are a clear -1", async () => {
  const s = seeded();
  try {
    assert.equal(await result(s, "create_chat_by_contact_id", [1, s.bob]), s.chatId);
    assert.deepEqual(await rpcError(s, "create_chat_by_contact_id", [1, 77]), {
      code: -1,
      message: "contact 77 not found",
    });
    assert.deepEqual(await result(s, "get_chat_contacts", [1, s.chatId]), [1, s.bob]);
    assert.deepEqual(await rpcError(s, "get_chat_contacts", [1, 55]), {
      code: -1,
      message: "chat 55 not found",
    });
  } finally {
    s.store.close();
  }
});

Deno.test("get_chatlist_entries and get_chatlist_items_by_entries give contract + Delta Chat items", async () => {
  const s = seeded();
  try {
    s.core.messages.storeIncoming({
      rfc724Mid: "in1@relay.test",
      chatId: s.chatId,
      fromId: s.bob,
      text: "hello\nthere",
      timestampSent: 1_700_000_100,
      timestampRcvd: 1_700_000_105,
    });
    assert.deepEqual(await result(s, "get_chatlist_entries", [1, null, null, null]), [10]);
    assert.deepEqual(await result(s, "get_chatlist_entries", [1, 0, "bo", null]), [10]);
    assert.deepEqual(await result(s, "get_chatlist_entries", [1, null, "zed", null]), []);
    assert.deepEqual(await result(s, "get_chatlist_entries", [1, null, null, 11]), []);
    assert.deepEqual(await result(s, "get_chatlist_items_by_entries", [1, [10, 99]]), {
      "10": {
        kind: "ChatListItem",
        id: 10,
        name: "Bob",
        chatType: 100,
        freshMessageCounter: 1,
        lastUpdated: 1_700_000_100_000,
        summaryText1: "",
        summaryText2: "hello there",
        summaryStatus: 1,
        summaryPreviewImage: null,
        lastMessageId: 10,
        lastMessageType: "Text",
        dmChatContact: 10,
        avatarPath: null,
        color: "#6cb234",
        isEncrypted: true,
        isGroup: false,
        isContactRequest: false,
        isArchived: false,
        isMuted: false,
        isPinned: false,
        isSelfTalk: false,
        isDeviceTalk: false,
        isSendingLocation: false,
        isSelfInGroup: true,
        wasSeenRecently: false,
      },
      "99": { kind: "Error", id: 99, error: "chat 99 not found" },
    });
    s.store.chats.setArchived(s.chatId, true);
    assert.deepEqual(await result(s, "get_chatlist_entries", [1, null, null, null]), [6]);
    assert.deepEqual(await result(s, "get_chatlist_items_by_entries", [1, [6]]), {
      "6": { kind: "ArchiveLink", freshMessageCounter: 1 },
    });
  } finally {
    s.store.close();
  }
});

Deno.test("get_basic_chat_info and get_full_chat_by_id describe a 1:1 chat", async () => {
  const s = seeded();
  try {
    const basic = {
      id: 10,
      name: "Bob",
      chatType: 100,
      isEncrypted: true,
      profileImage: null,
      archived: false,
      pinned: false,
      isMuted: false,
      isUnpromoted: false,
      isSelfTalk: false,
      isDeviceChat: false,
      isContactRequest: false,
      color: "#6cb234",
      channelRole: null,
    };
    assert.deepEqual(await result(s, "get_basic_chat_info", [1, 10]), basic);
    assert.deepEqual(await result(s, "get_full_chat_by_id", [1, 10]), {
      ...basic,
      contactIds: [10],
      pastContactIds: [],
      freshMessageCounter: 0,
      selfInGroup: true,
      canSend: true,
      ephemeralTimer: 0,
      wasSeenRecently: false,
      mailingListAddress: null,
    });
    assert.equal((await rpcError(s, "get_full_chat_by_id", [1, 3])).message, "chat 3 not found");
    const reply = await call(s, "get_basic_chat_info", [1]);
    assert.equal(reply.status === 200 && "error" in reply.body && reply.body.error.code, -32602);
  } finally {
    s.store.close();
  }
});
