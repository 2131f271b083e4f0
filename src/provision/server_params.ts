/**
 * The stored form of the account's mail servers (config key `server_params`): checked when read
 * back, so a damaged row or a plaintext choice the operator no longer allows fails clearly.
 */
import { StartupError } from "../errors.ts";
import { ConfigKey, type Store } from "../store/mod.ts";
import type { Endpoint, Security, ServerParams } from "../transport/server_params.ts";

const SECURITIES: readonly Security[] = ["ssl", "starttls", "plain"];

/** True when `e` may be used: TLS always; plaintext only when the operator allowed it. */
export function allowedEndpoint(e: Endpoint, allowPlaintext: boolean): boolean {
  return e.security !== "plain" || allowPlaintext;
}

function endpointOrThrow(value: unknown, which: string): Endpoint {
  const e = value as Partial<Endpoint> | null;
  const ok = typeof e === "object" && e !== null &&
    typeof e.host === "string" && e.host !== "" &&
    Number.isInteger(e.port) && e.port! >= 1 && e.port! <= 65535 &&
    SECURITIES.includes(e.security as Security) &&
    typeof e.user === "string" && e.user !== "";
  if (!ok) throw new Error(`${which} entry is not {host, port 1-65535, security, user}`);
  return { host: e!.host!, port: e!.port!, security: e!.security!, user: e!.user! };
}

/** Validates a parsed `server_params` value; throws a plain Error saying what is wrong. */
export function parseServerParams(value: unknown): ServerParams {
  const v = value as { imap?: unknown; smtp?: unknown } | null;
  if (typeof v !== "object" || v === null) throw new Error("not a JSON object");
  return { imap: endpointOrThrow(v.imap, "imap"), smtp: endpointOrThrow(v.smtp, "smtp") };
}

/**
 * The stored server parameters, or undefined before autodiscovery. Throws StartupError when the
 * row is damaged or chooses plaintext while `allowPlaintext` is off.
 */
export function loadServerParams(store: Store, allowPlaintext: boolean): ServerParams | undefined {
  const raw = store.config.get(ConfigKey.SERVER_PARAMS);
  if (raw === undefined) return undefined;
  let params: ServerParams;
  try {
    params = parseServerParams(JSON.parse(raw));
  } catch (cause) {
    throw new StartupError(
      `The stored mail server settings are damaged (${
        cause instanceof Error ? cause.message : String(cause)
      }); start again from an empty data directory`,
      undefined,
      { cause },
    );
  }
  for (const [kind, e] of [["IMAP", params.imap], ["SMTP", params.smtp]] as const) {
    if (!allowedEndpoint(e, allowPlaintext)) {
      throw new StartupError(
        `The stored ${kind} server ${e.host}:${e.port} has no TLS, and plaintext mail is not ` +
          `allowed; set EDGE_ALLOW_PLAINTEXT_MAIL=true or start again from an empty data directory`,
      );
    }
  }
  return params;
}

/** Stores the chosen servers and the configuration time (unix seconds) in one transaction. */
export function saveServerParams(store: Store, params: ServerParams, nowMs: number): void {
  store.db.tx(() => {
    store.config.setJson(ConfigKey.SERVER_PARAMS, params);
    store.config.set(ConfigKey.CONFIGURED_AT, String(Math.floor(nowMs / 1000)));
  });
}
