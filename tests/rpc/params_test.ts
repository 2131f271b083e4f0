/**
 * Tests of positional-param validation: arity, every wire type, an object param's declared
 * fields, the account id rule; and, at compile time, the handler types `method()` derives.
 */
import assert from "node:assert/strict";
import { RpcCode } from "../../src/constants.ts";
import type { Viewtype } from "../../src/core/chats/messages.ts";
import { GatewayError, InvalidParamsError } from "../../src/errors.ts";
import type {
  MethodEntry,
  ObjectFields,
  ParamType,
  ParamValue,
  ParamValues,
} from "../../src/rpc/method.ts";
import { getChatlistEntries } from "../../src/rpc/methods/chats.ts";
import { type MessageDataParam, sendMsg } from "../../src/rpc/methods/messages.ts";
import { setChatProfileImage } from "../../src/rpc/methods/groups.ts";
import { describeJson, fieldProblem, matchesType, validateParams } from "../../src/rpc/params.ts";
import { typedMethod } from "./_test_methods.ts";

const getConfigLike: MethodEntry = {
  name: "get_config",
  summary: "",
  scope: "read",
  params: [
    { name: "account_id", type: "u32", description: "" },
    { name: "key", type: "string", description: "" },
  ],
  result: { type: "string?", description: "" },
  handler: () => null,
};

function entry(type: ParamType): MethodEntry {
  return { ...getConfigLike, name: "m", params: [{ name: "p", type, description: "" }] };
}

function rejects(fn: () => unknown, code: number, message: string) {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof GatewayError);
    assert.equal(err.code, code);
    assert.equal(err.message, message);
    return true;
  });
}

Deno.test("validateParams() names the arity and the parameter list", () => {
  rejects(
    () => validateParams(getConfigLike, [1]),
    RpcCode.INVALID_PARAMS,
    "get_config takes 2 parameters [account_id, key], got 1",
  );
  rejects(
    () => validateParams(getConfigLike, [1, "addr", 3]),
    RpcCode.INVALID_PARAMS,
    "get_config takes 2 parameters [account_id, key], got 3",
  );
  rejects(
    () => validateParams({ ...getConfigLike, params: [getConfigLike.params[0]] }, []),
    RpcCode.INVALID_PARAMS,
    "get_config takes 1 parameter [account_id], got 0",
  );
});

Deno.test("validateParams() names the parameter and expected type", () => {
  rejects(
    () => validateParams(getConfigLike, [1, 5]),
    RpcCode.INVALID_PARAMS,
    "parameter 2 (key) of get_config must be a string, got number",
  );
  rejects(
    () => validateParams(getConfigLike, ["1", "addr"]),
    RpcCode.INVALID_PARAMS,
    "parameter 1 (account_id) of get_config must be an unsigned 32-bit integer (u32), got string",
  );
  rejects(
    () => validateParams(getConfigLike, [-1, "addr"]),
    RpcCode.INVALID_PARAMS,
    "parameter 1 (account_id) of get_config must be an unsigned 32-bit integer (u32), got -1",
  );
  rejects(
    () => validateParams(entry("array<u32>"), [[1, 2.5]]),
    RpcCode.INVALID_PARAMS,
    "parameter 1 (p) of m must be an array of unsigned 32-bit integers (u32), " +
      "got an array whose element 1 is 2.5",
  );
  assert.throws(() => validateParams(getConfigLike, [1, null]), InvalidParamsError);
});

Deno.test("validateParams() answers -1 'account with id N not found' for another account", () => {
  rejects(
    () => validateParams(getConfigLike, [7, "addr"]),
    RpcCode.APPLICATION,
    "account with id 7 not found",
  );
  assert.deepEqual(validateParams(getConfigLike, [1, "addr"]), [1, "addr"]);
});

Deno.test("matchesType() accepts exactly the values of each wire type", () => {
  const cases: [ParamType, unknown[], unknown[]][] = [
    ["u32", [0, 1, 4294967295], [-1, 1.5, 4294967296, "1", null, true]],
    ["i32", [-2147483648, 0, 2147483647], [2147483648, -2147483649, 0.5, "0", null]],
    ["string", ["", "x"], [null, 1, [], {}]],
    ["bool", [true, false], [0, "true", null]],
    ["string?", ["x", null], [1, undefined, false]],
    ["u32?", [3, null], [-3, "3", undefined]],
    ["array<u32>", [[], [1, 2]], [[-1], ["1"], {}, null, "[]"]],
    ["array<string>", [[], ["👍", ""]], [[1], [null], {}, null, "👍"]],
    ["object", [{}, { a: 1 }], [[], null, "x"]],
    ["any", [null, 1, "x", [], {}], []],
  ];
  for (const [type, good, bad] of cases) {
    for (const v of good) assert.ok(matchesType(type, v), `${type} accepts ${JSON.stringify(v)}`);
    for (const v of bad) assert.ok(!matchesType(type, v), `${type} rejects ${JSON.stringify(v)}`);
  }
});

Deno.test("describeJson() names JSON types", () => {
  assert.deepEqual(
    [null, [], {}, 1, "s", true].map(describeJson),
    ["null", "array", "object", "number", "string", "boolean"],
  );
});

Deno.test("validateParams() answers a wrong value of every param type with its position and name", () => {
  const wrong: [ParamType, unknown, string][] = [
    ["u32", 4294967296, "an unsigned 32-bit integer (u32), got 4294967296"],
    ["i32", "1", "a signed 32-bit integer (i32), got string"],
    ["string", null, "a string, got null"],
    ["bool", 1, "a boolean, got number"],
    ["string?", false, "a string or null, got boolean"],
    ["u32?", -3, "an unsigned 32-bit integer (u32) or null, got -3"],
    ["array<u32>", {}, "an array of unsigned 32-bit integers (u32), got object"],
    ["array<string>", [1], "an array of strings, got array"],
    ["object", "{}", "an object, got string"],
  ];
  for (const [type, value, expected] of wrong) {
    const m: MethodEntry = {
      ...getConfigLike,
      params: [getConfigLike.params[0], { name: "p", type, description: "" }],
    };
    rejects(
      () => validateParams(m, [1, value]),
      RpcCode.INVALID_PARAMS,
      `parameter 2 (p) of get_config must be ${expected}`,
    );
  }
});

const FIELDS = {
  kind: { type: "string", values: ["a", "b"], description: "" },
  count: { type: "u32", description: "" },
  label: { type: "string?", optional: true, description: "" },
  ids: { type: "array<u32>", optional: true, description: "" },
} as const satisfies ObjectFields;

Deno.test("validateParams() names the wrong or missing field of an object param", () => {
  const m: MethodEntry = {
    ...getConfigLike,
    name: "m",
    params: [getConfigLike.params[0], {
      name: "opts",
      type: "object",
      description: "",
      fields: FIELDS,
    }],
  };
  const at = "parameter 2 (opts) of m: field";
  const cases: [unknown, string][] = [
    [{ kind: "a" }, `${at} "count" is missing; it must be an unsigned 32-bit integer (u32)`],
    [{ kind: "c", count: 1 }, `${at} "kind" must be one of "a", "b", got "c"`],
    [{ kind: 1, count: 1 }, `${at} "kind" must be one of "a", "b", got number`],
    [{ kind: null, count: 1 }, `${at} "kind" must be one of "a", "b", got null`],
    [{ kind: "a", count: 1, label: 5 }, `${at} "label" must be a string or null, got number`],
    [
      { kind: "a", count: 1, ids: [1, "2"] },
      `${at} "ids" must be an array of unsigned 32-bit integers (u32), got an array whose ` +
      "element 1 is string",
    ],
  ];
  for (const [value, message] of cases) {
    rejects(() => validateParams(m, [1, value]), RpcCode.INVALID_PARAMS, message);
  }
  const fine = { kind: "b", count: 0, label: null, unknown: { anything: true } };
  assert.deepEqual(validateParams(m, [1, fine]), [1, fine], "optional, null and extra fields");
  assert.equal(fieldProblem(FIELDS, { kind: "a", count: 2, ids: [] }), undefined);
});

/** True when A and B are the same type (a compile-time check: assigning false fails to compile). */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2) ? true
  : false;

Deno.test("method() gives handlers the declared param types (compile-time)", () => {
  type Args<M extends { handler(s: never, params: never): unknown }> = Parameters<M["handler"]>[1];
  type Typed = Args<typeof typedMethod>;
  const checks: true[] = [
    // Scalars, nullable scalars and arrays, by position.
    true as Equal<
      Args<typeof getChatlistEntries>,
      [number, number | null, string | null, number | null]
    >,
    true as Equal<Args<typeof setChatProfileImage>, [number, number, string | null]>,
    true as Equal<
      [Typed[0], Typed[1], Typed[2], Typed[3], Typed[4], Typed[5]],
      [number, number, string | null, number[], string[], boolean]
    >,
    // An object param: declared fields typed (values narrowed; optional ones may be absent),
    // any other field unknown.
    true as Equal<Args<typeof sendMsg>[2], MessageDataParam>,
    true as Equal<MessageDataParam["viewtype"], Viewtype | null | undefined>,
    true as Equal<MessageDataParam["quotedMessageId"], number | null | undefined>,
    true as Equal<MessageDataParam["html"], unknown>,
    true as Equal<Typed[6]["mode"], "fast" | "slow">,
    true as Equal<Typed[6]["limit"], number | null | undefined>,
    true as Equal<
      ParamValue<{ name: "o"; type: "object"; description: "" }>,
      Readonly<Record<string, unknown>>
    >,
    true as Equal<ParamValues<readonly [{ name: "a"; type: "any"; description: "" }]>, [unknown]>,
  ];
  assert.ok(checks.every((c) => c));
});
