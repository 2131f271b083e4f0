/**
 * Gathers every method file into the gateway's method table. To add a domain: write
 * `methods/<domain>.ts` exporting a `readonly MethodEntry[]`, import it here and list it once.
 */
import { createMethodTable, type MethodEntry, type MethodTable } from "../method.ts";
import { ACCOUNT_METHODS } from "./account.ts";
import { BACKUP_METHODS } from "./backup.ts";
import { CHAT_METHODS } from "./chats.ts";
import { CONTACT_METHODS } from "./contacts.ts";
import { GROUP_METHODS } from "./groups.ts";
import { MESSAGE_METHODS } from "./messages.ts";
import { MESSAGE_EDIT_METHODS } from "./message_edits.ts";
import { REACTION_METHODS } from "./reactions.ts";
import { LICENSE_METHODS } from "./license.ts";
import { QUARANTINE_METHODS } from "./quarantine.ts";
import { SECUREJOIN_METHODS } from "./securejoin.ts";
import { SECURE_FILE_METHODS } from "./secure_files.ts";
import { TRANSFER_METHODS } from "./transfers.ts";

/** Every method group, in the order `rpc.discover` lists them. */
export const METHOD_GROUPS: readonly (readonly MethodEntry[])[] = [
  ACCOUNT_METHODS,
  QUARANTINE_METHODS,
  CONTACT_METHODS,
  CHAT_METHODS,
  GROUP_METHODS,
  MESSAGE_METHODS,
  TRANSFER_METHODS,
  MESSAGE_EDIT_METHODS,
  REACTION_METHODS,
  SECUREJOIN_METHODS,
  LICENSE_METHODS,
  SECURE_FILE_METHODS,
  BACKUP_METHODS,
];

/** Builds the daemon's method table from every method file (throws on a duplicate name). */
export function buildMethodTable(): MethodTable {
  return createMethodTable(METHOD_GROUPS.flat());
}
