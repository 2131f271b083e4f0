/**
 * `Autocrypt:` and `Autocrypt-Gossip:` header values (Autocrypt Level 1, docs/protocol-notes.md
 * §2): parse with the spec's rules (addr required, keydata last, unknown critical attributes
 * invalidate,
 * `_`-attributes ignored, whitespace inside keydata removed) and format folded for MIME. Pure.
 */
import { fromBase64, toBase64 } from "./armor.ts";

/** A valid header value. */
export interface AutocryptHeader {
  /** Lower-case address. */
  readonly addr: string;
  readonly preferEncrypt: "mutual" | "nopreference";
  /** Binary transferable public key. */
  readonly keydata: Uint8Array;
  /** Non-critical attributes that were present (e.g. `_verified`). */
  readonly extra: Readonly<Record<string, string>>;
}

/** Largest header value accepted (the spec's 10 KiB bound). */
export const MAX_HEADER_BYTES = 10 * 1024;

/** Parses one header value; returns undefined when it is not a valid Autocrypt header. */
export function parseAutocrypt(value: string): AutocryptHeader | undefined {
  if (value.length > MAX_HEADER_BYTES) return undefined;
  const attrs = new Map<string, string>();
  const order: string[] = [];
  for (const part of value.split(";")) {
    const eq = part.indexOf("=");
    if (eq < 0) {
      if (part.trim() === "") continue;
      return undefined;
    }
    const key = part.slice(0, eq).trim().toLowerCase();
    if (attrs.has(key)) return undefined;
    attrs.set(key, part.slice(eq + 1).trim());
    order.push(key);
  }
  const addr = attrs.get("addr");
  const keydata = attrs.get("keydata");
  if (!addr || !keydata || order.at(-1) !== "keydata") return undefined;
  const extra: Record<string, string> = {};
  for (const key of order) {
    if (key === "addr" || key === "keydata" || key === "prefer-encrypt") continue;
    if (!key.startsWith("_")) return undefined; // unknown critical attribute
    extra[key] = attrs.get(key)!;
  }
  let key: Uint8Array;
  try {
    key = fromBase64(keydata.replace(/\s+/g, ""));
  } catch {
    return undefined;
  }
  if (key.length === 0) return undefined;
  return {
    addr: addr.toLowerCase(),
    preferEncrypt: attrs.get("prefer-encrypt") === "mutual" ? "mutual" : "nopreference",
    keydata: key,
    extra,
  };
}

/**
 * Of several `Autocrypt:` values, the last valid one whose addr equals `fromAddr` (Delta Chat
 * takes the last since 2.16); undefined when none qualifies.
 */
export function pickAutocrypt(
  values: readonly string[],
  fromAddr: string,
): AutocryptHeader | undefined {
  const from = fromAddr.toLowerCase();
  let found: AutocryptHeader | undefined;
  for (const v of values) {
    const h = parseAutocrypt(v);
    if (h && h.addr === from) found = h;
  }
  return found;
}

/**
 * Formats a header value. Keydata is split into 76-character chunks joined by CRLF + space, so
 * a header line never exceeds 78 characters and the value unfolds to spaces (which parsers strip).
 * `Autocrypt-Gossip` omits prefer-encrypt: pass `preferEncrypt: undefined`.
 */
export function formatAutocrypt(h: {
  addr: string;
  keydata: Uint8Array;
  preferEncrypt?: "mutual";
  extra?: Record<string, string>;
}): string {
  const parts = [`addr=${h.addr.toLowerCase()}`];
  if (h.preferEncrypt) parts.push(`prefer-encrypt=${h.preferEncrypt}`);
  for (const [k, v] of Object.entries(h.extra ?? {})) {
    if (!k.startsWith("_")) throw new Error(`extra Autocrypt attribute "${k}" must start with "_"`);
    parts.push(`${k}=${v}`);
  }
  const b64 = toBase64(h.keydata);
  const chunks: string[] = [];
  for (let i = 0; i < b64.length; i += 76) chunks.push(b64.slice(i, i + 76));
  return `${parts.join("; ")}; keydata=\r\n ${chunks.join("\r\n ")}`;
}
