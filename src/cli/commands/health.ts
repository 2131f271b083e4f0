/**
 * `health`: GET /health and exit 0 when the daemon answers 200, 1 otherwise (also when it is
 * unreachable). It is the container HEALTHCHECK, so it defaults to a 3 s timeout.
 */
import type { Command, CommandContext } from "../command.ts";
import { connectivityLabel, scalarText } from "../output.ts";
import { gatewayFetch, UnreachableError } from "../rpc_client.ts";

const FIRST_KEYS = ["status", "service", "version", "connectivity", "uptime_s", "addr"];

async function run(ctx: CommandContext): Promise<number> {
  let status: number;
  let body: string;
  try {
    const { response, text } = await gatewayFetch(ctx.http, "/health", {
      headers: { accept: "application/json" },
    });
    status = response.status;
    body = await text();
  } catch (err) {
    if (!(err instanceof UnreachableError)) throw err;
    await ctx.out.error(`edge-gateway: unhealthy: ${err.message}`);
    return 1; // Docker HEALTHCHECK: 0 healthy, 1 unhealthy
  }
  const parsed = parseJson(body);
  if (ctx.out.json && parsed !== undefined) await ctx.out.jsonLine(parsed);
  if (status !== 200) {
    const detail = body.trim() === "" ? "" : `: ${body.trim().slice(0, 200)}`;
    await ctx.out.error(`edge-gateway: unhealthy: GET /health answered HTTP ${status}${detail}`);
    return 1;
  }
  if (ctx.out.json) {
    if (parsed === undefined) await ctx.out.jsonLine(body.trim());
    return 0;
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
    await ctx.out.line(body.trim() === "" ? "ok" : body.trim());
    return 0;
  }
  await ctx.out.keyValues(healthEntries(parsed as Record<string, unknown>));
  return 0;
}

function healthEntries(body: Record<string, unknown>): [string, string][] {
  const keys = [
    ...FIRST_KEYS.filter((k) => k in body),
    ...Object.keys(body).filter((k) => !FIRST_KEYS.includes(k)).sort(),
  ];
  return keys.map((k) => {
    const v = body[k];
    if (k === "connectivity" && typeof v === "number") return [k, `${v} (${connectivityLabel(v)})`];
    return [k, scalarText(v)];
  });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The `health` command. */
export const health: Command = {
  name: "health",
  usage: "health",
  summary: "check that the daemon is up (exit 0 healthy, 1 not); used as the HEALTHCHECK",
  http: "GET /health",
  details: "Prints the status, connectivity, version and uptime. Unlike other commands, every " +
    "failure exits 1 (Docker's 'unhealthy'), including an unreachable daemon.",
  args: { min: 0, max: 0 },
  defaultTimeoutMs: 3000,
  run,
};
