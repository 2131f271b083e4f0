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
  /** A thin adapter: params are already validated against `params` (arity, types, account). */
  handler(services: Services, params: unknown[]): Promise<unknown> | unknown;
}

/** The methods dispatch can call, by name. */
export interface MethodTable {
  /** The entry called `name`, or undefined. */
  get(name: string): MethodEntry | undefined;
  /** Every entry in registration order, `rpc.discover` last. */
  readonly entries: readonly MethodEntry[];
}

/** Name of the OpenRPC service-discovery method every table answers. */
export const DISCOVER_METHOD = "rpc.discover";

/**
 * Builds a table from entries and adds `rpc.discover`, which returns the table's OpenRPC
 * document. Throws on a duplicate name or a name in the reserved `rpc.` namespace.
 */
export function createMethodTable(entries: readonly MethodEntry[]): MethodTable {
  const byName = new Map<string, MethodEntry>();
  for (const entry of entries) {
    if (entry.name.startsWith("rpc.")) {
      throw new Error(`method name "${entry.name}" is reserved (names starting "rpc.")`);
    }
    if (byName.has(entry.name)) throw new Error(`method "${entry.name}" is registered twice`);
    byName.set(entry.name, entry);
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
