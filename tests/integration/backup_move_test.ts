/**
 * Moving a gateway to a new box (issue 18 §4): a backup taken over the CLI while the peer keeps
 * sending, the old daemon stopped, a new daemon on a fresh data directory and another machine id
 * started with `--import-backup`: the same address, keys and verified contact, the chat with
 * its messages (each once), and messages both ways with the peer afterwards.
 */
import assert from "node:assert/strict";
import { chatMessages, joinBySecureJoin } from "../_helpers/gateway_pair.ts";
import { GatewayPeer } from "../_helpers/gateway_peer.ts";
import { makeTempDir } from "../_helpers/temp.ts";
import { twoGatewaysTest } from "../_helpers/two_gateways.ts";
import { cliSh } from "./_backup_cli.ts";

const PASS = "moving to the new box";
const LOAD = 8;

twoGatewaysTest({
  name: "a backup taken under load moves the account to a new box; messages both ways after",
  gateways: ["Old", "Peer"],
  async fn(gws) {
    const { a: old, b: peer } = gws;
    const pair = await joinBySecureJoin(old, peer);
    let from = peer.events.length;
    await old.call("send_msg", 1, pair.inviterChat, { text: "before the move" });
    await peer.waitForEvent((e) => e.event.type === "IncomingMsg", 30_000, from);
    from = old.events.length;
    await peer.call("send_msg", 1, pair.joinerChat, { text: "hello old box" });
    await old.waitForEvent((e) => e.event.type === "IncomingMsg", 30_000, from);

    // The peer keeps sending while the old box exports over the CLI.
    const loadFrom = old.events.length;
    const load = (async () => {
      for (let i = 0; i < LOAD; i++) {
        await peer.call("send_msg", 1, pair.joinerChat, { text: `load ${i}` });
      }
    })();
    // Export once the first of them is stored, while the rest are still coming.
    await old.waitForEvent((e) => e.event.type === "IncomingMsg", 30_000, loadFrom);
    const filesDir = `${old.dir.path}/data/files`;
    const exported = await cliSh(
      ["backup", "export", filesDir, "--url", old.daemon.url],
      { EDGE_BACKUP_PASSPHRASE: PASS },
    );
    assert.equal(exported.code, 0, exported.stderr);
    const file = exported.stdout.trim();
    assert.match(file, /\/data\/files\/edge-backup-[0-9-]+\.bak$/);
    await load;
    await old.waitForEvent((e) => e.event.type === "ImexProgress" && e.event.progress === 1000);
    const written = await old.waitForEvent((e) => e.event.type === "ImexFileWritten");
    assert.equal(written.event.path, file);
    const progress = old.events.flatMap((e) =>
      e.event.type === "ImexProgress" ? [e.event.progress as number] : []
    );
    assert.ok(!progress.includes(0), `progress ${progress}`);

    // Carry the file to the new box, stop the old one.
    await using move = await makeTempDir("backup-move");
    const carried = `${move.path}/carried.bak`;
    await Deno.copyFile(file, carried);
    const machineId = `${move.path}/machine-id`;
    await Deno.writeTextFile(machineId, "0f0e0d0c0b0a09080706050403020100\n");
    await old.stop();

    const moved = await GatewayPeer.start("Old", gws.relay, {
      env: { EDGE_IMPORT_BACKUP: carried, EDGE_BACKUP_PASSPHRASE: PASS },
      machineIdFile: machineId,
    });
    gws.a = moved; // stopped with the others
    assert.equal(moved.addr, old.addr);
    assert.match(moved.daemon.output(), /backup restored/);
    // Another machine id: the restored installation is a moved one (docs/identity.md).
    assert.match(moved.daemon.output(), /this installation moved to another machine/);
    const contact = await moved.call<{ isVerified: boolean; address: string }>(
      "get_contact",
      1,
      pair.joinerOnInviter,
    );
    assert.equal(contact.isVerified, true, "the peer is still verified");
    const texts = (await chatMessages(moved, pair.inviterChat)).map((m) => m.text);
    assert.ok(texts.includes("before the move"), JSON.stringify(texts));
    assert.ok(texts.includes("hello old box"), JSON.stringify(texts));
    // Load messages: those the old box stored before its snapshot, each once (what it took off
    // the relay after the snapshot stays on the old box: docs/backup.md#after-a-restore).
    const loaded = texts.filter((t) => t.startsWith("load "));
    assert.ok(loaded.length >= 1, "the snapshot holds what arrived before it");
    assert.equal(new Set(loaded).size, loaded.length, JSON.stringify(texts));
    for (const t of loaded) assert.match(t, new RegExp(`^load [0-${LOAD - 1}]$`));

    // After the move: both ways, with the same keys (the peer's verified chat decrypts them).
    from = peer.events.length;
    await moved.call("send_msg", 1, pair.inviterChat, { text: "from the new box" });
    await peer.poll(
      () => chatMessages(peer, pair.joinerChat),
      (msgs) => msgs.some((m) => m.text === "from the new box"),
    );
    await moved.call("send_msg", 1, pair.inviterChat, { text: "second from the new box" });
    await peer.poll(
      () => chatMessages(peer, pair.joinerChat),
      (msgs) => msgs.some((m) => m.text === "second from the new box"),
    );
    await peer.call("send_msg", 1, pair.joinerChat, { text: "welcome, new box" });
    const after = await moved.poll(
      () => chatMessages(moved, pair.inviterChat),
      (msgs) => msgs.some((m) => m.text === "welcome, new box"),
    );
    assert.equal(after.filter((m) => m.text === "welcome, new box").length, 1);
    assert.ok(peer.events.length > from);
  },
});
