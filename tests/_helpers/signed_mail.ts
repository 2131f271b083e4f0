/**
 * A raw encrypted chat message signed by a key the test chooses (a sender's real key, or a fresh
 * one an impostor made for the sender's address), for tests that put mail straight into a mailbox.
 */
import { generateAccountKey } from "../../src/crypto/keygen.ts";
import { encryptAndSign, readPrivateKey, readPublicKey } from "../../src/crypto/pgp.ts";
import { renderEncryptedEnvelope } from "../../src/mime/encrypted_envelope.ts";
import { renderChatMessage } from "../../src/mime/factory.ts";

/** A key pair as keygen and the store hold it: binary public key, armored private key. */
export interface SigningKeyPair {
  readonly publicKey: Uint8Array;
  readonly privateKey: string;
}

/** What the mail says and who it is from and to. */
export interface SignedChatMail {
  readonly from: string;
  readonly fromName: string;
  readonly to: { readonly addr: string; readonly publicKey: Uint8Array };
  /** Signs and is sent as the Autocrypt key; a fresh key for `from` when left out. */
  readonly signer?: SigningKeyPair;
  readonly messageId: string;
  readonly date: Date;
  readonly subject: string;
  readonly text: string;
}

/** The mail as raw bytes: encrypted to `to`, signed by `signer` (or a fresh key). */
export async function signedChatMail(m: SignedChatMail): Promise<Uint8Array> {
  const key = m.signer ?? await generateAccountKey(m.from);
  return renderEncryptedEnvelope({
    from: m.from,
    messageId: m.messageId,
    date: m.date,
    boundary: crypto.randomUUID(),
    ciphertext: await encryptAndSign({
      plaintext: renderChatMessage({
        from: { addr: m.from, name: m.fromName },
        to: [{ addr: m.to.addr }],
        messageId: m.messageId,
        date: m.date,
        subject: m.subject,
        autocryptKey: key.publicKey,
        text: m.text,
      }),
      recipients: [await readPublicKey(m.to.publicKey)],
      signingKey: await readPrivateKey(key.privateKey),
    }),
  });
}
