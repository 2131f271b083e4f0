/**
 * Checks what scripts/test.sh promises about the test environment: only loopback exists, the
 * test domains resolve to 127.0.0.1, and nothing else resolves or connects.
 */
import assert from "node:assert/strict";
import { lookup } from "node:dns/promises";
import { TEST_DOMAINS } from "../_helpers/relay.ts";

const ignore = Deno.env.get("EDGE_TEST_IN_NS") !== "1"; // only inside the runner's namespace

Deno.test({
  name: "isolation: only the loopback interface exists",
  ignore,
  fn() {
    const addresses = Deno.networkInterfaces().map((i) => i.address);
    assert.ok(addresses.every((a) => a === "127.0.0.1" || a === "::1"), addresses.join(" "));
  },
});

Deno.test({
  name: "isolation: the test domains resolve to 127.0.0.1, other names do not resolve",
  ignore,
  async fn() {
    assert.ok(TEST_DOMAINS.includes("_relay.test") && TEST_DOMAINS.includes("_relay2.test"));
    for (const name of TEST_DOMAINS) {
      assert.equal((await lookup(name, { family: 4 })).address, "127.0.0.1", name);
    }
    await assert.rejects(lookup("deno.land"));
  },
});

Deno.test({
  name: "isolation: connections beyond loopback fail at once",
  ignore,
  async fn() {
    // No route and no resolver: refused by the kernel at once, never a timeout.
    await assert.rejects(
      Deno.connect({ hostname: "192.0.2.1", port: 443 }),
      Deno.errors.NetworkUnreachable,
    );
    await assert.rejects(
      fetch("https://example.com/"),
      (e: Error) => !/timed? ?out/i.test(`${e.message} ${(e.cause as Error)?.message}`),
    );
  },
});
