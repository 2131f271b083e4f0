/**
 * Protected files end to end (issue 11 §5): real daemons on the real relay, licensed by the
 * project's license server. A protects a file for B and sends it; B streams it through the
 * viewer API (type, bytes, Range), cannot forward it, loses it on revoke (a running stream
 * ends); after a restart B asks A again and stays `requested` while A is offline; a copy of B's
 * data dir on another machine (another /etc/machine-id) cannot use B's stored share and asks A. Plaintext never reaches
 * B's disk. A Delta Chat peer gets a .prv as a plain attachment and no PDU as text. B forwards a
 * file that allows it to C, whom A does not know: C's grant comes from A, who can revoke C alone.
 */
import assert from "node:assert/strict";
import { deltaChatInstalled, DeltaChatPeer } from "../_helpers/deltachat_peer.ts";
import { joinBySecureJoin } from "../_helpers/gateway_pair.ts";
import { spawnDaemon } from "../_helpers/daemon.ts";
import { GatewayPeer, RpcError } from "../_helpers/gateway_peer.ts";
import { testLicense } from "../_helpers/licensed.ts";
import { NO_RELAY, startRelay } from "../_helpers/relay.ts";
import { makeTempDir } from "../_helpers/temp.ts";
import { pngBytes } from "../viewer/_fixtures.ts";

interface Msg {
  id: number;
  chatId: number;
  text: string;
  file: string | null;
  fileBytes: number;
}

// Random per run: a fixed marker would also be found in this file when the checkout is under /tmp.
const MARKER = new TextEncoder().encode(`PLAINTEXT-MARKER-${crypto.randomUUID()}`);

/** A PNG-looking file of `size` bytes with the marker repeated through it. */
function secretPng(size: number): Uint8Array {
  const b = pngBytes(size);
  for (let at = 4096; at + MARKER.length < size; at += 50_000) b.set(MARKER, at);
  return b;
}

/** Whether `needle` occurs in `hay`. */
function contains(hay: Uint8Array, needle: Uint8Array): boolean {
  const first = needle[0];
  for (
    let i = hay.indexOf(first);
    i >= 0 && i + needle.length <= hay.length;
    i = hay.indexOf(first, i + 1)
  ) {
    let j = 1;
    while (j < needle.length && hay[i + j] === needle[j]) j++;
    if (j === needle.length) return true;
  }
  return false;
}

/** Every regular file under `dir` (skipping `skip`) that contains the marker. */
async function filesWithMarker(dir: string, skip: readonly string[]): Promise<string[]> {
  const hits: string[] = [];
  const walk = async (d: string) => {
    let entries: Deno.DirEntry[];
    try {
      entries = await Array.fromAsync(Deno.readDir(d));
    } catch {
      return;
    }
    for (const e of entries) {
      const path = `${d}/${e.name}`;
      if (skip.some((s) => path === s || path.startsWith(`${s}/`))) continue;
      if (e.isDirectory) await walk(path);
      else if (e.isFile) {
        try {
          if (contains(await Deno.readFile(path), MARKER)) hits.push(path);
        } catch { /* vanished or unreadable */ }
      }
    }
  };
  await walk(dir);
  return hits;
}

async function bearer(peer: GatewayPeer, dataDir: string): Promise<string> {
  const fingerprint = (await Deno.readTextFile(`${dataDir}/device-fingerprint`)).trim();
  const res = await fetch(`${peer.daemon.url}/auth`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ device_fingerprint: fingerprint }),
  });
  assert.equal(res.status, 200);
  return (await res.json()).token;
}

function stream(peer: GatewayPeer, token: string, msgId: number, range?: string) {
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (range) headers.range = range;
  return fetch(`${peer.daemon.url}/stream/${msgId}`, { headers });
}

async function rpcError(peer: GatewayPeer, method: string, ...params: unknown[]) {
  const body = await peer.daemon.rpc(method, params);
  return (body as { error: { code: number; message: string } }).error;
}

Deno.test({
  name: "A → B protected file: stream, Range, forward refused, revoke, restart, owner offline",
  ignore: NO_RELAY,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn(t) {
    await using relay = await startRelay();
    await using license = await testLicense();
    await using tmp = await makeTempDir("prv-int");
    const aData = `${tmp.path}/a`;
    const bData = `${tmp.path}/b`;
    let a = await GatewayPeer.start("alice", relay, { dataDir: aData, env: license.env });
    let b = await GatewayPeer.start("bob", relay, { dataDir: bData, env: license.env });
    try {
      const pair = await joinBySecureJoin(a, b);
      // Larger than loopback socket buffers hold for a reader that pauses (and small enough for
      // the relay's 30 MiB limit after two base64 layers), so a stream still runs at the revoke.
      const bytes = secretPng(12 * 1024 * 1024);
      await Deno.writeFile(`${aData}/files/plan.png`, bytes);
      let bobMsg = 0;
      let fileId = 0;

      await t.step("secure_send_file + send_msg: B receives a .prv; events on both", async () => {
        const r = await a.call<Record<string, unknown>>(
          "privitty_send_file",
          1,
          pair.inviterChat,
          pair.joinerOnInviter,
          `${aData}/files/plan.png`,
          false,
          false,
          0,
        );
        assert.equal(r.encrypted_path, `${aData}/files/plan.png.prv`);
        fileId = r.file_id as number;
        const from = b.events.length;
        const aFrom = a.events.length;
        const sent = await a.call<number>("send_msg", 1, pair.inviterChat, {
          file: r.encrypted_path,
          viewtype: "File",
          text: "the plan",
        });
        await a.waitForEvent(
          (e) => e.event.type === "PrivittyFileEncrypted" && e.event.msg_id === sent,
          10_000,
          aFrom,
        );
        const inc = await b.waitForEvent((e) => e.event.type === "IncomingMsg", 60_000, from);
        bobMsg = inc.event.msg_id as number;
        const m = (await b.call<Record<string, Msg>>("get_messages", 1, [bobMsg]))[bobMsg];
        assert.equal(m.text, "the plan");
        assert.match(m.file!, /\.prv$/);
        assert.equal(await a.call("secure_get_file_id_by_path", 1, r.encrypted_path), fileId);
        const ownMsg = (await a.call<Record<string, Msg>>("get_messages", 1, [sent]))[sent];
        assert.equal(await a.call("secure_get_file_id_by_path", 1, ownMsg.file), fileId);
        const status = await b.call<Record<string, unknown>>("secure_get_file_status", 1, bobMsg);
        assert.deepEqual(
          [status.state, status.role, status.allow_download, status.allow_forward],
          ["active", "recipient", false, false],
        );
      });

      await t.step("B streams identical bytes with the right type; Range → 206", async () => {
        const token = await bearer(b, bData);
        const res = await stream(b, token, bobMsg);
        assert.equal(res.status, 200);
        assert.equal(res.headers.get("content-type"), "image/png");
        assert.equal(res.headers.get("content-length"), String(bytes.length));
        assert.equal(res.headers.get("x-prv-allow-download"), "false");
        assert.match(res.headers.get("content-disposition")!, /^inline/);
        assert.deepEqual(new Uint8Array(await res.arrayBuffer()), bytes);
        const tail = await stream(b, token, bobMsg, `bytes=${bytes.length - 1_000_000}-`);
        assert.equal(tail.status, 206);
        assert.deepEqual(
          new Uint8Array(await tail.arrayBuffer()),
          bytes.slice(bytes.length - 1_000_000),
        );
        await b.waitForEvent((e) => e.event.type === "PrivittyFileDecrypted", 5_000);
      });

      await t.step(
        "CLI view: stdout gets the bytes; --out is refused (allow_download=false)",
        async () => {
          const cli = (...args: string[]) =>
            new Deno.Command(Deno.execPath(), {
              args: [
                "run",
                "--allow-net",
                "--allow-env=EDGE_URL",
                `--allow-read=${bData}`,
                `--allow-write=${tmp.path}`,
                `${new URL("../../main.ts", import.meta.url).pathname}`,
                "--url",
                b.daemon.url,
                "--accounts",
                bData,
                ...args,
              ],
              stdout: "piped",
              stderr: "piped",
              env: { NO_COLOR: "1" },
            }).output();
          const shown = await cli("view", String(bobMsg));
          assert.equal(shown.code, 0, new TextDecoder().decode(shown.stderr));
          assert.deepEqual(shown.stdout, bytes);
          const saved = await cli("view", String(bobMsg), "--out", `${tmp.path}/saved.png`);
          assert.equal(saved.code, 1);
          assert.match(new TextDecoder().decode(saved.stderr), /did not allow downloads/);
          await assert.rejects(() => Deno.stat(`${tmp.path}/saved.png`), Deno.errors.NotFound);
        },
      );

      await t.step("plaintext never reached B's data dir nor the temp dir", async () => {
        const tmpBase = Deno.env.get("TMPDIR") || "/tmp";
        const hits = [
          ...await filesWithMarker(bData, []),
          ...await filesWithMarker(tmpBase, [aData, tmp.path.startsWith(tmpBase) ? aData : ""]),
        ];
        assert.deepEqual(hits, []);
        assert.ok(
          (await filesWithMarker(aData, [])).length > 0,
          "the scan finds the marker where it is (A's plaintext)",
        );
      });

      await t.step("B's forward of the file is refused, naming the rule", async () => {
        const m = (await b.call<Record<string, Msg>>("get_messages", 1, [bobMsg]))[bobMsg];
        const err = await rpcError(b, "send_msg", 1, pair.joinerChat, { file: m.file });
        assert.equal(err.code, -1);
        assert.match(err.message, /may not be forwarded.*allow_forward=false/);
      });

      await t.step(
        "B restarted → requested; A offline → stays requested with a reason",
        async () => {
          await b.stop();
          await a.stop();
          b = await GatewayPeer.start("bob", relay, { dataDir: bData, env: license.env });
          const token = await bearer(b, bData);
          const first = await stream(b, token, bobMsg);
          assert.equal(first.status, 403);
          const body = await first.json();
          assert.equal(body.state, "requested");
          await new Promise((r) => setTimeout(r, 2_000));
          const status = await b.call<Record<string, unknown>>("secure_get_file_status", 1, bobMsg);
          assert.equal(status.state, "requested");
          assert.match(status.reason as string, /asked the owner.*no grant has arrived yet/);
        },
      );

      await t.step("A back online grants: B active again, bytes identical", async () => {
        const from = b.events.length;
        a = await GatewayPeer.start("alice", relay, { dataDir: aData, env: license.env });
        await b.waitForEvent((e) => e.event.type === "PrivittyFileAccessChanged", 60_000, from);
        const token = await bearer(b, bData);
        const res = await stream(b, token, bobMsg);
        assert.equal(res.status, 200);
        assert.deepEqual(new Uint8Array(await res.arrayBuffer()), bytes);
      });

      await t.step("a copy of B's data dir on another machine asks A again", async () => {
        await b.stop();
        const copy = `${tmp.path}/b-copy`;
        const cp = await new Deno.Command("cp", { args: ["-a", bData, copy] }).output();
        assert.equal(cp.code, 0);
        const machineId = `${tmp.path}/other-machine-id`;
        await Deno.writeTextFile(machineId, "0123456789abcdef0123456789abcdef\n");
        await using c = spawnDaemon({
          relay,
          dataDir: copy,
          env: license.env,
          machineIdFile: machineId,
        });
        await c.waitHealthy();
        const fingerprint = (await Deno.readTextFile(`${copy}/device-fingerprint`)).trim();
        const bFingerprint = (await Deno.readTextFile(`${bData}/device-fingerprint`)).trim();
        assert.notEqual(fingerprint, bFingerprint, "another device");
        const auth = await fetch(`${c.url}/auth`, {
          method: "POST",
          body: JSON.stringify({ device_fingerprint: fingerprint }),
        });
        const token = (await auth.json()).token;
        const res = await fetch(`${c.url}/stream/${bobMsg}`, {
          headers: { authorization: `Bearer ${token}` },
        });
        // The S1 stored on B's machine does not unwrap here (docs/identity.md): the copy holds
        // none and asks the owner, whose gateway decides by its rules.
        assert.equal(res.status, 403);
        const body = await res.json();
        assert.equal(body.state, "requested");
        assert.match(c.output(), /this installation moved to another machine/);
        assert.equal(await c.stop(), 0);
        // B again, on its own machine: it asks A, and A grants.
        b = await GatewayPeer.start("bob", relay, { dataDir: bData, env: license.env });
        const again = await stream(b, await bearer(b, bData), bobMsg);
        if (again.status !== 200) { // the grant A gave the copy may reach B first: then 200
          assert.equal(again.status, 403);
          assert.equal((await again.json()).state, "requested");
        } else await again.body?.cancel();
        await a.poll(
          async () => (await b.call<{ state: string }>("secure_get_file_status", 1, bobMsg)).state,
          (s) => s === "active",
          60_000,
        );
      });

      await t.step("A revokes: a running stream ends, B's next open is 403 revoked", async () => {
        const token = await bearer(b, bData);
        // A raw connection that reads a little, then pauses: the stream is running meanwhile.
        const conn = await Deno.connect({
          hostname: "127.0.0.1",
          port: new URL(b.daemon.url).port ? Number(new URL(b.daemon.url).port) : 80,
        });
        await conn.write(new TextEncoder().encode(
          `GET /stream/${bobMsg} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\n` +
            "Connection: close\r\n\r\n",
        ));
        const buf = new Uint8Array(65_536);
        let received = (await conn.read(buf)) ?? 0;
        assert.match(new TextDecoder().decode(buf.subarray(0, 12)), /^HTTP\/1\.1 200/);
        const from = b.events.length;
        await a.call(
          "privitty_revoke_file_access",
          1,
          pair.inviterChat,
          fileId,
          pair.joinerOnInviter,
        );
        await b.waitForEvent((e) => e.event.type === "PrivittyFileAccessRevoked", 60_000, from);
        for (;;) {
          const n = await conn.read(buf).catch(() => null);
          if (n === null) break;
          received += n;
        }
        conn.close();
        assert.ok(received < bytes.length, `the stream ended early (${received} bytes)`);
        const after = await stream(b, token, bobMsg);
        assert.equal(after.status, 403);
        assert.equal((await after.json()).state, "revoked");
        const log = b.daemon.output();
        assert.match(log, /access revoked by the owner file_id=\d+ streams_ended=1/);
      });

      await t.step("a tampered .prv answers 500", async () => {
        const m = await a.call<Record<string, Msg>>("get_messages", 1, [
          (await a.call<number[]>("get_message_ids", 1, pair.inviterChat, false, false)).at(-1)!,
        ]);
        const own = Object.values(m)[0];
        const blob = await Deno.readFile(own.file!);
        blob[5000] ^= 0x40;
        await Deno.writeFile(own.file!, blob);
        const token = await bearer(a, aData);
        const res = await stream(a, token, own.id);
        assert.equal(res.status, 500);
        assert.deepEqual(await res.json(), { error: "decryption failed" });
      });
    } finally {
      await a.stop();
      await b.stop();
    }
  },
});

Deno.test({
  name: "a .prv sent to a Delta Chat peer arrives as a plain attachment; no PDU shows as text",
  ignore: NO_RELAY || !deltaChatInstalled(),
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await using relay = await startRelay({ filter: true });
    await using license = await testLicense();
    await using gw = await GatewayPeer.start("Edge GW", relay, { env: license.env });
    await using dc = await DeltaChatPeer.start("dcpeer", relay, { displayName: "Dora" });
    const link = await gw.call<string>("get_chat_securejoin_qr_code", 1, null);
    const dcChat = await dc.call<number>("secure_join", dc.accountId, link);
    const done = await gw.waitForEvent((e) =>
      e.event.type === "SecurejoinInviterProgress" && e.event.progress === 1000
    );
    const gwChat = done.event.chat_id as number;
    const dcOnGw = done.event.contact_id as number;
    const files = `${gw.dir.path}/data/files`;
    await Deno.writeFile(`${files}/plan.png`, secretPng(100_000));
    const r = await gw.call<{ encrypted_path: string; file_id: number }>(
      "secure_send_file",
      1,
      gwChat,
      dcOnGw,
      `${files}/plan.png`,
      false,
      false,
      0,
    );
    let from = dc.events.length;
    await gw.call("send_msg", 1, gwChat, { file: r.encrypted_path, viewtype: "File" });
    const inc = await dc.waitForEvent((e) => e.event.kind === "IncomingMsg", 60_000, from);
    const m = await dc.call<{ text: string; fileName: string; viewType: string; file: string }>(
      "get_message",
      dc.accountId,
      inc.event.msgId,
    );
    assert.deepEqual([m.text, m.fileName, m.viewType], ["", "plan.png.prv", "File"]);
    assert.deepEqual(await Deno.readFile(m.file), await Deno.readFile(r.encrypted_path));
    // A revoke (a hidden PDU mail) and then a text: Delta Chat shows only the text.
    from = dc.events.length;
    await gw.call("secure_revoke_file_access", 1, gwChat, r.file_id, dcOnGw);
    await gw.call("send_msg", 1, gwChat, { text: "after the revoke" });
    const text = await dc.waitForEvent((e) => e.event.kind === "IncomingMsg", 60_000, from);
    const ids = await dc.call<number[]>("get_message_ids", dc.accountId, dcChat, false, false);
    const texts: string[] = [];
    for (const id of ids) {
      const msg = await dc.call<{ text: string; isInfo: boolean; fileName: string | null }>(
        "get_message",
        dc.accountId,
        id,
      );
      if (!msg.isInfo) texts.push(msg.fileName ?? msg.text);
    }
    assert.deepEqual(texts, ["plan.png.prv", "after the revoke"]);
    assert.equal(text.event.msgId, ids.at(-1));
    for (const t of texts) assert.doesNotMatch(t, /Edge-Prv|file_pdu|eyJ2Ijox/);
  },
});

Deno.test({
  name: "three gateways: a group file, a share per member, revoking one keeps the other",
  ignore: NO_RELAY,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await using relay = await startRelay();
    await using license = await testLicense();
    await using a = await GatewayPeer.start("alice", relay, { env: license.env });
    await using b = await GatewayPeer.start("bob", relay, { env: license.env });
    await using c = await GatewayPeer.start("carol", relay, { env: license.env });
    const ab = await joinBySecureJoin(a, b);
    const ac = await joinBySecureJoin(a, c);
    const group = await a.call<number>("create_group_chat", 1, "Plans", false);
    await a.call("add_contact_to_chat", 1, group, ab.joinerOnInviter);
    await a.call("add_contact_to_chat", 1, group, ac.joinerOnInviter);
    const files = `${a.dir.path}/data/files`;
    const bytes = secretPng(300_000);
    await Deno.writeFile(`${files}/plan.png`, bytes);
    const oneToOne = await rpcError(
      a,
      "secure_send_group_file",
      1,
      ab.inviterChat,
      `${files}/plan.png`,
      true,
      false,
      0,
    );
    assert.match(oneToOne.message, /is not a group chat/);
    const r = await a.call<{ encrypted_path: string; file_id: number }>(
      "privitty_send_group_file",
      1,
      group,
      `${files}/plan.png`,
      true,
      false,
      0,
    );
    const [bf, cf] = [b.events.length, c.events.length];
    await a.call("send_msg", 1, group, { file: r.encrypted_path, viewtype: "File" });
    const inB = await b.waitForEvent((e) => e.event.type === "IncomingMsg", 60_000, bf);
    const inC = await c.waitForEvent((e) => e.event.type === "IncomingMsg", 60_000, cf);
    const open = async (peer: GatewayPeer, msgId: number) => {
      const token = await bearer(peer, `${peer.dir.path}/data`);
      return await stream(peer, token, msgId);
    };
    for (const [peer, inc] of [[b, inB], [c, inC]] as const) {
      const msgId = inc.event.msg_id as number;
      // The otk_pdu and first grant come in a mail of their own: wait for the state to be active.
      await peer.poll(
        async () => (await peer.call<{ state: string }>("secure_get_file_status", 1, msgId)).state,
        (s) => s === "active",
        60_000,
      );
      const res = await open(peer, msgId);
      assert.equal(res.status, 200, peer.name);
      assert.deepEqual(new Uint8Array(await res.arrayBuffer()), bytes, peer.name);
    }
    await a.call("secure_revoke_file_access", 1, group, r.file_id, ab.joinerOnInviter);
    const bMsg = inB.event.msg_id as number;
    await b.poll(
      async () => (await b.call<{ state: string }>("secure_get_file_status", 1, bMsg)).state,
      (s) => s === "revoked",
      60_000,
    );
    assert.equal((await open(b, bMsg)).status, 403);
    const still = await open(c, inC.event.msg_id as number);
    assert.equal(still.status, 200, "Carol keeps her access");
    await still.body?.cancel();
  },
});

Deno.test({
  name: "three gateways: B forwards to C (unknown to A); A grants C, then revokes C alone",
  ignore: NO_RELAY,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await using relay = await startRelay();
    await using license = await testLicense();
    await using a = await GatewayPeer.start("alice", relay, { env: license.env });
    await using b = await GatewayPeer.start("bob", relay, { env: license.env });
    await using c = await GatewayPeer.start("carol", relay, { env: license.env });
    const ab = await joinBySecureJoin(a, b);
    const bc = await joinBySecureJoin(b, c);
    const files = `${a.dir.path}/data/files`;
    const bytes = secretPng(300_000);
    await Deno.writeFile(`${files}/plan.png`, bytes);
    const r = await a.call<{ encrypted_path: string; file_id: number }>(
      "secure_send_file",
      1,
      ab.inviterChat,
      ab.joinerOnInviter,
      `${files}/plan.png`,
      false,
      true,
      0,
    );
    const bf = b.events.length;
    const aliceMsg = await a.call<number>("send_msg", 1, ab.inviterChat, {
      file: r.encrypted_path,
      viewtype: "File",
    });
    const inB = await b.waitForEvent((e) => e.event.type === "IncomingMsg", 60_000, bf);
    const bMsg = inB.event.msg_id as number;
    const bobCopy = (await b.call<Record<string, Msg>>("get_messages", 1, [bMsg]))[bMsg];

    const cf = c.events.length;
    await b.call("send_msg", 1, bc.inviterChat, { file: bobCopy.file, viewtype: "File" });
    const inC = await c.waitForEvent((e) => e.event.type === "IncomingMsg", 60_000, cf);
    const cMsg = inC.event.msg_id as number;
    const status = (peer: GatewayPeer, msgId: number) =>
      peer.call<{ state: string; allow_forward: boolean }>("secure_get_file_status", 1, msgId);
    assert.equal((await status(c, cMsg)).state, "requested");
    const open = async (peer: GatewayPeer, msgId: number) =>
      await stream(peer, await bearer(peer, `${peer.dir.path}/data`), msgId);
    const first = await open(c, cMsg);
    assert.equal(first.status, 403, "the first open asks the owner");
    assert.equal((await first.json()).state, "requested");
    await c.poll(async () => (await status(c, cMsg)).state, (s) => s === "active", 60_000);
    const res = await open(c, cMsg);
    assert.equal(res.status, 200);
    assert.deepEqual(new Uint8Array(await res.arrayBuffer()), bytes);

    const owner = await a.call<{ recipients: { contact_id: number; forwarded_by: number }[] }>(
      "secure_get_file_status",
      1,
      aliceMsg,
    );
    const carol = owner.recipients.find((x) => x.forwarded_by === ab.joinerOnInviter);
    assert.ok(carol !== undefined, JSON.stringify(owner.recipients));
    await a.call("secure_revoke_file_access", 1, ab.inviterChat, r.file_id, carol.contact_id);
    await c.poll(async () => (await status(c, cMsg)).state, (s) => s === "revoked", 60_000);
    assert.equal((await open(c, cMsg)).status, 403);
    const still = await open(b, bMsg);
    assert.equal(still.status, 200, "Bob keeps his access");
    await still.body?.cancel();

    // Sharing a .prv by send_msg grants access as secure_* does: without a license, neither the
    // owner's resend nor a forward goes out, and nothing is stored.
    for (const peer of [a, b]) await peer.call("license_deactivate", 1);
    const unlicensed = (e: unknown) =>
      e instanceof RpcError && e.code === -32001 &&
      /send_msg with a protected \.prv file.*needs an active license/.test(e.message);
    const before = await a.call<number[]>("get_message_ids", 1, ab.inviterChat, false, false);
    await assert.rejects(
      () => a.call("send_msg", 1, ab.inviterChat, { file: r.encrypted_path, viewtype: "File" }),
      unlicensed,
    );
    assert.deepEqual(
      await a.call<number[]>("get_message_ids", 1, ab.inviterChat, false, false),
      before,
    );
    await assert.rejects(
      () => b.call("send_msg", 1, bc.inviterChat, { file: bobCopy.file, viewtype: "File" }),
      unlicensed,
    );
  },
});
