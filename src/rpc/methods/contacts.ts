/**
 * Contact RPC methods: `get_contact_ids`, `lookup_contact_id_by_addr` (docs/contract.md §4.4) and
 * `get_contact` (Delta Chat). Reads only; no events.
 */
import { NotFoundError } from "../../errors.ts";
import { ACCOUNT_PARAM, method, type MethodEntry } from "../method.ts";
import { toContactObject } from "../types.ts";

/**
 * `get_contact_ids [account_id, list_flags, query]` → contact ids.
 * As Delta Chat: key-contacts (known key) by default, most recently seen first; flag 0x04 lists
 * address-only contacts instead; 0x02 appends self (1); `query` (string or null) filters by a
 * case-insensitive substring of address or name.
 */
export const getContactIds = method({
  name: "get_contact_ids",
  scope: "read",
  summary: "Lists contact ids: key-contacts by default; flags 0x02 add self, 0x04 address-only.",
  params: [
    ACCOUNT_PARAM,
    { name: "list_flags", type: "u32", description: "0, or 0x02 add self | 0x04 address-only." },
    { name: "query", type: "string?", description: "Substring of address or name; null for all." },
  ],
  result: { type: "array<u32>", description: "Contact ids." },
  handler: (s, [, flags, query]) => s.core.contacts.list(flags, query),
});

/**
 * `lookup_contact_id_by_addr [account_id, addr]` → contact id or null.
 * 1 for the account's own address; otherwise the key-contact using the address (Delta Chat
 * returns key-contacts only); null when there is none.
 */
export const lookupContactIdByAddr = method({
  name: "lookup_contact_id_by_addr",
  scope: "read",
  summary: "Finds the contact id of an e-mail address (null when no contact exists).",
  params: [ACCOUNT_PARAM, { name: "addr", type: "string", description: "E-mail address." }],
  result: { type: "u32?", description: "The contact id, or null." },
  handler: (s, [, addr]) => s.core.contacts.lookupIdByAddr(addr) ?? null,
});

/**
 * `get_contact [account_id, contact_id]` → Contact object (`id`, `address`, `displayName`,
 * `authName`, `name`, `isVerified`, `verifierId`, `isKeyContact`, `e2eeAvail`, `lastSeen`,
 * `fingerprint`, …). Unknown id → -1 `contact N not found`.
 */
export const getContact = method({
  name: "get_contact",
  scope: "read",
  summary: "Reads one contact (1 is this account).",
  params: [ACCOUNT_PARAM, { name: "contact_id", type: "u32", description: "Contact id." }],
  result: { type: "object", description: "Contact {id, address, displayName, isVerified, …}" },
  handler(s, [, id]) {
    const contact = s.core.contacts.details(id);
    if (contact === undefined) throw new NotFoundError(`contact ${id} not found`);
    return toContactObject(contact);
  },
});

/** The contact methods, in documentation order. */
export const CONTACT_METHODS: readonly MethodEntry[] = [
  getContactIds,
  lookupContactIdByAddr,
  getContact,
];
