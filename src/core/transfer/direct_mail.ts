/**
 * The hidden direct-path mail's header (docs/transfer.md#direct-path): `id`, `action`
 * (offer, answer, decline), on an offer `until` (Unix ms: the sender waits for an answer until
 * then), on a decline `reason`; read strictly. The offer or answer itself is the JSON body.
 */
import { DirectAction } from "../../protocol.ts";

/** What an `Edge-Transfer-Direct` header says. */
export type DirectHeader =
  | { readonly id: string; readonly action: "offer"; readonly until: number }
  | { readonly id: string; readonly action: "answer" }
  | { readonly id: string; readonly action: "decline"; readonly reason: string };

/** The largest JSON body of an offer or answer taken (a few candidates and a certificate). */
export const MAX_DIRECT_BODY_BYTES = 16 * 1024;

const ID = /^[0-9a-f]{32}$/;
const UINT = /^(0|[1-9][0-9]{0,15})$/;
const TOKEN = /^[a-z0-9_]{1,40}$/;

export function formatDirect(h: DirectHeader): string {
  switch (h.action) {
    case DirectAction.OFFER:
      return `id=${h.id}; action=offer; until=${h.until}`;
    case DirectAction.ANSWER:
      return `id=${h.id}; action=answer`;
    case DirectAction.DECLINE:
      return `id=${h.id}; action=decline; reason=${h.reason}`;
  }
}

export function parseDirect(value: string | undefined): DirectHeader | undefined {
  if (value === undefined) return undefined;
  const f = new Map<string, string>();
  for (const item of value.split(";")) {
    const t = item.trim();
    if (t === "") continue;
    const eq = t.indexOf("=");
    if (eq <= 0) return undefined;
    f.set(t.slice(0, eq).trim().toLowerCase(), t.slice(eq + 1).trim());
  }
  const id = f.get("id") ?? "";
  if (!ID.test(id)) return undefined;
  switch (f.get("action")) {
    case DirectAction.OFFER: {
      const until = f.get("until") ?? "";
      const n = Number(until);
      return UINT.test(until) && Number.isSafeInteger(n)
        ? { id, action: "offer", until: n }
        : undefined;
    }
    case DirectAction.ANSWER:
      return { id, action: "answer" };
    case DirectAction.DECLINE: {
      const reason = f.get("reason") ?? "";
      return TOKEN.test(reason) ? { id, action: "decline", reason } : undefined;
    }
    default:
      return undefined;
  }
}

/** The JSON object of an offer or answer body, or undefined (too long, not JSON, not an object). */
export function parseDirectBody(body: Uint8Array): Record<string, unknown> | undefined {
  if (body.byteLength === 0 || body.byteLength > MAX_DIRECT_BODY_BYTES) return undefined;
  try {
    const v = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(body));
    return typeof v === "object" && v !== null && !Array.isArray(v) ? v : undefined;
  } catch {
    return undefined;
  }
}
