/**
 * Generates the OpenRPC 1.2 document `rpc.discover` returns, from the method table, so the
 * published contract cannot drift from what dispatch validates.
 */
import { GATEWAY_VERSION, RpcCode } from "../constants.ts";
import type { FieldSpec, MethodEntry, ParamSpec, ResultType } from "./method_entry.ts";

/** A JSON Schema (draft 7, as OpenRPC 1.2 uses) fragment. */
export type JsonSchema = Record<string, unknown>;

const U32: JsonSchema = { type: "integer", minimum: 0, maximum: 0xffff_ffff };

/** Maps a wire type of the method table to its JSON Schema. */
export function schemaOf(type: ResultType): JsonSchema {
  switch (type) {
    case "u32":
      return U32;
    case "i32":
      return { type: "integer", minimum: -0x8000_0000, maximum: 0x7fff_ffff };
    case "string":
      return { type: "string" };
    case "bool":
      return { type: "boolean" };
    case "string?":
      return { type: ["string", "null"] };
    case "u32?":
      return { oneOf: [U32, { type: "null" }] };
    case "array<u32>":
      return { type: "array", items: U32 };
    case "array<string>":
      return { type: "array", items: { type: "string" } };
    case "object":
      return { type: "object" };
    case "any":
      return {};
    case "null":
      return { type: "null" };
    case "array<object>":
      return { type: "array", items: { type: "object" } };
    case "map<string,string>":
      return { type: "object", additionalProperties: { type: "string" } };
    case "map<string,object>":
      return { type: "object", additionalProperties: { type: "object" } };
  }
}

/** A field's JSON Schema: its wire type's, with its description and `enum` of its values. */
function fieldSchema(spec: FieldSpec): JsonSchema {
  const schema: JsonSchema = { ...schemaOf(spec.type), description: spec.description };
  if (spec.values !== undefined) {
    schema.enum = spec.type.endsWith("?") ? [...spec.values, null] : [...spec.values];
  }
  return schema;
}

/**
 * A parameter's JSON Schema; an object with declared fields lists them (`properties`, the
 * non-optional ones `required`). Other fields are let through, as validation does.
 */
export function paramSchema(spec: ParamSpec): JsonSchema {
  if (spec.fields === undefined) return schemaOf(spec.type);
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const [name, field] of Object.entries(spec.fields)) {
    properties[name] = fieldSchema(field);
    if (!field.optional) required.push(name);
  }
  return required.length === 0
    ? { type: "object", properties }
    : { type: "object", properties, required };
}

function methodObject(entry: MethodEntry): Record<string, unknown> {
  const method: Record<string, unknown> = {
    name: entry.name,
    summary: entry.aliasOf === undefined
      ? entry.summary
      : `${entry.summary} The product's published name of ${entry.aliasOf} (same method).`,
    paramStructure: "by-position",
    params: entry.params.map((p) => ({
      name: p.name,
      description: p.description,
      required: true,
      schema: paramSchema(p),
    })),
    result: {
      name: "result",
      description: entry.void ? `${entry.result.description} (HTTP 204)` : entry.result.description,
      schema: schemaOf(entry.void ? "null" : entry.result.type),
    },
  };
  if (entry.aliasOf !== undefined) method["x-alias-of"] = entry.aliasOf;
  if (entry.license) {
    method["x-license-required"] = true;
    method.errors = [{
      code: RpcCode.LICENSE_REQUIRED,
      message: "License required: the method needs an active license",
    }];
  }
  return method;
}

/** Builds the OpenRPC 1.2 document describing `entries` (rpc.discover itself is implied). */
export function openRpcDocument(entries: readonly MethodEntry[]): Record<string, unknown> {
  return {
    openrpc: "1.2.6",
    info: {
      title: "Edge Messaging Gateway",
      version: GATEWAY_VERSION,
      description: "JSON-RPC 2.0 over POST /rpc. Params are positional; account_id is always 1.",
    },
    methods: entries.map(methodObject),
  };
}
