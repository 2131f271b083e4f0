/** A small method table for dispatch tests: echo, void, null, failing and license-gated methods. */
import { NotFoundError } from "../../src/errors.ts";
import { createMethodTable, type MethodEntry } from "../../src/rpc/method.ts";

/** Every handler call, in order (`name:args`); tests clear it. */
export const calls: string[] = [];

const base = { summary: "test", result: { type: "any", description: "" } } as const;
const ACC = { name: "account_id", type: "u32", description: "" } as const;
const fail = (err: unknown) => () => {
  throw err;
};

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
];

/** The test table. */
export const testMethods = createMethodTable(entries);
