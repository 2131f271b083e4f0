/**
 * End to end: the real daemon under the production permission set against the project's relay —
 * first boot, restart, a second daemon on the same data dir, start-up errors, live connectivity
 * through a relay outage, SSE, and the CLI as a client.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { spawnDaemon } from "../_helpers/daemon.ts";
import { startRelay } from "../_helpers/relay.ts";
import { makeTempDir } from "../_helpers/temp.ts";
import { poll } from "../_helpers/poll.ts";
import { SseParser } from "../../src/cli/sse_client.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

function accountsOnRelay(relayDir: string): number {
  return [...Deno.readDirSync(`${relayDir}/users.d`)].filter((e) => e.name.includes("@")).length;
}

async function result(p: Promise<Record<string, unknown> | null>): Promise<unknown> {
  const body = await p;
  assert.ok(body && "result" in body, `expected a result, got ${JSON.stringify(body)}`);
  return body.result;
}

/** Reads SSE frames from /events until `pred` matches one event; returns it. */
async function waitForEvent(
  url: string,
  pred: (e: Record<string, unknown>) => boolean,
  ms: number,
  during: () => Promise<void>,
): Promise<Record<string, unknown>> {
  const ac = new AbortController();
  const res = await fetch(`${url}/events`, { signal: ac.signal });
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  const timer = setTimeout(() => ac.abort(), ms);
  const parser = new SseParser(); // the CLI's own parser
  const found = (async () => {
    while (true) {
      const { value, done } = await reader.read();
      if (done) throw new Error("event stream ended");
      for (const m of parser.feed(value)) {
        if (m.data === "") continue;
        const event = JSON.parse(m.data);
        if (pred(event)) return event;
      }
    }
  })();
  try {
    await during();
    return await found;
  } finally {
    clearTimeout(timer);
    ac.abort();
    await reader.cancel().catch(() => {});
  }
}

async function cli(url: string, ...args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-net", "--allow-env=EDGE_URL", `${ROOT}main.ts`, "--url", url, ...args],
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  return {
    code: out.code,
    stdout: new TextDecoder().decode(out.stdout),
    stderr: new TextDecoder().decode(out.stderr),
  };
}

Deno.test("daemon provisions on a real relay, restarts idempotently and follows the relay's state", async (t) => {
  await using relay = await startRelay();
  await using tmp = await makeTempDir("daemon");
  const dataDir = `${tmp.path}/data`;
  let addr = "";
  let fingerprint = "";

  await t.step("first start without EDGE_PROFILE exits non-zero naming it", async () => {
    const d = spawnDaemon({ relay, dataDir: `${tmp.path}/noprofile`, profile: null });
    const code = await d.exited;
    assert.notEqual(code, 0);
    assert.match(d.output(), /EDGE_PROFILE/);
    assert.equal(accountsOnRelay(relay.dir), 0);
  });

  await t.step(
    "a port in use fails before registering, saying so once; the data dir gets no account",
    async () => {
      using taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
      const port = taken.addr.port;
      const dir = `${tmp.path}/port-taken`;
      const d = spawnDaemon({ relay, dataDir: dir, port });
      assert.notEqual(await d.exited, 0);
      const out = d.output();
      const said = `cannot listen on 127.0.0.1:${port}: Address already in use`;
      assert.equal(out.split(said).length - 1, 1, `said once:\n${out}`);
      assert.equal(out.split("Address already in use").length - 1, 1, `OS error once:\n${out}`);
      assert.match(out, /another program is listening there: stop it or choose another --port/);
      assert.doesNotMatch(out, /step \d\/7/, "no provisioning step ran");
      assert.equal(accountsOnRelay(relay.dir), 0, "no registration");
      assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name).sort(), ["files"]);
    },
  );

  await t.step(
    "license files without an accounts index: 'accounts directory is not empty'",
    async () => {
      const dir = `${tmp.path}/orphan`;
      await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
      await Deno.writeTextFile(`${dir}/privitty.lic`, "{}");
      const d = spawnDaemon({ relay, dataDir: dir });
      assert.notEqual(await d.exited, 0);
      assert.match(d.output(), /accounts directory is not empty/);
    },
  );

  await t.step("first boot: registers, discovers, creates a key, then serves", async (s) => {
    await using d = spawnDaemon({ relay, dataDir, profile: "Gateway One" });
    await d.waitHealthy();
    addr = String(await result(d.rpc("get_config", [1, "addr"])));
    assert.match(addr, /^[a-z0-9]+@_relay\.test$/);
    assert.equal(await result(d.rpc("get_config", [1, "displayname"])), "Gateway One");
    const info = await result(d.rpc("get_info", [1])) as Record<string, string>;
    for (
      const key of [
        "deltachat_core_version",
        "dbsize",
        "blobdir",
        "configured_addr",
        "n_msgs_in_db",
      ]
    ) {
      assert.equal(typeof info[key], "string", `get_info lacks ${key}`);
    }
    assert.equal(info.configured_addr, addr);
    fingerprint = info.fingerprint;
    assert.match(fingerprint, /^[0-9A-F]{40}$/);
    const level = await poll(
      () => result(d.rpc("get_connectivity", [1])),
      (v) => v === 4000,
      20_000,
    );
    assert.equal(level, 4000);
    assert.equal(accountsOnRelay(relay.dir), 1);

    await s.step("a second daemon on the same data dir fails fast", async () => {
      const second = spawnDaemon({ relay, dataDir });
      assert.notEqual(await second.exited, 0);
      assert.match(second.output(), /already running/);
    });

    await s.step("the CLI talks to it over HTTP", async () => {
      const health = await cli(d.url, "health");
      assert.equal(health.code, 0, health.stderr);
      const got = await cli(d.url, "config", "get", "addr");
      assert.equal(got.code, 0, got.stderr);
      assert.equal(got.stdout.trim(), addr);
    });

    await s.step(
      "relay outage drops connectivity and it comes back without a restart",
      async () => {
        const down = await waitForEvent(
          d.url,
          (e) => e.type === "ConnectivityChanged" && Number(e.connectivity) < 3000,
          30_000,
          () => relay.stopMail(),
        );
        assert.ok(Number(down.connectivity) < 3000);
        const up = await waitForEvent(
          d.url,
          (e) => e.type === "ConnectivityChanged" && e.connectivity === 4000,
          60_000,
          () => relay.startMail(),
        );
        assert.equal(up.connectivity, 4000);
        assert.equal(await result(d.rpc("get_connectivity", [1])), 4000);
      },
    );

    assert.equal(await d.stop("SIGTERM"), 0, d.output());
  });

  await t.step("restart: same address and key, no new registration", async () => {
    await using d = spawnDaemon({ relay, dataDir, profile: "Gateway One" });
    await d.waitHealthy();
    assert.equal(await result(d.rpc("get_config", [1, "addr"])), addr);
    const info = await result(d.rpc("get_info", [1])) as Record<string, string>;
    assert.equal(info.fingerprint, fingerprint);
    assert.equal(accountsOnRelay(relay.dir), 1);
    assert.equal(await d.stop("SIGINT"), 0, d.output());
  });

  await t.step("data files are private (dirs 0700, files 0600)", () => {
    assert.equal(Deno.statSync(dataDir).mode! & 0o777, 0o700);
    for (const e of Deno.readDirSync(dataDir)) {
      const mode = Deno.statSync(`${dataDir}/${e.name}`).mode! & 0o777;
      assert.equal(mode & 0o077, 0, `${e.name} is readable by others (${mode.toString(8)})`);
    }
  });
});

/** One raw HTTP/1.1 request with its own Host header (fetch sets Host itself); the status. */
async function rawStatus(port: number, host: string, path: string): Promise<number> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    const head = `GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`;
    await conn.write(new TextEncoder().encode(head));
    const buf = new Uint8Array(256);
    const n = await conn.read(buf);
    return Number(
      /^HTTP\/1\.1 (\d{3})/.exec(new TextDecoder().decode(buf.subarray(0, n ?? 0)))?.[1],
    );
  } finally {
    conn.close();
  }
}

Deno.test("the real daemon with an API tokens file (read where start.sh grants it): 401, scopes, Host check, no token in its log", async () => {
  await using relay = await startRelay();
  await using tmp = await makeTempDir("daemon-tokens");
  const reader = "daemon-reader-token-0123456789";
  const sha = (t: string) => createHash("sha256").update(t).digest("hex");
  const tokensFile = `${tmp.path}/api_tokens`; // outside the data directory
  await Deno.writeTextFile(tokensFile, `# test\ndashboard read sha256:${sha(reader)}\n`);
  await using d = spawnDaemon({
    relay,
    dataDir: `${tmp.path}/data`,
    env: { EDGE_API_TOKENS_FILE: tokensFile },
  });
  await d.waitHealthy();
  const call = (method: string, params: unknown[], token?: string) =>
    fetch(`${d.url}/rpc`, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        ...(token === undefined ? {} : { Authorization: `Bearer ${token}` }),
      },
      body: JSON.stringify({ jsonrpc: "2.0", method, params, id: 1 }),
    });
  const none = await call("get_info", [1]);
  assert.equal(none.status, 401);
  assert.equal((await none.json()).error.code, -32002);
  const info = await call("get_info", [1], reader);
  assert.equal(info.status, 200);
  assert.ok("result" in await info.json());
  const send = await (await call("send_msg", [1, 10, { text: "hi" }], reader)).json();
  assert.equal(send.error.code, -32003);
  assert.equal(await rawStatus(d.port, `127.0.0.1:${d.port}`, "/health"), 200);
  assert.equal(await rawStatus(d.port, "rebind.attacker.test", "/health"), 200, "/health is open");
  assert.equal(await rawStatus(d.port, "rebind.attacker.test", "/stream/1"), 403);
  assert.match(d.output(), /API tokens on: \/rpc and \/events need one \(1 configured\)/);
  assert.doesNotMatch(d.output(), new RegExp(reader), "the token is never logged");
  assert.equal(await d.stop(), 0, d.output());
});
