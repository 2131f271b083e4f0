/** Tests of the license methods and the gated secure_* family through dispatch. */
import assert from "node:assert/strict";
import { dispatch } from "../../../src/rpc/dispatch.ts";
import { SECURE_FILE_METHODS } from "../../../src/rpc/methods/license.ts";
import { buildMethodTable } from "../../../src/rpc/methods/mod.ts";
import { type FakeServices, fakeServices } from "../_fake_services.ts";

const methods = buildMethodTable();

async function call(services: FakeServices, method: string, params: unknown[]) {
  return await dispatch(
    JSON.stringify({ jsonrpc: "2.0", method, params, id: 1 }),
    services,
    methods,
  );
}

async function withServices(license: string, fn: (s: FakeServices) => Promise<void>) {
  const s = fakeServices({ license });
  try {
    await fn(s);
  } finally {
    s.store.close();
  }
}

const VALID_PARAMS: Record<string, unknown[]> = {
  secure_send_file: [1, 10, 11, "/files/a.pdf", true, false, 60],
  secure_send_group_file: [1, 10, "/files/a.pdf", false, false, 0],
  secure_get_file_id_by_path: [1, "/files/a.pdf.prv"],
  secure_revoke_file_access: [1, 10, 3, 11],
};

Deno.test("license_status reports no_license, or describe() of the source", async () => {
  await withServices("no_license", async (s) => {
    assert.deepEqual(await call(s, "license_status", [1]), {
      status: 200,
      body: { jsonrpc: "2.0", id: 1, result: { status: "no_license" } },
    });
  });
  await withServices("active", async (s) => {
    const license = Object.assign(s.fakeLicense, {
      describe: () => ({ status: "active", license_id: "L1" }),
    });
    assert.equal(s.license, license);
    assert.deepEqual(await call(s, "license_status", [1]), {
      status: 200,
      body: { jsonrpc: "2.0", id: 1, result: { status: "active", license_id: "L1" } },
    });
  });
});

Deno.test("license_activate/sync/deactivate answer a clear -1 in this build", async () => {
  await withServices("no_license", async (s) => {
    const activate = await call(s, "license_activate", [1, "https://lic.example/x"]);
    assert.deepEqual(activate, {
      status: 200,
      body: {
        jsonrpc: "2.0",
        id: 1,
        error: {
          code: -1,
          message: "license activation is not implemented in this build yet; it lands with the " +
            "license issue",
        },
      },
    });
    for (const [method, verb] of [["license_sync", "sync"], ["license_deactivate", "deactivate"]]) {
      const reply = await call(s, method, [1]);
      assert.ok(reply.status === 200 && !Array.isArray(reply.body) && "error" in reply.body);
      assert.equal(reply.body.error.code, -1);
      assert.equal(
        reply.body.error.message,
        `cannot ${verb} the license: no license is installed (status no_license); activate ` +
          "one with: edge-gateway license activate <url>",
      );
    }
  });
  await withServices("active", async (s) => {
    const reply = await call(s, "license_deactivate", [1]);
    assert.ok(reply.status === 200 && !Array.isArray(reply.body) && "error" in reply.body);
    assert.match(reply.body.error.message, /^license deactivation is not implemented/);
  });
});

Deno.test("every secure_* method answers -32001 without a license", async () => {
  assert.deepEqual(
    SECURE_FILE_METHODS.map((m) => m.name).sort(),
    Object.keys(VALID_PARAMS).sort(),
  );
  await withServices("no_license", async (s) => {
    for (const [method, params] of Object.entries(VALID_PARAMS)) {
      assert.deepEqual(await call(s, method, params), {
        status: 200,
        body: {
          jsonrpc: "2.0",
          id: 1,
          error: {
            code: -32001,
            message: `License required: "${method}" needs an active license, but the license ` +
              "status is no_license. Activate one with: edge-gateway license activate <url>",
          },
        },
      }, method);
    }
  });
});

Deno.test("secure_* methods validate their exact params before the gate", async () => {
  await withServices("no_license", async (s) => {
    const reply = await call(s, "secure_send_file", [1, 10, 11, "/files/a.pdf", true, false]);
    assert.deepEqual(reply, {
      status: 200,
      body: {
        jsonrpc: "2.0",
        id: 1,
        error: {
          code: -32602,
          message: "secure_send_file takes 7 parameters [account_id, chat_id, peer_contact_id, " +
            "plaintext_path, allow_download, allow_forward, duration_minutes], got 6",
        },
      },
    });
    const badBool = await call(s, "secure_send_group_file", [1, 10, "/a", "yes", false, 0]);
    assert.ok(badBool.status === 200 && !Array.isArray(badBool.body) && "error" in badBool.body);
    assert.equal(
      badBool.body.error.message,
      "parameter 4 (allow_download) of secure_send_group_file must be a boolean, got string",
    );
  });
});

Deno.test("secure_* methods say they are not in this build when licensed", async () => {
  await withServices("active", async (s) => {
    for (const [method, params] of Object.entries(VALID_PARAMS)) {
      const reply = await call(s, method, params);
      assert.ok(reply.status === 200 && !Array.isArray(reply.body) && "error" in reply.body);
      assert.equal(reply.body.error.code, -1);
      assert.equal(
        reply.body.error.message,
        `${method} is not available in this build yet: protected files land with the license issue`,
      );
    }
  });
});
