/** Tests of the messaging method lists: names, documentation, params and the OpenRPC document. */
import assert from "node:assert/strict";
import * as chats from "../../../src/rpc/methods/chats.ts";
import * as contacts from "../../../src/rpc/methods/contacts.ts";
import * as messages from "../../../src/rpc/methods/messages.ts";
import { TABLE } from "./_messaging.ts";

Deno.test("the messaging method files export the contract's and Delta Chat's methods, ungated", () => {
  assert.deepEqual(contacts.CONTACT_METHODS.map((e) => e.name), [
    "get_contact_ids",
    "lookup_contact_id_by_addr",
    "get_contact",
  ]);
  assert.deepEqual(chats.CHAT_METHODS.map((e) => e.name), [
    "create_chat_by_contact_id",
    "get_chat_contacts",
    "get_chatlist_entries",
    "get_chatlist_items_by_entries",
    "get_basic_chat_info",
    "get_full_chat_by_id",
    "get_chat_ephemeral_timer",
  ]);
  assert.deepEqual(messages.MESSAGE_METHODS.map((e) => e.name), [
    "send_msg",
    "get_message_ids",
    "get_messages",
    "get_message",
    "markseen_msgs",
    "get_fresh_msgs",
    "delete_messages",
  ]);
  for (const e of TABLE.entries.filter((e) => e.name !== "rpc.discover")) {
    assert.equal(e.params[0].name, "account_id", `${e.name} takes account_id first`);
    assert.equal(e.license, undefined, `${e.name} needs no license`);
    assert.ok(e.summary.length > 0 && e.params.every((p) => p.description.length > 0));
    const voids = [
      "markseen_msgs",
      "delete_messages",
      "send_reaction",
      "send_edit_request",
      "delete_messages_for_all",
    ];
    assert.equal(e.void === true, voids.includes(e.name), e.name);
  }
});

Deno.test("rpc.discover documents every messaging method", async () => {
  const doc = await TABLE.get("rpc.discover")!.handler({} as never, []) as {
    methods: { name: string; params: unknown[] }[];
  };
  const names = doc.methods.map((m) => m.name);
  assert.equal(names.length, TABLE.entries.length - 1);
  assert.ok(names.includes("get_chatlist_items_by_entries"));
});
