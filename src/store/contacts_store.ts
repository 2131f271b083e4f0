/**
 * Rows of the `contacts` table: key-contacts (peers identified by their key fingerprint) and
 * address-only contacts. Ids start at 10; 1..9 are Delta Chat's special ids and live nowhere here.
 */
import type { Db } from "./db.ts";

/** One contact as stored. */
export interface ContactRecord {
  readonly id: number;
  /** Lower-case e-mail address (the newest one seen for this key). */
  readonly addr: string;
  /** The name the peer gives itself (From header, invite link); '' when unknown. */
  readonly authName: string;
  /** The name set locally; '' when none. */
  readonly name: string;
  /** Upper-case hex fingerprint of the primary key; '' for an address-only contact. */
  readonly fingerprint: string;
  /** Binary transferable public key (Autocrypt keydata); empty for an address-only contact. */
  readonly publicKey: Uint8Array;
  readonly verified: boolean;
  /** Who verified the key: 1 (self, by SecureJoin) or an introducing contact; 0 when unverified. */
  readonly verifierId: number;
  /** Unix seconds. */
  readonly createdAt: number;
  /** Unix seconds of the newest message from this contact; 0 when never seen. */
  readonly lastSeen: number;
}

/** Fields of a new contact; `addr` and `fingerprint` must already be normalized. */
export interface NewContact {
  readonly addr: string;
  readonly authName?: string;
  readonly name?: string;
  readonly fingerprint?: string;
  readonly publicKey?: Uint8Array;
  readonly lastSeen?: number;
}

/** Fields `update` may change. */
export type ContactPatch = Partial<
  Pick<ContactRecord, "addr" | "authName" | "name" | "publicKey" | "lastSeen">
>;

interface ContactRow {
  id: number;
  addr: string;
  auth_name: string;
  name: string;
  fingerprint: string;
  public_key: Uint8Array;
  verified: number;
  verifier_id: number;
  created_at: number;
  last_seen: number;
}

const SELECT =
  "SELECT id, addr, auth_name, name, fingerprint, public_key, verified, verifier_id, " +
  "created_at, last_seen FROM contacts";

/** Column of each patchable field. */
const PATCH_COLUMNS: Record<keyof ContactPatch, string> = {
  addr: "addr",
  authName: "auth_name",
  name: "name",
  publicKey: "public_key",
  lastSeen: "last_seen",
};

function toRecord(row: ContactRow | undefined): ContactRecord | undefined {
  return row && {
    id: row.id,
    addr: row.addr,
    authName: row.auth_name,
    name: row.name,
    fingerprint: row.fingerprint,
    publicKey: new Uint8Array(row.public_key),
    verified: row.verified !== 0,
    verifierId: row.verifier_id,
    createdAt: row.created_at,
    lastSeen: row.last_seen,
  };
}

/** Reads and writes rows of the `contacts` table. */
export class ContactsStore {
  constructor(private readonly db: Db) {}

  /** The contact with this id, or undefined. */
  get(id: number): ContactRecord | undefined {
    return toRecord(this.db.get<ContactRow>(`${SELECT} WHERE id = ?`, id));
  }

  /** The key-contact with this (upper-case) fingerprint, or undefined. */
  byFingerprint(fingerprint: string): ContactRecord | undefined {
    if (fingerprint === "") return undefined;
    return toRecord(this.db.get<ContactRow>(`${SELECT} WHERE fingerprint = ?`, fingerprint));
  }

  /**
   * Key-contacts using this (lower-case) address: verified ones first, then most recently seen
   * first (then newest row), so an unverified key claiming a verified contact's address never
   * comes first.
   */
  keyContactsByAddr(addr: string): ContactRecord[] {
    return this.db.all<ContactRow>(
      `${SELECT} WHERE addr = ? AND fingerprint <> '' ` +
        "ORDER BY verified DESC, last_seen DESC, id DESC",
      addr,
    ).map((r) => toRecord(r)!);
  }

  /** The address-only contact with this (lower-case) address, or undefined. */
  addressContact(addr: string): ContactRecord | undefined {
    return toRecord(
      this.db.get<ContactRow>(`${SELECT} WHERE addr = ? AND fingerprint = ''`, addr),
    );
  }

  /** Inserts a contact and returns its id (≥ 10). */
  insert(c: NewContact): number {
    return this.db.run(
      "INSERT INTO contacts (addr, auth_name, name, fingerprint, public_key, last_seen) " +
        "VALUES (?, ?, ?, ?, ?, ?)",
      c.addr,
      c.authName ?? "",
      c.name ?? "",
      c.fingerprint ?? "",
      c.publicKey ?? new Uint8Array(),
      c.lastSeen ?? 0,
    ).lastId;
  }

  /** Changes the given fields; returns true when the row exists. */
  update(id: number, patch: ContactPatch): boolean {
    const keys = (Object.keys(patch) as (keyof ContactPatch)[])
      .filter((k) => patch[k] !== undefined && Object.hasOwn(PATCH_COLUMNS, k));
    if (keys.length === 0) return this.get(id) !== undefined;
    const sets = keys.map((k) => `${PATCH_COLUMNS[k]} = ?`).join(", ");
    const values = keys.map((k) => patch[k]!);
    return this.db.run(`UPDATE contacts SET ${sets} WHERE id = ?`, ...values, id).changes > 0;
  }

  /** Marks the key as verified by `verifierId`; returns true when the row exists. */
  setVerified(id: number, verifierId: number): boolean {
    return this.db.run(
      "UPDATE contacts SET verified = 1, verifier_id = ? WHERE id = ?",
      verifierId,
      id,
    ).changes > 0;
  }

  /** Moves `last_seen` forward to `seenAt` (never backwards). */
  touch(id: number, seenAt: number): void {
    this.db.run("UPDATE contacts SET last_seen = max(last_seen, ?) WHERE id = ?", seenAt, id);
  }

  /** Key-contacts (`keyContacts` true) or address-only contacts, most recently seen first. */
  list(keyContacts: boolean): ContactRecord[] {
    const where = keyContacts ? "fingerprint <> ''" : "fingerprint = ''";
    return this.db.all<ContactRow>(`${SELECT} WHERE ${where} ORDER BY last_seen DESC, id DESC`)
      .map((r) => toRecord(r)!);
  }

  /**
   * Records whether the key-contact with this fingerprint announced the large-file capability
   * (`Capability.LARGE_FILES`) in its latest verified mail.
   */
  setLargeFiles(fingerprint: string, on: boolean): void {
    if (fingerprint === "") return;
    this.db.run(
      "UPDATE contacts SET large_files = ? WHERE fingerprint = ? AND large_files <> ?",
      on ? 1 : 0,
      fingerprint,
      on ? 1 : 0,
    );
  }

  /** Whether contact `id` announced the large-file capability (docs/transfer.md). */
  hasLargeFiles(id: number): boolean {
    return (this.db.get<{ f: number }>("SELECT large_files AS f FROM contacts WHERE id = ?", id)
      ?.f ?? 0) !== 0;
  }

  /** Number of contacts stored. */
  count(): number {
    return this.db.get<{ n: number }>("SELECT count(*) AS n FROM contacts")?.n ?? 0;
  }
}
