/**
 * The account core: one per account, built once at start (as chatmail's `Context`). It owns the
 * account's context (store, its one `DomainTx`, blob directory and blob holds, clock), the domain
 * objects (contacts, chats, messages, groups, channels, message states, outgoing controls),
 * protected files, SecureJoin, the receipt batcher, the reception pipeline and the one send
 * pipeline (`send`) every message of ours takes. RPC handlers reach it as `services.core` and
 * call one of its members; the daemon's mail runtime adds the transports around it.
 */
import { ChatType } from "../constants.ts";
import { Channels } from "../core/channels/mod.ts";
import { Chats } from "../core/chats/mod.ts";
import { Contacts } from "../core/contacts/mod.ts";
import { type CoreContext, createCoreContext, type WakeSender } from "../core/context.ts";
import { Groups } from "../core/groups/mod.ts";
import type { SelfIdentity } from "../core/contacts/mod.ts";
import { JoinWait } from "../core/send/mod.ts";
import { MailComposer } from "../core/send/mod.ts";
import { MessageStates } from "../core/chats/mod.ts";
import {
  Messages,
  type OutgoingDraft,
  type OutgoingMessage,
  type RenderedMail,
  type SendSteps,
} from "../core/chats/mod.ts";
import { ComposerOutgoing, type OutgoingRenderer } from "../core/send/mod.ts";
import { OutgoingControls } from "../core/send/mod.ts";
import { PeerKeyCache } from "../core/contacts/mod.ts";
import { ReceiptBatcher } from "../core/send/mod.ts";
import { checkMailSize, PRV_PDU_ROOM_BYTES } from "../core/send/mod.ts";
import { Receiver } from "../core/receive/mod.ts";
import {
  type DirectEndpoint,
  type DirectPath,
  TransferManager,
  type TransferOptions,
} from "../core/transfer/mod.ts";
import type { EventSink } from "../events/types.ts";
import { requireLicense } from "../license/gate.ts";
import type { LicenseSource } from "../license/manager.ts";
import { type StoredSecretKeys, storedSecretKeysOf } from "../protected_files/key_shares.ts";
import { ProtectedFiles } from "../protected_files/service.ts";
import { SecureJoin } from "../securejoin/mod.ts";
import {
  type ChatRecord,
  ConfigKey,
  type ContactRecord,
  relayMessageLimit,
  type Store,
} from "../store/mod.ts";

/** What sharing a protected file is called in the license gate's -32001 message. */
const SEND_PROTECTED = "send_msg with a protected .prv file";

/** Inputs of {@link createAccountCore}. */
export interface AccountCoreOptions {
  readonly store: Store;
  readonly events: EventSink;
  /** Absolute path of the blob directory. */
  readonly blobDir: string;
  /** Who the account is (`loadIdentity`: its key parsed once). */
  readonly self: SelfIdentity;
  /** Gates sharing protected files. */
  readonly license: LicenseSource;
  /** Clock in Unix ms; default `Date.now`. */
  readonly now?: () => number;
  /** Wakes the mail sender after a commit that queued mail (`DomainTx.mailQueued`). */
  readonly wakeSender?: WakeSender;
  /**
   * The keys protected files' stored secrets are wrapped under (docs/identity.md); default: the
   * store's installation secret with an empty machine id (tests).
   */
  readonly secretKeys?: StoredSecretKeys | undefined;
  /** How long read and delivery receipts are collected before they go out (ms). */
  readonly receiptWindowMs?: number;
  /**
   * Where mails of their own go (receipts, SecureJoin steps, protected-file PDUs); default: the
   * store's outbox, waking the sender after the commit. Tests hand them to another account.
   */
  readonly queue?: (mail: RenderedMail) => void;
  /**
   * How mails of ours are made: the send steps, control mails and read receipts owed. Default:
   * the account's own pipeline (protected-file rules and the license gate, then its composer)
   * and receipt batcher. Tests whose peers have no real keys pass a fake renderer.
   */
  readonly renderer?: OutgoingRenderer;
  /** Timings and bounds of relay-part transfers (docs/transfer.md); tests shorten them. */
  readonly transferOptions?: Partial<TransferOptions> | undefined;
  /** The direct path between gateways, offered each new outgoing transfer first (none: relay). */
  readonly direct?: DirectPath | undefined;
  /** The process's QUIC endpoint for the direct path (docs/p2p.md); none: the path is off. */
  readonly p2p?: DirectEndpoint | undefined;
}

/** One account's domain, built once; see the module doc. */
export interface AccountCore {
  readonly ctx: CoreContext;
  readonly self: SelfIdentity;
  readonly composer: MailComposer;
  readonly contacts: Contacts;
  readonly chats: Chats;
  readonly messages: Messages;
  readonly groups: Groups;
  readonly channels: Channels;
  /** Delivery states, receipts and seen marks. */
  readonly states: MessageStates;
  /** Reactions, edits and deletes of ours, sent to the chat's members. */
  readonly controls: OutgoingControls;
  /** Protected files: key shares, PDUs, grants held in memory. */
  readonly protectedFiles: ProtectedFiles;
  readonly secureJoin: SecureJoin;
  /** The steps every chat message of ours takes, whatever its chat or path. */
  readonly send: SendSteps;
  readonly receipts: ReceiptBatcher;
  /** The reception pipeline (the IMAP drain's sink wraps it). */
  readonly receiver: Receiver;
  /** Files above the relay's one-mail limit, sent and received as relay parts. */
  readonly transfers: TransferManager;
  /** Sends a message of ours through `send` (`send_msg`); resolves with its id. */
  sendMessage(m: OutgoingMessage): Promise<number>;
  /**
   * Marks incoming messages seen and owes the read receipts their senders asked for, in one
   * transaction (a crash cannot leave messages seen whose receipts are not owed).
   */
  markSeen(ids: readonly number[]): void;
  /** Leaves a group (the members are told) or a channel we subscribe to (its owner is told). */
  leave(chatId: number): Promise<void>;
  /**
   * Sends or fails messages waiting for a SecureJoin handshake (`all`: every chat, at start;
   * else the chats of join records, for timeouts); the outbox rows wake the sender.
   */
  settleJoinWaits(all?: boolean): Promise<void>;
}

/** Builds the core of one account over its store; build it once per account. */
export function createAccountCore(o: AccountCoreOptions): AccountCore {
  const ctx = createCoreContext({
    store: o.store,
    events: o.events,
    blobDir: o.blobDir,
    now: o.now,
    wakeSender: o.wakeSender,
  });
  const self = o.self;
  const messages = new Messages(ctx);
  const queue = o.queue ?? ((mail: RenderedMail) => {
    messages.enqueueMail(mail); // wakes the sender after its commit
  });
  const keys = new PeerKeyCache();
  const composer = new MailComposer(self, keys, ctx.spool);
  const joinWait = new JoinWait(ctx);
  const protectedFiles = new ProtectedFiles({
    ctx,
    self,
    renderPdus: (to, pdus) => composer.renderPdus(to, pdus),
    queue,
    keys: o.secretKeys ??
      storedSecretKeysOf(o.store.config.get(ConfigKey.INSTALLATION_SECRET) ?? "", ""),
  });
  // The one send pipeline: protected-file rules and the license gate, then the mail with the
  // file's PDUs, announced with the commit; separate PDU mails go out after it.
  const gate = () => requireLicense(SEND_PROTECTED, o.license);
  const transfers = new TransferManager({
    ctx,
    selfAddr: self.addr,
    sealer: composer,
    options: o.transferOptions,
    direct: o.direct,
    endpoint: o.p2p,
  });
  // The size before anything is stored: a bound from the file's size, the file unread. A file
  // too large for one mail goes as relay parts when every recipient's gateway takes them
  // (channel posts never do), else it is refused (-1) here.
  const checkSize = (d: OutgoingDraft, c: ChatRecord, r: readonly ContactRecord[]) => {
    const prv = d.file !== undefined && (d.file.blob || d.file.name).endsWith(".prv");
    const sizer = composer.chatSizer(d, c, r, prv ? PRV_PDU_ROOM_BYTES * (r.length + 1) : 0);
    const parts = d.file === undefined || d.channel !== undefined ? undefined : {
      fileBytes: d.file.bytes,
      capable: (x: ContactRecord) => transfers.capable(x),
      partSizer: transfers.partSizer(r),
    };
    return checkMailSize(
      sizer(d.file?.bytes ?? 0),
      relayMessageLimit(ctx.store),
      d,
      r,
      sizer,
      parts,
    );
  };
  const pipeline: SendSteps = {
    admit: (d, c, r) => {
      protectedFiles.admit(d, c, r, gate);
      checkSize(d, c, r);
      return Promise.resolve();
    },
    precheck: (d, c, r) => void checkSize(d, c, r),
    render: async (d, c, r) => {
      const prv = await protectedFiles.outgoing(d, c, r, gate);
      // A file above the relay's one-mail limit to capable gateways: the chat mail announces
      // it, relay parts carry it (a .prv's parts are its ciphertext, its PDUs in the announce).
      const decision = checkSize(prv.draft, c, r);
      const parts = decision.kind === "parts"
        ? await transfers.prepareOutgoing(prv.draft, r, decision)
        : undefined;
      // The exact size, checked again before the mail is written (PDUs included).
      const limit = relayMessageLimit(ctx.store);
      const mail = await composer.renderChat(
        parts?.draft ?? prv.draft,
        c,
        r,
        (bytes) => checkMailSize(bytes, limit, d, r),
      );
      const fileId = prv.fileId;
      return {
        ...mail,
        ...(parts === undefined ? {} : {
          record: (msgId: number) => {
            parts.record(msgId);
            void transfers.pump(); // runs once this commit is done (the transaction is sync)
          },
        }),
        ...(fileId === undefined ? {} : {
          announce: (msgId: number) => [{ kind: "PrivittyFileEncrypted", chatId: d.chatId, msgId }],
        }),
        ...(prv.separateMails === undefined ? {} : { separateMails: prv.separateMails }),
      };
    },
  };
  const receipts = new ReceiptBatcher(ctx, composer, queue, o.receiptWindowMs);
  const renderer = o.renderer ?? new ComposerOutgoing(composer, receipts, pipeline);
  const send = renderer.chat;
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
    transfers,
  });
  transfers.setShow((raw, file) => receiver.receiveAssembled(raw, file));
  const chats = new Chats(ctx);
  const states = new MessageStates(ctx);
  const groups = new Groups(ctx, send);
  const channels = new Channels(ctx, send);
  return {
    ctx,
    self,
    composer,
    contacts: new Contacts(ctx),
    chats,
    messages,
    groups,
    channels,
    states,
    controls: new OutgoingControls(ctx, renderer.renderControl.bind(renderer)),
    protectedFiles,
    secureJoin,
    send,
    receipts,
    receiver,
    transfers,
    sendMessage: (m) => messages.createOutgoing(m, send),
    markSeen: (ids) => {
      ctx.tx.run(() => {
        const seen = states.markSeen(ids);
        if (seen.length > 0) renderer.oweReadReceipts(seen);
      });
    },
    leave: async (chatId) => {
      if (chats.require(chatId).type === ChatType.BROADCAST) await channels.leave(chatId);
      else await groups.leave(chatId);
    },
    settleJoinWaits: async (all = false) => {
      await joinWait.settleAll(send, all);
    },
  };
}
