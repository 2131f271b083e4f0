/**
 * The transfer headers (docs/transfer.md#headers), written and read strictly: `k=v` pairs joined
 * by `; `, each value from a closed alphabet, numbers bounded. A header that does not parse is
 * treated as absent by the caller, which then refuses the mail.
 */
import { TransferAction } from "../../protocol.ts";

/** What the chat message of a transfer announces. */
export interface TransferAnnounce {
  readonly id: string;
  readonly size: number;
  /** SHA-256 of the whole file, lower-case hex. */
  readonly sha256: string;
  readonly partSize: number;
  readonly parts: number;
  readonly name: string;
  readonly mime: string;
}

/** What a part mail says about its payload. */
export interface TransferPart {
  readonly id: string;
  readonly index: number;
  readonly offset: number;
  readonly length: number;
  /** SHA-256 of this part's payload, lower-case hex. */
  readonly sha256: string;
}

/** A control mail: parts asked for again, done, or refused with a reason. */
export type TransferControl =
  | { readonly id: string; readonly action: "request"; readonly parts: readonly number[] }
  | { readonly id: string; readonly action: "done" }
  | { readonly id: string; readonly action: "refused"; readonly reason: string };

const ID = /^[0-9a-f]{32}$/;
const HEX64 = /^[0-9a-f]{64}$/;
const UINT = /^(0|[1-9][0-9]{0,15})$/;
const TOKEN = /^[a-z0-9_]{1,40}$/;
const MIME = /^[a-z0-9][a-z0-9!#$&^_.+-]{0,63}\/[a-z0-9][a-z0-9!#$&^_.+-]{0,63}$/;
const B64URL = /^[A-Za-z0-9_-]{0,400}$/;
/** At most this many part indexes in one request (they are written as ranges). */
export const MAX_REQUESTED_PARTS = 4096;

function fields(value: string | undefined): Map<string, string> | undefined {
  if (value === undefined) return undefined;
  const out = new Map<string, string>();
  for (const item of value.split(";")) {
    const t = item.trim();
    if (t === "") continue;
    const eq = t.indexOf("=");
    if (eq <= 0) return undefined;
    out.set(t.slice(0, eq).trim().toLowerCase(), t.slice(eq + 1).trim());
  }
  return out;
}

function uint(v: string | undefined): number | undefined {
  if (v === undefined || !UINT.test(v)) return undefined;
  const n = Number(v);
  return Number.isSafeInteger(n) ? n : undefined;
}

function b64url(text: string): string {
  const bytes = new TextEncoder().encode(text);
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function unb64url(v: string): string | undefined {
  if (!B64URL.test(v)) return undefined;
  try {
    const bin = atob(v.replace(/-/g, "+").replace(/_/g, "/"));
    return new TextDecoder("utf-8", { fatal: true }).decode(
      Uint8Array.from(bin, (c) => c.charCodeAt(0)),
    );
  } catch {
    return undefined;
  }
}

/** A new transfer id: 16 random bytes in hex. */
export function newTransferId(): string {
  return Array.from(
    crypto.getRandomValues(new Uint8Array(16)),
    (b) => b.toString(16).padStart(2, "0"),
  )
    .join("");
}

export function formatAnnounce(a: TransferAnnounce): string {
  return `id=${a.id}; size=${a.size}; sha256=${a.sha256}; part-size=${a.partSize}; ` +
    `parts=${a.parts}; mime=${a.mime.toLowerCase()}; name=${b64url(a.name.slice(0, 200))}`;
}

export function parseAnnounce(value: string | undefined): TransferAnnounce | undefined {
  const f = fields(value);
  if (f === undefined) return undefined;
  const id = f.get("id") ?? "", sha256 = f.get("sha256") ?? "", mime = f.get("mime") ?? "";
  const size = uint(f.get("size")), partSize = uint(f.get("part-size"));
  const parts = uint(f.get("parts"));
  const name = unb64url(f.get("name") ?? "");
  if (!ID.test(id) || !HEX64.test(sha256) || !MIME.test(mime) || name === undefined) {
    return undefined;
  }
  if (size === undefined || partSize === undefined || parts === undefined || partSize === 0) {
    return undefined;
  }
  if (parts !== Math.max(1, Math.ceil(size / partSize))) return undefined;
  return { id, size, sha256, partSize, parts, name: name || "file.bin", mime };
}

export function formatPart(p: TransferPart): string {
  return `id=${p.id}; index=${p.index}; offset=${p.offset}; length=${p.length}; ` +
    `sha256=${p.sha256}`;
}

export function parsePart(value: string | undefined): TransferPart | undefined {
  const f = fields(value);
  if (f === undefined) return undefined;
  const id = f.get("id") ?? "", sha256 = f.get("sha256") ?? "";
  const index = uint(f.get("index")), offset = uint(f.get("offset"));
  const length = uint(f.get("length"));
  if (!ID.test(id) || !HEX64.test(sha256)) return undefined;
  if (index === undefined || offset === undefined || length === undefined) return undefined;
  return { id, index, offset, length, sha256 };
}

/** `[1, 2, 3, 7]` → `1-3,7`. */
function ranges(parts: readonly number[]): string {
  const sorted = [...new Set(parts)].sort((a, b) => a - b);
  const out: string[] = [];
  for (let i = 0; i < sorted.length;) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j] + 1) j++;
    out.push(i === j ? `${sorted[i]}` : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  return out.join(",");
}

function unranges(v: string): number[] | undefined {
  const out: number[] = [];
  for (const r of v.split(",")) {
    const [a, b] = r.split("-");
    const from = uint(a), to = b === undefined ? from : uint(b);
    if (from === undefined || to === undefined || to < from) return undefined;
    for (let i = from; i <= to; i++) {
      out.push(i);
      if (out.length > MAX_REQUESTED_PARTS) return undefined;
    }
  }
  return out;
}

export function formatControl(c: TransferControl): string {
  switch (c.action) {
    case TransferAction.REQUEST:
      return `id=${c.id}; action=request; parts=${ranges(c.parts.slice(0, MAX_REQUESTED_PARTS))}`;
    case TransferAction.DONE:
      return `id=${c.id}; action=done`;
    case TransferAction.REFUSED:
      return `id=${c.id}; action=refused; reason=${c.reason}`;
  }
}

export function parseControl(value: string | undefined): TransferControl | undefined {
  const f = fields(value);
  if (f === undefined) return undefined;
  const id = f.get("id") ?? "";
  if (!ID.test(id)) return undefined;
  switch (f.get("action")) {
    case TransferAction.REQUEST: {
      const parts = unranges(f.get("parts") ?? "");
      return parts === undefined ? undefined : { id, action: "request", parts };
    }
    case TransferAction.DONE:
      return { id, action: "done" };
    case TransferAction.REFUSED: {
      const reason = f.get("reason") ?? "";
      return TOKEN.test(reason) ? { id, action: "refused", reason } : undefined;
    }
    default:
      return undefined;
  }
}
