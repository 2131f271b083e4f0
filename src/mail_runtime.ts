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
import { ComposerOutgoing, type OutgoingRenderer } from "./core/outgoing.ts";
import { JoinWait } from "./core/join_wait.ts";
import { Messages, type RenderedMail, type SendSteps } from "./core/messages.ts";
import { PeerKeyCache } from "./core/peer_keys.ts";
import { ReceiptBatcher } from "./core/receipt_batcher.ts";
import { Receiver } from "./core/receive.ts";
import type { EventSink } from "./events/types.ts";
import { requireLicense } from "./license/gate.ts";
import type { LicenseSource } from "./license/manager.ts";
import { logger } from "./log.ts";
import { deviceKeyOf } from "./protected_files/key_shares.ts";
import { ProtectedFiles } from "./protected_files/service.ts";
import { SecureJoin } from "./securejoin/mod.ts";
import type { Store } from "./store/mod.ts";
import { monotonicNow } from "./transport/clock.ts";
import type { MailProblemSink } from "./transport/mail_problem.ts";
import type { ServerParams } from "./transport/server_params.ts";
import { type OutboxQueue, SmtpLoop } from "./transport/smtp_loop.ts";

const log = logger("mail");

/** What sharing a protected file is called in the license gate's -32001 message. */
const SEND_PROTECTED = "send_msg with a protected .prv file";

/** How often messages waiting for a join are checked for a join that timed out. */
const JOIN_SWEEP_MS = 30_000;

/** Inputs of {@link createMailRuntime}. */
export interface MailRuntimeOptions {
  readonly store: Store;
  readonly events: EventSink;
  readonly dataDir: string;
  readonly serverParams: ServerParams;
  readonly password: string;
  /** The device fingerprint: protected files' stored shares are bound to it. */
  readonly deviceFingerprint?: string;
  /** Told the size of each mail reception went through (`InboxReceptionOptions`). */
  readonly noteGarbage?: (bytes: number) => void;
  /** Told when sending fails because of the device's clock (the daemon's ConnectivityMonitor). */
  readonly problems?: MailProblemSink;
  /** Gates sharing protected files. */
  readonly license: LicenseSource;
}

/** What the daemon wires. */
export interface MailRuntime {
  readonly outgoing: OutgoingRenderer;
  readonly protectedFiles: ProtectedFiles;
  readonly secureJoin: SecureJoin;
  readonly receiver: Receiver;
  /** Wakes the SMTP loop (after a commit that queued mail, see `DomainTx.mailQueued`). */
  readonly wakeSender: () => void;
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
    pullBack: (now, maxAhead) => outbox.pullBack(now, maxAhead),
    sent: (id) => void states.outboxSent(id),
    retry: (id, error, nextTryAt, counted) => outbox.recordFailure(id, error, nextTryAt, counted),
    gaveUp: (id, error) => void states.outboxGaveUp(id, error),
  };
}

/** The messenger's parts over one account, independent of how mail is sent. */
export interface Messenger {
  readonly self: SelfIdentity;
  readonly composer: MailComposer;
  /** The steps every chat message of ours takes, whatever its chat or path. */
  readonly send: SendSteps;
  readonly secureJoin: SecureJoin;
  readonly receipts: ReceiptBatcher;
  readonly receiver: Receiver;
  /** Protected files: key shares, PDUs, grants held in memory. */
  readonly protectedFiles: ProtectedFiles;
  /**
   * Sends or fails messages waiting for a SecureJoin handshake (`all`: every chat, at start;
   * else the chats of join records, for timeouts); the outbox rows wake the sender.
   */
  settleJoinWaits(all?: boolean): Promise<void>;
}

/**
 * Composes the messenger over `ctx`: mails to send go to `queue` (the daemon's puts them in the
 * outbox; tests hand them from one account to another); chat messages that waited for a join
 * are written to the outbox directly. Outbox writes wake the sender after their commit
 * (`DomainTx.mailQueued`).
 */
export function createMessenger(
  ctx: CoreContext,
  self: SelfIdentity,
  queue: (mail: RenderedMail) => void,
  o: { license: LicenseSource; receiptWindowMs?: number; deviceFingerprint?: string },
): Messenger {
  const keys = new PeerKeyCache();
  const composer = new MailComposer(self, keys);
  const joinWait = new JoinWait(ctx);
  const protectedFiles = new ProtectedFiles({
    ctx,
    self,
    renderPdus: (to, pdus) => composer.renderPdus(to, pdus),
    queue,
    deviceKey: deviceKeyOf(o.deviceFingerprint ?? ""),
  });
  // The one send pipeline: protected-file rules and the license gate, then the mail with the
  // file's PDUs, announced with the commit; separate PDU mails go out after it.
  const gate = () => requireLicense(SEND_PROTECTED, o.license);
  const send: SendSteps = {
    admit: (d, c, r) => Promise.resolve(protectedFiles.admit(d, c, r, gate)),
    render: async (d, c, r) => {
      const prv = await protectedFiles.outgoing(d, c, r, gate);
      const mail = await composer.renderChat(prv.draft, c, r);
      const fileId = prv.fileId;
      return {
        ...mail,
        ...(fileId === undefined ? {} : {
          announce: (msgId: number) => [{ kind: "PrivittyFileEncrypted", chatId: d.chatId, msgId }],
        }),
        ...(prv.afterSend === undefined ? {} : { afterCommit: prv.afterSend }),
      };
    },
  };
  const secureJoin = new SecureJoin({
    ctx,
    self,
    composer,
    send,
    queue,
    onJoined: async (chatId) => {
      await joinWait.settle(chatId, send);
    },
  });
  const receipts = new ReceiptBatcher(ctx, composer, queue, o.receiptWindowMs);
  const receiver = new Receiver({
    ctx,
    reader: {
      privateKey: self.privateKey,
      keys,
      now: () => ctx.now(),
      channelSecrets: () => ctx.store.chats.subscribedSecrets(),
      knownKeys: (addr) =>
        ctx.store.contacts.keyContactsByAddr(addr).map((c) => c.publicKey).filter((k) =>
          k.length > 0
        ),
    },
    selfFingerprint: self.fingerprint,
    secureJoin,
    protectedFiles,
    deliveryReceiptWanted: (contactId, mid) => receipts.add(contactId, mid, "processed"),
  });
  const settleJoinWaits = async (all = false) => {
    await joinWait.settleAll(send, all);
  };
  return { self, composer, send, secureJoin, receipts, receiver, protectedFiles, settleJoinWaits };
}

/** Builds the runtime for a provisioned account (loads and parses the key once). */
export async function createMailRuntime(o: MailRuntimeOptions): Promise<MailRuntime> {
  const loops: { smtp?: SmtpLoop } = {};
  const wakeSender = () => loops.smtp?.wake();
  const ctx = createCoreContext({
    store: o.store,
    events: o.events,
    blobDir: blobDirOf(o.dataDir),
    wakeSender,
  });
  const smtp = loops.smtp = new SmtpLoop({
    endpoint: o.serverParams.smtp,
    password: o.password,
    queue: outboxQueue(ctx),
    events: o.events,
    now: () => ctx.now(),
    monotonic: monotonicNow,
    problems: o.problems,
  });
  const messages = new Messages(ctx);
  const m = createMessenger(
    ctx,
    await loadIdentity(o.store),
    (mail) => {
      messages.enqueueMail(mail); // wakes the SMTP loop after its commit
    },
    { license: o.license, deviceFingerprint: o.deviceFingerprint },
  );
  let sweep: ReturnType<typeof setInterval> | undefined;
  let settling = Promise.resolve();
  /** One settle at a time; `stop()` waits for the last before the store closes. */
  const settle = (all: boolean) => {
    settling = settling.then(() => m.settleJoinWaits(all)).catch((err) =>
      log.warn("messages waiting for a join could not be settled", {
        error: err instanceof Error ? err.message : String(err),
      })
    );
  };
  return {
    outgoing: new ComposerOutgoing(m.composer, m.receipts, m.send),
    secureJoin: m.secureJoin,
    protectedFiles: m.protectedFiles,
    receiver: m.receiver,
    wakeSender,
    reception: new InboxReception(ctx, m.receiver, { noteGarbage: o.noteGarbage }),
    start: (signal) => {
      smtp.start(signal);
      settle(true);
      sweep = setInterval(() => settle(false), JOIN_SWEEP_MS);
      signal.addEventListener("abort", () => clearInterval(sweep), { once: true });
    },
    stop: async () => {
      clearInterval(sweep);
      await settling;
      await m.receipts.close();
      await smtp.stop();
    },
  };
}
