/** Tests of buildMethodTable(): every SPEC method of this build is registered once. */
import assert from "node:assert/strict";
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
  assert.equal(table.entries.length, METHOD_GROUPS.flat().length + 1);
});

/** SecureJoin is the invite protocol, not file protection: it works without a license. */
const UNGATED_SECURE = new Set(["secure_join"]);

Deno.test("buildMethodTable() entries are documented and gate every secure_ method", () => {
  for (const e of buildMethodTable().entries) {
    assert.ok(e.summary.length > 0, `${e.name} has a summary`);
    for (const p of e.params) assert.ok(p.description.length > 0, `${e.name}.${p.name}`);
    if (e.params.length > 0 && e.name !== "rpc.discover") {
      assert.equal(e.params[0].name, "account_id", `${e.name} takes account_id first`);
    }
    const gated = e.name.startsWith("secure_") && !UNGATED_SECURE.has(e.name);
    assert.equal(e.license === true, gated, `${e.name} gate flag`);
  }
});
