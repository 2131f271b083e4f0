/**
 * ImapLoop against the real test relay: it reaches 4000, reports new mail, drops below 3000 within
 * seconds when the relay's mail servers die, and comes back to 4000 by itself when they return.
 */
import assert from "node:assert/strict";
import { Connectivity } from "../../src/constants.ts";
import { ConnectivityMonitor } from "../../src/core/connectivity.ts";
import type { GatewayEvent } from "../../src/events/types.ts";
import { ImapLoop } from "../../src/transport/imap_loop.ts";
import type { ServerParams } from "../../src/transport/server_params.ts";
import { createSmtpTransport } from "../../src/transport/smtp_client.ts";
import { NO_RELAY, startRelay } from "../_helpers/relay.ts";

/** Resolves with the first recorded event matching `pred` (also one recorded before the call). */
function waitFor(
  events: { at: number; e: GatewayEvent }[],
  pred: (e: GatewayEvent) => boolean,
  timeoutMs: number,
  from = 0,
): Promise<{ at: number; e: GatewayEvent }> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const check = () => {
      const hit = events.slice(from).find((x) => pred(x.e));
      if (hit) return resolve(hit);
      if (Date.now() > deadline) {
        return reject(
          new Error(
            `no matching event in ${timeoutMs} ms; got ${JSON.stringify(events.slice(from))}`,
          ),
        );
      }
      setTimeout(check, 20);
    };
    check();
  });
}

const level = (n: (l: number) => boolean) => (e: GatewayEvent) =>
  e.kind === "ConnectivityChanged" && n(e.connectivity);

Deno.test({
  name:
    "ImapLoop: 4000 when connected, below 3000 within seconds of a relay outage, 4000 again after",
  ignore: NO_RELAY,
  async fn() {
    await using relay = await startRelay({ filter: false });
    const acc = await relay.register();
    const params: ServerParams = {
      imap: { host: relay.host, port: relay.imapsPort, security: "ssl", user: acc.email },
      smtp: { host: relay.host, port: relay.smtpsPort, security: "ssl", user: acc.email },
    };
    const events: { at: number; e: GatewayEvent }[] = [];
    const sink = { publish: (e: GatewayEvent) => events.push({ at: performance.now(), e }) };
    const connectivity = new ConnectivityMonitor(sink);
    assert.equal(connectivity.level(), Connectivity.NOT_CONFIGURED);
    const counts: number[] = [];
    const loop = new ImapLoop({ params, password: acc.password, connectivity, events: sink });
    loop.onNewMail((n) => counts.push(n));
    const ac = new AbortController();
    const t0 = performance.now();
    loop.start(ac.signal);
    try {
      const up = await waitFor(events, level((l) => l === Connectivity.CONNECTED), 15_000);
      console.log(`connected after ${Math.round(up.at - t0)} ms`);
      assert.deepEqual(
        events.filter((x) => x.e.kind === "ConnectivityChanged").map((x) => x.e),
        [
          { kind: "ConnectivityChanged", connectivity: Connectivity.CONNECTING },
          { kind: "ConnectivityChanged", connectivity: Connectivity.CONNECTED },
        ],
      );
      assert.equal(counts[0], 0, "the listener hears the count after connecting");

      const smtp = createSmtpTransport(params.smtp, acc.password);
      try {
        await smtp.sendMail({ from: acc.email, to: acc.email, subject: "hi", text: "hello" });
      } finally {
        smtp.close();
      }
      const deadline = Date.now() + 10_000;
      while (!counts.includes(1) && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
      }
      assert.ok(counts.includes(1), `IDLE reported the new mail (counts ${counts})`);

      const mark = events.length;
      const stopAt = performance.now();
      await relay.stopMail();
      const down = await waitFor(events, level((l) => l < Connectivity.WORKING), 5_000, mark);
      console.log(`outage noticed ${Math.round(down.at - stopAt)} ms after stopMail() began`);
      assert.equal(connectivity.level() < Connectivity.WORKING, true);

      await new Promise((r) => setTimeout(r, 2_500)); // a few failed attempts with back-off
      assert.ok(connectivity.level() < Connectivity.WORKING, "still down while the relay is");
      assert.ok(
        events.slice(mark).filter((x) => level((l) => l === Connectivity.CONNECTING)(x.e)).length >=
          2,
        "it kept retrying",
      );

      const mark2 = events.length;
      const startAt = performance.now();
      await relay.startMail();
      const back = await waitFor(events, level((l) => l === Connectivity.CONNECTED), 40_000, mark2);
      console.log(`reconnected ${Math.round(back.at - startAt)} ms after startMail() began`);
      assert.equal(connectivity.level(), Connectivity.CONNECTED);
    } finally {
      ac.abort();
      await loop.stop();
    }
    assert.equal(connectivity.level(), Connectivity.NOT_CONNECTED);
  },
});

/** Pids of `root` and all its descendants (from /proc). */
function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const e of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    try {
      const stat = Deno.readTextFileSync(`/proc/${e.name}/stat`);
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(e.name)]);
    } catch { /* the process ended meanwhile */ }
  }
  const out: number[] = [];
  const walk = (pid: number) => {
    out.push(pid);
    for (const c of children.get(pid) ?? []) walk(c);
  };
  walk(root);
  return out;
}

Deno.test({
  name: "ImapLoop: a hung relay (processes stopped, sockets open) is noticed by the NOOP heartbeat",
  ignore: NO_RELAY,
  async fn() {
    await using relay = await startRelay({ filter: false });
    const acc = await relay.register();
    const endpoint = {
      host: relay.host,
      port: relay.imapsPort,
      security: "ssl" as const,
      user: acc.email,
    };
    const events: { at: number; e: GatewayEvent }[] = [];
    const sink = { publish: (e: GatewayEvent) => events.push({ at: performance.now(), e }) };
    const connectivity = new ConnectivityMonitor(sink);
    const loop = new ImapLoop({
      params: { imap: endpoint, smtp: endpoint },
      password: acc.password,
      connectivity,
      events: sink,
      heartbeatMs: 1_000,
      heartbeatTimeoutMs: 1_000,
    });
    const ac = new AbortController();
    loop.start(ac.signal);
    let frozen: number[] = [];
    try {
      await waitFor(events, level((l) => l === Connectivity.CONNECTED), 15_000);
      const mark = events.length;
      frozen = processTree(relay.pids.dovecot!);
      const t0 = performance.now();
      for (const pid of frozen) Deno.kill(pid, "SIGSTOP");
      const down = await waitFor(events, level((l) => l < Connectivity.WORKING), 5_000, mark);
      console.log(`hung relay noticed after ${Math.round(down.at - t0)} ms`);
      const mark2 = events.length;
      for (const pid of frozen.splice(0)) Deno.kill(pid, "SIGCONT");
      await waitFor(events, level((l) => l === Connectivity.CONNECTED), 40_000, mark2);
    } finally {
      for (const pid of frozen) Deno.kill(pid, "SIGCONT");
      ac.abort();
      await loop.stop();
    }
  },
});
