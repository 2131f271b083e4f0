/**
 * Contacts: peers identified by key fingerprint (addresses and names follow the key and the
 * headers), address-only contacts, verification, and Delta Chat's contact-list semantics.
 */
import { ContactId } from "../../constants.ts";
import { GatewayError } from "../../errors.ts";
import { ConfigKey, type ContactPatch, type ContactRecord } from "../../store/mod.ts";
import { type CoreContext, nowSeconds } from "../context.ts";

/** `get_contact_ids` flags (Delta Chat's `DC_GCL_*`). */
export const ContactListFlag = {
  /** Append self (1) when it matches the query. */
  ADD_SELF: 0x02,
  /** List address-only contacts instead of key-contacts. */
  ADDRESS: 0x04,
} as const;

/** A contact as shown: stored fields plus the display name; self (1) is synthesized. */
export interface ContactDetails {
  readonly id: number;
  readonly addr: string;
  readonly authName: string;
  readonly name: string;
  /** `name`, else `authName`, else `addr`; "Me" for self (as Delta Chat). */
  readonly displayName: string;
  /** '' for an address-only contact. */
  readonly fingerprint: string;
  readonly verified: boolean;
  readonly verifierId: number;
  /** Unix seconds; 0 when never seen. */
  readonly lastSeen: number;
}

/** A peer's key and what the mail said about it (Autocrypt/gossip header, From, invite). */
export interface PeerKey {
  readonly addr: string;
  /** Display name from the From header or invite; ignored when empty. */
  readonly name?: string;
  /** Fingerprint in any case, spaces allowed. */
  readonly fingerprint: string;
  /** Binary transferable public key (Autocrypt keydata). */
  readonly publicKey: Uint8Array;
  /** Unix seconds of the message that carried it; moves `lastSeen` forward (never past now). */
  readonly seenAt?: number;
}

/** What an upsert did. `changed`: address, name or key changed (ContactsChanged was emitted). */
export interface UpsertResult {
  readonly id: number;
  readonly created: boolean;
  readonly changed: boolean;
}

const ADDR = /^[^\s@<>"]+@[^\s@<>"]+$/;

/** Lower-cases and trims an address; throws GatewayError for something that is not one. */
export function normalizeAddr(addr: string): string {
  const out = addr.trim().replace(/^mailto:/i, "").toLowerCase();
  if (!ADDR.test(out)) throw new GatewayError(`"${addr}" is not an e-mail address`);
  return out;
}

/** Upper-case hex of a v4 (40) or v6 (64 digit) fingerprint; spaces and colons are dropped. */
export function normalizeFingerprint(value: string): string {
  const hex = value.replace(/[\s:]/g, "").toUpperCase();
  if (!/^([0-9A-F]{40}|[0-9A-F]{64})$/.test(hex)) {
    throw new GatewayError(`"${value}" is not a key fingerprint (40 or 64 hex digits)`);
  }
  return hex;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.byteLength === b.byteLength && a.every((v, i) => v === b[i]);
}

/** The display name rule: local name, else the peer's own name, else the address. */
export function displayNameOf(c: Pick<ContactRecord, "name" | "authName" | "addr">): string {
  return c.name || c.authName || c.addr;
}

function details(c: ContactRecord): ContactDetails {
  return {
    id: c.id,
    addr: c.addr,
    authName: c.authName,
    name: c.name,
    displayName: displayNameOf(c),
    fingerprint: c.fingerprint,
    verified: c.verified,
    verifierId: c.verifierId,
    lastSeen: c.lastSeen,
  };
}

/** Contact lookups and updates. Mutations emit `ContactsChanged{contactId}` after the commit. */
export class Contacts {
  constructor(private readonly ctx: CoreContext) {}

  /** A stored contact (id ≥ 10), or undefined. */
  get(id: number): ContactRecord | undefined {
    return id > ContactId.LAST_SPECIAL ? this.ctx.store.contacts.get(id) : undefined;
  }

  /** The contact as shown, self (1) included; undefined for unknown and other special ids. */
  details(id: number): ContactDetails | undefined {
    if (id === ContactId.SELF) return this.self();
    const c = this.get(id);
    return c && details(c);
  }

  /** Self (1): the account's address, configured name and own key. */
  self(): ContactDetails {
    const { config, keys } = this.ctx.store;
    return {
      id: ContactId.SELF,
      addr: config.get(ConfigKey.ADDR) ?? "",
      authName: config.get(ConfigKey.DISPLAY_NAME) ?? "",
      name: "",
      displayName: "Me",
      fingerprint: keys.current()?.fingerprint.toUpperCase() ?? "",
      verified: true,
      verifierId: 0,
      lastSeen: 0,
    };
  }

  /**
   * The contact id for an address: 1 for the account's own address; else, of the key-contacts
   * using it, a verified one (the most recently seen when several are), else the most recently
   * seen one. "Seen" never lies after receipt time (header dates are clamped), so a forged Date
   * cannot promote a key. Address-only contacts are not returned (as Delta Chat).
   */
  lookupIdByAddr(addr: string): number | undefined {
    const a = addr.trim().toLowerCase();
    if (a !== "" && a === this.ctx.store.config.get(ConfigKey.ADDR)?.toLowerCase()) {
      return ContactId.SELF;
    }
    return this.ctx.store.contacts.keyContactsByAddr(a)[0]?.id;
  }

  /** The key-contact with this fingerprint (any case), or undefined. */
  byFingerprint(fingerprint: string): ContactRecord | undefined {
    return this.ctx.store.contacts.byFingerprint(normalizeFingerprint(fingerprint));
  }

  /**
   * Creates or updates the key-contact for `peer.fingerprint`: a known fingerprint takes the new
   * address, a non-empty name and the new key bytes. Our own fingerprint yields self (1) and
   * changes nothing. Emits ContactsChanged when created or changed (not for `lastSeen` alone).
   */
  upsertPeerFromKey(peer: PeerKey): UpsertResult {
    const fingerprint = normalizeFingerprint(peer.fingerprint);
    const addr = normalizeAddr(peer.addr);
    if (fingerprint === this.self().fingerprint) {
      return { id: ContactId.SELF, created: false, changed: false };
    }
    const name = peer.name?.trim() ?? "";
    const seenAt = peer.seenAt === undefined ? undefined : this.#clamp(peer.seenAt);
    return this.ctx.tx.run((emit) => {
      const store = this.ctx.store.contacts;
      const known = store.byFingerprint(fingerprint);
      if (known === undefined) {
        const id = store.insert({
          addr,
          authName: name,
          fingerprint,
          publicKey: peer.publicKey,
          lastSeen: seenAt ?? 0,
        });
        emit({ kind: "ContactsChanged", contactId: id });
        return { id, created: true, changed: true };
      }
      const patch: { -readonly [K in keyof ContactPatch]: ContactPatch[K] } = {};
      if (addr !== known.addr) patch.addr = addr;
      if (name !== "" && name !== known.authName) patch.authName = name;
      if (!sameBytes(peer.publicKey, known.publicKey)) patch.publicKey = peer.publicKey;
      const changed = Object.keys(patch).length > 0;
      if (changed) store.update(known.id, patch);
      if (seenAt !== undefined) store.touch(known.id, seenAt);
      if (changed) emit({ kind: "ContactsChanged", contactId: known.id });
      return { id: known.id, created: false, changed };
    });
  }

  /** Creates or renames the address-only contact for `addr` (mail without a key). */
  upsertAddressContact(addr: string, name = ""): UpsertResult {
    const a = normalizeAddr(addr);
    const authName = name.trim();
    return this.ctx.tx.run((emit) => {
      const store = this.ctx.store.contacts;
      const known = store.addressContact(a);
      if (known === undefined) {
        const id = store.insert({ addr: a, authName });
        emit({ kind: "ContactsChanged", contactId: id });
        return { id, created: true, changed: true };
      }
      if (authName === "" || authName === known.authName) {
        return { id: known.id, created: false, changed: false };
      }
      store.update(known.id, { authName });
      emit({ kind: "ContactsChanged", contactId: known.id });
      return { id: known.id, created: false, changed: true };
    });
  }

  /**
   * Marks a key-contact verified by `verifierId` (1 = by us through SecureJoin). Throws for an
   * unknown or address-only contact. Emits ContactsChanged unless it was verified already.
   */
  markVerified(id: number, verifierId: number = ContactId.SELF): void {
    const c = this.get(id);
    if (c === undefined) throw new GatewayError(`contact ${id} not found`);
    if (c.fingerprint === "") {
      throw new GatewayError(`contact ${id} has no key, so it cannot be verified`);
    }
    if (c.verified) return;
    this.ctx.tx.run((emit) => {
      this.ctx.store.contacts.setVerified(id, verifierId);
      emit({ kind: "ContactsChanged", contactId: id });
    });
  }

  /** Moves a contact's `lastSeen` forward, never past now (no event). */
  touch(id: number, seenAt: number): void {
    if (id > ContactId.LAST_SPECIAL) this.ctx.store.contacts.touch(id, this.#clamp(seenAt));
  }

  /** `seconds`, but never later than the context's clock. */
  #clamp(seconds: number): number {
    return Math.min(seconds, nowSeconds(this.ctx));
  }

  /**
   * Contact ids as Delta Chat lists them: key-contacts by default, address-only contacts with
   * `ADDRESS` (0x04), most recently seen first; `query` matches address, name or own name as a
   * case-insensitive substring; `ADD_SELF` (0x02) appends 1 when self matches too.
   */
  list(flags: number, query: string | null): number[] {
    const q = (query ?? "").trim().toLowerCase();
    const matches = (c: { addr: string; name: string; authName: string }) =>
      q === "" || [c.addr, c.name, c.authName].some((s) => s.toLowerCase().includes(q));
    const keyContacts = (flags & ContactListFlag.ADDRESS) === 0;
    const ids = this.ctx.store.contacts.list(keyContacts).filter(matches).map((c) => c.id);
    if ((flags & ContactListFlag.ADD_SELF) !== 0) {
      const self = this.self();
      if (matches(self) || (q !== "" && self.displayName.toLowerCase().includes(q))) {
        ids.push(ContactId.SELF);
      }
    }
    return ids;
  }
}
