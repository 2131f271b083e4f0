/** Tests of the stored relay limit: unknown until set, replaced, removed when none is named. */
import assert from "node:assert/strict";
import { relayMessageLimit, setRelayMessageLimit } from "../../src/store/mod.ts";
import { withStore } from "./_store.ts";

Deno.test("relayMessageLimit: undefined until learned, then the stored value, removable", () => {
  withStore((s) => {
    assert.equal(relayMessageLimit(s), undefined);
    assert.equal(setRelayMessageLimit(s, 31_457_280), true);
    assert.equal(relayMessageLimit(s), 31_457_280);
    assert.equal(setRelayMessageLimit(s, 31_457_280), false, "unchanged");
    assert.equal(s.config.get("max_message_bytes"), "31457280");
    assert.equal(setRelayMessageLimit(s, undefined), true);
    assert.equal(relayMessageLimit(s), undefined);
    assert.equal(s.config.get("max_message_bytes"), undefined);
  });
});
