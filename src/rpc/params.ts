/**
 * Validates positional JSON-RPC params against a method's `ParamSpec` list: arity, wire types,
 * and the one account id. Messages name the method, the parameter and the expected type.
 */
import { ACCOUNT_ID } from "../constants.ts";
import { GatewayError, InvalidParamsError } from "../errors.ts";
import type { MethodEntry, ParamType } from "./method.ts";

const U32_MAX = 0xffff_ffff;
const I32_MIN = -0x8000_0000;
const I32_MAX = 0x7fff_ffff;

/** How each type is named in error messages. */
const EXPECTED: Record<ParamType, string> = {
  "u32": "an unsigned 32-bit integer (u32)",
  "i32": "a signed 32-bit integer (i32)",
  "string": "a string",
  "bool": "a boolean",
  "string?": "a string or null",
  "u32?": "an unsigned 32-bit integer (u32) or null",
  "array<u32>": "an array of unsigned 32-bit integers (u32)",
  "array<string>": "an array of strings",
  "object": "an object",
  "any": "any JSON value",
};

/** Names the JSON type of a value: `null`, `array`, `object`, `number`, `string`, `boolean`. */
export function describeJson(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  return typeof value;
}

/** What a wrong value was: its JSON type, or the number itself when a number was expected. */
function describeWrong(type: ParamType, value: unknown): string {
  if (typeof value === "number" && /u32|i32/.test(type)) return String(value);
  if (type === "array<u32>" && Array.isArray(value)) {
    const at = value.findIndex((v) => !isU32(v));
    return `an array whose element ${at} is ${describeWrong("u32", value[at])}`;
  }
  return describeJson(value);
}

function isU32(v: unknown): v is number {
  return typeof v === "number" && Number.isInteger(v) && v >= 0 && v <= U32_MAX;
}

/** True when `value` has the wire type `type`. */
export function matchesType(type: ParamType, value: unknown): boolean {
  switch (type) {
    case "u32":
      return isU32(value);
    case "i32":
      return typeof value === "number" && Number.isInteger(value) && value >= I32_MIN &&
        value <= I32_MAX;
    case "string":
      return typeof value === "string";
    case "bool":
      return typeof value === "boolean";
    case "string?":
      return value === null || typeof value === "string";
    case "u32?":
      return value === null || isU32(value);
    case "array<u32>":
      return Array.isArray(value) && value.every(isU32);
    case "array<string>":
      return Array.isArray(value) && value.every((v) => typeof v === "string");
    case "object":
      return typeof value === "object" && value !== null && !Array.isArray(value);
    case "any":
      return true;
  }
}

/**
 * Checks `params` against `entry.params` and returns them. Throws InvalidParamsError (-32602)
 * for a wrong count or type, and a -1 GatewayError `account with id N not found` for an
 * `account_id` other than 1 (Delta Chat's text, so its clients recognise it).
 */
export function validateParams(entry: MethodEntry, params: unknown[]): unknown[] {
  const specs = entry.params;
  if (params.length !== specs.length) {
    const names = specs.map((p) => p.name).join(", ");
    const takes = specs.length === 1 ? "1 parameter" : `${specs.length} parameters`;
    throw new InvalidParamsError(
      `${entry.name} takes ${takes} [${names}], got ${params.length}`,
    );
  }
  for (let i = 0; i < specs.length; i++) {
    const spec = specs[i];
    const value = params[i];
    if (!matchesType(spec.type, value)) {
      throw new InvalidParamsError(
        `parameter ${i + 1} (${spec.name}) of ${entry.name} must be ${EXPECTED[spec.type]}, ` +
          `got ${describeWrong(spec.type, value)}`,
      );
    }
    if (spec.name === "account_id" && value !== ACCOUNT_ID) {
      throw new GatewayError(`account with id ${value} not found`);
    }
  }
  return params;
}
