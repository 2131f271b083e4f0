/**
 * The product's published curl cookbook, replayed against two gateways on the test relay the way
 * its users run it: JSON-RPC over plain `fetch` (status, invite, join, text send, chat and message
 * listing), and events read like its line-based SSE clients (the shell watcher, the Python
 * handler): split the stream into lines, parse each `data:` line, key on `.type`, `.chat_id`,
 * `.msg_id`. No helper of this repository parses the stream here.
 */
import assert from "node:assert/strict";
import { twoGatewaysTest } from "../_helpers/two_gateways.ts";

/** `curl -s -X POST $URL/rpc -H 'Content-Type: application/json' -d '{...}'`, result only. */
async function curlRpc(url: string, method: string, params: unknown[]): Promise<unknown> {
  const res = await fetch(`${url}/rpc`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", method, params, id: 1 }),
  });
  assert.equal(res.status, 200, `${method} answered HTTP ${res.status}`);
  const body = await res.json();
  assert.equal(body.error, undefined, `${method}: ${JSON.stringify(body.error)}`);
  return body.result;
}

/** An event as a line-based client sees it: the JSON of one `data:` line. */
type DataLine = {
  type?: string;
  account_id?: number;
  chat_id?: number;
  msg_id?: number;
  contact_id?: number;
  progress?: number;
};

/**
 * `curl -N $URL/events | while read line; do case $line in data:*) … esac; done`: collects the
 * JSON of every `data:` line, ignoring every other line (`id:`, `event:`, `: ping`, blanks).
 */
class LineWatcher {
  readonly events: DataLine[] = [];
  readonly #abort = new AbortController();
  #wake: () => void = () => {};
  #reading: Promise<void> = Promise.resolve();

  async start(url: string): Promise<void> {
    const res = await fetch(`${url}/events`, {
      headers: { Accept: "text/event-stream" },
      signal: this.#abort.signal,
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /^text\/event-stream/);
    const lines = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    this.#reading = (async () => {
      let rest = "";
      try {
        for (;;) {
          const { value, done } = await lines.read();
          if (done) return;
          const parts = (rest + value).split("\n");
          rest = parts.pop()!;
          for (const line of parts) {
            if (line.startsWith("data:")) this.events.push(JSON.parse(line.slice(5)));
          }
          this.#wake();
        }
      } catch { /* aborted by stop() */ }
    })();
  }

  /** The first event from index `from` on that matches, waiting up to `timeoutMs`. */
  async waitFor(pred: (e: DataLine) => boolean, from = 0, timeoutMs = 30_000): Promise<DataLine> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const hit = this.events.slice(from).find(pred);
      if (hit !== undefined) return hit;
      const left = deadline - Date.now();
      if (left <= 0) {
        throw new Error(`no matching event; saw ${JSON.stringify(this.events.slice(-10))}`);
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 500));
        this.#wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  }

  async stop(): Promise<void> {
    this.#abort.abort();
    await this.#reading;
  }
}

twoGatewaysTest({
  name: "the product's curl cookbook runs unchanged against two gateways, events read by line",
  gateways: ["factory-gw-01", "factory-gw-02"],
  async fn({ a: gw1, b: gw2 }) {
    const url1 = gw1.daemon.url;
    const url2 = gw2.daemon.url;
    const watch1 = new LineWatcher();
    const watch2 = new LineWatcher();
    await watch1.start(url1);
    await watch2.start(url2);
    try {
      // Health and status.
      const health = await (await fetch(`${url1}/health`)).json();
      assert.equal(health.status, "ok");
      for (const [url, name] of [[url1, "factory-gw-01"], [url2, "factory-gw-02"]]) {
        assert.match(await curlRpc(url, "get_config", [1, "addr"]) as string, /^[^@\s]+@\S+$/);
        assert.equal(await curlRpc(url, "get_config", [1, "displayname"]), name);
        const info = await curlRpc(url, "get_info", [1]) as Record<string, unknown>;
        for (const key of ["deltachat_core_version", "dbsize", "blobdir", "configured_addr"]) {
          assert.ok(key in info, `get_info has ${key}`);
        }
        assert.ok("n_msgs_in_db" in info);
        assert.equal(typeof await curlRpc(url, "get_connectivity", [1]), "number");
        assert.ok(Array.isArray(await curlRpc(url, "get_contact_ids", [1, 0, null])));
      }
      const addr2 = await curlRpc(url2, "get_config", [1, "addr"]) as string;

      // Invite on gw1, join on gw2, watch gw1's events for SecurejoinInviterProgress 1000.
      const link = await curlRpc(url1, "get_chat_securejoin_qr_code", [1, null]) as string;
      assert.match(link, /^OPENPGP4FPR:/);
      await curlRpc(url2, "secure_join", [1, link]);
      const joined = await watch1.waitFor((e) =>
        e.type === "SecurejoinInviterProgress" && e.progress === 1000
      );
      assert.equal(joined.account_id, 1);
      assert.equal(typeof joined.contact_id, "number");

      // Send a text: contact by address → chat → send_msg.
      const contactId = await curlRpc(url1, "lookup_contact_id_by_addr", [1, addr2]) as number;
      assert.equal(contactId, joined.contact_id);
      const chatId = await curlRpc(url1, "create_chat_by_contact_id", [1, contactId]) as number;
      const from1 = watch1.events.length;
      const msgId = await curlRpc(url1, "send_msg", [1, chatId, { text: "Hello from gw-01" }]);
      assert.equal(typeof msgId, "number");

      // gw2's watcher sees IncomingMsg; gw1's sees MsgDelivered for the sent id
      // (docs/product-compat.md#receipt-events).
      const incoming = await watch2.waitFor((e) => e.type === "IncomingMsg");
      assert.deepEqual(Object.keys(incoming).slice(0, 2), ["type", "account_id"]);
      assert.equal(incoming.account_id, 1);
      const delivered = await watch1.waitFor(
        (e) => e.type === "MsgDelivered" && e.msg_id === msgId,
        from1,
      );
      assert.equal(delivered.chat_id, chatId);

      // List chats, then messages, on the receiving side with the ids the event carried.
      const entries = await curlRpc(url2, "get_chatlist_entries", [1, null, null, null]);
      assert.ok((entries as number[]).includes(incoming.chat_id!), JSON.stringify(entries));
      const items = await curlRpc(url2, "get_chatlist_items_by_entries", [1, entries]) as Record<
        string,
        { name: string }
      >;
      assert.equal(items[String(incoming.chat_id)].name, "factory-gw-01");
      const ids = await curlRpc(url2, "get_message_ids", [1, incoming.chat_id, false, false]);
      assert.ok((ids as number[]).includes(incoming.msg_id!), JSON.stringify(ids));
      const msgs = await curlRpc(url2, "get_messages", [1, [incoming.msg_id]]) as Record<
        string,
        { text: string; chatId: number }
      >;
      assert.equal(msgs[String(incoming.msg_id)].text, "Hello from gw-01");

      // Every event either watcher saw names its type and account, in snake_case.
      for (const e of [...watch1.events, ...watch2.events]) {
        assert.equal(typeof e.type, "string", JSON.stringify(e));
        assert.equal(e.account_id, 1, JSON.stringify(e));
        for (const key of Object.keys(e)) assert.match(key, /^[a-z][a-z0-9_]*$/);
      }
    } finally {
      await watch1.stop();
      await watch2.stop();
    }
  },
});
