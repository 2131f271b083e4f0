/**
 * A disk that fills during secure_send_file and send_msg with a file (issue 18 §3, §5): B's data
 * directory (its files directory inside) is on a small tmpfs with less room left than the file
 * needs. Both calls answer -1 saying the disk is full and leave nothing half-written: no `.prv`,
 * no temporary file, no blob, no message. Once the filler is deleted (no restart) the same calls
 * work and A gets each message exactly once (by id and by text); `PRAGMA integrity_check` is ok.
 */
import assert from "node:assert/strict";
import { DatabaseSync } from "node:sqlite";
import { chatMessages, joinBySecureJoin } from "../_helpers/gateway_pair.ts";
import { GatewayPeer, RpcError } from "../_helpers/gateway_peer.ts";
import { testLicense } from "../_helpers/licensed.ts";
import { startRelay } from "../_helpers/relay.ts";
import { fillDisk, mountTmpfs, NO_TMPFS } from "../_helpers/tmpfs.ts";

const FILE_BYTES = 2 << 20;
/** Room left on the disk: less than the file's `.prv` (or its blob copy) needs. */
const LEFT_BYTES = 512 << 10;

function randomBytes(n: number): Uint8Array {
  const out = new Uint8Array(n);
  for (let at = 0; at < n; at += 65_536) crypto.getRandomValues(out.subarray(at, at + 65_536));
  return out;
}

async function refusal(call: Promise<unknown>): Promise<RpcError> {
  try {
    await call;
  } catch (err) {
    assert.ok(err instanceof RpcError, String(err));
    return err;
  }
  throw new Error("the call succeeded on a full disk");
}

function names(dir: string): string[] {
  return [...Deno.readDirSync(dir)].map((e) => e.name).sort();
}

Deno.test({
  name: "disk full during secure_send_file and send_msg: -1, nothing half-written, works after",
  ignore: NO_TMPFS,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn() {
    await using relay = await startRelay();
    await using license = await testLicense();
    await using fs = await mountTmpfs("disk-full-send", "48m");
    const dataDir = `${fs.path}/data`;
    const files = `${dataDir}/files`;
    const blobs = `${dataDir}/accounts/1/blobs`;
    const filler = `${fs.path}/filler`;
    let a: GatewayPeer | undefined;
    let b: GatewayPeer | undefined;
    try {
      a = await GatewayPeer.start("A", relay, { env: license.env });
      b = await GatewayPeer.start("B", relay, { dataDir, env: license.env });
      const pair = await joinBySecureJoin(a, b);
      const plan = `${files}/plan.bin`;
      await Deno.writeFile(plan, randomBytes(FILE_BYTES));
      const blobsBefore = names(blobs);
      const sentBefore = (await chatMessages(b, pair.joinerChat)).length;

      const filled = fillDisk(filler);
      await Deno.truncate(filler, filled - LEFT_BYTES);
      const protect = () =>
        b!.call<Record<string, unknown>>(
          "secure_send_file",
          1,
          pair.joinerChat,
          pair.inviterOnJoiner,
          plan,
          false,
          false,
          0,
        );
      const p = await refusal(protect());
      assert.equal(p.code, -1, p.message);
      assert.match(p.message, /disk is full/);
      assert.deepEqual(names(files), ["plan.bin"], "no .prv and no temporary file");
      const s = await refusal(
        b.call("send_msg", 1, pair.joinerChat, { file: plan, text: "plain-1" }),
      );
      assert.equal(s.code, -1, s.message);
      assert.match(s.message, /disk is full/);
      assert.deepEqual(names(blobs), blobsBefore, "no blob and no temporary file");
      assert.equal((await chatMessages(b, pair.joinerChat)).length, sentBefore, "no message");
      const h = await (await fetch(`${b.daemon.url}/health`)).json();
      assert.equal(h.disk, "full");

      await Deno.remove(filler);
      const r = await protect();
      assert.equal(r.encrypted_path, `${plan}.prv`);
      await b.call("send_msg", 1, pair.joinerChat, {
        file: r.encrypted_path,
        viewtype: "File",
        text: "protected-1",
      });
      await b.call("send_msg", 1, pair.joinerChat, { file: plan, text: "plain-1" });
      const texts = ["protected-1", "plain-1"];
      const received = () => chatMessages(a!, pair.inviterChat);
      await a.poll(
        received,
        (m) => texts.every((t) => m.some((x) => x.text === t)),
        60_000,
      );
      await new Promise((res) => setTimeout(res, 2_000)); // late duplicates would show now
      const got = (await received()).filter((m) => texts.includes(m.text));
      assert.equal(new Set(got.map((m) => m.id)).size, got.length, "each message id once");
      for (const t of texts) {
        assert.equal(got.filter((m) => m.text === t).length, 1, `${t} exactly once`);
      }
      await b.poll(
        async () => (await (await fetch(`${b!.daemon.url}/health`)).json()).disk,
        (d) => d === "ok",
        30_000,
      );
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
