/** Tests of the license methods and the gated secure_* family through dispatch. */
import assert from "node:assert/strict";
import { dispatch } from "../../../src/rpc/dispatch.ts";
import { SECURE_FILE_METHODS } from "../../../src/rpc/methods/secure_files.ts";
import { buildMethodTable } from "../../../src/rpc/methods/mod.ts";
import { LicenseClient } from "../../../src/license/client.ts";
import { LicenseManager } from "../../../src/license/manager.ts";
import { setLogSink } from "../../../src/log.ts";
import type { Services } from "../../../src/services.ts";
import { LicenseFixture } from "../../_helpers/license_fixture.ts";
import { makeTempDir } from "../../_helpers/temp.ts";
import { type FakeServices, fakeServices } from "../_fake_services.ts";

const methods = buildMethodTable();

async function call(services: Services, method: string, params: unknown[]) {
  return await dispatch(
    JSON.stringify({ jsonrpc: "2.0", method, params, id: 1 }),
    services,
    methods,
  );
}

type Reply = Awaited<ReturnType<typeof call>>;

/** The `result` of a 200 reply (fails the test otherwise). */
function resultOf(reply: Reply): Record<string, unknown> {
  assert.ok(reply.status === 200 && !Array.isArray(reply.body) && "result" in reply.body);
  return reply.body.result as Record<string, unknown>;
}

/** The `error` of a 200 reply (fails the test otherwise). */
function errorOf(reply: Reply): { code: number; message: string } {
  assert.ok(reply.status === 200 && !Array.isArray(reply.body) && "error" in reply.body);
  return reply.body.error;
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
  secure_respond_access_request: [1, 3, 11, true],
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

Deno.test("license methods drive the license at once: activate, gate, sync, deactivate", async () => {
  await using server = await LicenseFixture.start();
  await using dir = await makeTempDir("rpclic");
  const { url, row } = server.issue({ maxDevices: 1 });
  const s = fakeServices();
  const license = await LicenseManager.open({
    dataDir: dir.path,
    deviceId: "e".repeat(64),
    keys: server.trusted,
    state: s.store.config,
    client: new LicenseClient({ fetch: server.fetch }),
  });
  const services = { ...s, license };
  const prev = setLogSink(() => {});
  try {
    const gated = errorOf(await call(services, "secure_send_file", VALID_PARAMS.secure_send_file));
    assert.equal(gated.code, -32001);
    const activated = resultOf(await call(services, "license_activate", [1, url]));
    assert.equal(activated.status, "active");
    assert.equal(activated.license_id, row.id);
    const open = errorOf(await call(services, "secure_send_file", VALID_PARAMS.secure_send_file));
    assert.notEqual(open.code, -32001, "the gate opens without a restart");

    assert.equal(resultOf(await call(services, "license_sync", [1])).status, "active");
    assert.deepEqual(await call(services, "license_deactivate", [1]), { status: 204 });
    const closed = errorOf(
      await call(services, "secure_revoke_file_access", VALID_PARAMS.secure_revoke_file_access),
    );
    assert.equal(closed.code, -32001);
    assert.equal(resultOf(await call(services, "license_status", [1])).status, "no_license");

    assert.deepEqual(errorOf(await call(services, "license_activate", [1, `${url}-wrong`])), {
      code: -1,
      message: "the license server at http://license.test/v1/license/toke… refused to activate: " +
        "no license has this delivery URL (unknown_license)",
    });
  } finally {
    setLogSink(prev);
    s.store.close();
  }
});

Deno.test("every secure_* method answers -32001 without a license", async () => {
  assert.deepEqual(
    SECURE_FILE_METHODS.filter((m) => m.license).map((m) => m.name).sort(),
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

Deno.test("licensed secure_* methods answer -1 without a mail transport", async () => {
  await withServices("active", async (s) => {
    for (const [method, params] of Object.entries(VALID_PARAMS)) {
      const reply = await call(s, method, params);
      assert.ok(reply.status === 200 && !Array.isArray(reply.body) && "error" in reply.body);
      assert.equal(reply.body.error.code, -1, method);
    }
  });
});
