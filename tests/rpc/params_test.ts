/** Tests of positional-param validation: arity, every wire type, and the account id rule. */
import assert from "node:assert/strict";
import { RpcCode } from "../../src/constants.ts";
import { GatewayError, InvalidParamsError } from "../../src/errors.ts";
import type { MethodEntry, ParamType } from "../../src/rpc/method.ts";
import { describeJson, matchesType, validateParams } from "../../src/rpc/params.ts";

const getConfigLike: MethodEntry = {
  name: "get_config",
  summary: "",
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
