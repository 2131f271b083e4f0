/** Step 4 of provisioning: create an account on a chatmail relay with `POST /new`. */
import { StartupError } from "../errors.ts";

/** Credentials the relay assigned. */
export interface RelayAccount {
  readonly email: string;
  readonly password: string;
}

/** POSTs an empty body to `url` and returns `{email, password}`; clear errors otherwise. */
export async function registerOnRelay(
  url: string,
  fetchFn: typeof fetch = fetch,
  timeoutMs = 30_000,
): Promise<RelayAccount> {
  let res: Response;
  try {
    res = await fetchFn(url, { method: "POST", signal: AbortSignal.timeout(timeoutMs) });
  } catch (cause) {
    throw new StartupError(`Relay registration at ${url} failed: ${msg(cause)}`, undefined, {
      cause,
    });
  }
  const text = await res.text();
  let body: Record<string, unknown> = {};
  try {
    body = JSON.parse(text);
  } catch { /* handled below */ }
  if (!res.ok) {
    const reason = typeof body.reason === "string" ? body.reason : text.slice(0, 200);
    throw new StartupError(
      `Relay registration at ${url} was refused (HTTP ${res.status}): ${reason}`,
    );
  }
  const { email, password } = body;
  if (
    typeof email !== "string" || !/^[^@\s]+@[^@\s]+$/.test(email) || typeof password !== "string" ||
    !password
  ) {
    throw new StartupError(
      `Relay registration at ${url} answered without {"email","password"} (is EDGE_SERVER a chatmail relay?)`,
    );
  }
  return { email: email.toLowerCase(), password };
}

function msg(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
