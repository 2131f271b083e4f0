/**
 * The installation identity end to end (issue 18 §1, §5; docs/identity.md): two real daemons on
 * the real relay, licensed by the project's license server, in a network namespace whose veth
 * interface gets another MAC and address between restarts (a re-created container): licenses
 * stay active under the same device id and every protected file sent or received before opens
 * and can be revoked. Then B's data directory runs on "another host" (another /etc/machine-id
 * bind-mounted for its daemon alone): license_status says installation_moved, license_activate
 * moves B's seat, B's received file is asked for again and granted, B's sent file is revocable.
 */
import assert from "node:assert/strict";
import { joinBySecureJoin, type JoinedPair } from "../_helpers/gateway_pair.ts";
import { GatewayPeer } from "../_helpers/gateway_peer.ts";
import { licenseServerCommand, startLicenseServer } from "../_helpers/license_server.ts";
import { NO_RELAY, type Relay, startRelay } from "../_helpers/relay.ts";
import { makeTempDir } from "../_helpers/temp.ts";
import { createVeth } from "../_helpers/veth.ts";
import { pngBytes } from "../viewer/_fixtures.ts";

/** A protected file sent from one peer to the other. */
interface Sent {
  readonly fileId: number;
  /** The message on the owner's side and on the recipient's. */
  readonly ownMsg: number;
  readonly theirMsg: number;
  readonly bytes: Uint8Array;
}

async function protectAndSend(
  from: GatewayPeer,
  fromData: string,
  to: GatewayPeer,
  chatId: number,
  contactId: number,
  name: string,
): Promise<Sent> {
  const bytes = pngBytes(90_000);
  await Deno.writeFile(`${fromData}/files/${name}`, bytes);
  const r = await from.call<{ encrypted_path: string; file_id: number }>(
    "privitty_send_file",
    1,
    chatId,
    contactId,
    `${fromData}/files/${name}`,
    false,
    false,
    0,
  );
  const seen = to.events.length;
  const ownMsg = await from.call<number>("send_msg", 1, chatId, { file: r.encrypted_path });
  const inc = await to.waitForEvent((e) => e.event.type === "IncomingMsg", 60_000, seen);
  return { fileId: r.file_id, ownMsg, theirMsg: inc.event.msg_id as number, bytes };
}

async function fingerprintOf(dataDir: string): Promise<string> {
  return (await Deno.readTextFile(`${dataDir}/device-fingerprint`)).trim();
}

/** GET /stream/<msg> with a viewer token from /auth. */
async function stream(peer: GatewayPeer, dataDir: string, msgId: number): Promise<Response> {
  const auth = await fetch(`${peer.daemon.url}/auth`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ device_fingerprint: await fingerprintOf(dataDir) }),
  });
  assert.equal(auth.status, 200);
  const { token } = await auth.json();
  return await fetch(`${peer.daemon.url}/stream/${msgId}`, {
    headers: { authorization: `Bearer ${token}` },
  });
}

/** Opens a file through /stream: at once (owner), or after the owner answered the request. */
async function opens(peer: GatewayPeer, dataDir: string, msgId: number, bytes: Uint8Array) {
  const first = await stream(peer, dataDir, msgId);
  if (first.status !== 200) {
    const body = await first.json();
    assert.equal(first.status, 403, JSON.stringify(body));
    assert.equal(body.state, "requested", JSON.stringify(body));
    await peer.poll(
      async () => (await peer.call<{ state: string }>("secure_get_file_status", 1, msgId)).state,
      (s) => s === "active",
      60_000,
    );
    return opens(peer, dataDir, msgId, bytes);
  }
  assert.deepEqual(new Uint8Array(await first.arrayBuffer()), bytes);
}

async function revoke(
  owner: GatewayPeer,
  recipient: GatewayPeer,
  chatId: number,
  contactId: number,
  sent: Sent,
) {
  const seen = recipient.events.length;
  await owner.call("privitty_revoke_file_access", 1, chatId, sent.fileId, contactId);
  await recipient.waitForEvent((e) => e.event.type === "PrivittyFileAccessRevoked", 60_000, seen);
  const s = await recipient.call<{ state: string }>("secure_get_file_status", 1, sent.theirMsg);
  assert.equal(s.state, "revoked");
}

async function license(peer: GatewayPeer): Promise<Record<string, unknown>> {
  return await peer.call<Record<string, unknown>>("license_status", 1);
}

async function seats(srvDir: string): Promise<string[]> {
  const list = await licenseServerCommand("list", "--data-dir", srvDir, "--json");
  return JSON.parse(list.stdout)[0].devices;
}

async function restart(peer: GatewayPeer, relay: Relay, o: {
  name: string;
  dataDir: string;
  env: Record<string, string>;
  machineIdFile?: string;
}): Promise<GatewayPeer> {
  await peer.stop();
  return await GatewayPeer.start(o.name, relay, o);
}

Deno.test({
  name: "identity: a new MAC and IP change nothing; on another host activate re-binds",
  ignore: NO_RELAY,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn(t) {
    await using veth = await createVeth("idv0", "02:00:00:00:a0:01", "10.77.0.1/24");
    await using relay = await startRelay();
    await using tmp = await makeTempDir("identity-int");
    const srvDir = `${tmp.path}/srv`;
    await using server = await startLicenseServer(srvDir);
    const keyFile = `${tmp.path}/license-server.pem`;
    await Deno.writeTextFile(
      keyFile,
      (await licenseServerCommand("public-key", "--data-dir", srvDir)).stdout,
    );
    const issued = await licenseServerCommand(
      ...["issue", "--data-dir", srvDir, "--type", "edge", "--days", "30", "--max-devices", "2"],
    );
    const url = issued.stdout.trim().split("\n").at(-1)!;
    const env = { EDGE_LICENSE_TRUSTED_KEYS: keyFile, EDGE_LICENSE_URL: url };
    const aData = `${tmp.path}/a`;
    const bData = `${tmp.path}/b`;
    const A = { name: "alice", dataDir: aData, env };
    const B = { name: "bob", dataDir: bData, env };
    let a = await GatewayPeer.start(A.name, relay, A);
    let b = await GatewayPeer.start(B.name, relay, B);
    try {
      let pair: JoinedPair;
      let aToB1: Sent, aToB2: Sent, bToA: Sent;
      let bDevice = "";
      let bFingerprint = "";

      await t.step("A and B licensed; protected files both ways", async () => {
        assert.equal((await license(a)).status, "active");
        assert.equal((await license(b)).status, "active");
        assert.equal((await seats(srvDir)).length, 2, "one seat per installation");
        pair = await joinBySecureJoin(a, b);
        aToB1 = await protectAndSend(a, aData, b, pair.inviterChat, pair.joinerOnInviter, "1.png");
        aToB2 = await protectAndSend(a, aData, b, pair.inviterChat, pair.joinerOnInviter, "2.png");
        bToA = await protectAndSend(b, bData, a, pair.joinerChat, pair.inviterOnJoiner, "3.png");
        await opens(b, bData, aToB1.theirMsg, aToB1.bytes);
        bDevice = (await license(b)).device_id as string;
        bFingerprint = await fingerprintOf(bData);
      });

      await t.step("a new MAC and IP (re-created container): nothing changes", async () => {
        const aDevice = (await license(a)).device_id;
        await veth.renew("02:00:00:00:b0:02", "10.77.0.2/24");
        a = await restart(a, relay, A);
        b = await restart(b, relay, B);
        assert.notEqual(await fingerprintOf(bData), bFingerprint, "the viewer fingerprint follows");
        for (const [peer, device] of [[a, aDevice], [b, bDevice]] as const) {
          const s = await license(peer);
          assert.equal(s.status, "active", JSON.stringify(s));
          assert.equal(s.device_id, device, "the license device id does not follow the MAC");
          const out = peer.daemon.output();
          assert.doesNotMatch(out, /WARN .*(identity|device fingerprint|bound to another)/);
          assert.ok(out.split("\n").filter((l) => /\[identity\]/.test(l)).length <= 1);
        }
        await opens(b, bData, aToB1.theirMsg, aToB1.bytes); // received before, on B
        await opens(a, aData, bToA.theirMsg, bToA.bytes); // received before, on A
        await opens(a, aData, aToB1.ownMsg, aToB1.bytes); // sent before, the owner's copy
        await revoke(a, b, pair.inviterChat, pair.joinerOnInviter, aToB1);
        assert.deepEqual((await seats(srvDir)).length, 2);
      });

      await t.step("B's data directory on another host: moved, activate re-binds", async () => {
        const machineIdFile = `${tmp.path}/other-machine-id`;
        await Deno.writeTextFile(machineIdFile, "0123456789abcdef0123456789abcdef\n");
        b = await restart(b, relay, { ...B, machineIdFile });
        assert.match(b.daemon.output(), /WARN .*this installation moved to another machine/);
        const moved = await license(b);
        assert.equal(moved.status, "invalid");
        assert.equal(moved.reason_code, "installation_moved");
        assert.match(moved.reason as string, /run license activate <url> to re-bind it/);
        const activated = await b.call<Record<string, unknown>>("license_activate", 1, url);
        assert.equal(activated.status, "active");
        const newDevice = activated.device_id as string;
        assert.notEqual(newDevice, bDevice);
        const held = await seats(srvDir);
        assert.equal(held.length, 2, "B's seat moved; no seat_limit, no second seat");
        assert.ok(held.includes(newDevice) && !held.includes(bDevice));
        // Received before the move: asked for again, granted by A by the usual rules.
        await opens(b, bData, aToB2.theirMsg, aToB2.bytes);
        // Sent before the move: still B's to open and to revoke.
        await opens(b, bData, bToA.ownMsg, bToA.bytes);
        await revoke(b, a, pair.joinerChat, pair.inviterOnJoiner, bToA);
      });
    } finally {
      await a.stop();
      await b.stop();
      await server.stop();
    }
  },
});
