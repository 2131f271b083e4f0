/**
 * Group send benchmark (issue 9 §6), called from bench/drivers/run.ts (alone with
 * `BENCH_ONLY=groups deno task bench`): one relay with the chatmail filter, a gateway and a Delta
 * Chat core as senders, and N Delta Chat cores as members (default 20), each joined to both
 * senders by SecureJoin and put into a group of each. The same members receive both groups, so
 * only the sender differs.
 *
 * - Fan-out: time from just before `send_msg` to the last member's `IncomingMsg` (all N), for the
 *   gateway's group and for the Delta Chat group, alternating, median of the runs; the ratio.
 * - Sender cost per extra member: time from `send_msg` to the sender's `MsgDelivered` (the relay
 *   took the one mail for every member) in a group of 5 and of N members; (N-size − 5-size)/(N−5).
 *
 * Writes its section of BENCHMARKS.md between `<!-- groups:begin -->` and `<!-- groups:end -->`.
 */
import { deltaChatInstalled, DeltaChatPeer } from "../../tests/_helpers/deltachat_peer.ts";
import { GatewayPeer } from "../../tests/_helpers/gateway_peer.ts";
import { startRelay } from "../../tests/_helpers/relay.ts";
import { median } from "./e2e.ts";
import { writeBenchmarkSection } from "../drivers/benchmarks_md.ts";

const MEMBERS = Number(Deno.env.get("BENCH_GROUP_MEMBERS") ?? 20);
const SMALL = Math.min(5, MEMBERS);
const RUNS = Number(Deno.env.get("BENCH_GROUP_RUNS") ?? 5);
const BEGIN = "<!-- groups:begin -->";
const END = "<!-- groups:end -->";

const log = (msg: string) => console.error(`[bench groups] ${msg}`);

/** What the section reports (ms). */
export interface GroupsResult {
  readonly members: number;
  readonly runs: number;
  readonly gwFanoutMs: number[];
  readonly dcFanoutMs: number[];
  readonly gwDelivered: { small: number[]; large: number[] };
  readonly dcDelivered: { small: number[]; large: number[] };
  readonly wallS: number;
}

async function inBatches<T, R>(items: T[], size: number, fn: (t: T) => Promise<R>) {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += size) {
    out.push(...await Promise.all(items.slice(i, i + size).map(fn)));
  }
  return out;
}

/** A member joins the gateway's and the Delta Chat sender's 1:1 invites; their contact ids. */
async function join(
  m: DeltaChatPeer,
  gwLink: string,
  dcLink: string,
): Promise<void> {
  for (const link of [gwLink, dcLink]) {
    const from = m.events.length;
    await m.call("secure_join", m.accountId, link);
    await m.waitForEvent(
      (e) => e.event.kind === "SecurejoinJoinerProgress" && e.event.progress === 1000,
      120_000,
      from,
    );
  }
}

/** Waits for every member's next IncomingMsg (from its event index in `from`); the last time. */
async function allIncoming(members: DeltaChatPeer[], from: number[]): Promise<number> {
  const evs = await Promise.all(
    members.map((m, i) => m.waitForEvent((e) => e.event.kind === "IncomingMsg", 120_000, from[i])),
  );
  return Math.max(...evs.map((e) => e.t));
}

async function groupsBench(): Promise<GroupsResult> {
  const tStart = performance.now();
  await using relay = await startRelay({ filter: true });
  await using gw = await GatewayPeer.start("Edge Sender", relay);
  await using dc = await DeltaChatPeer.start("dcsender", relay, { displayName: "DC Sender" });
  const members = await inBatches(
    Array.from({ length: MEMBERS }, (_, i) => i),
    5,
    (i) => DeltaChatPeer.start(`m${i}`, relay, { displayName: `Member ${i}` }),
  );
  try {
    log(`${MEMBERS} members started`);
    const gwIds: number[] = [], dcIds: number[] = [];
    for (const m of members) {
      const gwLink = await gw.call<string>("get_chat_securejoin_qr_code", 1, null);
      const dcLink = await dc.call<string>("get_chat_securejoin_qr_code", dc.accountId, null);
      const [gf, df] = [gw.events.length, dc.events.length];
      await join(m, gwLink, dcLink);
      const g = await gw.waitForEvent(
        (e) => e.event.type === "SecurejoinInviterProgress" && e.event.progress === 1000,
        60_000,
        gf,
      );
      const d = await dc.waitForEvent(
        (e) => e.event.kind === "SecurejoinInviterProgress" && e.event.progress === 1000,
        60_000,
        df,
      );
      gwIds.push(g.event.contact_id as number);
      dcIds.push(d.event.contactId as number);
    }
    log("members joined both senders");

    const gwGroup = async (name: string, ids: number[]) => {
      const chat = await gw.call<number>("create_group_chat", 1, name, false);
      for (const id of ids) await gw.call("add_contact_to_chat", 1, chat, id);
      return chat;
    };
    const dcGroup = async (name: string, ids: number[]) => {
      const chat = await dc.call<number>("create_group_chat", dc.accountId, name, false);
      for (const id of ids) await dc.call("add_contact_to_chat", dc.accountId, chat, id);
      return chat;
    };
    const [gLarge, gSmall] = [
      await gwGroup("GW big", gwIds),
      await gwGroup("GW small", gwIds.slice(0, SMALL)),
    ];
    const [dLarge, dSmall] = [
      await dcGroup("DC big", dcIds),
      await dcGroup("DC small", dcIds.slice(0, SMALL)),
    ];

    /** Sends from the gateway; resolves with [ms to MsgDelivered, ms to the last IncomingMsg]. */
    const gwSend = async (chat: number, to: DeltaChatPeer[], text: string) => {
      const from = to.map((m) => m.events.length);
      const ef = gw.events.length;
      const t0 = performance.now();
      const id = await gw.call<number>("send_msg", 1, chat, { text });
      const delivered = await gw.waitForEvent(
        (e) => e.event.type === "MsgDelivered" && e.event.msg_id === id,
        120_000,
        ef,
      );
      const last = await allIncoming(to, from);
      return [delivered.t - t0, last - t0];
    };
    const dcSend = async (chat: number, to: DeltaChatPeer[], text: string) => {
      const from = to.map((m) => m.events.length);
      const ef = dc.events.length;
      const t0 = performance.now();
      const id = await dc.call<number>("send_msg", dc.accountId, chat, { text });
      const delivered = await dc.waitForEvent(
        (e) => e.event.kind === "MsgDelivered" && e.event.msgId === id,
        120_000,
        ef,
      );
      const last = await allIncoming(to, from);
      return [delivered.t - t0, last - t0];
    };

    // Warm-up: the first message announces each group (and gossips every key).
    await gwSend(gLarge, members, "warm-up");
    await dcSend(dLarge, members, "warm-up");
    await gwSend(gSmall, members.slice(0, SMALL), "warm-up");
    await dcSend(dSmall, members.slice(0, SMALL), "warm-up");
    log("warm-up done");

    const r: GroupsResult = {
      members: MEMBERS,
      runs: RUNS,
      gwFanoutMs: [],
      dcFanoutMs: [],
      gwDelivered: { small: [], large: [] },
      dcDelivered: { small: [], large: [] },
      wallS: 0,
    };
    for (let run = 0; run < RUNS; run++) {
      const [gd, gl] = await gwSend(gLarge, members, `gw ${run}`);
      const [dd, dl] = await dcSend(dLarge, members, `dc ${run}`);
      r.gwFanoutMs.push(gl), r.dcFanoutMs.push(dl);
      r.gwDelivered.large.push(gd), r.dcDelivered.large.push(dd);
      const [gs] = await gwSend(gSmall, members.slice(0, SMALL), `gw small ${run}`);
      const [ds] = await dcSend(dSmall, members.slice(0, SMALL), `dc small ${run}`);
      r.gwDelivered.small.push(gs), r.dcDelivered.small.push(ds);
      log(`run ${run + 1}: gateway ${gl.toFixed(0)} ms, Delta Chat ${dl.toFixed(0)} ms`);
    }
    return { ...r, wallS: (performance.now() - tStart) / 1000 };
  } catch (err) {
    console.error(`--- gateway ---\n${gw.daemon.output().slice(-4000)}`);
    throw err;
  } finally {
    await Promise.all(members.map((m) => m.stop().catch(() => {})));
  }
}

const ms = (x: number) => `${x.toFixed(0)} ms`;

function renderGroups(r: GroupsResult, command: string): string {
  const [g, d] = [median(r.gwFanoutMs), median(r.dcFanoutMs)];
  const perMember = (x: { small: number[]; large: number[] }) =>
    (median(x.large) - median(x.small)) / Math.max(1, r.members - SMALL);
  return `## Group send (${r.members} members)

Produced by \`${command}\` (\`bench/scenarios/groups.ts\`; with \`BENCH_ONLY=groups\` only this section is
run). One relay with the chatmail filter; a gateway and a Delta Chat 2.57 core send, ${r.members}
Delta Chat cores are the members of a group of each (the same members, so only the sender
differs). Median of ${r.runs} runs, alternating senders; took ${r.wallS.toFixed(0)} s.

| sender | send_msg → last member's IncomingMsg | send_msg → relay took the mail (${SMALL} / ${r.members} members) | sender cost per extra member |
| --- | --- | --- | --- |
| gateway | ${ms(g)} | ${ms(median(r.gwDelivered.small))} / ${ms(median(r.gwDelivered.large))} | ${
    perMember(r.gwDelivered).toFixed(1)
  } ms |
| Delta Chat | ${ms(d)} | ${ms(median(r.dcDelivered.small))} / ${
    ms(median(r.dcDelivered.large))
  } | ${perMember(r.dcDelivered).toFixed(1)} ms |

- Ratio gateway / Delta Chat (fan-out to the last member): **${
    (g / d).toFixed(2)
  }x** (target ≤ 1.0x).
- Runs (ms), gateway: ${r.gwFanoutMs.map((x) => x.toFixed(0)).join(", ")}; Delta Chat: ${
    r.dcFanoutMs.map((x) => x.toFixed(0)).join(", ")
  }.
- Both senders send one mail encrypted to every member and themselves; the relay delivers it to
  every member's mailbox, and each member core fetches and decrypts it. ${r.members + 2} peers, the
  relay and this process share the machine's ${navigator.hardwareConcurrency} vCPUs, so the
  members' receiving dominates the fan-out time.
`;
}

/** Replaces (or appends) the section in BENCHMARKS.md. */
async function writeGroupsSection(r: GroupsResult, command: string): Promise<void> {
  await writeBenchmarkSection({ begin: BEGIN, end: END }, renderGroups(r, command));
}

/** Runs the benchmark and writes its section (skipped without the Delta Chat core). */
export async function runGroupsSection(
  command = "npx --yes deno@2.9.5 task bench",
): Promise<GroupsResult | undefined> {
  if (!deltaChatInstalled()) {
    log("Delta Chat core not installed; group benchmark skipped");
    return undefined;
  }
  const r = await groupsBench();
  await writeGroupsSection(r, command);
  return r;
}
