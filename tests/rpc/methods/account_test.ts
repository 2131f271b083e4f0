/** Golden tests of get_config, get_info and get_connectivity through dispatch. */
import assert from "node:assert/strict";
import { CORE_COMPAT_VERSION, GATEWAY_VERSION } from "../../../src/constants.ts";
import { dispatch } from "../../../src/rpc/dispatch.ts";
import { buildMethodTable } from "../../../src/rpc/methods/mod.ts";
import { ConfigKey } from "../../../src/store/mod.ts";
import { type FakeServices, fakeServices } from "../_fake_services.ts";

const methods = buildMethodTable();

async function call(services: FakeServices, method: string, params: unknown[]) {
  const reply = await dispatch(
    JSON.stringify({ jsonrpc: "2.0", method, params, id: 1 }),
    services,
    methods,
  );
  assert.equal(reply.status, 200);
  return reply.status === 200 ? reply.body : undefined;
}

Deno.test("get_config returns addr and displayname, falling back to the profile", async () => {
  const s = fakeServices({ profile: "Edge One" });
  try {
    assert.deepEqual(await call(s, "get_config", [1, "addr"]), {
      jsonrpc: "2.0",
      id: 1,
      result: null,
    });
    assert.deepEqual(await call(s, "get_config", [1, "displayname"]), {
      jsonrpc: "2.0",
      id: 1,
      result: "Edge One",
    });
    s.store.config.set(ConfigKey.ADDR, "abc@relay.example");
    s.store.config.set(ConfigKey.DISPLAY_NAME, "Renamed");
    assert.deepEqual(await call(s, "get_config", [1, "addr"]), {
      jsonrpc: "2.0",
      id: 1,
      result: "abc@relay.example",
    });
    assert.deepEqual(await call(s, "get_config", [1, "displayname"]), {
      jsonrpc: "2.0",
      id: 1,
      result: "Renamed",
    });
  } finally {
    s.store.close();
  }
});

Deno.test("get_config answers -1 listing the supported keys for an unknown key", async () => {
  const s = fakeServices();
  try {
    for (const key of ["mail_pw", "toString", "__proto__"]) {
      assert.deepEqual(await call(s, "get_config", [1, key]), {
        jsonrpc: "2.0",
        id: 1,
        error: {
          code: -1,
          message: `unknown config key "${key}": supported keys are "addr", "displayname"`,
        },
      });
    }
    assert.deepEqual(await call(s, "get_config", [1]), {
      jsonrpc: "2.0",
      id: 1,
      error: { code: -32602, message: "get_config takes 2 parameters [account_id, key], got 1" },
    });
  } finally {
    s.store.close();
  }
});

Deno.test("get_info returns the contract's keys and extras, every value a string", async () => {
  const dataDir = await Deno.makeTempDir();
  const s = fakeServices({ dataDir });
  try {
    await Deno.mkdir(`${dataDir}/accounts/1`, { recursive: true });
    await Deno.writeFile(`${dataDir}/accounts/1/gateway.db`, new Uint8Array(4096));
    await Deno.writeFile(`${dataDir}/accounts/1/gateway.db-wal`, new Uint8Array(100));
    s.store.config.set(ConfigKey.ADDR, "me@relay.example");
    s.store.keys.add({ fingerprint: "ABCD1234", privateKey: "x", publicKey: new Uint8Array(1) });
    s.store.db.run("INSERT INTO msgs (text) VALUES ('a'), ('b')");
    const body = await call(s, "get_info", [1]) as { result: Record<string, string> };
    const info = body.result;
    for (const [k, v] of Object.entries(info)) assert.equal(typeof v, "string", k);
    assert.equal(info.deltachat_core_version, CORE_COMPAT_VERSION);
    assert.equal(info.gateway_version, GATEWAY_VERSION);
    assert.equal(info.dbsize, "4196");
    assert.equal(info.blobdir, `${dataDir}/accounts/1/blobs`);
    assert.equal(info.configured_addr, "me@relay.example");
    assert.equal(info.n_msgs_in_db, "2");
    assert.deepEqual([info.outbox_len, info.owed_receipts, info.receive_errors], ["0", "0", "0"]);
    assert.equal(info.fingerprint, "ABCD1234");
    assert.equal(info.connectivity, "4000");
    assert.equal(info.license_status, "no_license");
    assert.equal(info.relay, "nine.testrun.org");
    assert.equal(info.journal_mode, "memory");
    assert.match(info.sqlite_version, /^3\.\d+/);
    assert.ok(Number(info.uptime) >= 4, "uptime in seconds");
  } finally {
    s.store.close();
    await Deno.remove(dataDir, { recursive: true });
  }
});

Deno.test("get_info reports dbsize 0 and empty strings before provisioning", async () => {
  const s = fakeServices();
  try {
    const body = await call(s, "get_info", [1]) as { result: Record<string, string> };
    assert.equal(body.result.dbsize, "0");
    assert.equal(body.result.configured_addr, "");
    assert.equal(body.result.fingerprint, "");
  } finally {
    s.store.close();
  }
});

Deno.test("get_connectivity returns the current level", async () => {
  const s = fakeServices({ level: 2000 });
  try {
    assert.deepEqual(await call(s, "get_connectivity", [1]), {
      jsonrpc: "2.0",
      id: 1,
      result: 2000,
    });
    s.connectivityLevel.value = 0;
    assert.deepEqual(await call(s, "get_connectivity", [1]), { jsonrpc: "2.0", id: 1, result: 0 });
    assert.deepEqual(await call(s, "get_connectivity", [3]), {
      jsonrpc: "2.0",
      id: 1,
      error: { code: -1, message: "account with id 3 not found" },
    });
  } finally {
    s.store.close();
  }
});
