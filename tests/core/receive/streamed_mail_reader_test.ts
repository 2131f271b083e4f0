/**
 * Tests of reading a large mail from its file (streamed_mail_reader.ts through the pipeline's
 * `receiveMail`): the same message as the in-memory path, the file adopted as a blob only after
 * the signature verified, broken and tampered mail classified as before, no temp file left.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { Chats } from "../../../src/core/chats/chats.ts";
import { MessageStates } from "../../../src/core/chats/message_states.ts";
import { Messages } from "../../../src/core/chats/messages.ts";
import { RetryableMailError } from "../../../src/core/receive/mail_reader.ts";
import { readStreamedMail } from "../../../src/core/receive/streamed_mail_reader.ts";
import { chatContent } from "../../../src/core/receive/content.ts";
import { PeerKeyCache } from "../../../src/core/contacts/peer_keys.ts";
import { generateAccountKey } from "../../../src/crypto/keygen.ts";
import { encryptAndSign, readPrivateKey, readPublicKey } from "../../../src/crypto/pgp.ts";
import { renderEncryptedEnvelope } from "../../../src/mime/encrypted_envelope.ts";
import { renderChatMessage } from "../../../src/mime/factory.ts";
import type { MailSource } from "../../../src/mime/mail_source.ts";
import { randomBytes } from "../../_helpers/huge_mail.ts";
import { withTempDir } from "../../_helpers/temp.ts";
import { introduce, type TestAccount, testAccount } from "../_accounts.ts";
import { attach } from "../_messaging.ts";

async function pair(blobDir: string) {
  const a = await testAccount("alice@relay.test", "Alice", blobDir);
  const b = await testAccount("bob@relay.test", "Bob", blobDir);
  const ids = introduce(a, b);
  const aChat = new Chats(a.ctx).getOrCreate1to1(ids.bOnA).chatId;
  return { a, b, ...ids, aChat };
}

async function send(from: TestAccount, chatId: number, text: string, file?: string) {
  await using source = file === undefined ? undefined : await attach(file);
  const msgId = await new Messages(from.ctx).createOutgoing(
    { chatId, text, file: source && { source } },
    from.send,
  );
  const row = from.store.outbox.due(Date.now()).find((r) => r.msgId === msgId)!;
  // A file of 64 KiB or more was rendered into the spool, not into the row.
  const raw = row.spool ? await Deno.readFile(from.ctx.spool.path(row.spool)) : row.raw;
  new MessageStates(from.ctx).outboxSent(row.id);
  return raw;
}

/** The mail as the drain hands a large one on: a file. */
async function spooled(dir: string, raw: Uint8Array, name = "mail.eml"): Promise<MailSource> {
  await Deno.writeFile(`${dir}/${name}`, raw);
  return { kind: "file", path: `${dir}/${name}`, size: raw.byteLength };
}

/** Hidden temp files reception left in the blob directory. */
async function leftovers(blobDir: string): Promise<string[]> {
  const names: string[] = [];
  try {
    for await (const e of Deno.readDir(blobDir)) if (e.name.startsWith(".")) names.push(e.name);
  } catch { /* no blob directory yet */ }
  return names;
}

Deno.test("receiveMail() of a file stores the same message and blob as receive() of bytes", async () => {
  await withTempDir(async (dir) => {
    const { a, b, aChat } = await pair(`${dir}/blobs`);
    const bytes = randomBytes(300_000);
    await Deno.writeFile(`${dir}/clip.mp4`, bytes);
    const raw = await send(a, aChat, "the clip ✓", `${dir}/clip.mp4`);
    const outcome = await b.receiver.receiveMail(await spooled(dir, raw));
    assert.equal(outcome.kind, "message");
    const out = outcome as { msgId: number };
    const m = b.store.msgs.get(out.msgId)!;
    assert.deepEqual([m.text, m.fileName, m.fileMime, m.fileBytes, m.viewtype], [
      "the clip ✓",
      "clip.mp4",
      "video/mp4",
      300_000,
      "Video",
    ]);
    const stored = await Deno.readFile(`${dir}/blobs/${m.file}`);
    assert.equal(
      createHash("sha256").update(stored).digest("hex"),
      createHash("sha256").update(bytes).digest("hex"),
    );
    assert.deepEqual(await leftovers(`${dir}/blobs`), []);
    // The same mail again is a duplicate, as in memory.
    assert.deepEqual(await b.receiver.receiveMail(await spooled(dir, raw)), { kind: "duplicate" });
    assert.deepEqual(await leftovers(`${dir}/blobs`), []);
  });
});

Deno.test("receiveMail() of a text-only file mail stores its text", async () => {
  await withTempDir(async (dir) => {
    const { a, b, aChat } = await pair(`${dir}/blobs`);
    const raw = await send(a, aChat, "just text\nline 2");
    const out = await b.receiver.receiveMail(await spooled(dir, raw)) as { msgId: number };
    assert.equal(b.store.msgs.get(out.msgId)!.text, "just text\nline 2");
  });
});

Deno.test("a mail signed by another key leaves no blob and no temp file (recorded, final)", async () => {
  await withTempDir(async (dir) => {
    const { a, b } = await pair(`${dir}/blobs`);
    const impostor = await generateAccountKey("alice@relay.test");
    const date = new Date("2026-01-01T00:00:00Z");
    const raw = renderEncryptedEnvelope({
      from: "alice@relay.test",
      messageId: "<forged@relay.test>",
      date,
      boundary: "outer",
      ciphertext: await encryptAndSign({
        plaintext: renderChatMessage({
          from: { addr: "alice@relay.test", name: "Alice" },
          to: [{ addr: "bob@relay.test" }],
          messageId: "<forged@relay.test>",
          date,
          subject: "hi",
          autocryptKey: a.self.publicKey,
          text: "forged",
          file: { name: "x.bin", mime: "application/octet-stream", bytes: new Uint8Array(50_000) },
        }),
        recipients: [await readPublicKey(b.self.publicKey)],
        signingKey: await readPrivateKey(impostor.privateKey),
      }),
    });
    const out = await b.receiver.receiveMail(await spooled(dir, raw));
    assert.equal(out.kind, "rejected");
    assert.match((out as { reason: string }).reason, /not signed by a key of alice@relay.test/);
    assert.deepEqual(await leftovers(`${dir}/blobs`), []);
    assert.deepEqual(
      [...Deno.readDirSync(`${dir}/blobs`)].filter((e) => !e.name.startsWith(".")),
      [],
    );
    const [record] = b.store.receiveErrors.list();
    assert.equal(record.messageId, "forged@relay.test");
    assert.equal(record.size, raw.byteLength);
  });
});

Deno.test("a truncated or tampered large mail is recorded as unreadable, never stored", async () => {
  await withTempDir(async (dir) => {
    const { a, b, aChat } = await pair(`${dir}/blobs`);
    await Deno.writeFile(`${dir}/f.bin`, randomBytes(200_000));
    const raw = await send(a, aChat, "big", `${dir}/f.bin`);
    const cut = raw.subarray(0, Math.floor(raw.byteLength * 0.6));
    const truncated = await b.receiver.receiveMail(await spooled(dir, cut, "cut.eml"));
    assert.equal(truncated.kind, "rejected");
    assert.match((truncated as { reason: string }).reason, /armor/);
    // One base64 character of the armor changed in the middle: the checksum or the integrity
    // check refuses it.
    const text = new TextDecoder().decode(raw);
    const at = text.indexOf("\n", Math.floor(text.length / 2)) + 10;
    const flipped = text.slice(0, at) + (text[at] === "A" ? "B" : "A") + text.slice(at + 1);
    const tampered = await b.receiver.receiveMail(
      await spooled(dir, new TextEncoder().encode(flipped), "flip.eml"),
    );
    assert.equal(tampered.kind, "rejected");
    assert.equal(b.store.msgs.byRfc724Mid(chatContentId(raw)), undefined);
    assert.deepEqual(await leftovers(`${dir}/blobs`), []);
  });
});

Deno.test("a tampered ciphertext with a fixed-up checksum fails the integrity check", async () => {
  await withTempDir(async (dir) => {
    const { a, b, aChat } = await pair(`${dir}/blobs`);
    await Deno.writeFile(`${dir}/f.bin`, randomBytes(200_000));
    const raw = await send(a, aChat, "big", `${dir}/f.bin`);
    // Drop the checksum line, then change a byte deep in the ciphertext.
    const text = new TextDecoder().decode(raw).replace(/\r\n=[A-Za-z0-9+/]{4}\r\n/, "\r\n");
    const at = text.indexOf("\n", Math.floor(text.length / 2)) + 10;
    const flipped = text.slice(0, at) + (text[at] === "A" ? "B" : "A") + text.slice(at + 1);
    const out = await b.receiver.receiveMail(
      await spooled(dir, new TextEncoder().encode(flipped)),
    );
    assert.equal(out.kind, "rejected");
    // Either the integrity check at the end or, when the damage broke it first, the inner MIME.
    assert.match((out as { reason: string }).reason, /decrypt|Modification|inner MIME/);
    assert.deepEqual(await leftovers(`${dir}/blobs`), []);
  });
});

Deno.test("a large mail signed by an unknown key with no Autocrypt key is retryable", async () => {
  await withTempDir(async (dir) => {
    const b = await testAccount("bob@relay.test", "Bob", `${dir}/blobs`);
    const stranger = await generateAccountKey("carol@relay.test");
    const date = new Date("2026-01-01T00:00:00Z");
    const inner = new TextDecoder().decode(renderChatMessage({
      from: { addr: "carol@relay.test", name: "Carol" },
      to: [{ addr: "bob@relay.test" }],
      messageId: "<nokey@relay.test>",
      date,
      subject: "hi",
      autocryptKey: stranger.publicKey,
      text: "no key",
    })).replace(/^Autocrypt:.*\r\n(?:[ \t].*\r\n)*/m, "");
    const raw = renderEncryptedEnvelope({
      from: "carol@relay.test",
      messageId: "<nokey@relay.test>",
      date,
      boundary: "outer",
      ciphertext: await encryptAndSign({
        plaintext: new TextEncoder().encode(inner),
        recipients: [await readPublicKey(b.self.publicKey)],
        signingKey: await readPrivateKey(stranger.privateKey),
      }),
    });
    await assert.rejects(b.receiver.receiveMail(await spooled(dir, raw)), RetryableMailError);
  });
});

Deno.test("readStreamedMail() keeps the first file spooled until the caller adopts it", async () => {
  await withTempDir(async (dir) => {
    const { a, b, aChat } = await pair(`${dir}/blobs`);
    await Deno.writeFile(`${dir}/f.txt`, new TextEncoder().encode("hello file"));
    const raw = await send(a, aChat, "t", `${dir}/f.txt`);
    const deps = { privateKey: b.self.privateKey, keys: new PeerKeyCache(), knownKeys: () => [] };
    const mail = await readStreamedMail(await spooled(dir, raw), deps, {
      blobDir: `${dir}/blobs`,
      maxPlaintextBytes: 1 << 20,
    });
    const file = chatContent(mail).file!;
    assert.equal(file.name, "f.txt");
    assert.equal(file.spooled?.bytes, 10);
    assert.equal(new TextDecoder().decode(await Deno.readFile(file.spooled!.path)), "hello file");
    await Deno.remove(file.spooled!.path);
  });
});

function chatContentId(raw: Uint8Array): string {
  return /^Message-ID:\s*<([^>]+)>/im.exec(new TextDecoder().decode(raw))?.[1] ?? "";
}

Deno.test("receiveMail() of a mail held in memory reads it as a stream as well", async () => {
  await withTempDir(async (dir) => {
    const { a, b, aChat } = await pair(`${dir}/blobs`);
    const bytes = randomBytes(100_000);
    await Deno.writeFile(`${dir}/f.bin`, bytes);
    const raw = await send(a, aChat, "from memory", `${dir}/f.bin`);
    const out = await b.receiver.receiveMail({ kind: "bytes", bytes: raw });
    assert.equal(out.kind, "message");
    const m = b.store.msgs.get((out as { msgId: number }).msgId)!;
    assert.deepEqual(await Deno.readFile(`${dir}/blobs/${m.file}`), bytes);
    assert.deepEqual(await leftovers(`${dir}/blobs`), []);
  });
});
