/** The direct path on loopback: transfer, resume from the sink's offset, refusals, timeouts. */
import assert from "node:assert/strict";
import { setLogSink } from "../../../src/log.ts";
import {
  OnceLog,
  P2pEndpoint,
  type P2pOffer,
  type P2pProgress,
} from "../../../src/transport/p2p/mod.ts";
import {
  checkingSink,
  generatedSha256,
  generatedSource,
  memorySink,
} from "../../_helpers/p2p_bytes.ts";

const LOOP = { hostname: "127.0.0.1", connectTimeoutMs: 3_000, idleTimeoutMs: 3_000 };

async function pair(extra: { maxSize?: number } = {}) {
  const logS = new OnceLog(), logR = new OnceLog();
  const s = await P2pEndpoint.open({ ...LOOP, log: logS });
  const r = await P2pEndpoint.open({ ...LOOP, log: logR, ...extra });
  return { s, r, logS, logR, close: () => (s.close(), r.close()) };
}

Deno.test("a file goes across and matches its SHA-256; progress is throttled", async () => {
  const { s, r, close } = await pair();
  try {
    const size = 8 * 1024 * 1024 + 13;
    const out = await s.offer({
      transferId: "t1",
      size,
      sha256: await generatedSha256(size),
      source: generatedSource(size),
    });
    const sink = checkingSink();
    const inc = await r.accept(out.offer, sink);
    assert(!("refused" in inc));
    const progress: P2pProgress[] = [];
    const [so, ro] = await Promise.all([
      out.run(inc.answer),
      inc.run({ onProgress: (p) => progress.push(p) }),
    ]);
    assert(so.ok && ro.ok, JSON.stringify({ so, ro }));
    assert.deepEqual(sink.held(), size);
    assert.deepEqual(sink.mismatches, 0);
    assert.deepEqual(ro.resumedFrom, [0]);
    assert.deepEqual(progress.at(-1)?.bytes, size);
    assert(progress.length <= 101);
  } finally {
    close();
  }
});

Deno.test("a run starts at the offset the sink holds and verifies the whole file", async () => {
  const { s, r, close } = await pair();
  try {
    const size = 300_000;
    const full = new Uint8Array(
      await new Response(generatedSource(size).open(0) as ReadableStream).arrayBuffer(),
    );
    const source = generatedSource(size);
    const out = await s.offer({
      transferId: "t-resume",
      size,
      sha256: await generatedSha256(size),
      source,
    });
    const sink = memorySink(full.slice(0, 123_457));
    const inc = await r.accept(out.offer, sink);
    assert(!("refused" in inc));
    const [so, ro] = await Promise.all([out.run(inc.answer), inc.run()]);
    assert(so.ok && ro.ok, JSON.stringify({ so, ro }));
    assert.deepEqual(source.opened, [123_457]);
    assert.deepEqual(ro.resumedFrom, [123_457]);
    assert.equal(ro.wireBytes, size - 123_457);
    assert.deepEqual(sink.bytes(), full);
  } finally {
    close();
  }
});

Deno.test("bytes that do not match the offered SHA-256 fail on both sides", async () => {
  const { s, r, close } = await pair();
  try {
    const size = 100_000;
    const out = await s.offer({
      transferId: "t-hash",
      size,
      sha256: "0".repeat(64),
      source: generatedSource(size),
    });
    const inc = await r.accept(out.offer, checkingSink());
    assert(!("refused" in inc));
    const [so, ro] = await Promise.all([out.run(inc.answer), inc.run()]);
    assert.equal(!so.ok && so.reason, "hash_mismatch");
    assert.equal(!ro.ok && ro.reason, "hash_mismatch");
  } finally {
    close();
  }
});

async function offerFor(s: P2pEndpoint, transferId: string, size = 1000): Promise<P2pOffer> {
  const out = await s.offer({
    transferId,
    size,
    sha256: await generatedSha256(size),
    source: generatedSource(size),
  });
  return out.offer;
}

Deno.test("a forged offer and a 1 TB claim are refused before anything is dialed", async () => {
  const { s, r, logR, close } = await pair({ maxSize: 1024 ** 3 });
  try {
    const offer = await offerFor(s, "t-forged");
    const forged = await r.accept({ ...offer, pin: "a".repeat(64) }, checkingSink());
    assert.equal("refused" in forged && forged.refused, "forged_offer");
    const noCa = await r.accept({ ...offer, server_name: "x.example.com" }, checkingSink());
    assert.equal("refused" in noCa && noCa.refused, "forged_offer");
    const huge = await r.accept({ ...offer, size: 1e12 }, checkingSink());
    assert.equal("refused" in huge && huge.refused, "size_limit");
    const old = await r.accept({ ...offer, expires_at: 1 }, checkingSink());
    assert.equal("refused" in old && old.refused, "expired");
    assert.equal(logR.counts.get("forged_offer"), 2);
    assert.equal(logR.counts.get("size_limit"), 1);
  } finally {
    close();
  }
});

Deno.test("a wrong token is refused by the sender, logged once, and the receiver times out", async () => {
  const { s, r, logS, close } = await pair();
  try {
    const offer = await offerFor(s, "t-token");
    const bad = { ...offer, token: "A".repeat(43) };
    const inc = await r.accept(bad, checkingSink());
    assert(!("refused" in inc));
    const ro = await inc.run();
    assert.equal(!ro.ok && ro.reason, "connect_timeout");
    assert((logS.counts.get("wrong_token") ?? 0) >= 1);
  } finally {
    close();
  }
});

Deno.test("a wrong pin is refused by the dialer", async () => {
  const { s, r, logR, close } = await pair();
  const other = await P2pEndpoint.open(LOOP);
  try {
    const offer = await offerFor(s, "t-pin");
    const foreign = await offerFor(other, "t-other");
    const swapped = {
      ...offer,
      cert: foreign.cert,
      pin: foreign.pin,
      server_name: foreign.server_name,
    };
    const inc = await r.accept(swapped, checkingSink());
    assert(!("refused" in inc));
    const ro = await inc.run();
    assert.equal(!ro.ok && ro.reason, "connect_timeout");
    assert((logR.counts.get("wrong_pin") ?? 0) >= 1);
  } finally {
    other.close();
    close();
  }
});

Deno.test("an unknown transfer is refused by the sender", async () => {
  const { s, r, logS, close } = await pair();
  try {
    const offer = await offerFor(s, "t-known");
    const inc = await r.accept({ ...offer, transfer_id: "t-unknown" }, checkingSink());
    assert(!("refused" in inc));
    const ro = await inc.run();
    assert.equal(!ro.ok && ro.reason, "connect_timeout");
    assert((logS.counts.get("unknown_transfer") ?? 0) >= 1);
  } finally {
    close();
  }
});

Deno.test("an idle endpoint replaces a certificate that runs short, and the new pin works", async () => {
  // The first certificate is made 8 days back (5 of its 13 days left: under the 7 kept); the
  // clock then returns to now, since rustls checks validity against the real time.
  let now = Date.now() - 8 * 24 * 3600_000;
  const s = await P2pEndpoint.open({ ...LOOP, now: () => now });
  const r = await P2pEndpoint.open(LOOP);
  try {
    const first = await s.offer({
      transferId: "t-before",
      size: 1,
      sha256: "0".repeat(64),
      source: generatedSource(1),
    });
    first.cancel();
    now = Date.now();
    const size = 50_000;
    const out = await s.offer({
      transferId: "t-after",
      size,
      sha256: await generatedSha256(size),
      source: generatedSource(size),
    });
    assert.notEqual(out.offer.pin, first.offer.pin);
    const inc = await r.accept(out.offer, checkingSink());
    assert(!("refused" in inc));
    const [so, ro] = await Promise.all([out.run(inc.answer), inc.run()]);
    assert(so.ok && ro.ok, JSON.stringify({ so, ro }));
  } finally {
    s.close();
    r.close();
  }
});

Deno.test("an offer never run expires: its token stops working", async () => {
  let now = Date.now();
  const s = await P2pEndpoint.open({ ...LOOP, now: () => now });
  const r = await P2pEndpoint.open(LOOP);
  try {
    const stale = await offerFor(s, "t-stale");
    now += 25 * 3600_000; // past the 24 h an offer is honoured
    await offerFor(s, "t-fresh"); // any new offer sweeps the expired ones
    const inc = await r.accept({ ...stale, expires_at: Date.now() + 60_000 }, checkingSink());
    assert(!("refused" in inc));
    const ro = await inc.run();
    assert.equal(!ro.ok && ro.reason, "connect_timeout");
  } finally {
    s.close();
    r.close();
  }
});

Deno.test("each refusal is logged once per transfer and reason, however often it comes", async () => {
  const lines: string[] = [];
  const prev = setLogSink((l) => lines.push(l));
  const { s, r, close } = await pair();
  try {
    const offer = await offerFor(s, "t-flood");
    for (let i = 0; i < 5; i++) await r.accept({ ...offer, size: -1 }, checkingSink());
    assert.equal(lines.filter((l) => l.includes("forged_offer")).length, 1);
    assert.ok(!lines.some((l) => l.includes(offer.token)), "the token is never logged");
  } finally {
    setLogSink(prev);
    close();
  }
});

Deno.test("made-up transfer ids are refused, and logged once however many come", async () => {
  const lines: string[] = [];
  const prev = setLogSink((l) => lines.push(l));
  const s = await P2pEndpoint.open(LOOP);
  const r = await P2pEndpoint.open({ ...LOOP, connectTimeoutMs: 1_000 });
  try {
    const offer = await offerFor(s, "t-real");
    for (const id of ["t-x1", "t-x2", "t-x3"]) {
      const inc = await r.accept({ ...offer, transfer_id: id }, checkingSink());
      assert(!("refused" in inc));
      const ro = await inc.run();
      assert.equal(!ro.ok && ro.reason, "connect_timeout");
    }
    assert.equal(lines.filter((l) => l.includes("unknown_transfer")).length, 1);
  } finally {
    setLogSink(prev);
    s.close();
    r.close();
  }
});
