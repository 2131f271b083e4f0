/**
 * Tests of buildMethodTable(): every contract method (docs/contract.md §4.4) of this build is
 * registered once.
 */
import assert from "node:assert/strict";
import { productAlias } from "../../../src/rpc/method.ts";
import { buildMethodTable, METHOD_GROUPS } from "../../../src/rpc/methods/mod.ts";

Deno.test("buildMethodTable() registers account, license and secure_* methods", () => {
  const table = buildMethodTable();
  for (
    const name of [
      "get_config",
      "get_info",
      "get_connectivity",
      "license_status",
      "license_activate",
      "license_sync",
      "license_deactivate",
      "secure_send_file",
      "secure_send_group_file",
      "secure_get_file_id_by_path",
      "secure_revoke_file_access",
      "rpc.discover",
    ]
  ) {
    assert.ok(table.get(name), `${name} is registered`);
  }
  const own = METHOD_GROUPS.flat();
  const aliases = own.filter((e) => productAlias(e.name) !== undefined).length;
  assert.equal(table.entries.length, own.length + aliases + 1);
});

/** SecureJoin is the invite protocol, not file protection: it works without a license. */
const UNGATED_SECURE = new Set([
  "secure_join",
  // Reading what one holds and asking its owner for renewal: never locked by a license lapse.
  "secure_get_file_status",
  "secure_request_file_access",
]);

Deno.test("buildMethodTable() entries are documented and gate every secure_ method", () => {
  for (const e of buildMethodTable().entries) {
    assert.ok(e.summary.length > 0, `${e.name} has a summary`);
    for (const p of e.params) assert.ok(p.description.length > 0, `${e.name}.${p.name}`);
    if (e.params.length > 0 && e.name !== "rpc.discover") {
      assert.equal(e.params[0].name, "account_id", `${e.name} takes account_id first`);
    }
    const spec = e.aliasOf ?? e.name;
    const gated = spec.startsWith("secure_") && !UNGATED_SECURE.has(spec);
    assert.equal(e.license === true, gated, `${e.name} gate flag`);
  }
});

Deno.test("the product's privitty_* names answer as the secure_* methods (product-compat.md#method-names)", () => {
  const table = buildMethodTable();
  const pairs = [
    ["privitty_send_file", "secure_send_file"],
    ["privitty_send_group_file", "secure_send_group_file"],
    ["privitty_revoke_file_access", "secure_revoke_file_access"],
    ["privitty_get_file_id_by_path", "secure_get_file_id_by_path"],
  ] as const;
  for (const [product, spec] of pairs) {
    const alias = table.get(product);
    const original = table.get(spec)!;
    assert.ok(alias, `${product} is registered`);
    assert.equal(alias.aliasOf, spec);
    assert.equal(alias.handler, original.handler, `${product} shares ${spec}'s handler`);
    assert.equal(alias.params, original.params);
    assert.equal(alias.license, original.license);
    assert.equal(alias.void, original.void);
  }
  assert.equal(table.get("privitty_join"), undefined, "secure_join keeps its one name");
  const names = table.entries.map((e) => e.name);
  assert.equal(names.indexOf("privitty_send_file"), names.indexOf("secure_send_file") + 1);
});
