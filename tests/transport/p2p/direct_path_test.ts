/**
 * The direct path over real networking: each side a process in its own network namespace
 * (tests/_helpers/netns.ts), joined by a veth pair or behind NAT namespaces with coturn as the
 * STUN server. Runs as root inside the test run's namespace; skipped by `--unit` runs.
 */
import assert from "node:assert/strict";
import { canMakeNamespaces, NetLab } from "../../_helpers/netns.ts";
import { PeerProcess, runPair } from "../../_helpers/p2p_process.ts";
import { generatedSha256 } from "../../_helpers/p2p_bytes.ts";

const NO_NET = Deno.env.get("EDGE_TEST_NO_RELAY") === "1" || !(await canMakeNamespaces());
const MiB = 1024 * 1024;

/** Two namespaces A (10.77.0.1) and B (10.77.0.2) on one veth pair. */
async function vethPair(lab: NetLab) {
  const a = await lab.ns("a"), b = await lab.ns("b");
  await lab.link(a, "p2pa", "10.77.0.1/24", b, "p2pb", "10.77.0.2/24");
  return { a, b };
}

function peers(
  a: string,
  b: string,
  size: number,
  endpoint: Record<string, unknown>,
  sha256?: string,
) {
  const base = { size, transferId: "xfer-1", ...(sha256 ? { sha256 } : {}) };
  const sender = new PeerProcess(a, { ...base, role: "send", endpoint });
  const receiver = new PeerProcess(b, { ...base, role: "receive", endpoint });
  return { sender, receiver, stop: () => Promise.all([sender.stop(), receiver.stop()]) };
}

Deno.test({
  name: "1 GiB crosses a veth pair between two namespaces, identical",
  ignore: NO_NET,
  sanitizeResources: false,
  fn: async () => {
    await using lab = new NetLab("g");
    const { a, b } = await vethPair(lab);
    const size = 1024 * MiB;
    const p = peers(a, b, size, {}, await generatedSha256(size));
    try {
      const r = await runPair(p.sender, p.receiver);
      assert.equal(r.sender.outcome.ok, true, JSON.stringify(r.sender));
      assert.equal(r.receiver!.outcome.ok, true, JSON.stringify(r.receiver));
      assert.equal(r.receiver!.outcome.bytes, size);
      assert.equal(r.receiver!.mismatches, 0);
    } finally {
      await p.stop();
    }
  },
});

Deno.test({
  name:
    "the link cut mid-transfer (down, then up): resumed from the verified offset, not restarted",
  ignore: NO_NET,
  sanitizeResources: false,
  fn: async () => {
    await using lab = new NetLab("c");
    const { a, b } = await vethPair(lab);
    // 100 Mbit/s, so that the cut lands mid-transfer
    await lab.exec(
      a,
      "tc",
      "qdisc",
      "add",
      "dev",
      "p2pa",
      "root",
      "tbf",
      "rate",
      "100mbit",
      "burst",
      "64kb",
      "latency",
      "50ms",
    );
    const size = 48 * MiB;
    const p = peers(a, b, size, {
      idleTimeoutMs: 1_500,
      keepAliveMs: 300,
      connectTimeoutMs: 10_000,
    });
    let cut: Promise<void> | undefined;
    p.receiver.onProgress = (bytes) => {
      if (cut || bytes < 12 * MiB) return;
      cut = (async () => {
        await lab.exec(a, "ip", "link", "set", "p2pa", "down");
        await new Promise((r) => setTimeout(r, 2_500)); // longer than the idle timeout: a real drop
        await lab.exec(a, "ip", "link", "set", "p2pa", "up");
      })();
    };
    try {
      const r = await runPair(p.sender, p.receiver);
      await cut;
      const s = r.sender.outcome, rc = r.receiver!.outcome;
      assert.equal(s.ok, true, JSON.stringify(r.sender));
      assert.equal(rc.ok, true, JSON.stringify(r.receiver));
      assert.ok(cut, "the link was cut");
      assert.ok(rc.attempts >= 2, `resumed on a new connection: ${JSON.stringify(rc)}`);
      assert.ok(rc.resumedFrom[1] >= 12 * MiB, `resumed from ${rc.resumedFrom[1]}`);
      assert.equal(rc.wireBytes, size, "the receiver got every byte once");
      assert.ok(s.wireBytes - size < 16 * MiB, `resent ${s.wireBytes - size} bytes`);
      assert.equal(r.receiver!.mismatches, 0);
    } finally {
      await p.stop();
    }
  },
});

Deno.test({
  name:
    "UDP dropped by nftables: no connection within the bound on either side (the fallback signal)",
  ignore: NO_NET,
  sanitizeResources: false,
  fn: async () => {
    await using lab = new NetLab("u");
    const { a, b } = await vethPair(lab);
    await lab.nft(
      b,
      "table inet p2ptest {\n chain in {\n  type filter hook input priority 0;\n  meta l4proto udp drop\n }\n}\n",
    );
    const p = peers(a, b, 2 * MiB, { connectTimeoutMs: 3_000 });
    try {
      const r = await runPair(p.sender, p.receiver);
      assert.equal(r.sender.outcome.reason, "connect_timeout");
      assert.equal(r.receiver!.outcome.reason, "connect_timeout");
    } finally {
      await p.stop();
    }
  },
});

Deno.test({
  name:
    "a firewall in front of the sender: its own dial (the answer's pin and token) opens the path",
  ignore: NO_NET,
  sanitizeResources: false,
  fn: async () => {
    await using lab = new NetLab("r");
    const { a, b } = await vethPair(lab);
    // A (the sender) takes no new UDP flow from outside: the receiver's dials die until the
    // sender's dial to B (the answer's candidates, B's pin, B's token) opens the flow, as a
    // stateful firewall or NAT does; either connection may then carry the file.
    await lab.nft(
      a,
      'table inet p2ptest {\n chain in {\n  type filter hook input priority 0;\n  iifname "p2pa" meta l4proto udp ct state new drop\n }\n}\n',
    );
    const p = peers(a, b, 2 * MiB, { connectTimeoutMs: 6_000 });
    try {
      const r = await runPair(p.sender, p.receiver);
      assert.equal(r.sender.outcome.ok, true, JSON.stringify(r.sender));
      assert.equal(r.receiver!.outcome.ok, true, JSON.stringify(r.receiver));
      assert.equal(r.receiver!.mismatches, 0);
      // Without the answer the sender does not dial, and nothing connects.
      const q = peers(a, b, 2 * MiB, { connectTimeoutMs: 2_000 });
      try {
        const none = await runPair(q.sender, q.receiver, false);
        assert.equal(none.receiver!.outcome.reason, "connect_timeout");
      } finally {
        await q.stop();
      }
    } finally {
      await p.stop();
    }
  },
});

/**
 * "Outside" (203.0.113.0/24, coturn on .1) with two NAT namespaces (.2, .3) masquerading their
 * LANs 10.1.0.0/24 and 10.2.0.0/24, where A (10.1.0.2) and B (10.2.0.2) live. `symmetric`
 * makes both NATs pick a random port per flow (a mapping that changes per destination).
 */
async function natLab(lab: NetLab, symmetric: boolean) {
  const out = await lab.ns("o"), na = await lab.ns("na"), nb = await lab.ns("nb");
  const a = await lab.ns("a"), b = await lab.ns("b");
  await lab.exec(out, "ip", "link", "add", "br0", "type", "bridge");
  await lab.exec(out, "ip", "addr", "add", "203.0.113.1/24", "dev", "br0");
  await lab.exec(out, "ip", "link", "set", "br0", "up");
  for (const [n, ns, wan] of [["a", na, "203.0.113.2/24"], ["b", nb, "203.0.113.3/24"]] as const) {
    await lab.link(out, `o${n}`, null, ns, "wan", wan);
    await lab.exec(out, "ip", "link", "set", `o${n}`, "master", "br0");
  }
  for (const [n, nat, host] of [["1", na, a], ["2", nb, b]] as const) {
    await lab.link(nat, "lan", `10.${n}.0.1/24`, host, "eth0", `10.${n}.0.2/24`);
    await lab.exec(host, "ip", "route", "add", "default", "via", `10.${n}.0.1`);
    await lab.exec(nat, "sysctl", "-qw", "net.ipv4.ip_forward=1");
    const masquerade = symmetric ? "masquerade fully-random" : "masquerade";
    await lab.nft(
      nat,
      // A home router: unsolicited packets from the outside are dropped before conntrack confirms
      // them (else the peer's first packets would claim the port and break port preservation).
      `table ip nat {\n chain post {\n  type nat hook postrouting priority 100;\n  oifname "wan" ${masquerade}\n }\n` +
        ` chain in {\n  type filter hook input priority 0;\n  iifname "wan" ct state new drop\n }\n}\n`,
    );
  }
  const stun = new Deno.Command("ip", {
    args: [
      "netns",
      "exec",
      out,
      "turnserver",
      "-n",
      "--no-cli",
      "-S",
      "-L",
      "203.0.113.1",
      "--listening-port",
      "3478",
      "--no-tls",
      "--no-dtls",
      "-l",
      "stdout",
      "--simple-log",
    ],
    stdout: "null",
    stderr: "null",
  }).spawn();
  for (let i = 0; i < 50; i++) {
    if ((await lab.exec(out, "ss", "-uln")).includes("203.0.113.1:3478")) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    a,
    b,
    stop: async () => {
      stun.kill("SIGTERM");
      await stun.status;
    },
  };
}

for (const symmetric of [false, true]) {
  Deno.test({
    name: symmetric
      ? "behind NATs whose mapping changes per destination: no connection within the bound"
      : "behind two port-preserving NATs: a direct connection through the STUN mappings",
    ignore: NO_NET,
    sanitizeResources: false,
    fn: async () => {
      await using lab = new NetLab(symmetric ? "s" : "n");
      const net = await natLab(lab, symmetric);
      const endpoint = { stun: { hostname: "203.0.113.1", port: 3478 }, connectTimeoutMs: 6_000 };
      const p = peers(net.a, net.b, 4 * MiB, endpoint);
      try {
        const r = await runPair(p.sender, p.receiver);
        if (symmetric) {
          assert.equal(r.sender.outcome.reason, "connect_timeout", JSON.stringify(r.sender));
          assert.equal(r.receiver!.outcome.reason, "connect_timeout");
        } else {
          assert.equal(r.sender.outcome.ok, true, JSON.stringify(r.sender));
          assert.equal(r.receiver!.outcome.ok, true, JSON.stringify(r.receiver));
          assert.equal(r.receiver!.mismatches, 0);
        }
      } finally {
        await p.stop();
        await net.stop();
      }
    },
  });
}
