/**
 * How the protected-file code sends its hidden PDU mails (request, grant, revoke, deny) and what
 * it shares between the owner's and the recipient's side: the account, the clock, the queue.
 */
import { toHex } from "../bytes.ts";
import type { CoreContext } from "../core/context.ts";
import { nowSeconds } from "../core/context.ts";
import type { SelfIdentity } from "../core/contacts/mod.ts";
import { type KeyedRecipient, recipientOf } from "../core/send/mod.ts";
import type { RenderedMail } from "../core/chats/mod.ts";
import { NotFoundError } from "../errors.ts";
import { foldPdu } from "./pdu.ts";
import type { StoredSecretKeys } from "./key_shares.ts";

/** Renders a hidden mail of PDUs (`MailComposer.renderPdus`). */
export type RenderPdusFn = (to: KeyedRecipient, pdus: readonly string[]) => Promise<RenderedMail>;

/** What both sides need. */
export interface PrvDeps {
  readonly ctx: CoreContext;
  readonly self: SelfIdentity;
  readonly renderPdus: RenderPdusFn;
  /** Puts a finished mail into the outbox and wakes the sender. */
  readonly queue: (mail: RenderedMail) => void;
  /** The keys stored secrets are wrapped under: S1 (recipient key), CEKs (owner key). */
  readonly keys: StoredSecretKeys;
}

/** Unix seconds now. */
export const nowOf = (d: PrvDeps): number => nowSeconds(d.ctx);

/** Sends `encoded` PDUs to contact `contactId` in one hidden mail. */
export async function sendPdus(
  d: PrvDeps,
  contactId: number,
  encoded: readonly string[],
): Promise<void> {
  d.queue(await renderPduMail(d, contactId, encoded));
}

/** The hidden mail of `encoded` PDUs to contact `contactId`, for the caller to queue. */
export async function renderPduMail(
  d: PrvDeps,
  contactId: number,
  encoded: readonly string[],
): Promise<RenderedMail> {
  const contact = d.ctx.store.contacts.get(contactId);
  if (contact === undefined || contact.publicKey.length === 0) {
    throw new NotFoundError(`contact ${contactId} not found or has no key`);
  }
  return await d.renderPdus(recipientOf(contact), encoded.map(foldPdu));
}

/** 32 hex digits of fresh randomness (request ids). */
export function randomId(): string {
  return toHex(crypto.getRandomValues(new Uint8Array(16)));
}
