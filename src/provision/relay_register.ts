/**
 * Step 4 of provisioning: create an account on a chatmail relay with an empty-body `POST /new`,
 * which answers `{email, password}` (or `{reason}` with a non-2xx status).
 */
import { StartupError } from "../errors.ts";
import { errText } from "./data_dir.ts";

/** Credentials the relay assigned (the password is never logged). */
export interface RelayAccount {
  readonly email: string;
  readonly password: string;
  /** The relay's clock (Unix ms) from the answer's `Date` header, when it sent a valid one. */
  readonly relayTime?: number;
}

const ADDRESS = /^[^@\s]+@[^@\s]+$/;

/** POSTs an empty body to `url` and returns `{email, password}`; clear errors otherwise. */
export async function registerOnRelay(
  url: string,
  fetchFn: typeof fetch = fetch,
  timeoutMs = 30_000,
): Promise<RelayAccount> {
  let res: Response;
  let text: string;
  try {
    res = await fetchFn(url, { method: "POST", signal: AbortSignal.timeout(timeoutMs) });
    text = await res.text();
  } catch (cause) {
    const why = cause instanceof DOMException && cause.name === "TimeoutError"
      ? `no answer within ${timeoutMs} ms`
      : errText(cause);
    throw new StartupError(
      `Relay registration at ${url} failed: ${why} (is EDGE_SERVER right and the relay reachable?)`,
      undefined,
      { cause },
    );
  }
  let body: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(text);
    if (parsed && typeof parsed === "object") body = parsed;
  } catch { /* handled below: a non-JSON answer */ }
  if (!res.ok) {
    const reason = typeof body.reason === "string"
      ? body.reason
      : text.trim().slice(0, 200) || res.statusText;
    throw new StartupError(
      `Relay registration at ${url} was refused (HTTP ${res.status}): ${reason}`,
    );
  }
  const { email, password } = body;
  if (typeof email !== "string" || !ADDRESS.test(email)) {
    throw new StartupError(
      `Relay registration at ${url} answered without a valid "email" (is EDGE_SERVER a chatmail relay?)`,
    );
  }
  if (typeof password !== "string" || password === "") {
    throw new StartupError(
      `Relay registration at ${url} answered without a "password" (is EDGE_SERVER a chatmail relay?)`,
    );
  }
  const relayTime = Date.parse(res.headers.get("date") ?? "");
  return {
    email: email.toLowerCase(),
    password,
    ...(Number.isFinite(relayTime) && relayTime > 0 ? { relayTime } : {}),
  };
}
