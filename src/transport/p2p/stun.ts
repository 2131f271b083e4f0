/** STUN binding (RFC 8489): the request encoder, the response decoder, and one query over UDP. */
import type { Candidate } from "./candidates.ts";

/** RFC 8489 §5: the fixed magic cookie of every STUN message. */
export const STUN_MAGIC_COOKIE = 0x2112a442;
/** Message types: Binding request and Binding success response (§5, §18.2). */
export const STUN_BINDING_REQUEST = 0x0001;
export const STUN_BINDING_SUCCESS = 0x0101;
/** Attributes carrying the reflexive address (§14.1 MAPPED-ADDRESS, §14.2 XOR-MAPPED-ADDRESS). */
export const STUN_ATTR_MAPPED_ADDRESS = 0x0001;
export const STUN_ATTR_XOR_MAPPED_ADDRESS = 0x0020;
const HEADER_BYTES = 20;

/** A Binding request with the given 12-byte transaction id and no attributes. */
export function encodeBindingRequest(transactionId: Uint8Array): Uint8Array {
  if (transactionId.length !== 12) throw new Error("a STUN transaction id has 12 bytes");
  const out = new Uint8Array(HEADER_BYTES);
  const v = new DataView(out.buffer);
  v.setUint16(0, STUN_BINDING_REQUEST);
  v.setUint16(2, 0);
  v.setUint32(4, STUN_MAGIC_COOKIE);
  out.set(transactionId, 8);
  return out;
}

/**
 * The reflexive address of a Binding success response to `transactionId`; undefined for anything
 * else (another message, another transaction, a truncated or malformed one).
 */
export function decodeBindingResponse(
  msg: Uint8Array,
  transactionId: Uint8Array,
): Candidate | undefined {
  if (msg.length < HEADER_BYTES) return undefined;
  const v = new DataView(msg.buffer, msg.byteOffset, msg.byteLength);
  if (v.getUint16(0) !== STUN_BINDING_SUCCESS || v.getUint32(4) !== STUN_MAGIC_COOKIE) {
    return undefined;
  }
  const length = v.getUint16(2);
  if (length % 4 !== 0 || HEADER_BYTES + length > msg.length) return undefined;
  for (let i = 0; i < 12; i++) if (msg[8 + i] !== transactionId[i]) return undefined;
  let mapped: Candidate | undefined;
  for (let p = HEADER_BYTES; p + 4 <= HEADER_BYTES + length;) {
    const type = v.getUint16(p), len = v.getUint16(p + 2);
    const body = p + 4;
    if (body + len > HEADER_BYTES + length) return undefined;
    if (type === STUN_ATTR_XOR_MAPPED_ADDRESS) {
      const a = readAddress(msg, v, body, len, true);
      if (a) return a;
    } else if (type === STUN_ATTR_MAPPED_ADDRESS) {
      mapped ??= readAddress(msg, v, body, len, false);
    }
    p = body + len + ((4 - (len % 4)) % 4);
  }
  return mapped;
}

function readAddress(
  msg: Uint8Array,
  v: DataView,
  at: number,
  len: number,
  xor: boolean,
): Candidate | undefined {
  const family = v.getUint8(at + 1);
  const port = v.getUint16(at + 2) ^ (xor ? STUN_MAGIC_COOKIE >>> 16 : 0);
  if (family === 0x01 && len >= 8) {
    const ip = v.getUint32(at + 4) ^ (xor ? STUN_MAGIC_COOKIE : 0);
    return { hostname: [ip >>> 24, (ip >>> 16) & 255, (ip >>> 8) & 255, ip & 255].join("."), port };
  }
  if (family === 0x02 && len >= 20) {
    const mask = msg.slice(4, 20); // cookie ‖ transaction id
    const groups: string[] = [];
    for (let i = 0; i < 16; i += 2) {
      const hi = msg[at + 4 + i]! ^ (xor ? mask[i]! : 0);
      const lo = msg[at + 5 + i]! ^ (xor ? mask[i + 1]! : 0);
      groups.push(((hi << 8) | lo).toString(16));
    }
    return { hostname: groups.join(":"), port };
  }
  return undefined;
}

/**
 * Asks `server` for the public mapping of local UDP `hostname:port` (three tries, `timeoutMs`
 * each). The socket is closed before returning, so the QUIC endpoint can bind the same port next.
 * Returns the mapping and the port that was bound (useful when `port` is 0).
 */
export async function queryStunMapping(
  local: { hostname: string; port: number },
  server: Candidate,
  timeoutMs: number,
): Promise<{ mapped: Candidate | undefined; localPort: number }> {
  const sock = Deno.listenDatagram({
    transport: "udp",
    hostname: local.hostname,
    port: local.port,
  });
  const localPort = (sock.addr as Deno.NetAddr).port;
  try {
    const txid = crypto.getRandomValues(new Uint8Array(12));
    const req = encodeBindingRequest(txid);
    const to: Deno.NetAddr = { transport: "udp", hostname: server.hostname, port: server.port };
    // One receive at a time: a pending one is carried over a timeout into the next try.
    let pending: Promise<[Uint8Array, Deno.Addr] | undefined> | undefined;
    for (let attempt = 0; attempt < 3; attempt++) {
      await sock.send(req, to);
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        pending ??= sock.receive().catch(() => undefined);
        let timer: ReturnType<typeof setTimeout> | undefined;
        const got = await Promise.race([
          pending,
          new Promise<"timeout">((r) =>
            timer = setTimeout(() => r("timeout"), deadline - Date.now())
          ),
        ]);
        clearTimeout(timer);
        if (got === "timeout") break;
        pending = undefined;
        if (!got) return { mapped: undefined, localPort };
        const mapped = decodeBindingResponse(got[0], txid);
        if (mapped) return { mapped, localPort };
      }
    }
    return { mapped: undefined, localPort };
  } finally {
    sock.close();
  }
}
