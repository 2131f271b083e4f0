/**
 * Happy paths of every CLI command, run as a subprocess against the fake daemon: the RPC calls
 * made (method and positional params) and what is printed, human and `--json`.
 */
import assert from "node:assert/strict";
import { type FakeDaemon, type RpcRoute, startFakeDaemon } from "./fixtures/fake_daemon.ts";
import { runCli } from "./fixtures/run_cli.ts";

const MESSAGES = {
  "41": {
    kind: "message",
    id: 41,
    chatId: 10,
    fromId: 1,
    text: "hello\nworld",
    timestamp: 1_767_225_600, // 2026-01-01 00:00 UTC
    state: 26,
    file: null,
    fileBytes: 0,
    viewtype: "Text",
    sender: { displayName: "Me" },
  },
  "42": {
    kind: "message",
    id: 42,
    chatId: 10,
    fromId: 12,
    text: "report",
    timestamp: 1_767_225_660,
    state: 28,
    file: "/var/lib/privitty/files/report.pdf.prv",
    fileBytes: 1234,
    viewtype: "File",
    sender: { displayName: "Alice" },
  },
  "43": { kind: "loadingError", error: "cannot decrypt" },
};

const ROUTES: Record<string, RpcRoute> = {
  get_info: { result: { n_msgs_in_db: "2", blobdir: "/data/blobs", deltachat_core_version: "v1" } },
  get_config: (p) => ({ result: p[1] === "addr" ? "bot@relay.example" : null }),
  get_connectivity: { result: 3000 },
  license_status: { result: { status: "no_license", expires: null } },
  license_activate: { result: { status: "active", id: "lic-1" } },
  license_sync: { noContent: true },
  license_deactivate: { result: null },
  get_chat_securejoin_qr_code: { result: "OPENPGP4FPR:ABCDEF#a=bot%40relay.example&i=x&s=y" },
  secure_join: { result: 17 },
  get_contact_ids: { result: [1, 12] },
  get_contact: (p) =>
    p[1] === 1
      ? { result: { id: 1, address: "bot@relay.example", displayName: "Me", isVerified: true } }
      : { result: { id: 12, address: "alice@relay.example", displayName: "Alice" } },
  get_chatlist_entries: { result: [10, 11, 12] },
  get_chatlist_items_by_entries: {
    result: {
      "10": { kind: "ChatListItem", id: 10, name: "Alice", chatType: 100, freshMessageCounter: 2 },
      "11": { kind: "ChatListItem", id: 11, name: "Ops", chatType: 120, freshMessageCounter: 0 },
      "12": { kind: "Error", id: 12, error: "chat is broken" },
    },
  },
  get_message_ids: { result: [41, 42, 43] },
  get_messages: { result: MESSAGES },
  send_msg: { result: 44 },
  markseen_msgs: { noContent: true },
  send_reaction: { noContent: true },
  get_chat_contacts: { result: [1, 12] },
};

async function withDaemon(test: (d: FakeDaemon) => Promise<void>): Promise<void> {
  const daemon = await startFakeDaemon({
    rpc: ROUTES,
    health: {
      status: 200,
      body: JSON.stringify({ status: "ok", connectivity: 4000, version: "0.1.0", uptime_s: 5 }),
    },
  });
  try {
    await test(daemon);
  } finally {
    await daemon.close();
  }
}

async function ok(args: string[], d: FakeDaemon): Promise<string> {
  const run = await runCli(["--url", d.url, ...args]);
  assert.equal(run.code, 0, `exit code of ${args.join(" ")}; stderr: ${run.stderr}`);
  return run.stdout;
}

Deno.test("health prints status, connectivity label and version, exit 0", async () => {
  await withDaemon(async (d) => {
    const out = await ok(["health"], d);
    assert.match(out, /^status:\s+ok$/m);
    assert.match(out, /^connectivity:\s+4000 \(fully connected\)$/m);
    assert.match(out, /^version:\s+0\.1\.0$/m);
    assert.deepEqual(JSON.parse(await ok(["health", "--json"], d)).status, "ok");
  });
});

Deno.test("rpc passes method and params through and prints the result as JSON", async () => {
  await withDaemon(async (d) => {
    const out = await ok(["rpc", "get_config", '[1, "addr"]'], d);
    assert.equal(JSON.parse(out), "bot@relay.example");
    assert.deepEqual(d.calls, [{ method: "get_config", params: [1, "addr"] }]);
    await ok(["rpc", "get_chat_contacts"], d); // params default to []
    assert.deepEqual(d.calls[1], { method: "get_chat_contacts", params: [] });
    assert.deepEqual(JSON.parse(await ok(["rpc", "get_chat_contacts", "[1,10]", "--json"], d)), [
      1,
      12,
    ]);
  });
});

Deno.test("info prints get_info as a sorted key: value table", async () => {
  await withDaemon(async (d) => {
    const out = await ok(["info"], d);
    assert.deepEqual(out.trimEnd().split("\n"), [
      "blobdir:                /data/blobs",
      "deltachat_core_version: v1",
      "n_msgs_in_db:           2",
    ]);
    assert.deepEqual(d.calls, [{ method: "get_info", params: [1] }]);
    assert.equal(JSON.parse(await ok(["--json", "info"], d)).n_msgs_in_db, "2");
  });
});

Deno.test("config get prints the value; an unset key prints nothing", async () => {
  await withDaemon(async (d) => {
    assert.equal(await ok(["config", "get", "addr"], d), "bot@relay.example\n");
    assert.deepEqual(d.calls[0], { method: "get_config", params: [1, "addr"] });
    const unset = await runCli(["config", "get", "displayname", "--url", d.url]);
    assert.equal(unset.code, 0);
    assert.equal(unset.stdout, "");
    assert.match(unset.stderr, /displayname is not set/);
    assert.equal(await ok(["config", "get", "displayname", "--json"], d), "null\n");
  });
});

Deno.test("connectivity prints the level with its contract label", async () => {
  await withDaemon(async (d) => {
    assert.equal(await ok(["connectivity"], d), "3000 (connected (working))\n");
    assert.equal(await ok(["connectivity", "--json"], d), "3000\n");
    assert.deepEqual(d.calls[0], { method: "get_connectivity", params: [1] });
  });
});

Deno.test("license status, activate, sync and deactivate call the license methods", async () => {
  await withDaemon(async (d) => {
    const status = await ok(["license", "status"], d);
    assert.equal(status.split("\n")[0], "status:  no_license");
    assert.match(await ok(["license", "activate", "https://lic.example/x"], d), /status: active/);
    assert.equal(await ok(["license", "sync"], d), ""); // HTTP 204: no output
    assert.equal(await ok(["license", "sync", "--json"], d), "null\n");
    assert.equal(await ok(["license", "deactivate"], d), "");
    assert.deepEqual(d.calls.map((c) => [c.method, c.params]), [
      ["license_status", [1]],
      ["license_activate", [1, "https://lic.example/x"]],
      ["license_sync", [1]],
      ["license_sync", [1]],
      ["license_deactivate", [1]],
    ]);
  });
});

Deno.test("invite prints the link; join passes the link and prints the chat id", async () => {
  await withDaemon(async (d) => {
    assert.equal(await ok(["invite"], d), "OPENPGP4FPR:ABCDEF#a=bot%40relay.example&i=x&s=y\n");
    assert.equal(await ok(["join", "OPENPGP4FPR:FEDCBA#a=x"], d), "chat 17\n");
    assert.equal(await ok(["join", "OPENPGP4FPR:FEDCBA#a=x", "--json"], d), "17\n");
    assert.deepEqual(d.calls.slice(0, 2), [
      { method: "get_chat_securejoin_qr_code", params: [1, null] },
      { method: "secure_join", params: [1, "OPENPGP4FPR:FEDCBA#a=x"] },
    ]);
  });
});

Deno.test("contacts lists id, address, name and verified from get_contact", async () => {
  await withDaemon(async (d) => {
    const lines = (await ok(["contacts"], d)).trimEnd().split("\n");
    assert.deepEqual(lines.map((l) => l.split(/\s{2,}/)), [
      ["ID", "ADDRESS", "NAME", "VERIFIED"],
      ["1", "bot@relay.example", "Me", "yes"],
      ["12", "alice@relay.example", "Alice", "no"],
    ]);
    assert.deepEqual(d.calls.map((c) => [c.method, c.params]), [
      ["get_contact_ids", [1, 0, null]],
      ["get_contact", [1, 1]],
      ["get_contact", [1, 12]],
    ]);
    const json = JSON.parse(await ok(["contacts", "--json"], d));
    assert.deepEqual(json.map((c: { id: number }) => c.id), [1, 12]);
  });
});

Deno.test("chats lists id, type name, name and unread count; error entries do not crash", async () => {
  await withDaemon(async (d) => {
    const lines = (await ok(["chats"], d)).trimEnd().split("\n");
    assert.deepEqual(lines.map((l) => l.split(/\s{2,}/)), [
      ["ID", "TYPE", "NAME", "FRESH"],
      ["10", "1:1", "Alice", "2"],
      ["11", "group", "Ops", "0"],
      ["12", "error: chat is broken"],
    ]);
    assert.deepEqual(d.calls.map((c) => [c.method, c.params]), [
      ["get_chatlist_entries", [1, null, null, null]],
      ["get_chatlist_items_by_entries", [1, [10, 11, 12]]],
    ]);
    const json = JSON.parse(await ok(["chats", "--json"], d));
    assert.ok(Array.isArray(json), "--json lists are arrays");
    assert.equal(json.length, 3);
    assert.equal(json[1].name, "Ops");
  });
});

Deno.test("messages shows time, sender, state symbol, text and file; loadingError is shown", async () => {
  await withDaemon(async (d) => {
    const lines = (await ok(["messages", "10"], d)).trimEnd().split("\n");
    assert.deepEqual(lines.map((l) => l.split(/\s{2,}/)), [
      ["ID", "TIME (UTC)", "FROM", "STATE", "TEXT", "FILE"],
      ["41", "2026-01-01 00:00", "me", "✓✓", "hello ↵ world"],
      ["42", "2026-01-01 00:01", "Alice", "👁", "report", "/var/lib/privitty/files/report.pdf.prv"],
      ["43", "error: cannot decrypt"],
    ]);
    assert.deepEqual(d.calls.map((c) => [c.method, c.params]), [
      ["get_message_ids", [1, 10, false, false]],
      ["get_messages", [1, [41, 42, 43]]],
    ]);
    const json = JSON.parse(await ok(["messages", "10", "--json"], d));
    assert.ok(Array.isArray(json), "--json lists are arrays, in chat order");
    assert.deepEqual(json[2], { kind: "loadingError", error: "cannot decrypt" });
  });
});

Deno.test("send and send-file call send_msg with MessageData and print the id", async () => {
  await withDaemon(async (d) => {
    assert.equal(await ok(["send", "10", "hello there"], d), "message 44\n");
    assert.equal(await ok(["send", "10", "--", "-1 degrees"], d), "message 44\n");
    assert.equal(
      await ok(["send-file", "10", "/srv/files/a.pdf.prv", "--text", "see"], d),
      "message 44\n",
    );
    assert.equal(await ok(["send-file", "10", "/srv/files/b.prv", "--json"], d), "44\n");
    assert.deepEqual(d.calls.map((c) => c.params), [
      [1, 10, { text: "hello there" }],
      [1, 10, { text: "-1 degrees" }],
      [1, 10, { file: "/srv/files/a.pdf.prv", viewtype: "File", text: "see" }],
      [1, 10, { file: "/srv/files/b.prv", viewtype: "File" }],
    ]);
  });
});

Deno.test("read marks every id as seen and says so (null under --json)", async () => {
  await withDaemon(async (d) => {
    assert.equal(await ok(["read", "41", "42"], d), "marked 2 messages as read (41, 42)\n");
    assert.equal(await ok(["read", "43", "--json"], d), "null\n");
    assert.deepEqual(d.calls.map((c) => [c.method, c.params]), [
      ["markseen_msgs", [1, [41, 42]]],
      ["markseen_msgs", [1, [43]]],
    ]);
  });
});

Deno.test("react sends one emoji, or none to remove ours, and confirms", async () => {
  await withDaemon(async (d) => {
    assert.equal(await ok(["react", "41", "👍"], d), "reacted 👍 to message 41\n");
    assert.equal(await ok(["react", "41"], d), "removed your reaction from message 41\n");
    assert.deepEqual(d.calls.map((c) => [c.method, c.params]), [
      ["send_reaction", [1, 41, ["👍"]]],
      ["send_reaction", [1, 41, []]],
    ]);
  });
});

Deno.test("EDGE_URL selects the gateway when --url is absent", async () => {
  await withDaemon(async (d) => {
    const run = await runCli(["connectivity"], { EDGE_URL: d.url + "/" });
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, "3000 (connected (working))\n");
  });
});
