/**
 * The direct path between two real gateways (issue 17 §3, docs/transfer.md#direct-path): the file
 * above the one-mail limit travels over QUIC on the test run's loopback, or falls back to relay
 * parts when UDP is dropped, when one side has `--p2p-listen off`, or after the receiver is
 * killed; a `.prv` travels as its ciphertext. The relay takes 256 KiB per mail and the file is
 * 2 MiB (above the 1 MiB below which files always take the relay).
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { DatabaseSync } from "node:sqlite";
import { DataDirLayout } from "../../src/constants.ts";
import { joinBySecureJoin } from "../_helpers/gateway_pair.ts";
import { GatewayPeer } from "../_helpers/gateway_peer.ts";
import { NO_RELAY, startRelay } from "../_helpers/relay.ts";
import { sh } from "../_helpers/netns.ts";
import { testLicense } from "../_helpers/licensed.ts";
import { TwoGateways, twoGatewaysTest } from "../_helpers/two_gateways.ts";

const LIMIT = 256 * 1024;
const SIZE = 2 * 1024 * 1024;
const WAIT_MS = 120_000;
/** The direct path on, on loopback (the test helper turns it off by default). */
const DIRECT_ON = { EDGE_P2P_LISTEN: "127.0.0.1:0" };
/** nftables needs root (the test run in its namespace is). */
const NO_NFT = Deno.uid() !== 0;

interface Msg {
  id: number;
  file: string | null;
}

type Event = Record<string, unknown>;

async function dataDirOf(peer: GatewayPeer): Promise<string> {
  const info = await peer.call<Record<string, string>>("get_info", 1);
  return info.blobdir.slice(0, -DataDirLayout.BLOB_DIR.length - 1);
}

/** Opens a gateway's database beside the running daemon (WAL; the daemon reads config fresh). */
async function withDb<T>(peer: GatewayPeer, fn: (db: DatabaseSync) => T): Promise<T> {
  const db = new DatabaseSync(`${await dataDirOf(peer)}/${DataDirLayout.DATABASE}`);
  try {
    db.exec("PRAGMA busy_timeout = 5000");
    return fn(db);
  } finally {
    db.close();
  }
}

async function setConfig(peer: GatewayPeer, values: Record<string, string>): Promise<void> {
  await withDb(peer, (db) => {
    for (const [k, v] of Object.entries(values)) {
      db.prepare(
        "INSERT INTO config (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
      ).run(k, v);
    }
  });
}

function sha256(b: Uint8Array): string {
  return createHash("sha256").update(b).digest("hex");
}

async function fileIn(peer: GatewayPeer, name: string): Promise<{ path: string; sha: string }> {
  const dir = `${await dataDirOf(peer)}/${DataDirLayout.FILES_DIR}`;
  await Deno.mkdir(dir, { recursive: true });
  const bytes = new Uint8Array(SIZE);
  for (let i = 0; i < SIZE; i += 65_536) crypto.getRandomValues(bytes.subarray(i, i + 65_536));
  const path = `${dir}/${name}`;
  await Deno.writeFile(path, bytes);
  return { path, sha: sha256(bytes) };
}

function ofType(peer: GatewayPeer, type: string, from: number): Event[] {
  return peer.events.slice(from).map((e) => e.event as Event).filter((e) => e.type === type);
}

/** The UDP port a gateway's direct path bound (its start log says it once). */
function p2pPort(peer: GatewayPeer): number {
  const m = peer.daemon.output().match(/direct path listening on UDP [^ ]+:(\d+)/g);
  assert.ok(m && m.length > 0, "the daemon logged its direct path port");
  return Number(m.at(-1)!.split(":").at(-1));
}

/** Adds an nftables table in the test's namespace; the returned function removes it. */
async function nftTable(name: string, chain: string): Promise<() => Promise<void>> {
  const child = new Deno.Command("nft", { args: ["-f", "-"], stdin: "piped", stderr: "piped" })
    .spawn();
  const w = child.stdin.getWriter();
  await w.write(
    new TextEncoder().encode(
      `table inet ${name} {\n chain in {\n  type filter hook input priority 0;\n  ${chain}\n }\n}\n`,
    ),
  );
  await w.close();
  const out = await child.output();
  if (!out.success) throw new Error(`nft: ${new TextDecoder().decode(out.stderr)}`);
  return async () => void await sh("nft", "delete", "table", "inet", name);
}

/**
 * Waits until B holds a quarter of the file from the direct path: whole parts among them are on
 * disk and recorded (the sink records a part before the bytes count as received).
 */
async function midTransfer(b: GatewayPeer, fromB: number): Promise<void> {
  await b.waitForEvent(
    (e) =>
      e.event.type === "TransferProgress" && e.event.path === "direct" &&
      (e.event.bytes as number) >= SIZE / 4 && (e.event.bytes as number) < SIZE,
    WAIT_MS,
    fromB,
  );
}

/** Joins A and B, tells both the low limit, sends a 2 MiB file A → B; the message ids. */
async function sendFile(gws: TwoGateways, name: string, before?: () => Promise<void>) {
  const { a, b } = gws;
  const pair = await joinBySecureJoin(a, b);
  await setConfig(a, { max_message_bytes: String(LIMIT) });
  await setConfig(b, { max_message_bytes: String(LIMIT) });
  const file = await fileIn(a, name);
  await before?.();
  const fromA = a.events.length, fromB = b.events.length;
  const sent = await a.call<number>("send_msg", 1, pair.inviterChat, { file: file.path });
  return { pair, file, sent, fromA, fromB };
}

/** B's messages with a file in its chat with A. */
async function fileMessages(peer: GatewayPeer, chatId: number): Promise<Msg[]> {
  const ids = await peer.call<number[]>("get_message_ids", 1, chatId, false, false);
  const all = await peer.call<Record<string, Msg>>("get_messages", 1, ids);
  return Object.values(all).filter((m) => m.file !== null && m.file !== "");
}

/** Waits for B's one message with the file; checks its bytes, then that no second one comes. */
async function receivedOnce(b: GatewayPeer, chatId: number, sha: string): Promise<void> {
  const got = await b.poll(() => fileMessages(b, chatId), (ms) => ms.length > 0, WAIT_MS);
  assert.equal(got.length, 1);
  assert.equal(sha256(await Deno.readFile(got[0].file!)), sha);
  await new Promise((r) => setTimeout(r, 2_000));
  assert.equal((await fileMessages(b, chatId)).length, 1, "no duplicate");
}

twoGatewaysTest({
  name: "a file above the one-mail limit travels over the direct path: identical, once, no parts",
  relay: { messageSizeLimit: LIMIT },
  gateways: [{ name: "A", env: DIRECT_ON }, { name: "B", env: DIRECT_ON }],
  async fn(gws) {
    const { a, b } = gws;
    const { file, sent, fromA, fromB } = await sendFile(gws, "direct.bin");
    const inc = await b.waitForEvent((e) => e.event.type === "IncomingMsg", WAIT_MS, fromB);
    const id = inc.event.msg_id as number;
    const m = (await b.call<Record<string, Msg>>("get_messages", 1, [id]))[id];
    assert.equal(sha256(await Deno.readFile(m.file!)), file.sha);
    await a.waitForEvent(
      (e) => e.event.type === "TransferDone" && e.event.msg_id === sent,
      60_000,
      fromA,
    );
    for (const [peer, from] of [[a, fromA], [b, fromB]] as const) {
      const done = ofType(peer, "TransferDone", from);
      assert.deepEqual(done.map((e) => [e.path, e.total]), [["direct", SIZE]]);
      const progress = ofType(peer, "TransferProgress", from);
      assert.ok(progress.length >= 1);
      assert.ok(progress.every((e) => e.path === "direct"), JSON.stringify(progress));
    }
    // No part mail: the sender queued none on the first pass and none was asked for.
    const row = await withDb(
      a,
      (db) =>
        db.prepare("SELECT next_part, resend, state FROM transfers WHERE msg_id = ?").get(sent),
    ) as { next_part: number; resend: string; state: string };
    assert.deepEqual([row.next_part, row.state], [0, "done"]);
    assert.ok(row.resend === "" || row.resend === "[]", row.resend);
    await new Promise((r) => setTimeout(r, 2_000));
    assert.equal(ofType(b, "IncomingMsg", fromB).length, 1);
    // The port is logged once; the endpoint closes with the rest at shutdown.
    assert.equal(a.daemon.output().match(/direct path listening on UDP/g)?.length, 1);
    assert.equal(await a.daemon.stop(), 0);
    assert.doesNotMatch(a.daemon.output(), /shutdown: stopping the direct path endpoint failed/);
  },
});

Deno.test({
  name: "a .prv travels over the direct path as its ciphertext: identical, once, then active",
  ignore: NO_RELAY,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await using license = await testLicense();
    const env = { ...license.env, ...DIRECT_ON };
    await using gws = await TwoGateways.start({ name: "A", env }, { name: "B", env }, {
      messageSizeLimit: LIMIT,
    });
    const { a, b } = gws;
    const pair = await joinBySecureJoin(a, b);
    await setConfig(a, { max_message_bytes: String(LIMIT) });
    await setConfig(b, { max_message_bytes: String(LIMIT) });
    const file = await fileIn(a, "plan.bin");
    const r = await a.call<Record<string, unknown>>(
      "secure_send_file",
      1,
      pair.inviterChat,
      pair.joinerOnInviter,
      file.path,
      false,
      false,
      0,
    );
    const prv = await Deno.readFile(r.encrypted_path as string);
    assert.ok(prv.byteLength > SIZE, "the .prv is above the direct path's 1 MiB");
    const fromA = a.events.length, fromB = b.events.length;
    const sent = await a.call<number>("send_msg", 1, pair.inviterChat, {
      file: r.encrypted_path,
      viewtype: "File",
      text: "the plan",
    });
    // While the file travels (the offer and answer alone take a mail round trip each way), the
    // owner does not call B `active`.
    const owner = () =>
      a.call<{ recipients: { state: string }[] }>("secure_get_file_status", 1, sent);
    assert.deepEqual((await owner()).recipients.map((s) => s.state), ["in_transfer"]);
    const inc = await b.waitForEvent((e) => e.event.type === "IncomingMsg", WAIT_MS, fromB);
    const id = inc.event.msg_id as number;
    const m = (await b.call<Record<string, Msg & { text: string }>>("get_messages", 1, [id]))[id];
    assert.equal(m.text, "the plan");
    assert.match(m.file!, /\.prv$/);
    assert.equal(sha256(await Deno.readFile(m.file!)), sha256(prv));
    await a.poll(owner, (st) => st.recipients[0]?.state === "active", 60_000);
    for (const [peer, from] of [[a, fromA], [b, fromB]] as const) {
      assert.deepEqual(ofType(peer, "TransferDone", from).map((e) => e.path), ["direct"]);
    }
    assert.equal((await a.call<Record<string, unknown>>("get_transfer", 1, sent)).path, "direct");
    const status = await b.call<Record<string, unknown>>("secure_get_file_status", 1, id);
    assert.deepEqual([status.state, status.role], ["active", "recipient"]);
    await new Promise((r) => setTimeout(r, 2_000));
    assert.equal(ofType(b, "IncomingMsg", fromB).length, 1);
  },
});

Deno.test({
  name: "a direct-path port that cannot be bound is a warning: the daemon runs, relay only",
  ignore: NO_RELAY,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await using relay = await startRelay({ filter: true });
    const taken = Deno.listenDatagram({ hostname: "127.0.0.1", port: 0, transport: "udp" });
    try {
      const port = (taken.addr as Deno.NetAddr).port;
      await using peer = await GatewayPeer.start("A", relay, {
        env: { EDGE_P2P_LISTEN: `127.0.0.1:${port}` },
      });
      await peer.call("get_info", 1); // it runs and answers
      assert.match(
        peer.daemon.output(),
        new RegExp(`WARN .*direct path off: cannot open UDP 127\\.0\\.0\\.1:${port}`),
      );
      assert.doesNotMatch(peer.daemon.output(), /direct path listening/);
    } finally {
      taken.close();
    }
  },
});

twoGatewaysTest({
  name: "UDP to the receiver dropped: no connection within the bound, relay parts carry the file",
  ignore: NO_NFT,
  relay: { messageSizeLimit: LIMIT },
  gateways: [{ name: "A", env: DIRECT_ON }, { name: "B", env: DIRECT_ON }],
  async fn(gws) {
    const { a, b } = gws;
    let unblock: (() => Promise<void>) | undefined;
    try {
      const { pair, file, fromB } = await sendFile(gws, "blocked.bin", async () => {
        unblock = await nftTable(
          `edgedrop${Deno.pid}`,
          `udp dport ${p2pPort(b)} drop`,
        );
      });
      await receivedOnce(b, pair.joinerChat, file.sha);
      const done = ofType(b, "TransferDone", fromB);
      assert.deepEqual(done.map((e) => e.path), ["relay"]);
      // The offer was answered, the connection never came up: the bound, not a decline.
      assert.match(
        a.daemon.output(),
        /direct path failed; relay parts take the transfer.*reason="connect_timeout"/,
      );
      assert.doesNotMatch(a.daemon.output(), /direct path not taken/);
    } finally {
      await unblock?.();
    }
  },
});

twoGatewaysTest({
  name: "a receiver with --p2p-listen off declines the offer at once: relay parts",
  relay: { messageSizeLimit: LIMIT },
  gateways: [{ name: "A", env: DIRECT_ON }, "B"],
  async fn(gws) {
    const { a, b } = gws;
    const { pair, file, fromB } = await sendFile(gws, "off.bin");
    await receivedOnce(b, pair.joinerChat, file.sha);
    assert.deepEqual(ofType(b, "TransferDone", fromB).map((e) => e.path), ["relay"]);
    assert.ok(ofType(b, "TransferProgress", fromB).every((e) => e.path === "relay"));
    // Declined by the receiver, not given up after the answer wait or the connect bound.
    assert.match(a.daemon.output(), /direct path not taken.*reason="off"/);
    assert.doesNotMatch(a.daemon.output(), /reason="no_answer"|reason="connect_timeout"/);
    assert.match(b.daemon.output(), /direct path off \(--p2p-listen off\)/);
  },
});

twoGatewaysTest({
  name: "SIGKILL of the receiver mid direct transfer: after restart it completes, once",
  ignore: NO_NFT,
  relay: { messageSizeLimit: LIMIT },
  gateways: [{ name: "A", env: DIRECT_ON }, { name: "B", env: DIRECT_ON, keepData: true }],
  async fn(gws) {
    let unthrottle: (() => Promise<void>) | undefined;
    try {
      const { pair, file, fromB } = await sendFile(gws, "killed.bin", async () => {
        // About 256 KiB/s into B's port, so that the kill lands mid-transfer.
        unthrottle = await nftTable(
          `edgeslow${Deno.pid}`,
          `udp dport ${p2pPort(gws.b)} limit rate over 256 kbytes/second drop`,
        );
      });
      await midTransfer(gws.b, fromB);
      await gws.b.daemon.stop("SIGKILL");
      await gws.b.stop();
      await unthrottle?.();
      unthrottle = undefined;
      const b = await gws.restart("b");
      // The restarted receiver asks for what it misses after 2 s instead of 5 minutes.
      await setConfig(b, { transfer_request_after_ms: "2000" });
      await receivedOnce(b, pair.joinerChat, file.sha);
      // The direct run was cut; relay parts finished it from what B had kept: B asked for fewer
      // parts than the file has.
      const asked = [...gws.a.daemon.output().matchAll(/parts asked for again .* parts=(\d+)/g)];
      assert.ok(asked.length > 0, "B asked for its missing parts");
      const parts = Math.ceil(SIZE / (Math.floor((LIMIT - 32 * 1024) / 1.37 / 1024) * 1024));
      assert.ok(asked.every((m) => Number(m[1]) < parts), asked.map((m) => m[0]).join("; "));
    } finally {
      await unthrottle?.();
    }
  },
});

twoGatewaysTest({
  name: "SIGKILL of the sender mid direct transfer: after restart it completes, once",
  ignore: NO_NFT,
  relay: { messageSizeLimit: LIMIT },
  gateways: [{ name: "A", env: DIRECT_ON, keepData: true }, { name: "B", env: DIRECT_ON }],
  async fn(gws) {
    let unthrottle: (() => Promise<void>) | undefined;
    try {
      const { pair, file, fromB } = await sendFile(gws, "sender-killed.bin", async () => {
        unthrottle = await nftTable(
          `edgeslow${Deno.pid}`,
          `udp dport ${p2pPort(gws.b)} limit rate over 256 kbytes/second drop`,
        );
      });
      await midTransfer(gws.b, fromB);
      await gws.a.daemon.stop("SIGKILL");
      await gws.a.stop();
      await unthrottle?.();
      unthrottle = undefined;
      await gws.restart("a");
      await setConfig(gws.b, { transfer_request_after_ms: "2000" });
      await receivedOnce(gws.b, pair.joinerChat, file.sha);
      assert.equal(ofType(gws.b, "TransferFailed", fromB).length, 0);
      // The restarted sender offered again; B went on from the parts it had (direct or parts).
      const resumed = [
        ...gws.b.daemon.output().matchAll(/direct offer accepted .*resumeFrom=(\d+)/g),
      ];
      const asked = gws.a.daemon.output().match(/parts asked for again .* parts=(\d+)/);
      assert.ok(
        Number(resumed.at(-1)?.[1] ?? 0) > 0 || asked !== null,
        "resumed from the verified parts",
      );
    } finally {
      await unthrottle?.();
    }
  },
});
