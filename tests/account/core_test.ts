/**
 * The account core `createAccountCore` builds: a protected file that waited for a SecureJoin is
 * announced with `PrivittyFileEncrypted` once the join releases it, as send_msg announces one
 * that did not wait. Real keys; mails handed between two in-memory accounts.
 */
import assert from "node:assert/strict";
import { dirname } from "node:path";
import { blobDirOf } from "../../src/core/context.ts";
import { openAttachableFile } from "../../src/core/file_access.ts";
import { deliverAll, type TestAccount, testAccount } from "../core/_accounts.ts";
import { makeTempDir } from "../_helpers/temp.ts";

/** Sends `path` from `from` in `chatId` through the account's send steps, as send_msg does. */
async function sendFile(from: TestAccount, chatId: number, path: string, filesDir: string) {
  await using file = await openAttachableFile(
    path,
    { filesDir, dataDir: dirname(from.ctx.blobDir), blobDir: from.ctx.blobDir },
    { method: "send_msg", verb: "sent" },
  );
  return await from.sendMessage({ chatId, file: { source: file } });
}

Deno.test("a .prv sent while the join runs gets PrivittyFileEncrypted when the join releases it", async () => {
  await using tmp = await makeTempDir("account-core");
  const filesDir = `${tmp.path}/files`;
  await Deno.mkdir(filesDir);
  const alice = await testAccount("alice@relay.test", "Alice", blobDirOf(`${tmp.path}/a`));
  const bob = await testAccount("bob@relay.test", "Bob", blobDirOf(`${tmp.path}/b`));
  try {
    const chatId = await bob.secureJoin.join(alice.secureJoin.createInvite());
    const first = await bob.messages.createOutgoing({ chatId, text: "hello" }, {
      admit: () => Promise.resolve(),
      render: () => {
        throw new Error("a message to a joining contact waits: nothing is rendered");
      },
    });
    await deliverAll(bob, alice); // vc-request
    await deliverAll(alice, bob); // vc-auth-required: Bob has Alice's key, the join runs on
    const aliceOnBob = bob.chats.recipients(bob.store.chats.get(chatId)!)[0].id;
    await Deno.writeTextFile(`${filesDir}/report.txt`, "figures");
    const protectedFile = await bob.protectedFiles.protect({
      chatId,
      peerContactId: aliceOnBob,
      plaintextPath: `${filesDir}/report.txt`,
      rules: { allow_download: false, allow_forward: false, duration_minutes: 0 },
      roots: { filesDir, dataDir: `${tmp.path}/b` },
      method: "secure_send_file",
    });
    const prvMsg = await sendFile(bob, chatId, protectedFile.encrypted_path, filesDir);
    assert.equal(bob.store.msgs.get(prvMsg)!.rfc724Mid, "", "waits behind the first message");
    bob.sink.take();

    await deliverAll(bob, alice); // vc-request-with-auth
    await deliverAll(alice, bob); // vc-contact-confirm: the join completes, both go out
    const encrypted = bob.sink.take().filter((e) => e.kind === "PrivittyFileEncrypted");
    assert.deepEqual(encrypted, [{ kind: "PrivittyFileEncrypted", chatId, msgId: prvMsg }]);
    assert.notEqual(bob.store.msgs.get(first)!.rfc724Mid, "", "the text went out, unannounced");
  } finally {
    for (const a of [alice, bob]) {
      await a.receipts.close();
      a.store.close();
    }
  }
});
