/** Contacts, the account's identity and peers' keys (entry of core/contacts/). */
export * from "./contacts.ts";
export * from "./identity.ts";
export * from "./peer_keys.ts";
