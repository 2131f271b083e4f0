/**
 * The method-table entry every RPC method file exports, and the table dispatch looks methods up
 * in. Entries are data: name, documented positional params, result, flags and a thin handler.
 */
import type { Services } from "../services.ts";
import { openRpcDocument } from "./openrpc.ts";

/** Wire types of positional parameters; `?` admits `null` (the param must still be present). */
export type ParamType =
  | "u32"
  | "i32"
  | "string"
  | "bool"
  | "string?"
  | "u32?"
  | "array<u32>"
  | "array<string>"
  | "object"
  | "any";

/** Wire types of results; the parameter types plus maps keyed by strings and "nothing". */
export type ResultType =
  | ParamType
  | "null"
  | "map<string,string>"
  | "map<string,object>";

/** One positional parameter. */
export interface ParamSpec {
  readonly name: string;
  readonly type: ParamType;
  readonly description: string;
}

/** The `account_id` parameter every account-scoped method takes first (always 1, SPEC §1). */
export const ACCOUNT_PARAM: ParamSpec = {
  name: "account_id",
  type: "u32",
  description: "Always 1: the daemon owns one account.",
};

/** What a method returns. */
export interface ResultSpec {
  readonly type: ResultType;
  readonly description: string;
}

/** One RPC method: its contract (documented and published by `rpc.discover`) and its handler. */
export interface MethodEntry {
  readonly name: string;
  readonly summary: string;
  readonly params: readonly ParamSpec[];
  readonly result: ResultSpec;
  /** Requires an active license; dispatch answers -32001 before the handler runs otherwise. */
  readonly license?: true;
  /** Returns no value: a single request is answered with HTTP 204 (SPEC §4). */
  readonly void?: true;
  /**
   * Set on the entries the table derives for the product's published names: the name of the
   * entry whose handler this one shares (e.g. `secure_send_file` for `privitty_send_file`).
   */
  readonly aliasOf?: string;
  /** A thin adapter: params are already validated against `params` (arity, types, account). */
  handler(services: Services, params: unknown[]): Promise<unknown> | unknown;
}

/** The methods dispatch can call, by name. */
export interface MethodTable {
  /** The entry called `name`, or undefined. */
  get(name: string): MethodEntry | undefined;
  /** Every entry in registration order (each alias right after its entry), `rpc.discover` last. */
  readonly entries: readonly MethodEntry[];
}

/** Name of the OpenRPC service-discovery method every table answers. */
export const DISCOVER_METHOD = "rpc.discover";

/** Prefix of the SPEC's file-protection methods (`secure_send_file`, …). */
const SPEC_PREFIX = "secure_";
/** Prefix the product publishes the same methods under (`privitty_send_file`, …). */
const PRODUCT_PREFIX = "privitty_";
/** `secure_*` methods the product publishes under the SPEC's own name (no alias). */
const SAME_NAME_IN_PRODUCT: ReadonlySet<string> = new Set(["secure_join"]);

/**
 * The product's published name of a method (`secure_send_file` → `privitty_send_file`), or
 * undefined when the product uses the SPEC's name. Every `secure_*` method gets one, so methods
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
    params: [],
    result: { type: "object", description: "OpenRPC 1.2 document" },
    handler: () => document ??= openRpcDocument(own),
  };
  byName.set(discover.name, discover);
  const all = Object.freeze([...own, discover]);
  return { get: (name) => byName.get(name), entries: all };
}
