/**
 * The table dispatch looks methods up in, built from the entries every RPC method file exports
 * (method_entry.ts), with the product's aliases and `rpc.discover`.
 */
import type { MethodEntry, MethodTable } from "./method_entry.ts";
import { openRpcDocument } from "./openrpc.ts";

export {
  ACCOUNT_PARAM,
  ALL_SCOPES,
  type FieldSpec,
  type FieldType,
  method,
  type MethodDeclaration,
  type MethodEntry,
  type MethodTable,
  type ObjectFields,
  type ParamSpec,
  type ParamType,
  type ParamValue,
  type ParamValues,
  type ResultSpec,
  type ResultType,
  type Scope,
} from "./method_entry.ts";

/** Name of the OpenRPC service-discovery method every table answers. */
export const DISCOVER_METHOD = "rpc.discover";

/** Prefix of the contract's file-protection methods (`secure_send_file`, …). */
const SPEC_PREFIX = "secure_";
/** Prefix the product publishes the same methods under (`privitty_send_file`, …). */
const PRODUCT_PREFIX = "privitty_";
/** `secure_*` methods the product publishes under the contract's own name (no alias). */
const SAME_NAME_IN_PRODUCT: ReadonlySet<string> = new Set(["secure_join"]);

/**
 * The product's published name of a method (`secure_send_file` → `privitty_send_file`), or
 * undefined when the product uses the contract's name. Every `secure_*` method gets one, so methods
 * added later are born with their alias.
 */
export function productAlias(name: string): string | undefined {
  if (!name.startsWith(SPEC_PREFIX) || SAME_NAME_IN_PRODUCT.has(name)) return undefined;
  return PRODUCT_PREFIX + name.slice(SPEC_PREFIX.length);
}

/** The entry answering to `alias` with `entry`'s contract and its very handler. */
function aliasEntry(entry: MethodEntry, alias: string): MethodEntry {
  return Object.freeze({ ...entry, name: alias, aliasOf: entry.name });
}

/**
 * Builds a table from entries, adds each entry's product alias right after it (see
 * `productAlias`) and `rpc.discover`, which returns the table's OpenRPC document. Throws on a
 * duplicate name (aliases included) or a name in the reserved `rpc.` namespace.
 */
export function createMethodTable(entries: readonly MethodEntry[]): MethodTable {
  const byName = new Map<string, MethodEntry>();
  const add = (entry: MethodEntry) => {
    if (entry.name.startsWith("rpc.")) {
      throw new Error(`method name "${entry.name}" is reserved (names starting "rpc.")`);
    }
    if (byName.has(entry.name)) throw new Error(`method "${entry.name}" is registered twice`);
    byName.set(entry.name, entry);
  };
  for (const entry of entries) {
    add(entry);
    const alias = productAlias(entry.name);
    if (alias !== undefined) add(aliasEntry(entry, alias));
  }
  const own = [...byName.values()];
  let document: unknown;
  const discover: MethodEntry = {
    name: DISCOVER_METHOD,
    summary: "Describes every method of this gateway as an OpenRPC 1.2 document.",
    scope: "read",
    params: [],
    result: { type: "object", description: "OpenRPC 1.2 document" },
    handler: () => document ??= openRpcDocument(own),
  };
  byName.set(discover.name, discover);
  const all = Object.freeze([...own, discover]);
  return { get: (name) => byName.get(name), entries: all };
}
