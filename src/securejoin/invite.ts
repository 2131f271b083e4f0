/**
 * SecureJoin invite links (docs/protocol-notes.md §6.1): formats
 * `OPENPGP4FPR:<FPR>#a=..&n=..&i=..&s=..` (legacy flow, no `v=3`, so every Delta Chat 2.x joins
 * with the plaintext vc-request) and parses that form, its `?`-separated variant, and any
 * `https://host/#<FPR>&...` link. Pure.
 */

/** A link that cannot be used; the message says what is wrong. */
export class InvalidInviteError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "InvalidInviteError";
  }
}

/**
 * A parsed link: an invite to a 1:1 chat or group, or a plain fingerprint check. A parameter the
 * link does not have is undefined.
 */
export interface Invite {
  readonly kind: "contact" | "group" | "broadcast" | "fingerprint";
  /** 40 upper-case hex digits. */
  readonly fingerprint: string;
  readonly addr: string;
  readonly name: string;
  readonly inviteNumber: string | undefined;
  readonly auth: string | undefined;
  readonly groupId: string | undefined;
  readonly groupName: string | undefined;
  /** Further relay addresses of the inviter (`r=`). */
  readonly relays: readonly string[];
  /** `v=`, when given (3 = the inviter speaks SecureJoin v3). */
  readonly version: number | undefined;
}

const TOKEN = /^[A-Za-z0-9_-]{11,32}$/;
const MAX_NAME = 25;

/** Percent-encodes all but ASCII letters, digits, `.` and `_`; space becomes `+`. */
export function encodeParam(value: string): string {
  let out = "";
  for (const byte of new TextEncoder().encode(value)) {
    const ch = String.fromCharCode(byte);
    out += /[A-Za-z0-9._]/.test(ch) ? ch : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out.replaceAll("%20", "+");
}

function decodeParam(value: string): string {
  try {
    return decodeURIComponent(value.replaceAll("+", " "));
  } catch {
    throw new InvalidInviteError(`invite parameter "${value}" is not valid percent-encoding`);
  }
}

function cutName(name: string): string {
  const chars = [...name];
  return chars.length > MAX_NAME ? chars.slice(0, MAX_NAME - 1).join("") + "_" : name;
}

/** Formats a 1:1 invite in the legacy form every Delta Chat 2.x understands. */
export function formatInvite(
  p: {
    fingerprint: string;
    addr: string;
    name: string;
    inviteNumber: string;
    auth: string;
    /** A group invite: its id (`x=`) and name (`g=`). */
    group?: { id: string; name: string };
    /** A channel invite: its id (`x=`) and name (`b=`); the invite number goes in `j=`. */
    broadcast?: { id: string; name: string };
  },
): string {
  const fpr = normalizeFingerprint(p.fingerprint);
  for (const [k, v] of [["inviteNumber", p.inviteNumber], ["auth", p.auth]]) {
    if (!TOKEN.test(v)) throw new InvalidInviteError(`${k} must be 11-32 base64url characters`);
  }
  const group = p.group !== undefined
    ? `&g=${encodeParam(cutName(p.group.name))}&x=${p.group.id}`
    : p.broadcast !== undefined
    ? `&b=${encodeParam(cutName(p.broadcast.name))}&x=${p.broadcast.id}`
    : "";
  const number = p.broadcast === undefined ? "i" : "j";
  return `OPENPGP4FPR:${fpr}#a=${encodeParam(p.addr)}&n=${encodeParam(cutName(p.name))}` +
    `${group}&${number}=${p.inviteNumber}&s=${p.auth}`;
}

/** Upper-case hex of a 20-byte fingerprint; other characters (spaces) are ignored. */
export function normalizeFingerprint(value: string): string {
  const hex = value.replace(/[^0-9A-Fa-f]/g, "").toUpperCase();
  if (hex.length !== 40) {
    throw new InvalidInviteError(`fingerprint must have 40 hex digits, got ${hex.length}`);
  }
  return hex;
}

const OPENPGP4FPR = "openpgp4fpr:";
const EXPECTED_FORMS = "expected OPENPGP4FPR:<fingerprint>#a=… or an https link whose fragment " +
  "carries the invite (https://i.delta.chat/#<fingerprint>&a=…)";

/**
 * The invite part of a link: after `OPENPGP4FPR:`, or the fragment of any https link (Delta
 * Chat's i.delta.chat, the product's i.privittytech.com short links, others), itself with or
 * without `OPENPGP4FPR:`. Schemes are matched case-insensitively.
 */
function invitePart(link: string): string {
  if (link.toLowerCase().startsWith(OPENPGP4FPR)) return link.slice(OPENPGP4FPR.length);
  if (!/^https:\/\//i.test(link)) {
    throw new InvalidInviteError(`not an invite link: ${EXPECTED_FORMS}`);
  }
  const hash = link.indexOf("#");
  try {
    new URL(hash < 0 ? link : link.slice(0, hash));
  } catch {
    throw new InvalidInviteError(
      `not an invite link: the https link is not a valid URL; ${EXPECTED_FORMS}`,
    );
  }
  const fragment = hash < 0 ? "" : link.slice(hash + 1);
  if (fragment === "") {
    throw new InvalidInviteError(
      `not an invite link: the https link has no #fragment carrying the invite; ${EXPECTED_FORMS}`,
    );
  }
  return fragment.toLowerCase().startsWith(OPENPGP4FPR)
    ? fragment.slice(OPENPGP4FPR.length)
    : fragment;
}

/**
 * Splits a link into the fingerprint and the `k=v` pairs. The fingerprint ends at the first
 * `#` (Delta Chat), `?` (the product's printed example), `&` (https fragments) or `%23`.
 */
function splitLink(text: string): [string, URLSearchParams] {
  const rest = invitePart(text.trim()).replace(/^([^#?&%]*)%23/i, "$1#");
  const end = rest.search(/[#?&]/);
  const fpr = end < 0 ? rest : rest.slice(0, end);
  const params = new URLSearchParams();
  for (const pair of (end < 0 ? "" : rest.slice(end + 1)).split("&")) {
    if (!pair) continue;
    const eq = pair.indexOf("=");
    if (eq > 0) params.set(pair.slice(0, eq), pair.slice(eq + 1));
  }
  return [fpr, params];
}

function token(params: URLSearchParams, key: string): string | undefined {
  const v = params.get(key);
  if (v === null) return undefined;
  if (!TOKEN.test(v)) {
    throw new InvalidInviteError(`invite token ${key}= must be 11-32 base64url characters`);
  }
  return v;
}

/** Parses an invite link; throws InvalidInviteError saying what is wrong. */
export function parseInvite(text: string): Invite {
  const [fprPart, params] = splitLink(text);
  let fingerprint: string;
  try {
    fingerprint = normalizeFingerprint(fprPart);
  } catch (err) {
    throw new InvalidInviteError(`invalid fingerprint in invite link: ${(err as Error).message}`);
  }
  const addr = decodeParam(params.get("a") ?? "");
  if (!/^[^@\s]+@[^@\s]+$/.test(addr)) {
    throw new InvalidInviteError("invite link has no valid address (a=)");
  }
  const auth = token(params, "s");
  const inviteNumber = token(params, "i") ?? token(params, "j");
  const groupId = params.get("x") ?? undefined;
  const groupName = params.has("g")
    ? decodeParam(params.get("g")!)
    : params.has("b")
    ? decodeParam(params.get("b")!)
    : undefined;
  const kind = auth === undefined
    ? "fingerprint"
    : params.has("b")
    ? "broadcast"
    : groupId !== undefined
    ? "group"
    : "contact";
  const v = params.get("v");
  return {
    kind,
    fingerprint,
    addr: addr.toLowerCase(),
    name: decodeParam(params.get("n") ?? "").replace(/_$/, "…"),
    inviteNumber,
    auth,
    groupId,
    groupName,
    relays: (params.get("r") ?? "").split(",").filter(Boolean).map((a) =>
      decodeParam(a).toLowerCase()
    ),
    version: v === null ? undefined : Number(v),
  };
}
