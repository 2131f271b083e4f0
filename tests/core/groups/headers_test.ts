/** Tests of group_headers.ts against Delta Chat 2.57's own group mails (decrypted samples). */
import assert from "node:assert/strict";
import { parseGroupHeaders } from "../../../src/core/groups/headers.ts";
import type { ReadMail } from "../../../src/core/receive/mail_reader.ts";
import { parseMime } from "../../../src/mime/parser.ts";

const FIXTURES = new URL("../../fixtures/deltachat/", import.meta.url);

async function sample(name: string): Promise<ReadMail> {
  const content = parseMime(await Deno.readFile(new URL(`${name}.decrypted.txt`, FIXTURES)));
  return {
    messageId: "m@x",
    from: { addr: "sender@_relay.test", name: "" },
    headers: content.headers,
    content,
    encrypted: true,
    signer: "0".repeat(40),
    gossip: [],
    sentAt: 1_795_482_300,
  };
}

const NOW = 1_795_482_400;

Deno.test("a Delta Chat member-added: the new member first in To, timestamps and Fpr aligned", async () => {
  const h = parseGroupHeaders(await sample("group-02-vg-member-added-second-member"), NOW);
  assert.deepEqual(h.to.map((m) => [m.name, m.addr]), [
    ["Carol", "zzbui684m@_relay.test"],
    ["Bob", "6fs7uowbx@_relay.test"],
  ]);
  assert.deepEqual(h.past, []);
  assert.deepEqual(h.timestamps, [1795482287, 1795482283]);
  assert.equal(h.fprs?.length, 2);
  assert.equal(h.added, "zzbui684m@_relay.test");
});

Deno.test("a Delta Chat removal: the removed member only in the past members, with its time", async () => {
  const h = parseGroupHeaders(await sample("group-08-member-removed"), NOW);
  assert.deepEqual(h.to.map((m) => m.addr), ["6fs7uowbx@_relay.test"]);
  assert.deepEqual(h.past.map((m) => m.addr), ["zzbui684m@_relay.test"]);
  assert.deepEqual(h.timestamps, [1795482283, 1795482301]);
  assert.deepEqual(h.fprs, [
    "89275B6119992258B8A240D73265F81F64D142EA",
    "4575601D3C1F744D6535DAD6A8F88AA5E6CF2065",
  ]);
  assert.equal(h.removed, "zzbui684m@_relay.test");
});

Deno.test("a Delta Chat self-leave: the leaver among the past members (folded headers unfolded)", async () => {
  const h = parseGroupHeaders(await sample("group-10-self-leave"), NOW);
  assert.deepEqual(h.to.map((m) => m.addr), ["of0yu6cns@_relay.test"]);
  assert.deepEqual(h.past.map((m) => m.addr), ["zzbui684m@_relay.test", "6fs7uowbx@_relay.test"]);
  assert.equal(h.timestamps?.length, h.to.length + h.past.length);
  assert.equal(h.fprs?.length, 3);
  assert.equal(h.removed, "6fs7uowbx@_relay.test");
});

Deno.test("timestamps in the future are clamped to now + 60 s", async () => {
  const h = parseGroupHeaders(await sample("group-08-member-removed"), 1_795_482_200);
  assert.deepEqual(h.timestamps, [1795482260, 1795482260]);
});
