/**
 * `deno task dev` helper: waits until every gateway answers `/health`, joins each pair that is not
 * yet verified by SecureJoin (the later gateway joins the earlier one's invite), then prints one
 * line per gateway (its URL and address) and one per chat it has with another gateway (the chat id
 * a first `send` needs), then "dev: ready". Idempotent, so a dev restart joins nothing.
 *
 * usage: deno run --allow-net=127.0.0.1 scripts/dev/join_gateways.ts URL...
 */

const HEALTH_TIMEOUT_MS = 120_000;
const JOIN_TIMEOUT_MS = 60_000;
const POLL_MS = 250;

interface RpcAnswer {
  readonly result?: unknown;
  readonly error?: { readonly code: number; readonly message: string };
}

/** Calls one JSON-RPC method on `url`; throws with the server's message on an error answer. */
async function call<T>(url: string, method: string, ...params: unknown[]): Promise<T> {
  const res = await fetch(`${url}/rpc`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ jsonrpc: "2.0", method, params, id: 1 }),
  });
  if (res.status === 204) return null as T;
  const body = await res.json() as RpcAnswer;
  if (body.error) throw new Error(`${url} ${method}: ${body.error.message}`);
  return body.result as T;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` until it returns true; throws `what` after `timeoutMs`. */
async function until(check: () => Promise<boolean>, timeoutMs: number, what: string) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await check()) return;
    } catch { /* not ready yet */ }
    if (Date.now() > deadline) throw new Error(`timed out: ${what}`);
    await sleep(POLL_MS);
  }
}

/** True when `url` has a verified contact for `addr`. */
async function verifiedContact(url: string, addr: string): Promise<boolean> {
  const id = await call<number | null>(url, "lookup_contact_id_by_addr", 1, addr);
  if (id === null) return false;
  const contact = await call<{ isVerified: boolean }>(url, "get_contact", 1, id);
  return contact.isVerified;
}

async function main(urls: string[]): Promise<void> {
  for (const url of urls) {
    await until(async () => (await fetch(`${url}/health`)).ok, HEALTH_TIMEOUT_MS, `${url}/health`);
  }
  const addrs = await Promise.all(urls.map((u) => call<string>(u, "get_config", 1, "addr")));
  for (let i = 0; i < urls.length; i++) {
    for (let j = i + 1; j < urls.length; j++) {
      if (await verifiedContact(urls[j], addrs[i])) continue;
      const link = await call<string>(urls[i], "get_chat_securejoin_qr_code", 1, null);
      await call<number>(urls[j], "secure_join", 1, link);
      await until(
        async () =>
          await verifiedContact(urls[j], addrs[i]) && await verifiedContact(urls[i], addrs[j]),
        JOIN_TIMEOUT_MS,
        `gateway ${j + 1} joining gateway ${i + 1}`,
      );
      console.error(`dev: gateway ${j + 1} joined gateway ${i + 1}`);
    }
  }
  for (const [i, url] of urls.entries()) {
    console.log(`dev: gateway ${i + 1} ${url} ${addrs[i]}`);
    for (const [j, addr] of addrs.entries()) {
      if (j === i) continue;
      const contact = await call<number>(url, "lookup_contact_id_by_addr", 1, addr);
      const chat = await call<number>(url, "create_chat_by_contact_id", 1, contact);
      console.log(`dev: gateway ${i + 1} chat ${chat} is with gateway ${j + 1} (${addr})`);
    }
  }
  console.log("dev: ready");
}

if (import.meta.main) {
  try {
    await main(Deno.args);
  } catch (err) {
    console.error(`dev: ${err instanceof Error ? err.message : String(err)}`);
    Deno.exit(1);
  }
}
