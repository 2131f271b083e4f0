/**
 * Tests of GET /events read from `app.request()`: headers, framing, batching of a burst into one
 * chunk, replay with Last-Event-ID or ?lastEventId, lag, pings, and release on disconnect.
 */
import assert from "node:assert/strict";
import { EventBus } from "../../src/events/bus.ts";
import { toWire } from "../../src/events/types.ts";
import { eventStream, PING_FRAME, resumePoint, sseFrame } from "../../src/http/events_route.ts";
import { testApp } from "./_app.ts";

const decoder = new TextDecoder();
type Reader = ReadableStreamDefaultReader<Uint8Array>;

async function open(app: ReturnType<typeof testApp>["app"], init?: RequestInit, path = "/events") {
  const res = await app.request(path, init);
  assert.equal(res.status, 200);
  return { res, reader: res.body!.getReader() as Reader };
}

/** Reads one chunk as text. */
async function chunk(reader: Reader): Promise<string> {
  const { value, done } = await reader.read();
  assert.equal(done, false);
  return decoder.decode(value);
}

const info = (msg: string) => ({ kind: "Info", msg }) as const;
const wireInfo = (msg: string) => toWire(info(msg));

Deno.test("GET /events sends SSE headers and unnamed id/data frames in the wire shape", async () => {
  const t = testApp();
  try {
    const { res, reader } = await open(t.app);
    assert.equal(res.headers.get("content-type"), "text/event-stream");
    assert.equal(res.headers.get("cache-control"), "no-cache");
    assert.equal(res.headers.get("x-accel-buffering"), "no");
    t.bus.publish({ kind: "IncomingMsg", chatId: 10, msgId: 42 });
    assert.equal(
      await chunk(reader),
      'id: 1\ndata: {"type":"IncomingMsg","account_id":1,"chat_id":10,"msg_id":42}\n\n',
    );
    await reader.cancel();
  } finally {
    t.close();
  }
});

Deno.test("GET /events writes a burst as one chunk holding every frame", async () => {
  const t = testApp();
  try {
    const { reader } = await open(t.app);
    for (let i = 1; i <= 5; i++) t.bus.publish(info(`m${i}`));
    const text = await chunk(reader);
    assert.equal(text.match(/^id: /gm)?.length, 5);
    assert.equal(
      text,
      [1, 2, 3, 4, 5].map((i) => sseFrame({ id: i, event: wireInfo(`m${i}`) })).join(""),
    );
    await reader.cancel();
  } finally {
    t.close();
  }
});

Deno.test("GET /events replays after Last-Event-ID, or ?lastEventId for curl", async () => {
  const t = testApp();
  try {
    for (let i = 1; i <= 4; i++) t.bus.publish(info(`m${i}`));
    const byHeader = await open(t.app, { headers: { "Last-Event-ID": "2" } });
    assert.match(await chunk(byHeader.reader), /^id: 3\n[\s\S]*id: 4\n/);
    await byHeader.reader.cancel();
    const byQuery = await open(t.app, undefined, "/events?lastEventId=3");
    assert.match(await chunk(byQuery.reader), /^id: 4\ndata: \{"type":"Info",/);
    await byQuery.reader.cancel();
    const header = await open(
      t.app,
      { headers: { "Last-Event-ID": "3" } },
      "/events?lastEventId=0",
    );
    assert.match(await chunk(header.reader), /^id: 4\n/, "the header wins over the query");
    await header.reader.cancel();
  } finally {
    t.close();
  }
});

Deno.test("GET /events sends lag for a Last-Event-ID older than the ring", async () => {
  const t = testApp({ bus: { ringSize: 3 } });
  try {
    for (let i = 1; i <= 10; i++) t.bus.publish(info(`m${i}`));
    const { reader } = await open(t.app, { headers: { "Last-Event-ID": "1" } });
    const text = await chunk(reader);
    assert.ok(
      text.startsWith(
        'id: 7\nevent: lag\ndata: {"type":"lag","account_id":1,"dropped":6,"oldest_available":8}\n\nid: 8\n',
      ),
      text,
    );
    await reader.cancel();
  } finally {
    t.close();
  }
});

Deno.test("GET /events: a client that does not read gets lag instead of unbounded buffering", async () => {
  const t = testApp({ bus: { queueLimit: 3 } });
  try {
    const { reader } = await open(t.app);
    for (let i = 1; i <= 8; i++) t.bus.publish(info(`m${i}`));
    const text = await chunk(reader);
    assert.ok(
      text.startsWith('id: 6\nevent: lag\ndata: {"type":"lag","account_id":1,"dropped":6,'),
      text,
    );
    assert.match(text, /id: 7\n[\s\S]*id: 8\n/);
    assert.doesNotMatch(text, /id: [1-5]\n/);
    await reader.cancel();
  } finally {
    t.close();
  }
});

Deno.test("GET /events sends a ': ping' comment every ssePingMs", async () => {
  const t = testApp({ ssePingMs: 30 });
  try {
    const { reader } = await open(t.app);
    // Nothing was published: the stream's first two chunks are keepalive pings.
    assert.equal(await chunk(reader), PING_FRAME);
    assert.equal(await chunk(reader), PING_FRAME);
    await reader.cancel();
  } finally {
    t.close();
  }
});

Deno.test("GET /events releases the subscription when the client goes away", async () => {
  const t = testApp();
  try {
    const { reader } = await open(t.app);
    const pending = reader.read();
    assert.equal(t.bus.subscriberCount, 1);
    await reader.cancel();
    assert.equal((await pending).done, true);
    assert.equal(t.bus.subscriberCount, 0);
  } finally {
    t.close();
  }
});

Deno.test("GET /events ends the response when the bus shuts down", async () => {
  const t = testApp();
  try {
    const { reader } = await open(t.app);
    const pending = reader.read();
    t.bus.close();
    assert.equal((await pending).done, true);
  } finally {
    t.close();
  }
});

Deno.test("HEAD /events answers the headers without subscribing", async () => {
  const t = testApp();
  try {
    const res = await t.app.request("/events", { method: "HEAD" });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get("content-type"), "text/event-stream");
    assert.equal(t.bus.subscriberCount, 0);
  } finally {
    t.close();
  }
});

Deno.test("eventStream() combines due pings with events using an injected clock", async () => {
  const bus = new EventBus();
  const sub = bus.subscribe();
  let now = 0;
  const reader = eventStream(sub, 1000, () => now).getReader();
  bus.publish(info("a"));
  now = 1500;
  const text = decoder.decode((await reader.read()).value);
  assert.equal(text, sseFrame({ id: 1, event: wireInfo("a") }) + PING_FRAME);
  await reader.cancel();
  assert.equal(sub.closed, true);
});

Deno.test("resumePoint() accepts decimal ids only", () => {
  assert.equal(resumePoint("12", undefined), 12);
  assert.equal(resumePoint(undefined, " 7 "), 7);
  assert.equal(resumePoint("x", "5"), undefined);
  assert.equal(resumePoint(undefined, "-1"), undefined);
  assert.equal(resumePoint(undefined, undefined), undefined);
});
