/** Dials a peer's candidates from the shared endpoint and authenticates on each connection. */
import { P2pWire } from "../../constants.ts";
import type { PeerDescription } from "./offer.ts";
import { type Link, makeLink } from "./link.ts";
import type { OnceLog } from "./once_log.ts";
import { encodeHello, FrameReader } from "./wire.ts";
import { withinMs } from "./timeout.ts";

/** Transport settings of every connection the direct path opens or accepts. */
export interface ConnSettings {
  idleTimeoutMs: number;
  keepAliveMs: number;
}

/**
 * Connects to one candidate (the pin and name checked by TLS), sends HELLO with the peer's token
 * and waits for ACCEPTED. Returns the link, or undefined (the reason logged once when it is a
 * refusal: a wrong pin, or the peer closing with "refused").
 */
export async function dialCandidate(
  endpoint: Deno.QuicEndpoint,
  peer: PeerDescription,
  index: number,
  role: typeof P2pWire.ROLE_RECEIVER | typeof P2pWire.ROLE_SENDER,
  settings: ConnSettings,
  log: OnceLog,
): Promise<Link | undefined> {
  const c = peer.candidates[index]!;
  let conn: Deno.QuicConn;
  try {
    conn = await Deno.connectQuic({
      hostname: c.hostname,
      port: c.port,
      serverName: peer.cert.serverName,
      caCerts: [peer.cert.pem],
      alpnProtocols: [P2pWire.ALPN],
      endpoint,
      maxIdleTimeout: settings.idleTimeoutMs,
      keepAliveInterval: settings.keepAliveMs,
    });
  } catch (err) {
    const msg = String(err);
    if (/certificate|UnknownIssuer|BadSignature|NotValidForName/i.test(msg)) {
      log.refuse("wrong_pin", peer.transferId, msg.slice(0, 160));
    }
    return undefined;
  }
  try {
    const stream = await conn.createBidirectionalStream();
    const writer = stream.writable.getWriter();
    const reader = new FrameReader(stream.readable);
    await writer.write(encodeHello({ role, transferId: peer.transferId, token: peer.token }));
    const ack = await reader.exact(1);
    if (!ack || ack[0] !== P2pWire.ACCEPTED) throw new Error("not accepted");
    return makeLink(conn, reader, writer, "dialed");
  } catch {
    const info = await withinMs(conn.closed.catch(() => undefined), 200);
    if (info?.closeCode === P2pWire.CLOSE_REFUSED) {
      log.refuse("wrong_token", peer.transferId, "refused by the peer");
    }
    try {
      conn.close({ closeCode: P2pWire.CLOSE_DONE, reason: "" });
    } catch {
      // already closed
    }
    return undefined;
  }
}
