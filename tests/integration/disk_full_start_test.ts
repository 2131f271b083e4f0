/**
 * A start on a full disk (issue 18 §3, §5): B's data directory is on a small tmpfs. B stops, the
 * disk is filled, A sends while B is down, and B starts again on the full disk: it comes up,
 * `/health` says `disk: full`, the log says why, and the mail stays on the relay; it stops cleanly
 * and starts again while the disk is still full. Once the filler
 * is deleted (no restart) every text is in B's chat exactly once (by id and by text), `/health`
 * says `disk: ok` and `PRAGMA integrity_check` is ok. A first start (a new account) on a full disk
 * exits 1 with a message that says the disk is full and which step needs space.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { chatMessages, joinBySecureJoin } from "../_helpers/gateway_pair.ts";
import { GatewayPeer } from "../_helpers/gateway_peer.ts";
import { startRelay } from "../_helpers/relay.ts";
import { fillDisk, mountTmpfs, NO_TMPFS } from "../_helpers/tmpfs.ts";

const TOTAL = 12;

async function health(b: GatewayPeer): Promise<Record<string, unknown>> {
  return await (await fetch(`${b.daemon.url}/health`)).json();
}

Deno.test({
  name: "a start on a full disk comes up paused, says why, and receives once space is back",
  ignore: NO_TMPFS,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await using relay = await startRelay();
    await using fs = await mountTmpfs("disk-full-start", "32m");
    const dataDir = `${fs.path}/data`;
    const filler = `${fs.path}/filler`;
    let a: GatewayPeer | undefined;
    let b: GatewayPeer | undefined;
    try {
      a = await GatewayPeer.start("A", relay);
      b = await GatewayPeer.start("B", relay, { dataDir });
      const pair = await joinBySecureJoin(a, b);
      const before = (await chatMessages(b, pair.joinerChat)).length;
      await b.stop();
      b = undefined;
      fillDisk(filler);
      const texts = Array.from({ length: TOTAL }, (_, i) => `s-${String(i).padStart(2, "0")}`);
      for (const text of texts) await a.call("send_msg", 1, pair.inviterChat, { text });

      b = await GatewayPeer.start("B", relay, { dataDir });
      const h = await health(b);
      assert.equal(h.status, "ok");
      assert.equal(h.disk, "full");
      assert.match(b.daemon.output(), /the disk is full/);
      // Messaging is paused: nothing of the mail A sent is stored, and nothing is lost.
      await new Promise((r) => setTimeout(r, 3_000));
      assert.equal((await chatMessages(b, pair.joinerChat)).length, before);
      assert.doesNotMatch(b.daemon.output(), /quarantined|cannot rollback/);
      // A restart while the disk is still full: a clean stop, and it comes up again.
      const first = b.daemon;
      await b.stop();
      assert.equal(await first.exited, 0);
      assert.doesNotMatch(first.output(), /shutdown: stopping .* failed/);
      b = await GatewayPeer.start("B", relay, { dataDir });
      assert.equal((await health(b)).disk, "full");

      await Deno.remove(filler);
      await b.poll(() => health(b!), (x) => x.disk === "ok", 30_000);
      const chat = () => chatMessages(b!, pair.joinerChat);
      await b.poll(chat, (m) => m.length >= before + TOTAL, 120_000);
      await new Promise((r) => setTimeout(r, 2_000)); // late duplicates would show now
      const msgs = (await chat()).slice(before);
      assert.equal(new Set(msgs.map((m) => m.id)).size, msgs.length, "each message id once");
      for (const t of texts) {
        assert.equal(msgs.filter((m) => m.text === t).length, 1, `${t} exactly once`);
      }
      assert.equal(msgs.length, TOTAL);
      const db = new DatabaseSync(`${dataDir}/accounts/1/gateway.db`, { readOnly: true });
      try {
        const row = db.prepare("PRAGMA integrity_check").get() as { integrity_check: string };
        assert.equal(row.integrity_check, "ok");
      } finally {
        db.close();
      }
    } finally {
      await b?.stop();
      await a?.stop();
    }
  },
});

Deno.test({
  name: "a first start on a full disk exits 1 saying the disk is full and which step needs space",
  ignore: NO_TMPFS,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await using relay = await startRelay();
    await using fs = await mountTmpfs("disk-full-first", "4m");
    fillDisk(`${fs.path}/filler`);
    await assert.rejects(
      () => GatewayPeer.start("B", relay, { dataDir: `${fs.path}/data` }),
      (err: Error) => {
        assert.match(err.message, /exited early \(code 1\)/);
        assert.match(
          err.message,
          /edge-gateway: the disk is full \(.+\): the start step ".+" cannot go on without space/,
        );
        return true;
      },
    );
  },
});
