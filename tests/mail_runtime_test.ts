/**
 * The outbox as the SMTP loop sees it (`outboxQueue`): a relay part the relay accepted makes room
 * in its transfer's window, and the next part is queued then, not at the next sweep.
 */
import assert from "node:assert/strict";
import { outboxQueue } from "../src/mail_runtime.ts";
import { ConfigKey } from "../src/store/mod.ts";
import { introduce, testAccount } from "./core/_accounts.ts";
import { attach } from "./core/_messaging.ts";
import { makeTempDir } from "./_helpers/temp.ts";

Deno.test("a part accepted by the relay queues the transfer's next part at once", async () => {
  await using tmp = await makeTempDir("mail-runtime");
  const a = await testAccount("a@x.test", "A", `${tmp.path}/a`);
  const b = await testAccount("b@x.test", "B", `${tmp.path}/b`);
  const { bOnA } = introduce(a, b);
  a.store.contacts.setLargeFiles(b.self.fingerprint, true);
  a.store.config.set(ConfigKey.MAX_MESSAGE_BYTES, String(64 * 1024));
  const path = `${tmp.path}/big.bin`;
  const bytes = new Uint8Array(120_000); // more than two parts under a 64 KiB limit
  for (let i = 0; i < bytes.length; i += 60_000) {
    crypto.getRandomValues(bytes.subarray(i, i + 60_000));
  }
  await Deno.writeFile(path, bytes);
  await using file = await attach(path);
  const msgId = await a.sendMessage({
    chatId: a.chats.getOrCreate1to1(bOnA).chatId,
    text: "big",
    file: { source: file },
  });
  await a.transfers.pump();
  const t = a.store.transfers.byMessage(msgId)!;
  assert.ok(t.parts > 2, `parts: ${t.parts}`);
  const parts = () => a.store.outbox.due(Number.MAX_SAFE_INTEGER).filter((r) => r.msgId === 0);
  assert.equal(parts().length, 2, "the window's two parts");
  assert.equal(a.store.transfers.get("out", t.id)!.nextPart, 2);

  outboxQueue(a).sent(parts()[0].id);
  // No pump or sweep is called here: the accepted part alone queues part 2.
  for (let i = 0; i < 500 && a.store.transfers.get("out", t.id)!.nextPart < 3; i++) {
    await new Promise((r) => setTimeout(r, 10));
  }
  assert.equal(a.store.transfers.get("out", t.id)!.nextPart, 3);
  assert.equal(parts().length, 2);
});
