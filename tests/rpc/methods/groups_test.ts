/** Golden tests of the group methods through dispatch, with a fake renderer. */
import assert from "node:assert/strict";
import { createMethodTable } from "../../../src/rpc/method.ts";
import { CHAT_METHODS } from "../../../src/rpc/methods/chats.ts";
import { GROUP_METHODS } from "../../../src/rpc/methods/groups.ts";
import { dispatch } from "../../../src/rpc/dispatch.ts";
import type { Services } from "../../../src/services.ts";
import { fakeRender, fakeSend } from "../../core/_messaging.ts";
import { withTempDir } from "../../_helpers/temp.ts";
import { seeded } from "./_messaging.ts";

const TABLE = createMethodTable([...CHAT_METHODS, ...GROUP_METHODS]);

async function call(s: Services, method: string, params: unknown[]) {
  const reply = await dispatch(JSON.stringify({ jsonrpc: "2.0", method, params, id: 1 }), s, TABLE);
  if (reply.status === 204) return { result: null };
  return (reply as { body: { result?: unknown; error?: { code: number; message: string } } })
    .body;
}

function services(dir?: string) {
  // seeded() gives Bob a 1-byte fake key; renders go to the fake renderer.
  const calls: Parameters<ReturnType<typeof fakeRender>>[] = [];
  const s = seeded(dir, {
    chat: fakeSend(calls),
    oweReadReceipts: () => {},
    renderControl: () => Promise.reject(new Error("none")),
  });
  return { s, calls };
}

Deno.test("create_group_chat makes an unannounced group (type 120) with self as its member", async () => {
  const { s } = services();
  try {
    const id = (await call(s, "create_group_chat", [1, "Team", false])).result as number;
    const full = (await call(s, "get_full_chat_by_id", [1, id])).result as Record<string, unknown>;
    assert.deepEqual(
      [full.chatType, full.name, full.contactIds, full.pastContactIds, full.selfInGroup],
      [120, "Team", [1], [], true],
    );
    assert.deepEqual([full.canSend, full.isUnpromoted, full.profileImage], [true, true, null]);
    assert.deepEqual((await call(s, "get_chat_contacts", [1, id])).result, [1]);
    const empty = await call(s, "create_group_chat", [1, "  ", false]);
    assert.deepEqual(empty.error, { code: -1, message: "a group name must not be empty" });
  } finally {
    s.store.close();
  }
});

Deno.test("add/remove_contact_to/from_chat: keys required, past members listed, -1 saying why", async () => {
  const { s, calls } = services();
  try {
    const id = (await call(s, "create_group_chat", [1, "Team", false])).result as number;
    assert.deepEqual((await call(s, "add_contact_to_chat", [1, id, s.bob])).result, null);
    assert.deepEqual((await call(s, "get_chat_contacts", [1, id])).result, [1, s.bob]);
    const keyless = s.store.contacts.insert({ addr: "nokey@relay.test" });
    const refused = await call(s, "add_contact_to_chat", [1, id, keyless]);
    assert.equal(refused.error?.code, -1);
    assert.match(refused.error!.message, /no encryption key is known for it/);
    assert.equal((await call(s, "add_contact_to_chat", [1, 999, s.bob])).error?.code, -1);
    assert.match(
      (await call(s, "add_contact_to_chat", [1, s.chatId, s.bob])).error!.message,
      /is not a group/,
    );
    assert.equal(calls.length, 0, "an unannounced group sends nothing");
    assert.deepEqual((await call(s, "remove_contact_from_chat", [1, id, s.bob])).result, null);
    assert.deepEqual((await call(s, "get_chat_contacts", [1, id])).result, [1]);
    assert.deepEqual((await call(s, "get_past_chat_contacts", [1, id])).result, [s.bob]);
    const again = await call(s, "remove_contact_from_chat", [1, id, s.bob]);
    assert.match(again.error!.message, /is not a member/);
  } finally {
    s.store.close();
  }
});

Deno.test("a group's first message announces it; set_chat_name, leave_group send system messages", async () => {
  const { s, calls } = services();
  try {
    const id = (await call(s, "create_group_chat", [1, "Team", false])).result as number;
    await call(s, "add_contact_to_chat", [1, id, s.bob]);
    const { sendMsg } = await import("../../../src/rpc/methods/messages.ts");
    await sendMsg.handler(s, [1, id, { text: "hi" }]);
    const [draft, , recipients] = calls[0];
    assert.equal(draft.group?.name, "Team");
    assert.deepEqual(draft.group?.to.map((m) => m.addr), ["bob@relay.test"]);
    assert.equal(draft.group?.gossip, false, "one recipient: no gossip needed");
    assert.deepEqual(recipients.map((c) => c.addr), ["bob@relay.test"]);
    assert.equal(s.wakes.count, 1);
    assert.deepEqual((await call(s, "set_chat_name", [1, id, "Team 2"])).result, null);
    assert.deepEqual(calls[1][0].group?.change, { kind: "name-changed", oldName: "Team" });
    const basic = (await call(s, "get_basic_chat_info", [1, id])).result as { name: string };
    assert.equal(basic.name, "Team 2");
    await call(s, "leave_group", [1, id]);
    const leave = calls[2][0].group!;
    assert.equal(leave.change?.kind, "member-removed");
    assert.deepEqual(leave.past.map((m) => m.addr), ["me@relay.test"]);
    const full = (await call(s, "get_full_chat_by_id", [1, id])).result as Record<string, unknown>;
    assert.deepEqual([full.selfInGroup, full.canSend], [false, false]);
    const blocked = await call(s, "set_chat_name", [1, id, "Team 3"]);
    assert.match(blocked.error!.message, /you are not a member/);
  } finally {
    s.store.close();
  }
});

Deno.test("set_chat_profile_image takes an image from the files directory, null removes it", async () => {
  await withTempDir(async (dir) => {
    const { s } = services(dir);
    try {
      await Deno.mkdir(`${dir}/files`);
      await Deno.writeFile(`${dir}/files/logo.png`, new Uint8Array([0x89, 0x50, 0x4e, 0x47]));
      await Deno.writeTextFile(`${dir}/files/notes.txt`, "text");
      const id = (await call(s, "create_group_chat", [1, "Team", false])).result as number;
      assert.deepEqual(
        (await call(s, "set_chat_profile_image", [1, id, `${dir}/files/logo.png`])).result,
        null,
      );
      const full = (await call(s, "get_full_chat_by_id", [1, id])).result as {
        profileImage: string;
      };
      assert.match(full.profileImage, /\/accounts\/1\/blobs\/[0-9a-f]{32}\.png$/);
      const txt = await call(s, "set_chat_profile_image", [1, id, `${dir}/files/notes.txt`]);
      assert.match(txt.error!.message, /is not an image/);
      const outside = await call(s, "set_chat_profile_image", [1, id, "/etc/passwd"]);
      assert.equal(outside.error?.code, -1);
      await call(s, "set_chat_profile_image", [1, id, null]);
      const none = (await call(s, "get_full_chat_by_id", [1, id])).result as { profileImage: null };
      assert.equal(none.profileImage, null);
    } finally {
      s.store.close();
    }
  });
});
