/** STUN binding (RFC 8489): the request's bytes, the response decoder, and its refusals. */
import assert from "node:assert/strict";
import {
  decodeBindingResponse,
  encodeBindingRequest,
  queryStunMapping,
  STUN_MAGIC_COOKIE,
} from "../../../src/transport/p2p/stun.ts";

const TXID = Uint8Array.from({ length: 12 }, (_, i) => i + 1);

/** A Binding success response with the given attributes (type, value). */
function response(attrs: [number, Uint8Array][], txid = TXID, type = 0x0101): Uint8Array {
  const body = attrs.flatMap(([t, v]) => {
    const pad = (4 - (v.length % 4)) % 4;
    return [t >> 8, t & 255, v.length >> 8, v.length & 255, ...v, ...new Array(pad).fill(0)];
  });
  const out = new Uint8Array(20 + body.length);
  const dv = new DataView(out.buffer);
  dv.setUint16(0, type);
  dv.setUint16(2, body.length);
  dv.setUint32(4, STUN_MAGIC_COOKIE);
  out.set(txid, 8);
  out.set(body, 20);
  return out;
}

/** XOR-MAPPED-ADDRESS for IPv4 a.b.c.d:port (RFC 8489 §14.2). */
function xorV4(ip: number[], port: number): Uint8Array {
  const xport = port ^ (STUN_MAGIC_COOKIE >>> 16);
  const c = [0x21, 0x12, 0xa4, 0x42];
  return Uint8Array.from([0, 1, xport >> 8, xport & 255, ...ip.map((b, i) => b ^ c[i]!)]);
}

Deno.test("a Binding request is the 20-byte header with the cookie and transaction id", () => {
  const req = encodeBindingRequest(TXID);
  assert.deepEqual(
    [...req.subarray(0, 8)],
    [0x00, 0x01, 0x00, 0x00, 0x21, 0x12, 0xa4, 0x42],
  );
  assert.deepEqual(req.subarray(8), TXID);
  assert.throws(() => encodeBindingRequest(new Uint8Array(11)));
});

Deno.test("XOR-MAPPED-ADDRESS decodes (IPv4 and IPv6) and wins over MAPPED-ADDRESS", () => {
  const plain = Uint8Array.from([0, 1, 0x1f, 0x90, 10, 0, 0, 1]); // 10.0.0.1:8080
  assert.deepEqual(
    decodeBindingResponse(
      response([[0x0001, plain], [0x0020, xorV4([203, 0, 113, 2], 40000)]]),
      TXID,
    ),
    { hostname: "203.0.113.2", port: 40000 },
  );
  assert.deepEqual(decodeBindingResponse(response([[0x0001, plain]]), TXID), {
    hostname: "10.0.0.1",
    port: 8080,
  });
  // IPv6 2001:db8::1 port 3478, XORed with cookie ‖ transaction id
  const ip6 = [0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1];
  const mask = [0x21, 0x12, 0xa4, 0x42, ...TXID];
  const xport = 3478 ^ 0x2112;
  const v6 = Uint8Array.from([0, 2, xport >> 8, xport & 255, ...ip6.map((b, i) => b ^ mask[i]!)]);
  assert.deepEqual(decodeBindingResponse(response([[0x0020, v6]]), TXID), {
    hostname: "2001:db8:0:0:0:0:0:1",
    port: 3478,
  });
});

Deno.test("another transaction, another type, a bad cookie or a truncated message decode to nothing", () => {
  const good = response([[0x0020, xorV4([1, 2, 3, 4], 5)]]);
  assert.ok(decodeBindingResponse(good, TXID));
  assert.equal(decodeBindingResponse(good, new Uint8Array(12)), undefined);
  assert.equal(
    decodeBindingResponse(response([[0x0020, xorV4([1, 2, 3, 4], 5)]], TXID, 0x0111), TXID),
    undefined,
  );
  const badCookie = good.slice();
  badCookie[4] = 0;
  assert.equal(decodeBindingResponse(badCookie, TXID), undefined);
  assert.equal(decodeBindingResponse(good.subarray(0, good.length - 4), TXID), undefined);
  assert.equal(decodeBindingResponse(good.subarray(0, 10), TXID), undefined);
  assert.equal(decodeBindingResponse(response([]), TXID), undefined);
});

Deno.test("a query over UDP learns the mapping, and a silent server gives none", async () => {
  const server = Deno.listenDatagram({ transport: "udp", hostname: "127.0.0.1", port: 0 });
  const serverPort = (server.addr as Deno.NetAddr).port;
  const serving = (async () => {
    const [req, from] = await server.receive();
    const reply = response([[0x0020, xorV4([198, 51, 100, 7], 4242)]], req.slice(8, 20));
    await server.send(reply, from);
  })();
  try {
    const got = await queryStunMapping(
      { hostname: "127.0.0.1", port: 0 },
      { hostname: "127.0.0.1", port: serverPort },
      1_000,
    );
    assert.deepEqual(got.mapped, { hostname: "198.51.100.7", port: 4242 });
    assert.ok(got.localPort > 0);
    await serving;
    // nobody answers on this port now that the server is closed
    server.close();
    const none = await queryStunMapping(
      { hostname: "127.0.0.1", port: 0 },
      { hostname: "127.0.0.1", port: serverPort },
      50,
    );
    assert.equal(none.mapped, undefined);
  } finally {
    try {
      server.close();
    } catch {
      // closed above
    }
  }
});
