/** Tests of the received-text simplification: footer and the top quote of a reply. */
import assert from "node:assert/strict";
import { escapeFooterMarks, removeFooter, simplifyText } from "../../../src/core/receive/text.ts";

Deno.test("simplifyText() splits a chat reply's top quote off its text", () => {
  assert.deepEqual(simplifyText("> first line\n>second\n\nmy answer\n", true), {
    text: "my answer",
    quote: "first line\nsecond",
  });
  assert.deepEqual(simplifyText("no quote\n> later lines stay\n", true), {
    text: "no quote\n> later lines stay",
    quote: "",
  });
});

Deno.test("simplifyText() leaves a classic mail's quoting alone but drops its footer", () => {
  assert.deepEqual(simplifyText("> quoted\n\nreply\n-- \nAlice's signature\n", false), {
    text: "> quoted\n\nreply",
    quote: "",
  });
});

Deno.test("removeFooter() cuts at the first '-- ' line only", () => {
  assert.equal(removeFooter("a\n-- \nsig\n-- \nmore"), "a");
  assert.equal(removeFooter("a -- b\n--x"), "a -- b\n--x");
  assert.equal(removeFooter("a\n--  \nsig"), "a");
});

Deno.test("footer marks in user text survive the trip: escaped when sent, restored when read", () => {
  const text = "-- not a footer\nline\n-- nor this";
  const sent = escapeFooterMarks(text);
  assert.equal(removeFooter(sent), sent, "nothing is cut on the way");
  assert.deepEqual(simplifyText(sent, true), { text, quote: "" });
  assert.equal(escapeFooterMarks("a -- b"), "a -- b");
});
