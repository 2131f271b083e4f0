/**
 * The running messenger of one account: composes the reception pipeline, the SMTP outbox loop,
 * SecureJoin and receipts over the store, and gives the daemon what it wires into the IMAP loop
 * (`reception`) and into `Services` (`outgoing`, `secureJoin`).
 */
import { blobDirOf, type CoreContext, createCoreContext } from "./core/context.ts";
import { loadIdentity, type SelfIdentity } from "./core/identity.ts";
import { InboxReception } from "./core/inbox_reception.ts";
import { MailComposer } from "./core/mail_composer.ts";
import { MessageStates } from "./core/message_states.ts";
import { Messages, type RenderedMail } from "./core/messages.ts";
import { PeerKeyCache } from "./core/peer_keys.ts";
import { ReceiptBatcher } from "./core/receipt_batcher.ts";
import { Receiver } from "./core/receive.ts";
import type { EventSink } from "./events/types.ts";
import { SecureJoin } from "./securejoin/mod.ts";
import type { OutgoingRenderer } from "./services.ts";
import type { Store } from "./store/mod.ts";
import type { ServerParams } from "./transport/server_params.ts";
import { type OutboxQueue, SmtpLoop } from "./transport/smtp_loop.ts";

/** Inputs of {@link createMailRuntime}. */
export interface MailRuntimeOptions {
  readonly store: Store;
  readonly events: EventSink;
  readonly dataDir: string;
  readonly serverParams: ServerParams;
  readonly password: string;
}

/** What the daemon wires. */
export interface MailRuntime {
  readonly outgoing: OutgoingRenderer;
  readonly secureJoin: SecureJoin;
  readonly receiver: Receiver;
  /** Where the IMAP loop drains INBOX to (the pipeline with an attempt count per mail). */
  readonly reception: InboxReception;
  start(signal: AbortSignal): void;
  /** Sends pending receipts into the queue and stops the SMTP loop (queued rows stay). */
  stop(): Promise<void>;
}

/** The outbox table as the SMTP loop sees it. */
export function outboxQueue(ctx: CoreContext): OutboxQueue {
  const states = new MessageStates(ctx);
  const outbox = ctx.store.outbox;
  return {
    due: (now, limit) => outbox.due(now, limit),
    nextDueAt: () => outbox.nextDueAt(),
    sent: (id) => void states.outboxSent(id),
    retry: (id, error, nextTryAt, counted) => outbox.recordFailure(id, error, nextTryAt, counted),
    gaveUp: (id, error) => void states.outboxGaveUp(id, error),
  };
}

/** The messenger's parts over one account, independent of how mail is sent. */
export interface Messenger {
  readonly self: SelfIdentity;
  readonly composer: MailComposer;
  readonly secureJoin: SecureJoin;
  readonly receipts: ReceiptBatcher;
  readonly receiver: Receiver;
}

/**
 * Composes the messenger over `ctx`: mails to send go to `queue` (the daemon's puts them in the
 * outbox and wakes the SMTP loop; tests hand them from one account to another).
 */
export function createMessenger(
  ctx: CoreContext,
  self: SelfIdentity,
  queue: (mail: RenderedMail) => void,
  receiptWindowMs?: number,
): Messenger {
  const keys = new PeerKeyCache();
  const composer = new MailComposer(self, keys);
  const secureJoin = new SecureJoin({ ctx, self, composer, queue });
  const receipts = new ReceiptBatcher(ctx, composer, queue, receiptWindowMs);
  const receiver = new Receiver({
    ctx,
    reader: {
      privateKey: self.privateKey,
      keys,
      now: () => ctx.now(),
      knownKeys: (addr) =>
        ctx.store.contacts.keyContactsByAddr(addr).map((c) => c.publicKey).filter((k) =>
          k.length > 0
        ),
    },
    selfFingerprint: self.fingerprint,
    secureJoin,
    deliveryReceiptWanted: (contactId, mid) => receipts.add(contactId, mid, "processed"),
  });
  return { self, composer, secureJoin, receipts, receiver };
}

/** Builds the runtime for a provisioned account (loads and parses the key once). */
export async function createMailRuntime(o: MailRuntimeOptions): Promise<MailRuntime> {
  const ctx = createCoreContext({
    store: o.store,
    events: o.events,
    blobDir: blobDirOf(o.dataDir),
  });
  const smtp = new SmtpLoop({
    endpoint: o.serverParams.smtp,
    password: o.password,
    queue: outboxQueue(ctx),
    events: o.events,
  });
  const messages = new Messages(ctx);
  const m = createMessenger(ctx, await loadIdentity(o.store), (mail) => {
    messages.enqueueMail(mail);
    smtp.wake();
  });
  return {
    outgoing: {
      render: (draft, chat, recipients) => m.composer.renderChat(draft, chat, recipients),
      queued: () => smtp.wake(),
      renderControl: (control, to, timer) => m.composer.renderControl(control, to, timer),
      oweReadReceipts: (messages) => {
        for (const msg of messages) m.receipts.add(msg.fromId, msg.rfc724Mid, "displayed");
      },
    },
    secureJoin: m.secureJoin,
    receiver: m.receiver,
    reception: new InboxReception(ctx, m.receiver),
    start: (signal) => smtp.start(signal),
    stop: async () => {
      await m.receipts.close();
      await smtp.stop();
    },
  };
}
