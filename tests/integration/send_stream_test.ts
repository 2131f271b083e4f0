/**
 * A multi-MB file sent by a real gateway through the project's relay: rendered as a stream into
 * the spool, sent from it, received by the peer gateway byte for byte (SHA-256 equal); the spool
 * file is gone once the relay accepted the mail, and files no outbox row names (what a crash
 * between writing and committing leaves) are removed at the next start. A sender killed right
 * after send_msg accepted a large file still delivers it, once, after its restart.
 */
import assert from "node:assert/strict";
import { joinBySecureJoin } from "../_helpers/gateway_pair.ts";
import { twoGatewaysTest } from "../_helpers/two_gateways.ts";

const FILE_BYTES = 6 * 1024 * 1024 + 7;

async function sha256(bytes: Uint8Array): Promise<string> {
  return Array.from(new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as BufferSource)))
    .map((b) => b.toString(16).padStart(2, "0")).join("");
}

async function listDir(dir: string): Promise<string[]> {
  const out: string[] = [];
  try {
    for await (const e of Deno.readDir(dir)) out.push(e.name);
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  return out.sort();
}

twoGatewaysTest({
  name: "a multi-MB file streams through the spool and arrives whole; the spool empties",
  gateways: [{ name: "A", keepData: true }, "B"],
  async fn(gws) {
    let a = gws.a;
    const { b } = gws;
    const pair = await joinBySecureJoin(b, a);
    const info = await a.call<Record<string, string>>("get_info", 1);
    const spoolDir = info.blobdir.replace(/\/blobs$/, "/spool");

    const bytes = new Uint8Array(FILE_BYTES);
    for (let i = 0; i < bytes.length; i += 65_536) {
      crypto.getRandomValues(bytes.subarray(i, i + 65_536));
    }
    const files = `${info.blobdir.replace(/\/accounts\/1\/blobs$/, "")}/files`;
    await Deno.mkdir(files, { recursive: true });
    await Deno.writeFile(`${files}/firmware.bin`, bytes);
    const fromB = b.events.length;
    const id = await a.call<number>("send_msg", 1, pair.joinerChat, {
      text: "firmware",
      file: `${files}/firmware.bin`,
    });
    const got = await b.waitForEvent((e) => e.event.type === "IncomingMsg", 120_000, fromB);
    const msg = (await b.call<Record<string, { file: string | null; text: string }>>(
      "get_messages",
      1,
      [got.event.msg_id],
    ))[String(got.event.msg_id)];
    assert.equal(msg.text, "firmware");
    assert.equal(await sha256(await Deno.readFile(msg.file!)), await sha256(bytes));
    await a.poll(
      async () => (await a.call<{ state: number }>("get_message", 1, id)).state,
      (s) => s >= 20 && s !== 24,
    );
    assert.deepEqual(await a.poll(() => listDir(spoolDir), (l) => l.length === 0), []);

    // What a crash between writing a spool file and committing its row leaves: swept at start.
    await Deno.mkdir(spoolDir, { recursive: true });
    await Deno.writeTextFile(`${spoolDir}/${"ab".repeat(16)}.eml`, "orphan");
    await Deno.writeTextFile(`${spoolDir}/${"cd".repeat(16)}.tmp`, "cut short");
    await a.stop();
    a = await gws.restart("a");
    assert.deepEqual(await listDir(spoolDir), []);
  },
});

twoGatewaysTest({
  name: "SIGKILL right after send_msg accepted a large file: delivered once after restart",
  gateways: [{ name: "A", keepData: true }, "B"],
  async fn(gws) {
    let a = gws.a;
    const { b } = gws;
    const pair = await joinBySecureJoin(b, a);
    const info = await a.call<Record<string, string>>("get_info", 1);
    const files = `${info.blobdir.replace(/\/accounts\/1\/blobs$/, "")}/files`;
    const bytes = new Uint8Array(2 * 1024 * 1024 + 3);
    for (let i = 0; i < bytes.length; i += 65_536) {
      crypto.getRandomValues(bytes.subarray(i, i + 65_536));
    }
    await Deno.mkdir(files, { recursive: true });
    await Deno.writeFile(`${files}/log.tar`, bytes);
    const fromB = b.events.length;
    await a.call<number>("send_msg", 1, pair.joinerChat, { text: "", file: `${files}/log.tar` });
    await a.daemon.stop("SIGKILL"); // the mail is committed; it may or may not have gone out
    await a.stop();
    a = await gws.restart("a");
    const got = await b.waitForEvent((e) => e.event.type === "IncomingMsg", 120_000, fromB);
    const msg = (await b.call<Record<string, { file: string | null }>>("get_messages", 1, [
      got.event.msg_id,
    ]))[String(got.event.msg_id)];
    assert.equal(await sha256(await Deno.readFile(msg.file!)), await sha256(bytes));
    await new Promise((r) => setTimeout(r, 3_000)); // a second copy would arrive by now
    const ids = await b.call<number[]>("get_message_ids", 1, pair.inviterChat, false, false);
    const withFile = await b.call<Record<string, { file: string | null }>>("get_messages", 1, ids);
    assert.equal(Object.values(withFile).filter((m) => m.file !== null).length, 1, "once");
  },
});
