/**
 * Validates positional JSON-RPC params against a method's `ParamSpec` list: arity, wire types,
 * the declared fields of object params, and the one account id. Messages name the method, the
 * parameter's position and name (and the field), what was expected and what came.
 */
import { ACCOUNT_ID } from "../constants.ts";
import { GatewayError, InvalidParamsError } from "../errors.ts";
import type { FieldSpec, MethodEntry, ObjectFields, ParamSpec, ParamType } from "./method.ts";

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

/** What a field of `spec` expects, as error messages say it. */
function expectedField(spec: FieldSpec): string {
  if (spec.values === undefined) return EXPECTED[spec.type];
  const values = spec.values.map((v) => JSON.stringify(v)).join(", ");
  return `one of ${values}` + (spec.type.endsWith("?") ? " or null" : "");
}

/** What a wrong field value was: a string itself (shortened) when values are listed. */
function describeWrongField(spec: FieldSpec, value: unknown): string {
  if (spec.values !== undefined && typeof value === "string") {
    return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
  }
  return describeWrong(spec.type, value);
}

/** True when `value` is what field `spec` admits (present: absence is judged by the caller). */
function matchesField(spec: FieldSpec, value: unknown): boolean {
  if (!matchesType(spec.type, value)) return false;
  return spec.values === undefined || value === null || spec.values.includes(value as string);
}

/**
 * The first declared field of an object param that is missing (and required) or of the wrong
 * type, as the end of an error message (`field "x" must be …, got …`); undefined when all fit.
 */
export function fieldProblem(
  fields: ObjectFields,
  value: Readonly<Record<string, unknown>>,
): string | undefined {
  for (const [name, spec] of Object.entries(fields)) {
    if (!Object.hasOwn(value, name) || value[name] === undefined) {
      if (spec.optional) continue;
      return `field "${name}" is missing; it must be ${expectedField(spec)}`;
    }
    if (!matchesField(spec, value[name])) {
      return `field "${name}" must be ${expectedField(spec)}, ` +
        `got ${describeWrongField(spec, value[name])}`;
    }
  }
  return undefined;
}

/** The error for parameter `spec` at index `i` of `method`, ending in `problem`. */
function paramError(method: string, i: number, spec: ParamSpec, problem: string) {
  return new InvalidParamsError(`parameter ${i + 1} (${spec.name}) of ${method}${problem}`);
}

/**
 * Checks `params` against `entry.params` and returns them. Throws InvalidParamsError (-32602)
 * for a wrong count or type, or a declared field of an object param that is missing or wrong;
 * and a -1 GatewayError `account with id N not found` for an `account_id` other than 1 (Delta
 * Chat's text, so its clients recognise it).
 */
export function validateParams(
  entry: MethodEntry,
  params: readonly unknown[],
): readonly unknown[] {
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
      const problem = ` must be ${EXPECTED[spec.type]}, got ${describeWrong(spec.type, value)}`;
      throw paramError(entry.name, i, spec, problem);
    }
    if (spec.fields !== undefined) {
      const problem = fieldProblem(spec.fields, value as Record<string, unknown>);
      if (problem !== undefined) throw paramError(entry.name, i, spec, `: ${problem}`);
    }
    if (spec.name === "account_id" && value !== ACCOUNT_ID) {
      throw new GatewayError(`account with id ${value} not found`);
    }
  }
  return params;
}
