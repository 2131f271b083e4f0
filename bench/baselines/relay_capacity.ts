/**
 * The relay's own capacity for the relay-parts benchmark (bench/scenarios/relay_parts.ts):
 * pre-built encrypted mails shaped like part mails, pushed over SMTP from a fresh account with as
 * many in flight as a gateway keeps of one transfer (its window, 2) while a raw IMAP client of a second fresh account downloads each one whole and deletes
 * it; timed from the first submission until the last mail is downloaded.
 */
import { Buffer } from "node:buffer";
import { formatPart, renderTransferMail } from "../../src/core/transfer/mod.ts";
import { encryptAndSign, readPrivateKey, readPublicKey } from "../../src/crypto/pgp.ts";
import { renderEncryptedEnvelope } from "../../src/mime/encrypted_envelope.ts";
import { Header } from "../../src/protocol.ts";
import nodemailer from "nodemailer";
import { smtpOptions } from "../../src/transport/smtp_client.ts";
import type { StoredAccount } from "../../tests/_helpers/gateway_store.ts";
import type { Relay, RelayAccount } from "../../tests/_helpers/relay.ts";
import { closeMailbox, openMailbox } from "../../tests/_helpers/relay_mailbox.ts";

/** Keys the mails are sealed with (any OpenPGP keys: the relay checks only the packet shape). */
export interface SealKeys {
  readonly signer: StoredAccount;
  readonly recipient: StoredAccount;
}

/** One baseline run: the mails' sizes and the time from the first submission to the last download. */
export interface CapacityRun {
  readonly mails: number;
  readonly wireBytes: number;
  readonly ms: number;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The encrypted OpenPGP message (binary) of a part mail with a random payload of `length` bytes:
 * the gateway's own inner MIME (renderTransferMail with an `Edge-Transfer-Part` header), signed
 * and encrypted the same way.
 */
async function sealedPart(keys: SealKeys, length: number, index: number): Promise<Uint8Array> {
  const body = new Uint8Array(length);
  for (let i = 0; i < length; i += 65_536) {
    crypto.getRandomValues(body.subarray(i, Math.min(length, i + 65_536)));
  }
  const id = "0".repeat(32);
  return encryptAndSign({
    plaintext: renderTransferMail({
      from: keys.signer.addr,
      to: [keys.recipient.addr],
      messageId: `${crypto.randomUUID()}@bench.invalid`,
      date: new Date(),
      header: [
        Header.EDGE_TRANSFER_PART,
        formatPart({
          id,
          index,
          offset: index * length,
          length,
          sha256: "0".repeat(64),
        }),
      ],
      body,
    }),
    recipients: [await readPublicKey(keys.recipient.publicKey)],
    signingKey: await readPrivateKey(keys.signer.privateKey),
  });
}

/**
 * Builds the mails of a file of `fileBytes` in parts of `partBytes` (the last one shorter), each
 * in the outer envelope a gateway sends, from `from`. Only the distinct sizes are encrypted; the
 * mails differ in their Message-ID.
 */
export async function buildPartMails(
  keys: SealKeys,
  from: string,
  fileBytes: number,
  partBytes: number,
): Promise<Uint8Array[]> {
  const parts = Math.ceil(fileBytes / partBytes);
  const sealed = new Map<number, Uint8Array>();
  const out: Uint8Array[] = [];
  for (let i = 0; i < parts; i++) {
    const length = Math.min(partBytes, fileBytes - i * partBytes);
    let ciphertext = sealed.get(length);
    if (ciphertext === undefined) {
      ciphertext = await sealedPart(keys, length, i);
      sealed.set(length, ciphertext);
    }
    const messageId = `<${crypto.randomUUID()}@bench.invalid>`;
    out.push(renderEncryptedEnvelope({
      from,
      messageId,
      date: new Date(),
      boundary: crypto.randomUUID(),
      ciphertext,
    }));
  }
  return out;
}

/** Downloads every mail of the selected INBOX whole and deletes it, until `n` were read. */
async function drain(
  imap: Awaited<ReturnType<typeof openMailbox>>,
  n: number,
): Promise<void> {
  const lock = await imap.getMailboxLock("INBOX");
  try {
    for (let got = 0; got < n;) {
      const uids = await imap.search({ all: true }, { uid: true });
      if (!uids || uids.length === 0) {
        await sleep(50);
        continue;
      }
      for (const uid of uids) {
        const dl = await imap.download(String(uid), undefined, { uid: true });
        if (dl.content === undefined) throw new Error(`mail ${uid} has no content`);
        for await (const _ of dl.content) { /* read whole, as a receiver must */ }
        await imap.messageDelete(String(uid), { uid: true });
        got++;
      }
    }
  } finally {
    lock.release();
  }
}

/** Part mails of one transfer a gateway keeps in its outbox at once (its SMTP submissions). */
export const GATEWAY_WINDOW = 2;

/**
 * Pushes `mails` from `sender` to `receiver` over SMTP, `GATEWAY_WINDOW` at a time, while
 * `receiver`'s IMAP client downloads them; the time runs from the first submission to the last
 * download.
 */
export async function relayCapacity(
  relay: Relay,
  sender: RelayAccount,
  receiver: RelayAccount,
  mails: readonly Uint8Array[],
): Promise<CapacityRun> {
  const imap = await openMailbox(relay, { addr: receiver.email, password: receiver.password });
  // As the gateway's SMTP loop builds its pooled transport.
  const smtp = nodemailer.createTransport({
    ...smtpOptions(
      { host: relay.host, port: relay.smtpsPort, security: "ssl", user: sender.email },
      sender.password,
      true,
    ),
    maxConnections: GATEWAY_WINDOW,
  });
  try {
    const t0 = performance.now();
    const reading = drain(imap, mails.length);
    let next = 0;
    const submit = async () => {
      while (next < mails.length) {
        const raw = mails[next++];
        await smtp.sendMail({
          envelope: { from: sender.email, to: [receiver.email] },
          raw: Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength),
        });
      }
    };
    await Promise.all(Array.from({ length: GATEWAY_WINDOW }, submit));
    await reading;
    const ms = performance.now() - t0;
    return { mails: mails.length, wireBytes: mails.reduce((s, m) => s + m.byteLength, 0), ms };
  } finally {
    smtp.close();
    await closeMailbox(imap);
  }
}
