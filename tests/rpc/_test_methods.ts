/**
 * A small method table for dispatch tests: echo, void, null, failing and license-gated methods,
 * and `typed`, declared with `method()` over one param of each kind.
 */
import { NotFoundError } from "../../src/errors.ts";
import {
  ACCOUNT_PARAM,
  createMethodTable,
  method,
  type MethodEntry,
} from "../../src/rpc/method.ts";

/** Every handler call, in order (`name:args`); tests clear it. */
export const calls: string[] = [];

const base = {
  summary: "test",
  scope: "read",
  result: { type: "any", description: "" },
} as const;
const ACC = { name: "account_id", type: "u32", description: "" } as const;
const fail = (err: unknown) => () => {
  throw err;
};

/**
 * `typed [account_id, id, note, ids, tags, flag, options]`: one param of each kind, an object with
 * declared fields among them; answers what its handler received, as its declared types.
 */
export const typedMethod = method({
  ...base,
  name: "typed",
  params: [
    ACCOUNT_PARAM,
    { name: "id", type: "u32", description: "" },
    { name: "note", type: "string?", description: "" },
    { name: "ids", type: "array<u32>", description: "" },
    { name: "tags", type: "array<string>", description: "" },
    { name: "flag", type: "bool", description: "" },
    {
      name: "options",
      type: "object",
      description: "",
      fields: {
        mode: { type: "string", values: ["fast", "slow"], description: "" },
        limit: { type: "u32?", optional: true, description: "" },
      },
    },
  ],
  handler(_s, [, id, note, ids, tags, flag, options]) {
    // No casts: every value has its declared type here.
    const limit: number | null | undefined = options.limit;
    const mode: "fast" | "slow" = options.mode;
    return {
      id: id + 1,
      note: note?.toUpperCase() ?? null,
      sum: ids.reduce((a, b) => a + b, 0),
      tags: tags.join(","),
      flag: !flag,
      mode,
      limit: limit ?? null,
    };
  },
});

const entries: MethodEntry[] = [
  {
    ...base,
    name: "echo",
    params: [{ name: "value", type: "any", description: "" }],
    handler: (_s, [v]) => {
      calls.push(`echo:${JSON.stringify(v)}`);
      return v;
    },
  },
  { ...base, name: "nothing", params: [], void: true, handler: () => void calls.push("nothing") },
  { ...base, name: "undef", params: [], handler: () => undefined },
  { ...base, name: "get", params: [ACC], handler: async () => await Promise.resolve(42) },
  { ...base, name: "boom", params: [], handler: fail(new TypeError("secret at /x/y.ts:3")) },
  {
    ...base,
    name: "missing",
    params: [],
    handler: fail(new NotFoundError("chat 7 not found: no chat has this id")),
  },
  {
    ...base,
    name: "denied",
    params: [],
    handler: fail(
      new Deno.errors.NotCapable(
        'Requires read access to "/etc/shadow", run again with the --allow-read flag',
      ),
    ),
  },
  { ...base, name: "secure_thing", params: [ACC], license: true, handler: () => "ran" },
  typedMethod,
];

/** The test table. */
export const testMethods = createMethodTable(entries);
