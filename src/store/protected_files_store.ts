/**
 * Rows of the protected-file tables (migration 10): files this gateway protected (`prv_sent`),
 * each recipient's share and state (`prv_access`), and `.prv` files received (`prv_received`);
 * forwards (migration 13) add a forwarder and own rules to an access row.
 */
import type { Db } from "./db.ts";

/** A file this gateway protected; `id` is the API's `file_id`. */
export interface SentFileRecord {
  readonly id: number;
  readonly fileUid: string;
  readonly chatId: number;
  /** The `encrypted_path` secure_send_file wrote. */
  readonly path: string;
  readonly prvSha256: string;
  readonly plaintextSha256: string;
  readonly name: string;
  readonly mime: string;
  readonly size: number;
  readonly cek: Uint8Array;
  readonly allowDownload: boolean;
  readonly allowForward: boolean;
  readonly durationMinutes: number;
  /** The signed file_pdu, encoded. */
  readonly filePdu: string;
  readonly createdAt: number;
  /** Tag of the key the CEK is wrapped under ('' = the v1 device key; key_shares.ts). */
  readonly keyTag: string;
}

/** Owner-side states of one recipient's access. */
export type AccessRowState = "active" | "revoked" | "waiting_owner_action" | "denied";

/** One recipient of a sent file. */
export interface AccessRecord {
  readonly fileId: number;
  readonly contactId: number;
  readonly fingerprint: string;
  readonly s1: Uint8Array;
  readonly otkPdu: string;
  readonly state: AccessRowState;
  /** When the recipient's window started (its receipt), 0 while unknown. */
  readonly windowStart: number;
  /** When it ends, 0 = unlimited or not yet known. */
  readonly windowEnd: number;
  /** The pending renewal request's id ('' for none). */
  readonly requestId: string;
  /** The recipient whose forward added this one (contact id), 0 for a recipient of the send. */
  readonly forwardedBy: number;
  /** This recipient's own rules as JSON (a forward's, never looser), '' = the file's rules. */
  readonly rules: string;
}

/** Recipient-side stored states (`open`: access follows the grant in memory and the window). */
export type ReceivedRowState = "open" | "revoked" | "denied" | "renew_requested";

/** A `.prv` received with its PDUs; `id` is this gateway's file id of it. */
export interface ReceivedFileRecord {
  readonly id: number;
  readonly msgId: number;
  readonly chatId: number;
  readonly ownerContactId: number;
  readonly fileUid: string;
  readonly prvSha256: string;
  readonly s1: Uint8Array;
  readonly allowDownload: boolean;
  readonly allowForward: boolean;
  readonly durationMinutes: number;
  readonly name: string;
  readonly mime: string;
  readonly size: number;
  readonly receivedAt: number;
  /** Unix seconds the access ends; 0 = unlimited. */
  readonly windowEnd: number;
  readonly state: ReceivedRowState;
  readonly requestId: string;
  readonly reason: string;
  /** Tag of the device key S1 is wrapped under (see key_shares.ts). */
  readonly deviceTag: string;
  /** The owner's signed file_pdu as received ('' in rows older than forwarding). */
  readonly filePdu: string;
  /** The forward PDU this copy came with ('' when it came from the owner). */
  readonly forwardPdu: string;
}

type Row = Record<string, unknown>;

const bytes = (v: unknown) => new Uint8Array(v as Uint8Array);

function sentOf(r: Row): SentFileRecord {
  return {
    id: r.id as number,
    fileUid: r.file_uid as string,
    chatId: r.chat_id as number,
    path: r.path as string,
    prvSha256: r.prv_sha256 as string,
    plaintextSha256: r.plaintext_sha256 as string,
    name: r.name as string,
    mime: r.mime as string,
    size: r.size as number,
    cek: bytes(r.cek),
    allowDownload: r.allow_download === 1,
    allowForward: r.allow_forward === 1,
    durationMinutes: r.duration_minutes as number,
    filePdu: r.file_pdu as string,
    createdAt: r.created_at as number,
    keyTag: r.key_tag as string,
  };
}

function accessOf(r: Row): AccessRecord {
  return {
    fileId: r.file_id as number,
    contactId: r.contact_id as number,
    fingerprint: r.fingerprint as string,
    s1: bytes(r.s1),
    otkPdu: r.otk_pdu as string,
    state: r.state as AccessRowState,
    windowStart: r.window_start as number,
    windowEnd: r.window_end as number,
    requestId: r.request_id as string,
    forwardedBy: r.forwarded_by as number,
    rules: r.rules as string,
  };
}

function receivedOf(r: Row): ReceivedFileRecord {
  return {
    id: r.id as number,
    msgId: r.msg_id as number,
    chatId: r.chat_id as number,
    ownerContactId: r.owner_contact_id as number,
    fileUid: r.file_uid as string,
    prvSha256: r.prv_sha256 as string,
    s1: bytes(r.s1),
    allowDownload: r.allow_download === 1,
    allowForward: r.allow_forward === 1,
    durationMinutes: r.duration_minutes as number,
    name: r.name as string,
    mime: r.mime as string,
    size: r.size as number,
    receivedAt: r.received_at as number,
    windowEnd: r.window_end as number,
    state: r.state as ReceivedRowState,
    requestId: r.request_id as string,
    reason: r.reason as string,
    deviceTag: r.device_tag as string,
    filePdu: r.file_pdu as string,
    forwardPdu: r.forward_pdu as string,
  };
}

/**
 * The bounds of every hex hash starting with `prefix`, as a range the hash index can answer
 * (a `substr` comparison would scan the whole table on every `/stream` and send).
 */
function hashRange(prefix: string): [string, string] {
  return [prefix, `${prefix}\u{10FFFF}`];
}

/** The newest row whose hash is in hashRange()'s bounds (bound as its two parameters). */
const NEWEST_BY_HASH_PREFIX = "WHERE prv_sha256 >= ? AND prv_sha256 < ? ORDER BY id DESC LIMIT 1";

/** Reads and writes the protected-file tables. */
export class ProtectedFilesStore {
  constructor(private readonly db: Db) {}

  /** Stores a protected file with its recipients; returns its file id. */
  insertSent(
    f: Omit<SentFileRecord, "id">,
    recipients: readonly Omit<
      AccessRecord,
      "fileId" | "state" | "windowStart" | "windowEnd" | "requestId" | "forwardedBy" | "rules"
    >[],
  ): number {
    return this.db.tx(() => {
      const id = this.db.run(
        "INSERT INTO prv_sent (file_uid, chat_id, path, prv_sha256, plaintext_sha256, name, mime, " +
          "size, cek, allow_download, allow_forward, duration_minutes, file_pdu, created_at, " +
          "key_tag) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        f.fileUid,
        f.chatId,
        f.path,
        f.prvSha256,
        f.plaintextSha256,
        f.name,
        f.mime,
        f.size,
        f.cek,
        f.allowDownload ? 1 : 0,
        f.allowForward ? 1 : 0,
        f.durationMinutes,
        f.filePdu,
        f.createdAt,
        f.keyTag,
      ).lastId;
      for (const r of recipients) {
        this.db.run(
          "INSERT INTO prv_access (file_id, contact_id, fingerprint, s1, otk_pdu) VALUES (?, ?, ?, ?, ?)",
          id,
          r.contactId,
          r.fingerprint,
          r.s1,
          r.otkPdu,
        );
      }
      return id;
    });
  }

  sent(id: number): SentFileRecord | undefined {
    const r = this.db.get<Row>("SELECT * FROM prv_sent WHERE id = ?", id);
    return r && sentOf(r);
  }

  sentByUid(uid: string): SentFileRecord | undefined {
    const r = this.db.get<Row>("SELECT * FROM prv_sent WHERE file_uid = ?", uid);
    return r && sentOf(r);
  }

  /**
   * sentByHashPrefix() with only what opening the file needs (id, file uid, wrapped CEK, name):
   * the viewer's per-request lookup, without the file_pdu and the rest.
   */
  sentKeyByHashPrefix(
    prefix: string,
  ): Pick<SentFileRecord, "id" | "fileUid" | "cek" | "name" | "keyTag"> | undefined {
    const r = this.db.get<Row>(
      `SELECT id, file_uid, cek, name, key_tag FROM prv_sent ${NEWEST_BY_HASH_PREFIX}`,
      ...hashRange(prefix),
    );
    return r && {
      id: r.id as number,
      fileUid: r.file_uid as string,
      cek: bytes(r.cek),
      name: r.name as string,
      keyTag: r.key_tag as string,
    };
  }

  /** Every sent file's wrapped CEK and its key tag (the key migration at start). */
  sentKeys(): Pick<SentFileRecord, "id" | "fileUid" | "path" | "prvSha256" | "cek" | "keyTag">[] {
    return this.db.all<Row>(
      "SELECT id, file_uid, path, prv_sha256, cek, key_tag FROM prv_sent ORDER BY id",
    )
      .map((r) => ({
        id: r.id as number,
        fileUid: r.file_uid as string,
        path: r.path as string,
        prvSha256: r.prv_sha256 as string,
        cek: bytes(r.cek),
        keyTag: r.key_tag as string,
      }));
  }

  /** Stores a sent file's CEK wrapped anew, with the tag of the key it is wrapped under. */
  setSentKey(id: number, cek: Uint8Array, keyTag: string): void {
    this.db.run("UPDATE prv_sent SET cek = ?, key_tag = ? WHERE id = ?", cek, keyTag, id);
  }

  /** Every received file's wrapped S1 and its device tag (the key migration at start). */
  receivedKeys(): Pick<ReceivedFileRecord, "id" | "fileUid" | "s1" | "deviceTag">[] {
    return this.db.all<Row>("SELECT id, file_uid, s1, device_tag FROM prv_received ORDER BY id")
      .map((r) => ({
        id: r.id as number,
        fileUid: r.file_uid as string,
        s1: bytes(r.s1),
        deviceTag: r.device_tag as string,
      }));
  }

  /** Stores a received file's S1 wrapped anew (zeros: asked again), with its device tag. */
  setReceivedKey(id: number, s1: Uint8Array, deviceTag: string): void {
    this.db.run("UPDATE prv_received SET s1 = ?, device_tag = ? WHERE id = ?", s1, deviceTag, id);
  }

  /** The newest sent file whose `.prv` hash starts with `prefix` (a blob name's 32 hex). */
  sentByHashPrefix(prefix: string): SentFileRecord | undefined {
    const r = this.db.get<Row>(
      `SELECT * FROM prv_sent ${NEWEST_BY_HASH_PREFIX}`,
      ...hashRange(prefix),
    );
    return r && sentOf(r);
  }

  /** The newest sent file whose `encrypted_path` is `path`. */
  sentByPath(path: string): SentFileRecord | undefined {
    const r = this.db.get<Row>(
      "SELECT * FROM prv_sent WHERE path = ? ORDER BY id DESC LIMIT 1",
      path,
    );
    return r && sentOf(r);
  }

  /** Adds a recipient that a forward made (its own S1, otk_pdu, forwarder and rules). */
  insertForwardedAccess(
    r: Omit<AccessRecord, "state" | "windowStart" | "windowEnd" | "requestId">,
  ): void {
    this.db.run(
      "INSERT INTO prv_access (file_id, contact_id, fingerprint, s1, otk_pdu, forwarded_by, rules) " +
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
      r.fileId,
      r.contactId,
      r.fingerprint,
      r.s1,
      r.otkPdu,
      r.forwardedBy,
      r.rules,
    );
  }

  accessOf(fileId: number, contactId: number): AccessRecord | undefined {
    const r = this.db.get<Row>(
      "SELECT * FROM prv_access WHERE file_id = ? AND contact_id = ?",
      fileId,
      contactId,
    );
    return r && accessOf(r);
  }

  accessList(fileId: number): AccessRecord[] {
    return this.db.all<Row>(
      "SELECT * FROM prv_access WHERE file_id = ? ORDER BY contact_id",
      fileId,
    )
      .map(accessOf);
  }

  /** Updates a recipient's access row. */
  updateAccess(
    fileId: number,
    contactId: number,
    patch: Partial<Pick<AccessRecord, "state" | "windowStart" | "windowEnd" | "requestId">>,
  ): void {
    const cur = this.accessOf(fileId, contactId);
    if (cur === undefined) return;
    const next = { ...cur, ...patch };
    this.db.run(
      "UPDATE prv_access SET state = ?, window_start = ?, window_end = ?, request_id = ? " +
        "WHERE file_id = ? AND contact_id = ?",
      next.state,
      next.windowStart,
      next.windowEnd,
      next.requestId,
      fileId,
      contactId,
    );
  }

  /** Stores a received file (one per message); returns its file id. */
  insertReceived(f: Omit<ReceivedFileRecord, "id" | "state" | "requestId" | "reason">): number {
    return this.db.run(
      "INSERT INTO prv_received (msg_id, chat_id, owner_contact_id, file_uid, prv_sha256, s1, " +
        "allow_download, allow_forward, duration_minutes, name, mime, size, received_at, " +
        "window_end, device_tag, file_pdu, forward_pdu) " +
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      f.msgId,
      f.chatId,
      f.ownerContactId,
      f.fileUid,
      f.prvSha256,
      f.s1,
      f.allowDownload ? 1 : 0,
      f.allowForward ? 1 : 0,
      f.durationMinutes,
      f.name,
      f.mime,
      f.size,
      f.receivedAt,
      f.windowEnd,
      f.deviceTag,
      f.filePdu,
      f.forwardPdu,
    ).lastId;
  }

  received(id: number): ReceivedFileRecord | undefined {
    const r = this.db.get<Row>("SELECT * FROM prv_received WHERE id = ?", id);
    return r && receivedOf(r);
  }

  receivedByMsg(msgId: number): ReceivedFileRecord | undefined {
    const r = this.db.get<Row>("SELECT * FROM prv_received WHERE msg_id = ?", msgId);
    return r && receivedOf(r);
  }

  /** Received copies of file `uid` from owner `ownerContactId`. */
  receivedByUid(uid: string, ownerContactId: number): ReceivedFileRecord[] {
    return this.db.all<Row>(
      "SELECT * FROM prv_received WHERE file_uid = ? AND owner_contact_id = ? ORDER BY id",
      uid,
      ownerContactId,
    ).map(receivedOf);
  }

  /** The newest received file whose `.prv` hash starts with `prefix`. */
  receivedByHashPrefix(prefix: string): ReceivedFileRecord | undefined {
    const r = this.db.get<Row>(
      `SELECT * FROM prv_received ${NEWEST_BY_HASH_PREFIX}`,
      ...hashRange(prefix),
    );
    return r && receivedOf(r);
  }

  /** Updates a received file's stored state, window, request id and reason. */
  updateReceived(
    id: number,
    patch: Partial<Pick<ReceivedFileRecord, "state" | "windowEnd" | "requestId" | "reason">>,
  ): void {
    const cur = this.received(id);
    if (cur === undefined) return;
    const next = { ...cur, ...patch };
    this.db.run(
      "UPDATE prv_received SET state = ?, window_end = ?, request_id = ?, reason = ? WHERE id = ?",
      next.state,
      next.windowEnd,
      next.requestId,
      next.reason,
      id,
    );
  }

  /** Sets S1 (wrapped) of a received file whose otk_pdu came in its own mail. */
  setShare(id: number, s1: Uint8Array): void {
    this.db.run("UPDATE prv_received SET s1 = ? WHERE id = ?", s1, id);
  }

  /** Drops S1 of a received file (revoked): zeroes instead of the share. */
  dropShare(id: number): void {
    this.db.run("UPDATE prv_received SET s1 = zeroblob(32) WHERE id = ?", id);
  }
}
