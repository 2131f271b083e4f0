/**
 * Rows of the `transfers` table: files sent or received as relay parts (docs/transfer.md). An
 * outgoing row queues parts and waits for each recipient's confirmation; an incoming row records
 * which parts of its partial blob are verified and holds the announcing mail until the end.
 */
import type { Db } from "./db.ts";

/** Which side of a transfer a row is. */
export type TransferDirection = "out" | "in";

/** What carries (or last carried) a transfer's bytes: relay parts or the direct QUIC path. */
export type TransferPath = "relay" | "direct";

/** Where a transfer stands. */
export type TransferState = "active" | "done" | "failed" | "cancelled";

/** A transfer as stored. */
export interface TransferRecord {
  readonly id: string;
  readonly direction: TransferDirection;
  /** In: the sender's key fingerprint; out: ''. */
  readonly peerFingerprint: string;
  readonly chatId: number;
  /** The message (out: at once; in: once shown), 0 before. */
  readonly msgId: number;
  readonly state: TransferState;
  readonly reason: string;
  readonly name: string;
  readonly mime: string;
  readonly size: number;
  /** SHA-256 of the whole file, lower-case hex. */
  readonly sha256: string;
  readonly partSize: number;
  readonly parts: number;
  /** Out: the message's blob; in: the partial blob's file name. */
  readonly blob: string;
  /** Out: parts queued on the first pass (0..parts). */
  readonly nextPart: number;
  /** Out: parts asked for again, with who asked. */
  readonly resend: readonly ResendRequest[];
  /** Out: recipients (addresses) that have not confirmed yet. */
  readonly pending: readonly string[];
  /** Out: recipients that confirmed the whole file. */
  readonly confirmed: readonly string[];
  /** Out: recipients that refused the file (no space, too large, a hash mismatch). */
  readonly refused: readonly string[];
  /** In: one bit per verified part (bit i of byte i>>3). */
  readonly have: Uint8Array;
  /** In: the raw announcing mail, kept until the message is shown. */
  readonly announce: Uint8Array;
  /** In: how often missing parts were asked for. */
  readonly requests: number;
  /** The path that carries the transfer now, or last carried it. */
  readonly path: TransferPath;
  /** Unix ms. */
  readonly createdAt: number;
  /** Unix ms of the last progress (a part written or queued, a request sent). */
  readonly updatedAt: number;
}

/** Parts a recipient asked for again. */
export interface ResendRequest {
  readonly addr: string;
  readonly parts: readonly number[];
}

/** Fields of a new row. */
export type NewTransfer =
  & Pick<
    TransferRecord,
    "id" | "direction" | "size" | "sha256" | "partSize" | "parts" | "name" | "mime"
  >
  & Partial<
    Pick<
      TransferRecord,
      "peerFingerprint" | "chatId" | "msgId" | "blob" | "pending" | "have" | "announce"
    >
  >
  & { readonly now: number };

interface TransferRow {
  id: string;
  direction: string;
  peer_fingerprint: string;
  chat_id: number;
  msg_id: number;
  state: string;
  reason: string;
  name: string;
  mime: string;
  size: number;
  sha256: string;
  part_size: number;
  parts: number;
  blob: string;
  next_part: number;
  resend: string;
  pending: string;
  confirmed: string;
  refused: string;
  have: Uint8Array;
  announce: Uint8Array;
  requests: number;
  path: string;
  created_at: number;
  updated_at: number;
}

const SELECT = "SELECT * FROM transfers";
const KEY = "direction = ? AND id = ? AND peer_fingerprint = ?";

function toRecord(r: TransferRow): TransferRecord {
  return {
    id: r.id,
    direction: r.direction as TransferDirection,
    peerFingerprint: r.peer_fingerprint,
    chatId: r.chat_id,
    msgId: r.msg_id,
    state: r.state as TransferState,
    reason: r.reason,
    name: r.name,
    mime: r.mime,
    size: r.size,
    sha256: r.sha256,
    partSize: r.part_size,
    parts: r.parts,
    blob: r.blob,
    nextPart: r.next_part,
    resend: JSON.parse(r.resend) as ResendRequest[],
    pending: JSON.parse(r.pending) as string[],
    confirmed: JSON.parse(r.confirmed) as string[],
    refused: JSON.parse(r.refused) as string[],
    have: new Uint8Array(r.have),
    announce: new Uint8Array(r.announce),
    requests: r.requests,
    path: r.path as TransferPath,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/** Reads and writes rows of the `transfers` table. */
export class TransfersStore {
  constructor(private readonly db: Db) {}

  /** Inserts a row in state `active`; false when it exists already. */
  insert(t: NewTransfer): boolean {
    return this.db.run(
      "INSERT OR IGNORE INTO transfers (id, direction, peer_fingerprint, chat_id, msg_id, state, " +
        "name, mime, size, sha256, part_size, parts, blob, pending, have, announce, created_at, " +
        "updated_at) VALUES (?, ?, ?, ?, ?, 'active', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      t.id,
      t.direction,
      t.peerFingerprint ?? "",
      t.chatId ?? 0,
      t.msgId ?? 0,
      t.name,
      t.mime,
      t.size,
      t.sha256,
      t.partSize,
      t.parts,
      t.blob ?? "",
      JSON.stringify(t.pending ?? []),
      t.have ?? new Uint8Array(),
      t.announce ?? new Uint8Array(),
      t.now,
      t.now,
    ).changes > 0;
  }

  get(direction: TransferDirection, id: string, peer = ""): TransferRecord | undefined {
    const row = this.db.get<TransferRow>(`${SELECT} WHERE ${KEY}`, direction, id, peer);
    return row && toRecord(row);
  }

  /** The transfer of message `msgId` (its newest row), or undefined. */
  byMessage(msgId: number): TransferRecord | undefined {
    if (msgId <= 0) return undefined;
    const row = this.db.get<TransferRow>(
      `${SELECT} WHERE msg_id = ? ORDER BY created_at DESC LIMIT 1`,
      msgId,
    );
    return row && toRecord(row);
  }

  /** Rows still active, oldest first. */
  active(direction: TransferDirection): TransferRecord[] {
    return this.db.all<TransferRow>(
      `${SELECT} WHERE direction = ? AND state = 'active' ORDER BY created_at`,
      direction,
    ).map(toRecord);
  }

  /** Partial blob names of incoming rows still active. */
  activePartials(): Set<string> {
    return new Set(
      this.db.all<{ blob: string }>(
        "SELECT blob FROM transfers WHERE direction = 'in' AND state = 'active'",
      ).map((r) => r.blob),
    );
  }

  /** Out: the first pass queued parts up to `nextPart`; `resend` what is still to send again. */
  setQueued(id: string, nextPart: number, resend: readonly ResendRequest[], now: number): void {
    this.db.run(
      "UPDATE transfers SET next_part = ?, resend = ?, updated_at = ? WHERE direction = 'out' " +
        "AND id = ?",
      nextPart,
      JSON.stringify(resend),
      now,
      id,
    );
  }

  /** Out: the parts asked for again (a request replaces the asker's earlier one). */
  setResend(id: string, resend: readonly ResendRequest[]): void {
    this.db.run(
      "UPDATE transfers SET resend = ? WHERE direction = 'out' AND id = ?",
      JSON.stringify(resend),
      id,
    );
  }

  /** Out: a recipient answered: it leaves `pending` for `confirmed` or `refused`. */
  answered(id: string, addr: string, answer: "confirmed" | "refused"): void {
    const t = this.get("out", id);
    if (t === undefined || !t.pending.includes(addr)) return;
    this.db.run(
      `UPDATE transfers SET pending = ?, ${answer} = ? WHERE direction = 'out' AND id = ?`,
      JSON.stringify(t.pending.filter((a) => a !== addr)),
      JSON.stringify([...t[answer], addr]),
      id,
    );
  }

  /** In: the verified-parts bitmap after a part was written. */
  setHave(id: string, peer: string, have: Uint8Array, now: number): void {
    this.db.run(
      `UPDATE transfers SET have = ?, updated_at = ? WHERE ${KEY}`,
      have,
      now,
      "in",
      id,
      peer,
    );
  }

  /** The path that carries transfer `id` from now on (kept after it ends). */
  setPath(direction: TransferDirection, id: string, peer: string, path: TransferPath): void {
    this.db.run(
      `UPDATE transfers SET path = ? WHERE ${KEY} AND path <> ?`,
      path,
      direction,
      id,
      peer,
      path,
    );
  }

  /** In: one more request for missing parts was sent. */
  noteRequest(id: string, peer: string, now: number): void {
    this.db.run(
      `UPDATE transfers SET requests = requests + 1, updated_at = ? WHERE ${KEY}`,
      now,
      "in",
      id,
      peer,
    );
  }

  /** Ends a transfer (`done`, `failed`, `cancelled`); in: the message it became. */
  finish(
    direction: TransferDirection,
    id: string,
    peer: string,
    state: Exclude<TransferState, "active">,
    reason: string,
    now: number,
    msgId?: number,
  ): boolean {
    return this.db.run(
      "UPDATE transfers SET state = ?, reason = ?, updated_at = ?, msg_id = " +
        `coalesce(?, msg_id), announce = x'', have = x'' WHERE ${KEY} AND state = 'active'`,
      state,
      reason,
      now,
      msgId ?? null,
      direction,
      id,
      peer,
    ).changes > 0;
  }
}
