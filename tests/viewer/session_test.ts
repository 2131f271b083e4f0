/** Tests of the single viewer session: fingerprint check, tokens, replacement, expiry, events. */
import assert from "node:assert/strict";
import type { GatewayEvent } from "../../src/events/types.ts";
import { setLogSink } from "../../src/log.ts";
import {
  DEFAULT_VIEWER_TOKEN_LIFETIME_MS,
  normalizeFingerprint,
  ViewerAuthError,
  ViewerSessions,
} from "../../src/viewer/session.ts";

const FP = "a".repeat(64);

function setup(lifetimeMs?: number) {
  const events: GatewayEvent[] = [];
  const clock = { now: 1_700_000_000_000 };
  const lines: string[] = [];
  const prev = setLogSink((l) => lines.push(l));
  const sessions = new ViewerSessions({
    fingerprint: FP,
    events: { publish: (e) => void events.push(e) },
    ...(lifetimeMs === undefined ? {} : { lifetimeMs }),
    now: () => clock.now,
  });
  return { sessions, events, clock, lines, restore: () => setLogSink(prev) };
}

Deno.test("ViewerSessions.authenticate() issues a 32-byte base64url token", () => {
  const { sessions, events, clock, lines, restore } = setup();
  try {
    const issued = sessions.authenticate(FP);
    assert.match(issued.token, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(issued.expiresAt, clock.now + DEFAULT_VIEWER_TOKEN_LIFETIME_MS);
    assert.equal(sessions.check(issued.token), "ok");
    assert.equal(sessions.active, true);
    assert.deepEqual(events, [{
      kind: "ViewerSessionStarted",
      expiresAt: issued.expiresAt / 1000,
    }]);
    assert.ok(!lines.some((l) => l.includes(issued.token)), "the token is never logged");
  } finally {
    restore();
  }
});

Deno.test("ViewerSessions.authenticate() accepts upper case and whitespace, rejects others", () => {
  const { sessions, events, restore } = setup();
  try {
    assert.doesNotThrow(() => sessions.authenticate(` ${FP.toUpperCase()}\n`));
    for (const bad of ["", "b".repeat(64), FP.slice(1), FP + "0"]) {
      assert.throws(() => sessions.authenticate(bad), ViewerAuthError);
    }
    assert.equal(events.length, 1, "failures leave the session alone");
    assert.equal(sessions.active, true);
  } finally {
    restore();
  }
});

Deno.test("ViewerSessions: a new authentication replaces the old session", () => {
  const { sessions, events, restore } = setup();
  try {
    const first = sessions.authenticate(FP);
    const second = sessions.authenticate(FP);
    assert.notEqual(first.token, second.token);
    assert.equal(sessions.check(first.token), "invalid");
    assert.equal(sessions.check(second.token), "ok");
    assert.deepEqual(events.map((e) => e.kind), [
      "ViewerSessionStarted",
      "ViewerSessionEnded",
      "ViewerSessionStarted",
    ]);
    assert.deepEqual(events[1], { kind: "ViewerSessionEnded", reason: "replaced" });
  } finally {
    restore();
  }
});

Deno.test("ViewerSessions.check() reports missing, invalid and expired tokens", () => {
  const { sessions, events, clock, restore } = setup(60_000);
  try {
    assert.equal(sessions.check(undefined), "missing");
    assert.equal(sessions.check(""), "missing");
    assert.equal(sessions.check("x"), "invalid", "no session yet");
    const { token } = sessions.authenticate(FP);
    assert.equal(sessions.check(token + "x"), "invalid");
    clock.now += 59_999;
    assert.equal(sessions.check(token), "ok");
    clock.now += 1;
    assert.equal(sessions.check(token), "expired");
    assert.equal(sessions.check(token), "expired", "stays expired");
    assert.equal(sessions.active, false);
    assert.deepEqual(events.at(-1), { kind: "ViewerSessionEnded", reason: "expired" });
    assert.equal(events.filter((e) => e.kind === "ViewerSessionEnded").length, 1, "reported once");
    sessions.authenticate(FP);
    assert.equal(events.filter((e) => e.kind === "ViewerSessionEnded").length, 1);
  } finally {
    restore();
  }
});

Deno.test("ViewerSessions reports expiry when re-authenticating after an unnoticed expiry", () => {
  const { sessions, events, clock, restore } = setup(1000);
  try {
    sessions.authenticate(FP);
    clock.now += 5000;
    sessions.authenticate(FP);
    assert.deepEqual(events[1], { kind: "ViewerSessionEnded", reason: "expired" });
  } finally {
    restore();
  }
});

Deno.test("normalizeFingerprint() trims and lower-cases", () => {
  assert.equal(normalizeFingerprint("  ABcd \n"), "abcd");
});
