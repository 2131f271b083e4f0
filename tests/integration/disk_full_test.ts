/**
 * A full disk on the receiving gateway (issue 18 §3, §5): B's data directory is on a small tmpfs
 * that the test fills with a file while A sends a burst. While it is full: `/health` says
 * `disk: full`, a call that needs space answers -1 saying so, mail stays on the relay and the
 * IMAP connection is not rebuilt in a storm. After the file is deleted (no restart) every text is
 * in B's chat exactly once, `/health` says `disk: ok` and `PRAGMA integrity_check` is ok.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { chatMessages, joinBySecureJoin, mapLimit } from "../_helpers/gateway_pair.ts";
import { GatewayPeer, RpcError } from "../_helpers/gateway_peer.ts";
import { startRelay } from "../_helpers/relay.ts";
import { fillDisk, mountTmpfs, NO_TMPFS } from "../_helpers/tmpfs.ts";

const TOTAL = 60;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function health(b: GatewayPeer): Promise<Record<string, unknown>> {
  return await (await fetch(`${b.daemon.url}/health`)).json();
}

function connects(output: string): number {
  return output.split("\n").filter((l) => /\[imap\] connected/.test(l)).length;
}

Deno.test({
  name: "disk full during a receive burst: nothing lost, each text once, /health and -1 say why",
  ignore: NO_TMPFS,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await using relay = await startRelay();
    await using fs = await mountTmpfs("disk-full", "48m");
    const mnt = fs.path;
    const filler = `${mnt}/filler`;
    let a: GatewayPeer | undefined;
    let b: GatewayPeer | undefined;
    try {
      a = await GatewayPeer.start("A", relay);
      b = await GatewayPeer.start("B", relay, { dataDir: `${mnt}/data` });
      const pair = await joinBySecureJoin(a, b);
      const bChat = pair.joinerChat;
      const texts = Array.from({ length: TOTAL }, (_, i) => `d-${String(i).padStart(3, "0")}`);
      const count = async () => (await chatMessages(b!, bChat)).length;
      const sending = mapLimit(
        texts,
        4,
        (text) => a!.call<number>("send_msg", 1, pair.inviterChat, { text }),
      );
      const base = await count();
      await b.poll(count, (n) => n > base + 2, 60_000);
      const filled = fillDisk(filler);
      const fullAt = b.daemon.output().length;
      await sending;
      // The next mail (or the drain's retry) finds the disk full.
      await b.poll(() => health(b!), (h) => h.disk === "full", 60_000);
      const h = await health(b);
      assert.equal(h.status, "ok");
      let code = 0;
      let message = "";
      try {
        await b.call("send_msg", 1, bChat, { text: "x".repeat(200_000) });
      } catch (err) {
        assert.ok(err instanceof RpcError, String(err));
        code = err.code;
        message = err.message;
      }
      assert.equal(code, -1, message);
      assert.match(message, /disk is full/);
      await sleep(10_000);
      const during = b.daemon.output().slice(fullAt);
      assert.ok(connects(during) <= 2, `IMAP reconnected ${connects(during)} times while full`);
      assert.doesNotMatch(during, /quarantined|cannot rollback/);
      const stored = await count();
      assert.ok(stored < base + TOTAL, "the disk filled before the burst was in");

      await Deno.remove(filler);
      const all = await b.poll(count, (n) => n >= base + TOTAL, 120_000);
      await sleep(2_000);
      const after = await chatMessages(b, bChat);
      assert.equal(new Set(after.map((m) => m.id)).size, after.length, "each message id once");
      const msgs = after.map((m) => m.text);
      for (const t of texts) {
        assert.equal(msgs.filter((x) => x === t).length, 1, `${t} exactly once (${all} stored)`);
      }
      await b.poll(() => health(b!), (x) => x.disk === "ok", 30_000);
      const db = new DatabaseSync(`${mnt}/data/accounts/1/gateway.db`, { readOnly: true });
      try {
        const row = db.prepare("PRAGMA integrity_check").get() as { integrity_check: string };
        assert.equal(row.integrity_check, "ok");
        const q = db.prepare("SELECT count(*) AS n FROM quarantined_mails").get() as { n: number };
        assert.equal(q.n, 0);
      } finally {
        db.close();
      }
      console.log(`filled ${filled} bytes; ${stored - base}/${TOTAL} stored while full`);
    } finally {
      await b?.stop();
      await a?.stop();
    }
  },
});
