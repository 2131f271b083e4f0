/**
 * The method-table entry every RPC method file exports: name, documented positional params,
 * result, flags and a thin handler. Data only, so the table and its OpenRPC document share it.
 * Files declare entries with `method()`, which types each handler's arguments from its params.
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

/** Wire types an object parameter's fields may have (no nested objects). */
export type FieldType = Exclude<ParamType, "object">;

/**
 * One field of an object parameter. `optional`: the field may be absent (a `?` type still admits
 * null when present); `values`: the strings it may hold (JSON Schema `enum`).
 */
export interface FieldSpec {
  readonly type: FieldType;
  readonly description: string;
  readonly optional?: true;
  readonly values?: readonly string[];
}

/** The fields of an object parameter, by name. Fields not listed are let through unread. */
export type ObjectFields = Readonly<Record<string, FieldSpec>>;

/** One positional parameter; an `object` one may declare its `fields`, checked like the rest. */
export interface ParamSpec {
  readonly name: string;
  readonly type: ParamType;
  readonly description: string;
  readonly fields?: ObjectFields;
}

/** The TypeScript type a value of wire type `T` has once validated. */
export type WireValue<T extends ParamType> = T extends "u32" | "i32" ? number
  : T extends "string" ? string
  : T extends "bool" ? boolean
  : T extends "string?" ? string | null
  : T extends "u32?" ? number | null
  : T extends "array<u32>" ? number[]
  : T extends "array<string>" ? string[]
  : T extends "object" ? Readonly<Record<string, unknown>>
  : unknown;

type OptionalKeys<F extends ObjectFields> = {
  [K in keyof F]: F[K] extends { readonly optional: true } ? K : never;
}[keyof F];

/** A field's value: its wire type's, narrowed to its `values` when it lists them. */
export type FieldValue<F extends FieldSpec> = F extends
  { readonly values: readonly (infer V extends string)[] }
  ? V | Exclude<WireValue<F["type"]>, string>
  : WireValue<F["type"]>;

/**
 * An object parameter's value: its declared fields typed (an optional one may be absent), any
 * other field `unknown`.
 */
export type ObjectValue<F extends ObjectFields> =
  & { readonly [K in Exclude<keyof F, OptionalKeys<F>>]: FieldValue<F[K]> }
  & { readonly [K in OptionalKeys<F>]?: FieldValue<F[K]> }
  & { readonly [other: string]: unknown };

/** The value a handler receives for parameter `P`. */
export type ParamValue<P extends ParamSpec> = P extends
  { readonly fields: infer F extends ObjectFields } ? ObjectValue<F>
  : WireValue<P["type"]>;

/** The positional arguments a handler receives for the parameter list `Ps`, by position. */
export type ParamValues<Ps extends readonly ParamSpec[]> = {
  -readonly [I in keyof Ps]: ParamValue<Ps[I]>;
};

/**
 * The `account_id` parameter every account-scoped method takes first (always 1, docs/contract.md
 * §1.1).
 */
export const ACCOUNT_PARAM = {
  name: "account_id",
  type: "u32",
  description: "Always 1: the daemon owns one account.",
} as const satisfies ParamSpec;

/** What a method returns. */
export interface ResultSpec {
  readonly type: ResultType;
  readonly description: string;
}

/**
 * What an API token must allow to call a method (docs/access.md#scopes): `read` looks (get_*,
 * list_*, status), `send` sends or changes messages and chats (and everything that makes the
 * account talk to a peer: joins, invitations, grants, revocations), `admin` runs the box (license,
 * deleting quarantined mail). Checked only when API tokens are on.
 */
export type Scope = "read" | "send" | "admin";

/** Every scope, in the order docs list them. */
export const ALL_SCOPES: readonly Scope[] = Object.freeze(["read", "send", "admin"] as const);

/** One RPC method: its contract (documented and published by `rpc.discover`) and its handler. */
export interface MethodEntry {
  readonly name: string;
  readonly summary: string;
  /** The scope an API token needs to call it (see `Scope`). */
  readonly scope: Scope;
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
  handler(services: Services, params: readonly unknown[]): Promise<unknown> | unknown;
}

/**
 * A method as its file declares it: `params` keep their literal types, so the handler's
 * arguments are typed from them (`u32` → number, `string?` → string | null, an object's
 * `fields` → their types). Write it with `method({...})`.
 */
export interface MethodDeclaration<Ps extends readonly ParamSpec[]>
  extends Omit<MethodEntry, "params" | "handler"> {
  readonly params: Ps;
  /** Runs with `params` validated against the declaration (dispatch's `validateParams`). */
  handler(services: Services, params: ParamValues<Ps>): Promise<unknown> | unknown;
}

/**
 * Declares a method once: the params list that dispatch validates, OpenRPC publishes and
 * docs/methods.md shows is the one the handler's argument types come from, so handlers cast
 * nothing. Returns the declaration as written; it is a `MethodEntry` as well (a handler declared
 * as a method takes dispatch's validated `unknown[]`, which is sound because `validateParams`
 * admits exactly the values `ParamValues<Ps>` describes).
 */
export function method<const Ps extends readonly ParamSpec[]>(
  declaration: MethodDeclaration<Ps>,
): MethodDeclaration<Ps> {
  return declaration;
}

/** The methods dispatch can call, by name. */
export interface MethodTable {
  /** The entry called `name`, or undefined. */
  get(name: string): MethodEntry | undefined;
  /** Every entry in registration order (each alias right after its entry), `rpc.discover` last. */
  readonly entries: readonly MethodEntry[];
}
