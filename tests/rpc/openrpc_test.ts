/** Tests of the OpenRPC document generated from the method table. */
import assert from "node:assert/strict";
import { GATEWAY_VERSION } from "../../src/constants.ts";
import { Viewtype } from "../../src/core/chats/messages.ts";
import type { ResultType } from "../../src/rpc/method.ts";
import { buildMethodTable } from "../../src/rpc/methods/mod.ts";
import { openRpcDocument, paramSchema, schemaOf } from "../../src/rpc/openrpc.ts";

type Doc = {
  openrpc: string;
  info: { version: string };
  methods: {
    name: string;
    paramStructure: string;
    params: { name: string; required: boolean; schema: unknown }[];
    result: { schema: unknown; description: string };
    errors?: { code: number }[];
    "x-license-required"?: boolean;
    "x-alias-of"?: string;
    summary: string;
  }[];
};

Deno.test("openRpcDocument() describes every method by position with JSON schemas", () => {
  const entries = buildMethodTable().entries.filter((e) => e.name !== "rpc.discover");
  const doc = openRpcDocument(entries) as Doc;
  assert.equal(doc.openrpc, "1.2.6");
  assert.equal(doc.info.version, GATEWAY_VERSION);
  assert.deepEqual(doc.methods.map((m) => m.name), entries.map((e) => e.name));
  const getConfig = doc.methods.find((m) => m.name === "get_config")!;
  assert.equal(getConfig.paramStructure, "by-position");
  assert.deepEqual(getConfig.params.map((p) => [p.name, p.required]), [
    ["account_id", true],
    ["key", true],
  ]);
  assert.deepEqual(getConfig.params[0].schema, {
    type: "integer",
    minimum: 0,
    maximum: 4294967295,
  });
  assert.deepEqual(getConfig.result.schema, { type: ["string", "null"] });
});

Deno.test("openRpcDocument() marks license-gated methods and void results", () => {
  const doc = openRpcDocument(buildMethodTable().entries) as Doc;
  const send = doc.methods.find((m) => m.name === "secure_send_file")!;
  assert.equal(send["x-license-required"], true);
  assert.deepEqual(send.errors?.map((e) => e.code), [-32001]);
  const revoke = doc.methods.find((m) => m.name === "secure_revoke_file_access")!;
  assert.deepEqual(revoke.result.schema, { type: "null" });
  assert.match(revoke.result.description, /HTTP 204/);
  const info = doc.methods.find((m) => m.name === "get_info")!;
  assert.equal(info["x-license-required"], undefined);
});

Deno.test("openRpcDocument() lists both names of an aliased method, marking the alias", () => {
  const doc = openRpcDocument(buildMethodTable().entries) as Doc;
  const spec = doc.methods.find((m) => m.name === "secure_send_file")!;
  const product = doc.methods.find((m) => m.name === "privitty_send_file")!;
  assert.equal(product["x-alias-of"], "secure_send_file");
  assert.equal(spec["x-alias-of"], undefined);
  assert.equal(product["x-license-required"], true);
  assert.deepEqual(product.params, spec.params);
  assert.deepEqual(product.result, spec.result);
  assert.match(product.summary, /published name of secure_send_file/);
});

Deno.test("openRpcDocument() publishes an object param's declared fields as JSON Schema", () => {
  const doc = openRpcDocument(buildMethodTable().entries) as Doc;
  const send = doc.methods.find((m) => m.name === "send_msg")!;
  assert.deepEqual(send.params.map((p) => p.name), ["account_id", "chat_id", "message_data"]);
  const schema = send.params[2].schema as {
    type: string;
    required?: string[];
    properties: Record<string, { type?: unknown; enum?: unknown[]; description: string }>;
  };
  assert.equal(schema.type, "object");
  assert.equal(schema.required, undefined, "every MessageData field is optional");
  assert.deepEqual(Object.keys(schema.properties), [
    "text",
    "file",
    "filename",
    "viewtype",
    "quotedMessageId",
  ]);
  assert.deepEqual(schema.properties.text.type, ["string", "null"]);
  assert.deepEqual(schema.properties.viewtype.enum, [...Object.values(Viewtype), null]);
  assert.ok(Object.values(schema.properties).every((p) => p.description.length > 0));
  const quoted = { ...schema.properties.quotedMessageId, description: undefined };
  assert.deepEqual(quoted, { ...schemaOf("u32?"), description: undefined });
});

Deno.test("paramSchema() lists required fields and keeps plain params' schemas", () => {
  assert.deepEqual(
    paramSchema({
      name: "o",
      type: "object",
      description: "",
      fields: {
        a: { type: "string", description: "A." },
        b: { type: "bool", optional: true, description: "B." },
        c: { type: "string", values: ["x", "y"], description: "C." },
      },
    }),
    {
      type: "object",
      properties: {
        a: { type: "string", description: "A." },
        b: { type: "boolean", description: "B." },
        c: { type: "string", enum: ["x", "y"], description: "C." },
      },
      required: ["a", "c"],
    },
  );
  assert.deepEqual(paramSchema({ name: "o", type: "object", description: "" }), {
    type: "object",
  });
  assert.deepEqual(paramSchema({ name: "n", type: "u32?", description: "" }), schemaOf("u32?"));
});

Deno.test("schemaOf() maps every wire type", () => {
  const types: ResultType[] = [
    "u32",
    "i32",
    "string",
    "bool",
    "string?",
    "u32?",
    "array<u32>",
    "array<string>",
    "object",
    "any",
    "null",
    "map<string,string>",
    "map<string,object>",
  ];
  for (const t of types) assert.equal(typeof schemaOf(t), "object", t);
  assert.deepEqual(schemaOf("array<u32>"), { type: "array", items: schemaOf("u32") });
  assert.deepEqual(schemaOf("any"), {});
});
