/**
 * Issue 21 end to end: two gateways on the relay, one on a wrong clock (libfaketime, moved while
 * it runs): every message in both directions arrives exactly once at ±5 s, ±30 s, ±2 days; a
 * fresh gateway first booted 10 days ahead joins by SecureJoin; at −400 and +800 days the skewed
 * gateway cannot do TLS with the relay (its certificate looks like Let's Encrypt's: 30 days old,
 * 60 to go), still accepts messages, names the problem in /health, and once its clock is corrected,
 * without a restart, everything sent meanwhile arrives exactly once.
 */
import assert from "node:assert/strict";
import { ExactlyOnce, gatewaySide, gatewayWarnings } from "../_helpers/exactly_once.ts";
import {
  certValidity,
  FakeClock,
  faketimeInstalled,
  logTimes,
  offsetMs,
  startFieldRelay,
} from "../_helpers/faketime.ts";
import { joinBySecureJoin } from "../_helpers/gateway_pair.ts";
import { GatewayPeer } from "../_helpers/gateway_peer.ts";
import { poll } from "../_helpers/poll.ts";
import { NO_RELAY } from "../_helpers/relay.ts";

const DAY = 86_400_000;
/**
 * Offsets the relay's certificate still covers: TLS works, only the signatures' times differ.
 * `+0` first: the control, both clocks right.
 */
const SMALL_OFFSETS = ["+0", "+5s", "-5s", "+30s", "-30s", "+2d", "-2d"];
/** How long a message may take after its sender's clock was corrected (reconnect back-off). */
const AFTER_CORRECTION_MS = 120_000;

/** `/health` of a gateway. */
async function health(gw: GatewayPeer): Promise<Record<string, unknown>> {
  const res = await fetch(`${gw.daemon.url}/health`);
  return await res.json();
}

/** Asserts that every time in `times` is `offset` from a real time between `realFrom` and now. */
function assertTimesAt(who: string, times: number[], offset: string, realFrom: number) {
  assert.ok(times.length > 0, `${who} logged nothing since the clock moved`);
  const off = offsetMs(offset);
  const realTo = Date.now();
  for (const t of times) {
    assert.ok(
      t >= realFrom + off - 3_000 && t <= realTo + off + 3_000,
      `${who} logged ${new Date(t).toISOString()}, not ${offset} from the real time ` +
        `(${new Date(realFrom).toISOString()} … ${new Date(realTo).toISOString()})`,
    );
  }
}

/**
 * Asserts that the gateway's log lines written since output index `from` (real time `realFrom`)
 * carry its fake time: the daemon itself runs on the clock, not only a probe.
 */
async function assertDaemonClock(gw: GatewayPeer, offset: string, from: number, realFrom: number) {
  const times = await poll(
    () => Promise.resolve(logTimes(gw.daemon.output(), from)),
    (t) => t.length > 0,
  );
  assertTimesAt(gw.name, times, offset, realFrom);
}

/** Moves the clock and returns where the daemon's output and the real time were then. */
async function moveClock(clock: FakeClock, gw: GatewayPeer, offset: string) {
  await clock.set(offset);
  // log lines already written under the old time may still be in the pipe
  await new Promise((r) => setTimeout(r, 300));
  return { from: gw.daemon.output().length, realFrom: Date.now() };
}

Deno.test({
  name: "two gateways, one on a wrong clock: every message both ways arrives exactly once",
  ignore: NO_RELAY || !faketimeInstalled(),
  sanitizeResources: false,
  sanitizeOps: false,
  async fn(t) {
    await using relay = await startFieldRelay();
    // First booted 3 days behind, as a box up before NTP (it makes its key then), and set right
    // before the join.
    await using clock = await FakeClock.create("-3d");
    const bootReal = Date.now();
    await using skewed = await GatewayPeer.start("Skewed GW", relay, { env: clock.env });
    const bootTimes = logTimes(skewed.daemon.output());
    await clock.set("+0");
    await using right = await GatewayPeer.start("Right GW", relay);
    const pair = await joinBySecureJoin(right, skewed);
    const A = gatewaySide(skewed, pair.joinerChat);
    const B = gatewaySide(right, pair.inviterChat);

    await t.step(
      "harness: a Let's Encrypt-like certificate; deno and the daemon on the fake clock",
      async () => {
        const { from, to } = await certValidity(`${relay.dir}/tls/cert.pem`);
        const now = Date.now();
        assert.ok(
          Math.abs(from - (now - 30 * DAY)) < DAY,
          `notBefore ${new Date(from).toISOString()}`,
        );
        assert.ok(Math.abs(to - (now + 60 * DAY)) < DAY, `notAfter ${new Date(to).toISOString()}`);
        assertTimesAt("Skewed GW at its first start", bootTimes, "-3d", bootReal);
        // a clock of its own: moving the daemon's, even briefly, would leave traces in it
        await using probe = await FakeClock.create();
        for (const offset of ["+30s", "-400d", "+800d", "+0"]) {
          await probe.set(offset);
          const seen = await probe.probeMs();
          assert.ok(
            Math.abs(seen - offsetMs(offset)) < 3_000,
            `deno under the clock at ${offset} is ${seen} ms off`,
          );
        }
      },
    );

    for (const offset of SMALL_OFFSETS) {
      await t.step(`${offset}: messages both ways arrive exactly once`, async () => {
        try {
          const { from, realFrom } = await moveClock(clock, skewed, offset);
          const x = await ExactlyOnce.begin(A, B);
          for (const i of [1, 2]) {
            await x.send(A, B, `skewed ${offset} → right #${i}`);
            await x.send(B, A, `right → skewed ${offset} #${i}`);
          }
          await x.check(
            "the skewed gateway runs on the fake clock",
            () => assertDaemonClock(skewed, offset, from, realFrom),
          );
          await x.verify();
        } finally {
          await clock.set("+0");
        }
      });
    }

    for (const offset of ["-400d", "+800d"]) {
      const tlsError = offset.startsWith("-") ? "not valid yet" : "expired";
      const tlsRefusal = new RegExp(`invalid peer certificate: certificate ${tlsError}`);
      const healthWords = offset.startsWith("-") ? /not yet valid/ : /expired/;
      await t.step(
        `${offset}: no TLS (certificate ${tlsError}), sending still accepted, /health says why; ` +
          "corrected without a restart, everything arrives exactly once",
        async () => {
          try {
            const { from } = await moveClock(clock, skewed, offset);
            const realFrom = Date.now();
            // Connections made before the jump stay up; a relay restart makes both reconnect, as
            // a network hiccup or a reboot would.
            await relay.stopMail();
            await relay.startMail();
            const x = await ExactlyOnce.begin(A, B);
            // rustls's own words (the IMAP log line): it checks the certificate on the fake time
            await x.check(
              `the skewed gateway's TLS handshake finds the certificate ${tlsError}`,
              async () => {
                const failed = await poll(
                  () => Promise.resolve(skewed.daemon.output().slice(from)),
                  (out) => tlsRefusal.test(out),
                );
                assert.match(failed, tlsRefusal);
              },
            );
            await x.check(
              "the skewed gateway runs on the fake clock",
              () => assertDaemonClock(skewed, offset, from, realFrom),
            );
            for (const i of [1, 2]) {
              await x.send(A, B, `skewed ${offset} → right #${i} (queued)`);
              await x.send(B, A, `right → skewed ${offset} #${i} (while it is off)`);
            }
            await x.check("/health names the clock's TLS problem", async () => {
              const h = await poll(() => health(skewed), (h) => h.mail_error === "tls_clock");
              assert.equal(h.mail, "unreachable", JSON.stringify(h));
              assert.equal(h.mail_error, "tls_clock", JSON.stringify(h));
              assert.match(String(h.mail_detail), healthWords, JSON.stringify(h));
            });
            await clock.set("+0");
            await x.check("/health is clear again", async () => {
              const h = await poll(
                () => health(skewed),
                (h) => h.mail === "connected" && h.mail_error === undefined,
                AFTER_CORRECTION_MS,
              );
              assert.equal(h.mail, "connected", JSON.stringify(h));
              assert.equal(h.mail_error, undefined, JSON.stringify(h));
            });
            await x.verify(AFTER_CORRECTION_MS);
          } finally {
            await clock.set("+0");
          }
        },
      );
    }

    await t.step("harness: the gateway on the fake clock shuts down cleanly", async () => {
      assert.equal(await skewed.daemon.stop(), 0, skewed.daemon.output().slice(-2000));
    });

    await t.step("a fresh gateway first booted 10 days ahead joins by SecureJoin", async () => {
      await using clockC = await FakeClock.create("+10d");
      const realFrom = Date.now();
      await using fresh = await GatewayPeer.start("Fresh GW", relay, { env: clockC.env });
      await assertDaemonClock(fresh, "+10d", 0, realFrom);
      const marks = [right.daemon.output().length, fresh.daemon.output().length];
      let joined;
      try {
        joined = await joinBySecureJoin(right, fresh, 60_000);
      } catch (err) {
        throw new assert.AssertionError({
          message:
            `SecureJoin with a key made 10 days ahead failed: ${
              (err as Error).message.split("\n")[0].slice(0, 200)
            }\n--- Right GW warnings ---\n${gatewayWarnings(right, marks[0])}` +
            `\n--- Fresh GW warnings ---\n${gatewayWarnings(fresh, marks[1])}`,
        });
      }
      const C = gatewaySide(fresh, joined.joinerChat);
      const R = gatewaySide(right, joined.inviterChat, "Right GW (with Fresh GW)");
      const ahead = await ExactlyOnce.begin(C, R);
      await ahead.send(C, R, "fresh +10d → right");
      await ahead.send(R, C, "right → fresh +10d");
      await ahead.verify();
      // NTP corrects it: its key now lies 10 days in its own future.
      await clockC.set("+0");
      const corrected = await ExactlyOnce.begin(C, R);
      await corrected.send(C, R, "fresh corrected → right");
      await corrected.send(R, C, "right → fresh corrected");
      await corrected.verify();
    });
  },
});
