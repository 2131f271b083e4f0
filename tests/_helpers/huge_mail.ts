/**
 * Large hostile mails for inbox-flood tests and the hostile-load benchmark: random junk (plain
 * text, or a `multipart/encrypted` body whose armor is noise) and valid-but-huge (encrypted to the
 * gateway, signed by a stranger's key, carrying a big attachment), each about `bytes` long.
 */
import { Buffer } from "node:buffer";
import { generateAccountKey } from "../../src/crypto/keygen.ts";
import { encryptAndSign, readPrivateKey, readPublicKey } from "../../src/crypto/pgp.ts";
import { renderEncryptedEnvelope } from "../../src/mime/encrypted_envelope.ts";
import { renderChatMessage } from "../../src/mime/factory.ts";

/** The kinds of huge mail. */
export type HugeKind = "junk" | "noise-armor" | "valid";

/** The inbox flood of the flood test and benchmark: ten mails of FLOOD_MAIL_BYTES, kinds mixed. */
export const FLOOD_KINDS: readonly HugeKind[] = [
  "junk",
  "noise-armor",
  "valid",
  "junk",
  "noise-armor",
  "junk",
  "valid",
  "noise-armor",
  "junk",
  "valid",
];

/** The size of each flood mail: 25 MiB. */
export const FLOOD_MAIL_BYTES = 25 * 1024 * 1024;

/** One huge mail. */
export interface HugeMail {
  readonly kind: HugeKind;
  readonly raw: Uint8Array;
  /** Message-ID without angle brackets. */
  readonly messageId: string;
}

const enc = new TextEncoder();

/** `n` random bytes (getRandomValues fills at most 64 KiB per call). */
export function randomBytes(n: number): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i += 65_536) crypto.getRandomValues(out.subarray(i, i + 65_536));
  return out;
}

/** Base64 of `bytes` in 76-character CRLF lines. */
function base64Lines(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString("base64").replace(/.{76}/g, "$&\r\n");
}

/** Builds huge mails for the gateway `to` (its address and binary public key). */
export class HugeMailFactory {
  private constructor(
    private readonly to: { addr: string; publicKey: Uint8Array },
    private readonly stranger: { addr: string; publicKey: Uint8Array; privateKey: string },
  ) {}

  /** A factory whose "valid" mails are signed by a fresh key of `strangerAddr`. */
  static async create(
    to: { addr: string; publicKey: Uint8Array },
    strangerAddr: string,
  ): Promise<HugeMailFactory> {
    const key = await generateAccountKey(strangerAddr);
    return new HugeMailFactory(to, {
      addr: strangerAddr,
      publicKey: key.publicKey,
      privateKey: key.privateKey,
    });
  }

  /** A mail of `kind`, about `bytes` long on the wire. */
  async build(kind: HugeKind, bytes: number): Promise<HugeMail> {
    const messageId = `huge-${kind}-${crypto.randomUUID()}@test.invalid`;
    const head = [
      `From: <${this.stranger.addr}>`,
      `To: <${this.to.addr}>`,
      `Message-ID: <${messageId}>`,
      `Date: ${new Date().toUTCString()}`,
      `Subject: huge ${kind}`,
      "MIME-Version: 1.0",
    ];
    if (kind === "junk") {
      const body = base64Lines(randomBytes(Math.floor(bytes * 0.74)));
      const raw = enc.encode(
        [...head, "Content-Type: text/plain; charset=us-ascii", "", body, ""].join("\r\n"),
      );
      return { kind, raw, messageId };
    }
    if (kind === "noise-armor") {
      const raw = renderEncryptedEnvelope({
        from: this.stranger.addr,
        messageId: `<${messageId}>`,
        date: new Date(),
        boundary: crypto.randomUUID(),
        ciphertext: randomBytes(Math.floor(bytes * 0.74)),
      });
      return { kind, raw, messageId };
    }
    const plaintext = renderChatMessage({
      from: { addr: this.stranger.addr, name: "Stranger" },
      to: [{ addr: this.to.addr }],
      messageId: `<${messageId}>`,
      date: new Date(),
      subject: "huge valid",
      autocryptKey: this.stranger.publicKey,
      text: "a valid mail with a big file",
      file: {
        name: "big.bin",
        mime: "application/octet-stream",
        bytes: randomBytes(Math.floor(bytes * 0.74 * 0.74)),
      },
    });
    const raw = renderEncryptedEnvelope({
      from: this.stranger.addr,
      messageId: `<${messageId}>`,
      date: new Date(),
      boundary: crypto.randomUUID(),
      ciphertext: await encryptAndSign({
        plaintext,
        recipients: [await readPublicKey(this.to.publicKey)],
        signingKey: await readPrivateKey(this.stranger.privateKey),
      }),
    });
    return { kind, raw, messageId };
  }
}
