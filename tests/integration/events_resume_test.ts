/**
 * `Last-Event-ID` across daemon restarts: a client of gateway B stops reading, B is stopped
 * (SIGTERM, then SIGKILL), gateway A sends texts while B is down, B starts again on the same
 * data directory, and the client resumes with its last id. It gets every event it missed,
 * including the IncomingMsg of each text that waited on the relay, and every id it does not get
 * is announced by a `lag` counting it: no silent loss.
 */
import assert from "node:assert/strict";
import { SseParser } from "../../src/cli/sse_client.ts";
import { GatewayPeer, type ReceivedEvent } from "../_helpers/gateway_peer.ts";
import { joinBySecureJoin, messagesById } from "../_helpers/gateway_pair.ts";
import { twoGatewaysTest } from "../_helpers/two_gateways.ts";

/** One frame as a resuming client reads it. */
interface Frame {
  readonly id: number;
  /** The SSE event name: `message` for unnamed frames, `lag` for lag. */
  readonly name: string;
  readonly data: ReceivedEvent;
}

/**
 * Reads `url`/events (resuming after `lastEventId` when given) with the CLI's SSE parser until
 * `done` holds for the frames read, or `timeoutMs` passes; returns the frames.
 */
async function readEvents(
  url: string,
  lastEventId: number | undefined,
  done: (frames: readonly Frame[]) => boolean,
  timeoutMs = 30_000,
): Promise<Frame[]> {
  const ac = new AbortController();
  const timer = setTimeout(() => ac.abort(), timeoutMs);
  const headers: Record<string, string> = { accept: "text/event-stream" };
  if (lastEventId !== undefined) headers["last-event-id"] = String(lastEventId);
  const frames: Frame[] = [];
  try {
    const res = await fetch(`${url}/events`, { headers, signal: ac.signal });
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    const parser = new SseParser();
    try {
      while (!done(frames)) {
        const { value, done: ended } = await reader.read();
        if (ended) break;
        for (const m of parser.feed(value)) {
          frames.push({ id: Number(m.id), name: m.event, data: JSON.parse(m.data) });
        }
      }
    } finally {
      await reader.cancel().catch(() => {});
    }
  } catch (err) {
    if (!ac.signal.aborted) throw err;
  } finally {
    clearTimeout(timer);
  }
  return frames;
}

/** The msg_ids of the IncomingMsg frames. */
const incomingIds = (frames: readonly Frame[]) =>
  frames.filter((f) => f.data.type === "IncomingMsg").map((f) => f.data.msg_id as number);

/**
 * Checks that the frames account for every id after `after`: each frame's id follows the one
 * before, or the frame is a `lag` whose `dropped` counts the ids it skips.
 */
function assertNoSilentGap(after: number, frames: readonly Frame[]): void {
  let prev = after;
  for (const f of frames) {
    if (f.name === "lag") {
      assert.equal(f.data.type, "lag");
      assert.equal(f.data.dropped, f.id - prev, `lag ${JSON.stringify(f)} after id ${prev}`);
    } else {
      assert.equal(f.id, prev + 1, `event ${JSON.stringify(f)} right after id ${prev}`);
    }
    prev = f.id;
  }
}

/** A sends `texts` to B's chat and waits until the relay accepted each (MsgDelivered, 20). */
async function sendWhileDown(a: GatewayPeer, chat: number, texts: string[]): Promise<void> {
  const from = a.events.length;
  for (const text of texts) {
    const id = await a.call<number>("send_msg", 1, chat, { text });
    await a.waitForEvent(
      (e) => e.event.type === "MsgDelivered" && e.event.msg_id === id,
      30_000,
      from,
    );
  }
}

twoGatewaysTest({
  name: "a client resuming with Last-Event-ID after B restarts gets the texts queued while down",
  gateways: ["A", { name: "B", keepData: true }],
  async fn(gws) {
    const { a } = gws;
    let b = gws.b;
    try {
      const pair = await joinBySecureJoin(a, b);
      // The client reads B from its first event until the first text arrives, then stops.
      await a.call<number>("send_msg", 1, pair.inviterChat, { text: "before" });
      const live = await readEvents(b.daemon.url, 0, (f) => incomingIds(f).length === 1);
      assert.equal(incomingIds(live).length, 1, JSON.stringify(live));
      assert.equal(live[0].id, 1);
      assert.ok(live.every((f) => f.name === "message"), "no event: line on live frames");
      const lastSeen = live.at(-1)!.id;

      // Clean stop (SIGTERM): A's texts wait on the relay until B is back.
      await b.stop();
      await sendWhileDown(a, pair.inviterChat, ["down 1", "down 2", "down 3"]);
      b = await gws.restart("b");
      const resumed = await readEvents(b.daemon.url, lastSeen, (f) => incomingIds(f).length === 3);
      const texts = (await messagesById(b, incomingIds(resumed))).map((m) => m.text);
      assert.deepEqual(texts, ["down 1", "down 2", "down 3"], JSON.stringify(resumed));
      assert.ok(resumed.every((f) => f.name === "message"), "a clean restart drops nothing");
      assert.equal(resumed[0].id, lastSeen + 1, "ids continue across the restart");
      assertNoSilentGap(lastSeen, resumed);
      for (const f of resumed) assert.equal(f.data.account_id, 1);

      // Crash (SIGKILL): events not yet written are lost, and announced by a lag.
      const lastSeen2 = resumed.at(-1)!.id;
      await b.daemon.stop("SIGKILL");
      await b.stop();
      await sendWhileDown(a, pair.inviterChat, ["crash 1", "crash 2"]);
      b = await gws.restart("b");
      const afterCrash = await readEvents(
        b.daemon.url,
        lastSeen2,
        (f) => incomingIds(f).length === 2,
      );
      const texts2 = (await messagesById(b, incomingIds(afterCrash))).map((m) => m.text);
      assert.deepEqual(texts2, ["crash 1", "crash 2"], JSON.stringify(afterCrash));
      assertNoSilentGap(lastSeen2, afterCrash);
    } catch (err) {
      console.error(`--- A ---\n${a.daemon.output().slice(-4000)}`);
      console.error(`--- B ---\n${b.daemon.output().slice(-4000)}`);
      throw err;
    }
  },
});
