/**
 * `deno task dev --local-relay --gateways 2` end to end (scripts/dev.sh): two gateways on
 * consecutive loopback ports, joined to each other, exchange a message; after the whole dev run is
 * stopped and started again, the relay is back on the same ports and mail still flows. Both run
 * with a dev license from the license server dev.sh starts.
 */
import assert from "node:assert/strict";
import { NO_RELAY } from "../_helpers/relay.ts";
import { makeTempDir } from "../_helpers/temp.ts";
import { poll } from "../_helpers/poll.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

/** A port p on 127.0.0.1 with p and p+1 free a moment ago. */
function twoConsecutivePorts(): number {
  for (let tries = 0; tries < 200; tries++) {
    const p = 20_000 + Math.floor(Math.random() * 10_000);
    try {
      const a = Deno.listen({ hostname: "127.0.0.1", port: p });
      try {
        Deno.listen({ hostname: "127.0.0.1", port: p + 1 }).close();
        return p;
      } finally {
        a.close();
      }
    } catch { /* busy: try another */ }
  }
  throw new Error("no two consecutive free ports");
}

/** A running `scripts/dev.sh`; `ready` resolves with the lines it printed up to "dev: ready". */
function startDev(stateDir: string, port: number) {
  const child = new Deno.Command("bash", {
    args: [`${ROOT}scripts/dev.sh`, "--local-relay", "--gateways", "2", "--port", String(port)],
    cwd: ROOT,
    env: { DENO: Deno.execPath(), EDGE_DEV_DIR: stateDir, NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let out = "";
  let err = "";
  const errDone = (async () => {
    for await (const c of child.stderr.pipeThrough(new TextDecoderStream())) err += c;
  })();
  const ready = (async () => {
    for await (const c of child.stdout.pipeThrough(new TextDecoderStream())) {
      out += c;
      if (out.includes("dev: ready")) return out;
    }
    await errDone;
    throw new Error(`dev.sh ended before it was ready:\n${out}\n${err}`);
  })();
  const stop = async () => {
    try {
      child.kill("SIGTERM");
    } catch { /* already ended */ }
    const status = await child.status;
    await child.stdout.cancel().catch(() => {});
    await errDone;
    return status.code;
  };
  return { ready, stop, output: () => `${out}\n${err}` };
}

async function rpc<T>(url: string, method: string, ...params: unknown[]): Promise<T> {
  const res = await fetch(`${url}/rpc`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", method, params, id: 1 }),
  });
  const body = await res.json();
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result as T;
}

/** Sends `text` from `from` to the gateway with address `toAddr`; true once `to` has it. */
async function exchange(from: string, to: string, toAddr: string, text: string) {
  const contact = await rpc<number>(from, "lookup_contact_id_by_addr", 1, toAddr);
  assert.ok(contact, `gateway ${from} knows ${toAddr}`);
  const chat = await rpc<number>(from, "create_chat_by_contact_id", 1, contact);
  await rpc<number>(from, "send_msg", 1, chat, { text });
  const texts = await poll(
    async () => {
      const fresh = await rpc<number[]>(to, "get_fresh_msgs", 1);
      if (fresh.length === 0) return [];
      const msgs = await rpc<Record<string, { text: string }>>(to, "get_messages", 1, fresh);
      return Object.values(msgs).map((m) => m.text);
    },
    (t) => t.includes(text),
    60_000,
    250,
  );
  assert.ok(texts.includes(text), `"${text}" arrived (got ${JSON.stringify(texts)})`);
}

function relayPorts(stateDir: string): string {
  return Deno.readTextFileSync(`${stateDir}/relay/relay.env`).split("\n")
    .filter((l) => /^RELAY_[A-Z]+_PORT=/.test(l)).join("\n");
}

Deno.test({
  name: "dev --local-relay --gateways 2: joined gateways exchange mail, also after a restart",
  ignore: NO_RELAY,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await using tmp = await makeTempDir("dev");
    await Deno.chmod(tmp.path, 0o755); // the relay's postfix and dovecot users enter it
    const port = twoConsecutivePorts();
    const urls = [`http://127.0.0.1:${port}`, `http://127.0.0.1:${port + 1}`];

    const first = startDev(tmp.path, port);
    let addrs: string[];
    try {
      const out = await first.ready;
      for (const [i, url] of urls.entries()) {
        assert.match(out, new RegExp(`dev: gateway ${i + 1} ${url} \\S+@\\S+`));
      }
      const chats = [...out.matchAll(/^dev: gateway (\d) chat (\d+) is with gateway (\d) /gm)];
      assert.deepEqual(chats.map((m) => [m[1], m[3]]), [["1", "2"], ["2", "1"]], out);
      addrs = await Promise.all(urls.map((u) => rpc<string>(u, "get_config", 1, "addr")));
      for (const [m, i, j] of chats.map((m) => [m, Number(m[1]) - 1, Number(m[3]) - 1] as const)) {
        const contact = await rpc<number>(urls[i], "lookup_contact_id_by_addr", 1, addrs[j]);
        const chat = await rpc<number>(urls[i], "create_chat_by_contact_id", 1, contact);
        assert.equal(Number(m[2]), chat, `gateway ${i + 1}'s chat with gateway ${j + 1}`);
      }
      for (const url of urls) {
        const license = await rpc<{ status: string; license_type: string }>(
          url,
          "license_status",
          1,
        );
        assert.deepEqual([license.status, license.license_type], ["active", "dev"], url);
      }
      assert.match(
        first.output(),
        new RegExp(`dev: license server at http://127.0.0.1:${port + 100}`),
      );
      await exchange(urls[0], urls[1], addrs[1], "hello from gateway 1");
      // Bound to loopback only by default.
      const health = await (await fetch(`${urls[0]}/health`)).json();
      assert.equal(health.mail, "connected");
    } finally {
      assert.equal(await first.stop(), 143, first.output());
    }
    const portsBefore = relayPorts(tmp.path);

    const second = startDev(tmp.path, port);
    try {
      const out = await second.ready;
      assert.doesNotMatch(out, /joined/, "already joined: nothing to join on a restart");
      assert.equal(relayPorts(tmp.path), portsBefore, "the relay came back on the same ports");
      await exchange(urls[1], urls[0], addrs[0], "hello back after the restart");
      const level = await poll(
        () => rpc<number>(urls[0], "get_connectivity", 1),
        (l) => l >= 3000,
        30_000,
      );
      assert.ok(level >= 3000, `gateway 1 is connected again (level ${level})`);
    } finally {
      await second.stop();
    }
  },
});

Deno.test("dev --help prints dev's own options and starts nothing", async () => {
  await using tmp = await makeTempDir("dev-help");
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["task", "--quiet", "--config", `${ROOT}deno.json`, "dev", "--help"],
    env: { DENO: Deno.execPath(), EDGE_DEV_DIR: `${tmp.path}/state`, NO_COLOR: "1" },
    stdin: "null",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  assert.match(text, /^usage: deno task dev \[--local-relay\] \[--gateways N\]/);
  assert.match(text, /--local-relay/);
  assert.doesNotMatch(text, /edge-gateway \[serve\]/, "not the daemon's help");
  await assert.rejects(Deno.stat(`${tmp.path}/state`), Deno.errors.NotFound, "nothing started");
});

/** Live (not zombie) processes whose process group is one of `groups`: pid → command line. */
function membersOf(groups: readonly number[]): Map<number, string> {
  const found = new Map<number, string>();
  for (const entry of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    try {
      const stat = Deno.readTextFileSync(`/proc/${entry.name}/stat`);
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (state !== "Z" && groups.includes(Number(pgrp))) {
        const cmd = Deno.readTextFileSync(`/proc/${entry.name}/cmdline`).replaceAll("\0", " ");
        found.set(Number(entry.name), cmd.trim());
      }
    } catch { /* ended meanwhile */ }
  }
  return found;
}

/** The process groups of the relay's four daemons, from their pid files under `relayDir`. */
function relayGroups(relayDir: string): number[] {
  return [
    "spool/postfix/pid/master.pid",
    "run/dovecot/master.pid",
    "run/http.pid",
    "run/filter.pid",
  ].map((f) => Number(Deno.readTextFileSync(`${relayDir}/${f}`).trim()));
}

Deno.test({
  name: "deno task dev --local-relay: SIGINT to its process group stops relay, gateway, license",
  ignore: NO_RELAY,
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    await using tmp = await makeTempDir("dev-int");
    await Deno.chmod(tmp.path, 0o755); // the relay's postfix and dovecot users enter it
    const port = twoConsecutivePorts();
    // A terminal's job: `deno task dev` leads a process group of its own (setsid execs it).
    const child = new Deno.Command("setsid", {
      args: [
        Deno.execPath(),
        "task",
        "--config",
        `${ROOT}deno.json`,
        "dev",
        "--local-relay",
        "--port",
        String(port),
      ],
      env: { DENO: Deno.execPath(), EDGE_DEV_DIR: tmp.path, NO_COLOR: "1" },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const pgid = child.pid;
    let out = "";
    const errText = new Response(child.stderr).text();
    let groups: number[] = [pgid];
    try {
      for await (const c of child.stdout.pipeThrough(new TextDecoderStream())) {
        out += c;
        if (out.includes("dev: ready")) break;
      }
      assert.match(
        out,
        new RegExp(`dev: gateway 1 http://127.0.0.1:${port} \\S+@\\S+\\ndev: ready`),
      );
      groups = [pgid, ...relayGroups(`${tmp.path}/relay`)];
      const before = membersOf(groups);
      for (const g of groups) assert.ok(before.has(g), `group ${g} runs before Ctrl-C`);
      assert.ok([...before.values()].some((c) => c.includes("license_server")), "license server");
      assert.ok([...before.values()].some((c) => c.includes("main.ts serve")), "the gateway");

      Deno.kill(-pgid, "SIGINT"); // what Ctrl-C does: the signal to the whole foreground group
      const status = await child.status;
      assert.equal(status.code, 130, `${out}\n${await errText}`);
      const left = await poll(
        () => Promise.resolve(membersOf(groups)),
        (m) => m.size === 0,
        20_000,
        100,
      );
      assert.deepEqual([...left.values()], [], "nothing of the run is left");
    } finally {
      for (const pid of membersOf(groups).keys()) {
        try {
          Deno.kill(pid, "SIGKILL");
        } catch { /* gone */ }
      }
      await child.stdout.cancel().catch(() => {});
      await errText.catch(() => "");
      await child.status;
    }
  },
});
