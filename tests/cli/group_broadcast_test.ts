/** The `group` and `broadcast` commands against the fake daemon: RPC calls made, output. */
import assert from "node:assert/strict";
import { type RpcRoute, startFakeDaemon } from "./fixtures/fake_daemon.ts";
import { runCli } from "./fixtures/run_cli.ts";

const ROUTES: Record<string, RpcRoute> = {
  create_group_chat: { result: 20 },
  add_contact_to_chat: { noContent: true },
  remove_contact_from_chat: { noContent: true },
  leave_group: { noContent: true },
  set_chat_name: { noContent: true },
  get_chat_securejoin_qr_code: { result: "OPENPGP4FPR:AB#a=x%40y&g=Ops&x=grp&i=i&s=s" },
  get_chat_contacts: { result: [1, 12] },
  get_past_chat_contacts: { result: [13] },
  create_broadcast: { result: 21 },
};

Deno.test("group create|add|remove|leave|rename|invite|members call Delta Chat's group methods", async () => {
  const d = await startFakeDaemon({ rpc: ROUTES });
  try {
    const cli = async (...args: string[]) => {
      const run = await runCli(["--url", d.url, "group", ...args]);
      assert.equal(run.code, 0, run.stderr);
      return run.stdout;
    };
    assert.equal(await cli("create", "Ops Team"), "20\n");
    assert.equal(await cli("add", "20", "12"), "");
    assert.equal(await cli("remove", "20", "12"), "");
    assert.equal(await cli("rename", "20", "Ops"), "");
    assert.match(await cli("invite", "20"), /^OPENPGP4FPR:AB#.*&x=grp/);
    assert.match(await cli("members", "20"), /^12\s+member$/m);
    assert.match(await cli("members", "20"), /^13\s+past member$/m);
    assert.deepEqual(JSON.parse(await cli("members", "20", "--json")), {
      members: [1, 12],
      pastMembers: [13],
    });
    assert.equal(await cli("leave", "20"), "");
    assert.deepEqual(d.calls.slice(0, 6), [
      { method: "create_group_chat", params: [1, "Ops Team", false] },
      { method: "add_contact_to_chat", params: [1, 20, 12] },
      { method: "remove_contact_from_chat", params: [1, 20, 12] },
      { method: "set_chat_name", params: [1, 20, "Ops"] },
      { method: "get_chat_securejoin_qr_code", params: [1, 20] },
      { method: "get_chat_contacts", params: [1, 20] },
    ]);
    assert.deepEqual(d.calls.at(-1), { method: "leave_group", params: [1, 20] });
  } finally {
    await d.close();
  }
});

Deno.test("group refuses unknown actions and wrong arguments with the usage (exit 2)", async () => {
  const d = await startFakeDaemon({ rpc: ROUTES });
  try {
    const bad = await runCli(["--url", d.url, "group", "explode", "1"]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /unknown group action 'explode'/);
    const short = await runCli(["--url", d.url, "group", "add", "20"]);
    assert.equal(short.code, 2);
    assert.match(short.stderr, /usage: group add <chat> <contact>/);
    assert.deepEqual(d.calls, []);
  } finally {
    await d.close();
  }
});

Deno.test("broadcast create|invite call create_broadcast and get_chat_securejoin_qr_code", async () => {
  const d = await startFakeDaemon({ rpc: ROUTES });
  try {
    const created = await runCli(["--url", d.url, "broadcast", "create", "News"]);
    assert.equal(created.stdout, "21\n", created.stderr);
    const invite = await runCli(["--url", d.url, "broadcast", "invite", "21"]);
    assert.match(invite.stdout, /^OPENPGP4FPR:/);
    assert.deepEqual(d.calls, [
      { method: "create_broadcast", params: [1, "News"] },
      { method: "get_chat_securejoin_qr_code", params: [1, 21] },
    ]);
    const bad = await runCli(["--url", d.url, "broadcast", "post", "21"]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /unknown broadcast action 'post'/);
  } finally {
    await d.close();
  }
});
