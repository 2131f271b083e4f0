/**
 * Relay parts for one account (docs/transfer.md): the send pipeline's plan for a file, the
 * reception pipeline's port for transfer mails (announcements, parts, control mails), the state
 * `get_transfer` reads, cancel, and the periodic sweep. The two sides are `outgoing.ts` and
 * `incoming.ts`; this façade routes between them.
 */
import { Header } from "../../protocol.ts";
import type { ContactRecord, TransferRecord } from "../../store/mod.ts";
import type { ReadMail } from "../receive/mail_reader.ts";
import { assignChat } from "../receive/assignment.ts";
import type { OutgoingDraft } from "../send/rendered_mail.ts";
import { parseControl } from "./headers.ts";
import { IncomingTransfers, type TransferOutcome } from "./incoming.ts";
import { QuicDirectPath } from "./direct_quic.ts";
import { MAX_DIRECT_BODY_BYTES } from "./direct_mail.ts";
import { countBits, partPrefix, TransferKit } from "./kit.ts";
import type { ShowAssembled, TransferDeps } from "./options.ts";
import { OutgoingTransfers, type PartsPlan, type PartsSend } from "./outgoing.ts";

export type { PartsPlan, PartsSend } from "./outgoing.ts";
export type { TransferOutcome } from "./incoming.ts";

/** How often the blob directory is searched for partial blobs no transfer owns. */
const ORPHAN_CHECK_MS = 10 * 60_000;

/** The state `get_transfer` reports. */
export interface TransferView {
  readonly transferId: string;
  readonly direction: "out" | "in";
  readonly state: TransferRecord["state"];
  readonly reason: string;
  readonly bytes: number;
  readonly total: number;
  readonly parts: number;
  readonly partsDone: number;
  readonly path: "relay" | "direct";
  /** Out: recipients that have not confirmed yet. */
  readonly pending: readonly string[];
}

/** Sends and receives files as relay parts for one account. */
export class TransferManager {
  readonly #kit: TransferKit;
  readonly #out: OutgoingTransfers;
  readonly #in: IncomingTransfers;
  /** Unix ms of the last look for partial blobs no transfer owns. */
  #orphansCheckedAt = -Infinity;

  readonly #direct: QuicDirectPath;

  constructor(deps: TransferDeps) {
    this.#kit = new TransferKit(deps);
    this.#out = new OutgoingTransfers(this.#kit);
    this.#in = new IncomingTransfers(this.#kit);
    // Also without an endpoint: it then declines the offers of peers at once.
    this.#direct = new QuicDirectPath(this.#kit, deps.endpoint, (t) => this.#in.complete(t));
    this.#out.direct = this.#direct;
  }

  /** Stops the direct path's waits (the daemon stops; the endpoint closes on its own). */
  close(): void {
    this.#direct.close();
  }

  /** Wires the reception step that shows a completed file (the receiver is built later). */
  setShow(show: ShowAssembled): void {
    this.#in.setShow(show);
  }

  /** The size bound of one part mail to `recipients` with a payload of n bytes. */
  partSizer(recipients: readonly ContactRecord[]): (payloadBytes: number) => number {
    return this.#out.partSizer(recipients);
  }

  /** Whether recipient `c`'s gateway announced it takes relay parts. */
  capable(c: ContactRecord): boolean {
    return this.#kit.ctx.store.contacts.hasLargeFiles(c.id);
  }

  /**
   * The announcing draft of a file the size decision sends as parts, and the record to store
   * with the message.
   */
  prepareOutgoing(
    draft: OutgoingDraft,
    recipients: readonly ContactRecord[],
    plan: PartsPlan,
  ): Promise<PartsSend> {
    return this.#out.prepare(draft, recipients, plan);
  }

  /** Queues due parts of every active outgoing transfer (one pass at a time). */
  pump(): Promise<void> {
    return this.#out.pump();
  }

  /**
   * Cancels the outgoing transfer of message `msgId`: queued parts are dropped, recipients told;
   * false when it has none still running.
   */
  cancel(msgId: number): Promise<boolean> {
    return this.#out.cancel(msgId);
  }

  /** The transfer of message `msgId`, or undefined. */
  view(msgId: number): TransferView | undefined {
    const { ctx } = this.#kit;
    const t = ctx.store.transfers.byMessage(msgId);
    if (t === undefined) return undefined;
    const partsDone = t.state === "done"
      ? t.parts
      : t.direction === "in"
      ? countBits(t.have, t.parts)
      : Math.max(0, t.nextPart - ctx.store.outbox.countByMidPrefix(partPrefix(t.id)));
    return {
      transferId: t.id,
      direction: t.direction,
      state: t.state,
      reason: t.reason,
      bytes: Math.min(t.size, partsDone * t.partSize),
      total: t.size,
      parts: t.parts,
      partsDone,
      path: t.path,
      pending: t.state === "active" ? t.pending : [],
    };
  }

  /**
   * Handles a transfer mail from a verified signer: an announcing chat message (held until the
   * file is complete), a part, or a control mail; undefined when `mail` is none of them.
   */
  async receive(
    mail: ReadMail,
    whole: () => Promise<Uint8Array>,
  ): Promise<TransferOutcome | undefined> {
    const signer = mail.signer!;
    const part = mail.headers.get(Header.EDGE_TRANSFER_PART);
    if (part !== undefined) {
      // A part read by the streamed reader waits in a temp file: copied, never read whole.
      const { spooled, body } = mail.content;
      return await this.#in.onPart(signer, part, spooled === undefined ? { body } : { spooled });
    }
    const control = mail.headers.get(Header.EDGE_TRANSFER_CONTROL);
    if (control !== undefined) return await this.#onControl(signer, control);
    const direct = mail.headers.get(Header.EDGE_TRANSFER_DIRECT);
    if (direct !== undefined) {
      return await this.#direct.receive(signer, direct, await directBody(mail));
    }
    const announce = mail.headers.get(Header.EDGE_TRANSFER);
    if (announce !== undefined) {
      return await this.#in.onAnnounce(
        signer,
        announce,
        await whole(),
        this.#knownChat(mail, signer),
      );
    }
    return undefined;
  }

  /** The chat the announced message will go to when it exists already (events), else 0. */
  #knownChat(mail: ReadMail, signer: string): number {
    const { store } = this.#kit.ctx;
    const a = assignChat(mail);
    if (a.kind === "group") return store.chats.byGrpid(a.grpid)?.id ?? 0;
    if (a.kind !== "single") return 0;
    const contact = store.contacts.byFingerprint(signer);
    return (contact && store.chats.singleByContact(contact.id)?.id) ?? 0;
  }

  /** A control mail: for our outgoing transfer from a pending recipient, or the sender's cancel. */
  async #onControl(signer: string, header: string): Promise<TransferOutcome> {
    const { store } = this.#kit.ctx;
    const c = parseControl(header);
    if (c === undefined) return { kind: "rejected", reason: "unreadable Edge-Transfer-Control" };
    // The asker is the contact of the signing key, whatever address the mail shows.
    const addr = store.contacts.byFingerprint(signer)?.addr ?? "";
    const out = store.transfers.get("out", c.id);
    if (out !== undefined && out.state === "active" && out.pending.includes(addr)) {
      this.#out.onControl(out, addr, c);
      void this.pump();
      return { kind: "transfer", what: `${c.action} from ${addr}` };
    }
    const inc = store.transfers.get("in", c.id, signer);
    if (inc !== undefined && inc.state === "active" && c.action === "refused") {
      await this.#in.fail(inc, c.reason === "cancelled" ? "cancelled_by_sender" : c.reason);
      return { kind: "transfer", what: "cancelled by the sender" };
    }
    return { kind: "transfer", what: "control for no active transfer" };
  }

  /**
   * The periodic work: incoming transfers to finish, parts to ask for again or give up, partial
   * blobs no transfer owns (every 10 minutes), then outgoing parts to queue.
   */
  async sweep(): Promise<void> {
    await this.#in.sweep();
    const now = this.#kit.ctx.now();
    if (now - this.#orphansCheckedAt >= ORPHAN_CHECK_MS) {
      this.#orphansCheckedAt = now;
      await this.#in.removeOrphans();
    }
    await this.pump();
  }
}

/** The JSON body of a direct-path mail (small; read from the temp file if the reader put it there). */
async function directBody(mail: ReadMail): Promise<Uint8Array> {
  const { spooled, body } = mail.content;
  if (spooled === undefined) return body;
  if (spooled.bytes > MAX_DIRECT_BODY_BYTES) return new Uint8Array();
  return await Deno.readFile(spooled.path);
}
