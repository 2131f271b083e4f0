/** Fakes for provisioning unit tests: a scripted fetch, login checks and a config builder. */
import { type GatewayConfig, parseConfig } from "../../src/config.ts";
import type { Endpoint } from "../../src/transport/server_params.ts";

/** What the fake fetch answers for one URL: a body, a status + body, or a function. */
export type FakeAnswer =
  | string
  | { status: number; body: string }
  | ((init: RequestInit | undefined) => Promise<Response>);

/** A fetch that answers from `pages` (404 otherwise) and records `METHOD url` calls. */
export function fakeFetch(pages: Record<string, FakeAnswer>) {
  const calls: string[] = [];
  const fn = ((input: string | URL | Request, init?: RequestInit) => {
    const url = String(input instanceof Request ? input.url : input);
    calls.push(`${init?.method ?? "GET"} ${url}`);
    const answer = pages[url];
    if (answer === undefined) return Promise.resolve(new Response("not found", { status: 404 }));
    if (typeof answer === "function") return answer(init);
    if (typeof answer === "string") return Promise.resolve(new Response(answer));
    return Promise.resolve(new Response(answer.body, { status: answer.status }));
  }) as typeof fetch;
  return { fetch: fn, calls };
}

/** An answer that never comes: it rejects only when the request's signal aborts. */
export function hang(): FakeAnswer {
  return (init) =>
    new Promise((_, reject) => {
      const signal = init?.signal;
      signal?.addEventListener("abort", () => reject(signal.reason), { once: true });
    });
}

/** An answer after `ms` (or the abort of the request, whichever comes first). */
export function later(ms: number, body: string): FakeAnswer {
  return (init) =>
    new Promise((resolve, reject) => {
      const t = setTimeout(() => resolve(new Response(body)), ms);
      init?.signal?.addEventListener("abort", () => {
        clearTimeout(t);
        reject(init.signal!.reason);
      }, { once: true });
    });
}

/** Login checks that accept only the given hosts, and record what was tried. */
export function fakeLogins(okHosts: readonly string[]) {
  const tried: string[] = [];
  const check = (kind: string) => (e: Endpoint) => {
    tried.push(`${kind} ${e.host}:${e.port}/${e.security}`);
    return okHosts.includes(e.host)
      ? Promise.resolve()
      : Promise.reject(new Error("connection refused"));
  };
  return { verifyImap: check("IMAP"), verifySmtp: check("SMTP"), tried };
}

/** A Mozilla autoconfig document listing one IMAP and one SMTP server on `host`. */
export function autoconfigXml(host: string, socketType = "SSL"): string {
  const [imapPort, smtpPort] = socketType === "SSL" ? [993, 465] : [143, 587];
  return `<?xml version="1.0"?><clientConfig version="1.1"><emailProvider id="x">
  <incomingServer type="imap"><hostname>${host}</hostname><port>${imapPort}</port>
    <socketType>${socketType}</socketType><username>%EMAILADDRESS%</username></incomingServer>
  <outgoingServer type="smtp"><hostname>${host}</hostname><port>${smtpPort}</port>
    <socketType>${socketType}</socketType><username>%EMAILADDRESS%</username></outgoingServer>
  </emailProvider></clientConfig>`;
}

/** A GatewayConfig for `dataDir`, from environment values like the daemon's. */
export function testConfig(dataDir: string, env: Record<string, string> = {}): GatewayConfig {
  const all: Record<string, string> = {
    EDGE_DATA_DIR: dataDir,
    EDGE_SERVER: "http://127.0.0.1:8080",
    EDGE_PROFILE: "Gateway One",
    ...env,
  };
  return parseConfig([], (name) => all[name]); // EDGE_PROFILE "" reads as unset
}
