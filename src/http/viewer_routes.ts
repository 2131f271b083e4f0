/**
 * Viewer routes (docs/contract.md §5.2): `POST /auth` binds the single viewer session; `GET
 * /stream/:msg_id` checks the bearer token and streams decrypted plaintext with a sniffed
 * Content-Type. The stream handler takes a plain `Request` (no framework), so the app's fast path
 * (`fast_fetch.ts`) and its Hono route answer alike.
 */
import type { Context } from "hono";
import type { EventSink } from "../events/types.ts";
import { logger } from "../log.ts";
import { ViewerAuthError, type ViewerSessions } from "../viewer/session.ts";
import {
  AccessDeniedError,
  DecryptError,
  FALLBACK_MIME,
  type ProtectedFile,
  type SniffedStream,
  sniffStream,
  type ViewerDeps,
} from "../viewer/stream.ts";
import { bearerToken, TOKEN_CHALLENGE } from "./bearer.ts";
import { readLimitedBody } from "./body.ts";

const log = logger("viewer");

/** Largest `/auth` body read (it only carries a fingerprint). */
export const MAX_AUTH_BODY_BYTES = 16_384;

const U32_MAX = 0xffff_ffff;

/**
 * The 403 body of `/auth`, worded as the product documents it (docs/product-compat.md#viewer-auth).
 */
export const AUTH_MISMATCH_BODY = { error: "Device fingerprint mismatch" } as const;

/** The fingerprint from an `/auth` body: `device_fingerprint` (the product's name) or `fingerprint`. */
function presentedFingerprint(body: Record<string, unknown>): string | undefined {
  const value = body.device_fingerprint ?? body.fingerprint;
  return typeof value === "string" ? value : undefined;
}

/**
 * `POST /auth` with `{"device_fingerprint": "<hex>"}` (or `fingerprint`) → 200 `{token,
 * token_type: "Bearer", expires_at (Unix s), expires_in (s)}`; a wrong or missing fingerprint →
 * 403 `{"error": "Device fingerprint mismatch"}`; a body that is not a JSON object → 400. A
 * success replaces any previous session.
 */
export function authHandler(sessions: ViewerSessions) {
  return async (c: Context): Promise<Response> => {
    const raw = await readLimitedBody(c.req.raw, MAX_AUTH_BODY_BYTES);
    let body: unknown;
    try {
      body = raw.ok ? JSON.parse(new TextDecoder().decode(raw.bytes)) : undefined;
    } catch {
      body = undefined;
    }
    if (typeof body !== "object" || body === null || Array.isArray(body)) {
      return c.json(
        { error: 'request body must be a JSON object: {"device_fingerprint": "<hex>"}' },
        400,
      );
    }
    try {
      const issued = sessions.authenticate(
        presentedFingerprint(body as Record<string, unknown>) ?? "",
      );
      const expiresIn = Math.round(sessions.lifetimeMs / 1000);
      return c.json(
        {
          token: issued.token,
          token_type: "Bearer",
          expires_at: Math.floor(issued.expiresAt / 1000),
          expires_in: expiresIn,
        },
        200,
        { "Cache-Control": "no-store" },
      );
    } catch (err) {
      if (err instanceof ViewerAuthError) {
        return c.json(AUTH_MISMATCH_BODY, 403);
      }
      throw err;
    }
  };
}

/** A JSON answer, as Hono's `c.json` gives it (`content-type: application/json`). */
function json(body: unknown, status: number, headers?: Record<string, string>): Response {
  return Response.json(body, headers === undefined ? { status } : { status, headers });
}

/**
 * The 401 answer (with `WWW-Authenticate: Bearer`) for a request whose `Authorization` header
 * does not carry the session token; undefined when it does.
 */
export function viewerAuthFailure(
  sessions: ViewerSessions,
  authorization: string | null | undefined,
): Response | undefined {
  const result = sessions.check(bearerToken(authorization));
  if (result === "ok") return undefined;
  const challenge = result === "missing"
    ? TOKEN_CHALLENGE
    : `${TOKEN_CHALLENGE}, error="invalid_token", error_description="token ${result}"`;
  return json({ error: `viewer token ${result}` }, 401, { "WWW-Authenticate": challenge });
}

/** Header stating the owner's download rule on `/stream` (`allow_download=false`). */
export const DOWNLOAD_RULE_HEADER = "X-Prv-Allow-Download";

function contentDisposition(name: string | undefined, download = false): string {
  const kind = download ? "attachment" : "inline";
  if (name === undefined || name === "") return kind;
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, "_");
  return `${kind}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}

/**
 * The single range of a `Range: bytes=…` header for a body of `size` bytes as `[start, end)`;
 * undefined without a usable header (several ranges or another unit: the whole body is sent);
 * "unsatisfiable" for a range outside the body (416).
 */
export function parseRange(
  header: string | undefined,
  size: number,
): { start: number; end: number } | "unsatisfiable" | undefined {
  const m = /^bytes=(\d*)-(\d*)$/.exec((header ?? "").trim());
  if (m === null || (m[1] === "" && m[2] === "")) return undefined;
  if (m[1] === "") {
    const n = Number(m[2]);
    if (n === 0 || size === 0) return "unsatisfiable";
    return { start: Math.max(0, size - n), end: size };
  }
  const start = Number(m[1]);
  const last = m[2] === "" ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (start >= size || last < start) return "unsatisfiable";
  return { start, end: last + 1 };
}

const notFound = () => json({ error: "message or file not found" }, 404);
const decryptFailed = () => json({ error: "decryption failed" }, 500);

/** `GET /stream/:msg_id` on a plain request: the request and the `msg_id` path segment. */
export type StreamRequestHandler = (req: Request, rawMsgId: string) => Promise<Response>;

/**
 * `GET /stream/:msg_id`: 401 without the session's bearer token (viewerAuthFailure), 404 for a
 * non-integer id or a missing message or
 * file, 403 `{error, state, reason}` when access is not active (revoked, expired, requested, …),
 * 500 when decryption fails before the first byte; otherwise 200 with the plaintext (or 206 for
 * a `Range`), `Content-Length` when known, `Cache-Control: no-store` and `Content-Disposition:
 * inline` (`attachment` only when the owner allowed downloads; with `allow_download=false` the
 * `X-Prv-Allow-Download: false` header states the rule). Emits ViewerFileStreamed when the whole
 * file has been sent. Plaintext is never written to disk.
 */
export function streamRequestHandler(viewer: ViewerDeps, events: EventSink): StreamRequestHandler {
  return async (req, raw) => {
    const denied = viewerAuthFailure(viewer.sessions, req.headers.get("authorization"));
    if (denied !== undefined) return denied;
    if (!/^\d{1,10}$/.test(raw) || Number(raw) > U32_MAX) return notFound();
    const msgId = Number(raw);
    let file: ProtectedFile | undefined;
    let sniffed: SniffedStream | undefined;
    const onEnd = (bytes: number) => events.publish({ kind: "ViewerFileStreamed", msgId, bytes });
    try {
      file = await viewer.openProtectedFile(msgId);
      if (file === undefined) return notFound();
      if (file.mime === undefined) sniffed = await sniffStream(file.plaintext, onEnd);
    } catch (err) {
      if (err instanceof AccessDeniedError) {
        return json({ error: err.message, state: err.state, reason: err.reason }, 403, {
          "Cache-Control": "no-store",
        });
      }
      if (!(err instanceof DecryptError)) throw err;
      log.warn("decryption failed", { msgId, error: err.message });
      return decryptFailed();
    }
    const f = file;
    /** Releases the plaintext when another body (or none) is sent. */
    const unread = () => (sniffed?.body ?? f.plaintext).cancel();
    const headers: Record<string, string> = {
      "Content-Type": sniffed?.mime ?? f.mime ?? FALLBACK_MIME,
      "Cache-Control": "no-store",
      "Content-Disposition": contentDisposition(f.name, f.allowDownload === true),
      "X-Content-Type-Options": "nosniff",
    };
    if (f.allowDownload === false) headers[DOWNLOAD_RULE_HEADER] = "false";
    const size = f.size;
    if (f.slice !== undefined && size !== undefined) headers["Accept-Ranges"] = "bytes";
    const range = f.slice !== undefined && size !== undefined
      ? parseRange(req.headers.get("range") ?? undefined, size)
      : undefined;
    if (range === "unsatisfiable") {
      await unread();
      return json({ error: "range not satisfiable" }, 416, {
        "Content-Range": `bytes */${size}`,
      });
    }
    if (req.method === "HEAD") {
      await unread();
      if (size !== undefined) headers["Content-Length"] = String(size);
      return new Response(null, { headers });
    }
    if (range !== undefined && f.slice !== undefined) {
      const body = f.slice(range.start, range.end);
      await unread();
      headers["Content-Range"] = `bytes ${range.start}-${range.end - 1}/${size}`;
      headers["Content-Length"] = String(range.end - range.start);
      log.info("streaming a range of a protected file", { msgId });
      return new Response(body, { status: 206, headers });
    }
    if (size !== undefined) headers["Content-Length"] = String(size);
    log.info("streaming protected file", { msgId });
    const body = sniffed?.body ??
      (f.body !== undefined ? f.body(onEnd) : counted(f.plaintext, onEnd));
    return new Response(body, { status: 200, headers });
  };
}

/** `body` passed through, calling `onEnd(bytes)` once it has been read to its end. */
function counted(
  body: ReadableStream<Uint8Array>,
  onEnd: (bytes: number) => void,
): ReadableStream<Uint8Array> {
  let bytes = 0;
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        bytes += chunk.byteLength;
        controller.enqueue(chunk);
      },
      flush() {
        onEnd(bytes);
      },
    }),
  );
}
