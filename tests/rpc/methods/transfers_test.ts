/** `get_transfer` and `cancel_transfer` through dispatch and the full method table. */
import assert from "node:assert/strict";
import { dispatch } from "../../../src/rpc/dispatch.ts";
import { buildMethodTable } from "../../../src/rpc/methods/mod.ts";
import type { Services } from "../../../src/services.ts";
import { fakeServices } from "../_fake_services.ts";

const methods = buildMethodTable();

async function call(s: Services, method: string, params: unknown[]) {
  const reply = await dispatch(
    JSON.stringify({ jsonrpc: "2.0", method, params, id: 1 }),
    s,
    methods,
  );
  return (reply as { body: unknown }).body as {
    result?: unknown;
    error?: { code: number; message: string };
  };
}

Deno.test("get_transfer answers the row in snake_case; cancel_transfer ends it once", async () => {
  const s = fakeServices();
  try {
    const none = await call(s, "get_transfer", [1, 99]);
    assert.match(none.error!.message, /message 99 has no file transfer/);
    s.store.transfers.insert({
      id: "0".repeat(32),
      direction: "out",
      msgId: 99,
      size: 1000,
      sha256: "ab".repeat(32),
      partSize: 300,
      parts: 4,
      name: "f.bin",
      mime: "application/octet-stream",
      pending: ["b@x"],
      now: 1,
    });
    const got = await call(s, "get_transfer", [1, 99]);
    assert.deepEqual(got.result, {
      transfer_id: "0".repeat(32),
      direction: "out",
      state: "active",
      reason: "",
      bytes: 0,
      total: 1000,
      parts: 4,
      parts_done: 0,
      path: "relay",
      pending: ["b@x"],
    });
    assert.equal(await call(s, "cancel_transfer", [1, 99]), undefined, "HTTP 204, no body");
    const again = await call(s, "cancel_transfer", [1, 99]);
    assert.equal(again.error?.code, -1);
    assert.match(again.error!.message, /no outgoing file transfer running/);
    assert.equal(
      ((await call(s, "get_transfer", [1, 99])).result as { state: string }).state,
      "cancelled",
    );
  } finally {
    s.store.close();
  }
});
