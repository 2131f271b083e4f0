/**
 * `events`: streams GET /events as NDJSON (one `{"id":N,"type":...}` object per line) until
 * Ctrl-C/SIGTERM, reconnecting with back-off and Last-Event-ID; `--since`, `--type` filters.
 */
import { UsageError } from "../args.ts";
import { type Command, type CommandContext, listOption, stringOption } from "../command.ts";
import { followEvents, type SseMessage } from "../sse_client.ts";
import { LAG_EVENT } from "../../events/types.ts";

async function run(ctx: CommandContext): Promise<number> {
  const since = stringOption(ctx, "since");
  if (since !== undefined && !/^\d+$/.test(since)) {
    throw new UsageError(`--since needs an event id (a whole number), got '${since}'`, "events");
  }
  const types = new Set([...listOption(ctx, "type"), ...listOption(ctx, "kind")]);
  let lastSeen = since === undefined ? undefined : Number(since);
  const lagIds = new Set<number>();
  const onEvent = async (message: SseMessage) => {
    const line = toLine(message);
    if (line.id !== undefined && lastSeen !== undefined && line.id <= lastSeen) {
      // An id at or below the last one is a replay, unless it is a lag event not seen before:
      // then the gateway's sequence started over (a new data directory), and the new ids are
      // accepted from here on.
      if (line.type !== LAG_EVENT || lagIds.has(line.id)) return;
    }
    if (line.id !== undefined) lastSeen = line.id;
    if (line.type === LAG_EVENT && line.id !== undefined) lagIds.add(line.id);
    if (types.size > 0 && !types.has(line.type) && line.type !== LAG_EVENT) return;
    await ctx.out.line(JSON.stringify(line.object));
  };
  try {
    await followEvents({
      http: ctx.http,
      ...(since === undefined ? {} : { lastEventId: since }),
      onEvent,
      onNotice: (text) => ctx.out.error(`edge-gateway: events: ${text}`),
      onConnected: (after) =>
        ctx.out.error(
          `edge-gateway: events: connected to ${ctx.http.baseUrl}/events` +
            (after === undefined ? " (live events)" : ` (resuming after id ${after})`),
        ),
    });
  } catch (err) {
    if (err instanceof Deno.errors.BrokenPipe) return 0; // the reader went away (| head)
    throw err;
  }
  return 0;
}

interface EventLine {
  readonly id: number | undefined;
  readonly type: string;
  readonly object: Record<string, unknown>;
}

/**
 * Turns an SSE frame into the NDJSON object `{"id":N,...event}`: the event's wire object as the
 * gateway sent it, with its stream id first (`type` from the `event:` line if data has none).
 */
export function toLine(message: SseMessage): EventLine {
  const id = message.id !== undefined && /^\d+$/.test(message.id) ? Number(message.id) : undefined;
  let data: unknown;
  try {
    data = JSON.parse(message.data);
  } catch {
    data = undefined;
  }
  const fields = typeof data === "object" && data !== null && !Array.isArray(data)
    ? data as Record<string, unknown>
    : { data: data ?? message.data };
  const type = typeof fields.type === "string" ? fields.type : message.event;
  const head: Record<string, unknown> = id !== undefined
    ? { id }
    : message.id !== undefined
    ? { id: message.id }
    : {};
  return { id, type, object: { ...head, type, ...fields } };
}

/** The `events` command. */
export const events: Command = {
  name: "events",
  usage: "events [--since ID] [--type T]...",
  summary: "stream events as NDJSON until Ctrl-C (reconnects and resumes automatically)",
  http: "GET /events (SSE; Last-Event-ID: <id> to resume)",
  details: "Each line is one event object with its stream id, e.g.\n" +
    '  {"id":12,"type":"IncomingMsg","account_id":1,"chat_id":10,"msg_id":42}\n' +
    "After a drop it reconnects with exponential back-off (0.5 s doubling to 30 s) and resumes " +
    "after the last printed id, so no event is printed twice. 'lag' events (events were " +
    "missed) are always printed, even with --type. Output is the same with --json. Notices " +
    "about the connection (connected, dropped, reconnecting) go to stderr. Exits 0 on Ctrl-C or SIGTERM.",
  options: [
    { name: "since", kind: "string", value: "ID", help: "resume after this event id" },
    {
      name: "type",
      kind: "list",
      value: "T",
      help: "print only events of type T (repeatable), e.g. IncomingMsg",
    },
    { name: "kind", kind: "list", value: "T", help: "the same as --type (earlier name)" },
  ],
  args: { min: 0, max: 0 },
  run,
};
