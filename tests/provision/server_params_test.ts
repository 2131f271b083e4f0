/** Tests of provision/server_params.ts: the stored `server_params` row is checked on read. */
import assert from "node:assert/strict";
import { StartupError } from "../../src/errors.ts";
import {
  loadServerParams,
  parseServerParams,
  saveServerParams,
} from "../../src/provision/server_params.ts";
import { ConfigKey, Store } from "../../src/store/mod.ts";
import { makeTempDir } from "../_helpers/temp.ts";

const PARAMS = {
  imap: { host: "h", port: 993, security: "ssl", user: "a@h" },
  smtp: { host: "h", port: 587, security: "starttls", user: "a@h" },
} as const;

Deno.test("parseServerParams() accepts the stored shape and names a broken entry", () => {
  assert.deepEqual(parseServerParams(structuredClone(PARAMS)), PARAMS);
  assert.throws(() => parseServerParams(null), /not a JSON object/);
  assert.throws(
    () => parseServerParams({ ...PARAMS, smtp: { ...PARAMS.smtp, port: 0 } }),
    /smtp entry is not/,
  );
  assert.throws(
    () => parseServerParams({ ...PARAMS, imap: { ...PARAMS.imap, security: "tls" } }),
    /imap entry is not/,
  );
});

Deno.test("loadServerParams() round-trips, and refuses a damaged row clearly", async () => {
  await using tmp = await makeTempDir("sp");
  const store = Store.open(`${tmp.path}/db`);
  try {
    assert.equal(loadServerParams(store, false), undefined);
    saveServerParams(store, PARAMS, 1_700_000_000_500);
    assert.deepEqual(loadServerParams(store, false), PARAMS);
    assert.equal(store.config.get(ConfigKey.CONFIGURED_AT), "1700000000");
    store.config.set(ConfigKey.SERVER_PARAMS, "{not json");
    assert.throws(
      () => loadServerParams(store, false),
      (e: Error) =>
        e instanceof StartupError && /stored mail server settings are damaged/.test(e.message),
    );
  } finally {
    store.close();
  }
});
