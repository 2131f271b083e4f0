/** Tests of the method table: registration rules and the built-in rpc.discover entry. */
import assert from "node:assert/strict";
import {
  createMethodTable,
  DISCOVER_METHOD,
  type MethodEntry,
  productAlias,
} from "../../src/rpc/method.ts";
import { fakeServices } from "./_fake_services.ts";

const entry = (name: string): MethodEntry => ({
  name,
  summary: `does ${name}`,
  scope: "read",
  params: [],
  result: { type: "null", description: "" },
  handler: () => null,
});

Deno.test("createMethodTable() looks entries up by name and appends rpc.discover", () => {
  const table = createMethodTable([entry("a"), entry("b")]);
  assert.equal(table.get("a")?.name, "a");
  assert.equal(table.get("zzz"), undefined);
  assert.deepEqual(table.entries.map((e) => e.name), ["a", "b", DISCOVER_METHOD]);
  assert.ok(Object.isFrozen(table.entries));
});

Deno.test("createMethodTable() rejects duplicates and reserved rpc. names", () => {
  assert.throws(() => createMethodTable([entry("a"), entry("a")]), /"a" is registered twice/);
  assert.throws(() => createMethodTable([entry("rpc.x")]), /reserved/);
});

Deno.test("rpc.discover returns the table's OpenRPC document, built once", async () => {
  const table = createMethodTable([entry("a")]);
  const services = fakeServices();
  try {
    const discover = table.get(DISCOVER_METHOD)!;
    const doc = await discover.handler(services, []) as { methods: { name: string }[] };
    assert.deepEqual(doc.methods.map((m) => m.name), ["a"]);
    assert.equal(await discover.handler(services, []), doc, "cached");
  } finally {
    services.store.close();
  }
});

Deno.test("productAlias() maps every secure_* name to privitty_* except secure_join", () => {
  assert.equal(productAlias("secure_send_file"), "privitty_send_file");
  assert.equal(productAlias("secure_some_later_method"), "privitty_some_later_method");
  assert.equal(productAlias("secure_join"), undefined);
  assert.equal(productAlias("send_msg"), undefined);
  assert.equal(productAlias("privitty_send_file"), undefined);
});

Deno.test("createMethodTable() registers the product alias of a secure_* entry after it", () => {
  const gated: MethodEntry = { ...entry("secure_new_thing"), license: true };
  const table = createMethodTable([entry("a"), gated, entry("secure_join")]);
  assert.deepEqual(table.entries.map((e) => e.name), [
    "a",
    "secure_new_thing",
    "privitty_new_thing",
    "secure_join",
    DISCOVER_METHOD,
  ]);
  const alias = table.get("privitty_new_thing")!;
  assert.equal(alias.aliasOf, "secure_new_thing");
  assert.equal(alias.handler, gated.handler);
  assert.equal(alias.license, true);
  assert.throws(
    () => createMethodTable([entry("privitty_x"), entry("secure_x")]),
    /"privitty_x" is registered twice/,
  );
});
