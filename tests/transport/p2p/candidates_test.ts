/** Candidate addresses: only IP literals with a port, formatted back the same way. */
import assert from "node:assert/strict";
import { formatCandidate, parseCandidate } from "../../../src/transport/p2p/candidates.ts";

Deno.test("IPv4 and bracketed IPv6 candidates parse and format back", () => {
  for (const text of ["10.0.0.2:7200", "[2001:db8::1]:443", "[::1]:1"]) {
    const c = parseCandidate(text);
    assert.ok(c, text);
    assert.equal(formatCandidate(c), text);
  }
});

Deno.test("host names, missing or bad ports and junk are not candidates", () => {
  for (
    const text of [
      "example.org:7200",
      "10.0.0.2",
      "10.0.0.2:0",
      "10.0.0.2:70000",
      "300.1.1.1:5",
      "[zz]:5",
      "",
      "1.2.3.4:5:6",
    ]
  ) {
    assert.equal(parseCandidate(text), undefined, text);
  }
});
