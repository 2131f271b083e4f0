/**
 * A large mail into a real gateway's INBOX (IMAP APPEND with the account's own login): a chat
 * message from the verified contact A carrying a multi-MB file goes through the streamed
 * reception (fetched in ranges into a temp file, dearmored, decrypted and decoded as streams)
 * and B stores the file with the sender's SHA-256; the same mail cut short is recorded as a
 * receive error, B keeps running, a message after it arrives, and no temp file is left.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";
import { encryptAndSign, readPrivateKey, readPublicKey } from "../../src/crypto/pgp.ts";
import { DataDirLayout } from "../../src/constants.ts";
import { renderEncryptedEnvelope } from "../../src/mime/encrypted_envelope.ts";
import { renderChatMessage } from "../../src/mime/factory.ts";
import { chatMessages, joinBySecureJoin, messagesById } from "../_helpers/gateway_pair.ts";
import { readReceiveErrors, readStoredAccount } from "../_helpers/gateway_store.ts";
import { randomBytes } from "../_helpers/huge_mail.ts";
import { rssMb } from "../_helpers/rss.ts";
import { twoGatewaysTest } from "../_helpers/two_gateways.ts";
import { closeMailbox, openMailbox } from "../_helpers/relay_mailbox.ts";

/** The file's size: several MiB, a mail far above the in-memory threshold (1 MiB). */
const FILE_BYTES = 6 * 1024 * 1024;

/** The data directory a daemon was started on (its `--data-dir` argument). */
function dataDirOf(pid: number): string {
  const args = Deno.readTextFileSync(`/proc/${pid}/cmdline`).split("\0");
  const at = args.indexOf("--data-dir");
  assert.ok(at >= 0, `no --data-dir in ${args.join(" ")}`);
  return args[at + 1];
}

interface FileMsg {
  text: string;
  file: string | null;
  fileName: string | null;
  fileBytes: number;
}

twoGatewaysTest({
  name: "a multi-MB file in one mail is stored with its SHA-256; a cut copy is recorded",
  async fn({ relay, a, b }) {
    const bData = `${b.dir.path}/data`;
    try {
      const pair = await joinBySecureJoin(a, b);
      const aAcc = readStoredAccount(`${a.dir.path}/data`);
      const bAcc = readStoredAccount(bData);
      const bytes = randomBytes(FILE_BYTES);
      const messageId = `<large-${crypto.randomUUID()}@test.invalid>`;
      const date = new Date();
      const raw = renderEncryptedEnvelope({
        from: aAcc.addr,
        messageId,
        date,
        boundary: crypto.randomUUID(),
        ciphertext: await encryptAndSign({
          plaintext: renderChatMessage({
            from: { addr: aAcc.addr, name: "A" },
            to: [{ addr: bAcc.addr }],
            messageId,
            date,
            subject: "Message from A",
            autocryptKey: aAcc.publicKey,
            text: "the large file",
            file: { name: "firmware.bin", mime: "application/octet-stream", bytes },
          }),
          recipients: [await readPublicKey(bAcc.publicKey)],
          signingKey: await readPrivateKey(aAcc.privateKey),
        }),
      });
      assert.ok(raw.length > 2 * FILE_BYTES * 0.9, `the mail is ${raw.length} bytes`);
      const cutId = `<cut-${crypto.randomUUID()}@test.invalid>`;
      const cut = new TextEncoder().encode(
        new TextDecoder().decode(raw.subarray(0, Math.floor(raw.length / 2)))
          .replace(messageId, cutId),
      );
      const errorsBefore = readReceiveErrors(bData).length;
      const rssBefore = await rssMb(b.daemon.pid);

      const imap = await openMailbox(relay, bAcc);
      try {
        assert.ok(await imap.append("INBOX", Buffer.from(cut)));
        assert.ok(await imap.append("INBOX", Buffer.from(raw)));
      } finally {
        await closeMailbox(imap);
      }
      await a.call("send_msg", 1, pair.inviterChat, { text: "after the large file" });

      const onB = await b.poll(
        () => chatMessages(b, pair.joinerChat),
        (msgs) =>
          ["the large file", "after the large file"].every((t) => msgs.some((m) => m.text === t)),
        180_000,
      );
      const id = onB.find((m) => m.text === "the large file")!.id;
      const [m] = await messagesById(b, [id]) as unknown as FileMsg[];
      assert.deepEqual([m.fileName, m.fileBytes], ["firmware.bin", FILE_BYTES]);
      const stored = await Deno.readFile(m.file!);
      assert.equal(
        createHash("sha256").update(stored).digest("hex"),
        createHash("sha256").update(bytes).digest("hex"),
        "the stored file has the sender's SHA-256",
      );
      assert.equal(onB.filter((x) => x.text === "the large file").length, 1, "stored once");

      const errors = readReceiveErrors(bData).slice(errorsBefore);
      const cutError = errors.find((e) => e.messageId === cutId.slice(1, -1));
      assert.ok(cutError, `the cut mail is recorded (errors: ${JSON.stringify(errors)})`);
      assert.match(cutError.reason, /armor|MIME|decrypt/);
      assert.equal(cutError.size, cut.length);

      const blobDir = `${bData}/${DataDirLayout.BLOB_DIR}`;
      const hidden = [...Deno.readDirSync(blobDir)].filter((e) => e.name.startsWith("."));
      assert.deepEqual(hidden, [], "no temp file left in the blob directory");
      const rssAfter = await rssMb(b.daemon.pid);
      console.log(
        `B RSS: ${rssBefore.now} MB before, peak ${rssAfter.peak} MB (mail ${raw.length} bytes)`,
      );
    } catch (err) {
      console.error(`--- B ---\n${b.daemon.output().slice(-8000)}`);
      throw err;
    }
  },
});

twoGatewaysTest({
  name: "temp files a killed gateway left while reading a large mail go at the next start",
  gateways: ["A", { name: "B", keepData: true }],
  async fn(gws) {
    const { relay, a } = gws;
    let b = gws.b;
    const pair = await joinBySecureJoin(a, b);
    const dataDir = dataDirOf(b.daemon.pid);
    const aAcc = readStoredAccount(`${a.dir.path}/data`);
    const bAcc = readStoredAccount(dataDir);
    await b.daemon.stop("SIGKILL");
    await b.stop();
    const blobDir = `${dataDir}/${DataDirLayout.BLOB_DIR}`;
    await Deno.mkdir(blobDir, { recursive: true });
    const leftovers = [".incoming-1", ".cipher-2", ".recv-3"];
    for (const name of leftovers) await Deno.writeFile(`${blobDir}/${name}`, new Uint8Array(100));
    // The mail the killed process was reading is still on the server.
    const bytes = randomBytes(2 * 1024 * 1024);
    const messageId = `<after-kill-${crypto.randomUUID()}@test.invalid>`;
    const date = new Date();
    const raw = renderEncryptedEnvelope({
      from: aAcc.addr,
      messageId,
      date,
      boundary: crypto.randomUUID(),
      ciphertext: await encryptAndSign({
        plaintext: renderChatMessage({
          from: { addr: aAcc.addr, name: "A" },
          to: [{ addr: bAcc.addr }],
          messageId,
          date,
          subject: "Message from A",
          autocryptKey: aAcc.publicKey,
          text: "read after the restart",
          file: { name: "clip.bin", mime: "application/octet-stream", bytes },
        }),
        recipients: [await readPublicKey(bAcc.publicKey)],
        signingKey: await readPrivateKey(aAcc.privateKey),
      }),
    });
    const imap = await openMailbox(relay, bAcc);
    try {
      assert.ok(await imap.append("INBOX", Buffer.from(raw)));
    } finally {
      await closeMailbox(imap);
    }
    b = await gws.restart("b");
    const onB = await b.poll(
      () => chatMessages(b, pair.joinerChat),
      (msgs) => msgs.some((m) => m.text === "read after the restart"),
      120_000,
    );
    const id = onB.find((m) => m.text === "read after the restart")!.id;
    const [m] = await messagesById(b, [id]) as unknown as FileMsg[];
    assert.deepEqual(await Deno.readFile(m.file!), bytes);
    const hidden = [...Deno.readDirSync(blobDir)].filter((e) => e.name.startsWith("."));
    assert.deepEqual(hidden, [], "the leftovers are gone");
  },
});
