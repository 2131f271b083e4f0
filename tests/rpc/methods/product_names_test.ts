/**
 * The product's published method names (`privitty_*`, docs/product-compat.md#method-names) through
 * dispatch: the same params, license gate and handler as the contract's `secure_*` methods, both in
 * rpc.discover.
 */
import assert from "node:assert/strict";
import { dispatch } from "../../../src/rpc/dispatch.ts";
import { buildMethodTable } from "../../../src/rpc/methods/mod.ts";
import { type FakeServices, fakeServices } from "../_fake_services.ts";

const methods = buildMethodTable();

async function call(services: FakeServices, method: string, params: unknown[]) {
  const reply = await dispatch(
    JSON.stringify({ jsonrpc: "2.0", method, params, id: 1 }),
    services,
    methods,
  );
  assert.ok(reply.status === 200 && !Array.isArray(reply.body));
  return reply.body;
}

async function withServices(license: string, fn: (s: FakeServices) => Promise<void>) {
  const s = fakeServices({ license });
  try {
    await fn(s);
  } finally {
    s.store.close();
  }
}

/**
 * The product's names, their contract twins and valid params (docs/product-compat.md#method-names).
 */
const PRODUCT_CALLS: [string, string, unknown[]][] = [
  ["privitty_send_file", "secure_send_file", [1, 10, 11, "/files/a.pdf", true, false, 60]],
  ["privitty_send_group_file", "secure_send_group_file", [1, 10, "/files/a.pdf", false, false, 0]],
  ["privitty_revoke_file_access", "secure_revoke_file_access", [1, 10, 3, 11]],
  ["privitty_get_file_id_by_path", "secure_get_file_id_by_path", [1, "/files/a.pdf.prv"]],
];

Deno.test("privitty_* and secure_* both answer -32001 without a license, naming the called method", async () => {
  await withServices("no_license", async (s) => {
    for (const [product, spec, params] of PRODUCT_CALLS) {
      for (const name of [product, spec]) {
        const body = await call(s, name, params);
        assert.ok("error" in body, name);
        assert.equal(body.error.code, -32001, name);
        assert.match(body.error.message, new RegExp(`^License required: "${name}" needs`));
      }
    }
  });
});

Deno.test("privitty_* validates params exactly as its secure_* twin, naming the called name", async () => {
  await withServices("no_license", async (s) => {
    for (const [product, spec] of PRODUCT_CALLS) {
      const a = await call(s, product, [1]);
      const b = await call(s, spec, [1]);
      assert.ok("error" in a && "error" in b);
      assert.equal(a.error.code, -32602);
      assert.equal(a.error.message, b.error.message.replace(spec, product), product);
      assert.match(a.error.message, new RegExp(`^${product} takes`));
    }
  });
});

Deno.test("with a license, privitty_* reaches the secure_* handler", async () => {
  await withServices("active", async (s) => {
    for (const [product, spec, params] of PRODUCT_CALLS) {
      const a = await call(s, product, params);
      const b = await call(s, spec, params);
      assert.deepEqual(a, b, product);
    }
  });
});

Deno.test("rpc.discover lists each privitty_* name beside its secure_* method", async () => {
  await withServices("no_license", async (s) => {
    const body = await call(s, "rpc.discover", []);
    assert.ok("result" in body);
    const names = (body.result as { methods: { name: string }[] }).methods.map((m) => m.name);
    for (const [product, spec] of PRODUCT_CALLS) {
      assert.equal(names.indexOf(product), names.indexOf(spec) + 1, product);
    }
  });
});
