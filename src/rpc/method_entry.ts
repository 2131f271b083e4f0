/**
 * The method-table entry every RPC method file exports: name, documented positional params,
 * result, flags and a thin handler. Data only, so the table and its OpenRPC document share it.
 */
import type { Services } from "../services.ts";

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
  | "array<object>"
  | "map<string,string>"
  | "map<string,object>";

/** One positional parameter. */
export interface ParamSpec {
  readonly name: string;
  readonly type: ParamType;
  readonly description: string;
}

/**
 * The `account_id` parameter every account-scoped method takes first (always 1, docs/contract.md
 * §1.1).
 */
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
  /** Returns no value: a single request is answered with HTTP 204 (docs/contract.md §4.2). */
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
