/**
 * In-process unit tests of the CLI's pure parts: the command table (every command has an HTTP
 * equivalent), argument parsing, the SSE parser, labels and symbols, and the CliIo seam.
 */
import assert from "node:assert/strict";
import { GLOBAL_OPTIONS, parseArgs, UsageError } from "../../src/cli/args.ts";
import { toLine } from "../../src/cli/commands/events.ts";
import { parseParams } from "../../src/cli/commands/rpc.ts";
import { type CliIo, COMMANDS, isCliCommand, runCli } from "../../src/cli/mod.ts";
import {
  chatTypeName,
  connectivityLabel,
  displayWidth,
  formatTable,
  formatTime,
  stateSymbol,
} from "../../src/cli/output.ts";
import { SseParser } from "../../src/cli/sse_client.ts";
import { GATEWAY_VERSION } from "../../src/constants.ts";

Deno.test("COMMANDS: every command and form has a usage and an HTTP equivalent", () => {
  const names = COMMANDS.map((c) => c.name);
  assert.equal(new Set(names).size, names.length, "names are unique");
  for (const name of ["serve", "health", "rpc", "info", "config", "connectivity", "events"]) {
    assert.ok(names.includes(name), `${name} is in the table`);
  }
  for (const name of ["license", "invite", "join", "contacts", "chats", "messages", "send"]) {
    assert.ok(names.includes(name), `${name} is in the table`);
  }
  assert.ok(names.includes("send-file") && names.includes("read"));
  for (const c of COMMANDS) {
    assert.match(c.http, /^(GET|POST) \/|^serves /, `${c.name} has an HTTP equivalent`);
    assert.ok(c.usage.startsWith(c.name), `${c.name} usage starts with its name`);
    assert.ok(c.summary.length > 0, `${c.name} has a summary`);
    for (const f of c.forms ?? []) assert.match(f.http, /^(GET|POST) \//, `${f.usage} http`);
  }
});

Deno.test("isCliCommand() is true for every CLI command and help, false for serve", () => {
  for (const c of COMMANDS) assert.equal(isCliCommand(c.name), c.name !== "serve", c.name);
  assert.equal(isCliCommand("help"), true);
  assert.equal(isCliCommand("nope"), false);
});

Deno.test("parseArgs() takes global options on both sides of the command and stops at --", () => {
  const options = (name: string) =>
    name === "send-file"
      ? [{ name: "text", kind: "string" as const, help: "" }]
      : name === "events"
      ? [{ name: "kind", kind: "list" as const, help: "" }]
      : [];
  const a = parseArgs(["--json", "send-file", "7", "/x", "--text=hi", "--timeout", "5"], options);
  assert.equal(a.commandName, "send-file");
  assert.deepEqual(a.positionals, ["7", "/x"]);
  assert.deepEqual(a.options, { text: "hi" });
  assert.deepEqual(a.global, {
    token: undefined,
    url: undefined,
    json: true,
    timeoutMs: 5,
    accounts: undefined,
    help: false,
    version: false,
  });
  const b = parseArgs(["events", "--kind", "A", "--kind", "B", "-h"], options);
  assert.deepEqual(b.options, { kind: ["A", "B"] });
  assert.equal(b.global.help, true);
  const c = parseArgs(["send-file", "1", "--", "--text", "-5"], options);
  assert.deepEqual(c.positionals, ["1", "--text", "-5"]);
  assert.deepEqual(parseArgs(["send-file", "-5", "x"], options).positionals, ["-5", "x"]);
  assert.throws(() => parseArgs(["events", "--text", "x"], options), UsageError);
  assert.equal(GLOBAL_OPTIONS.length, 7);
});

Deno.test("parseParams() accepts only a JSON array", () => {
  assert.deepEqual(parseParams('[1, "addr", null]'), [1, "addr", null]);
  assert.throws(() => parseParams("1"), /got number/);
  assert.throws(() => parseParams("null"), /got null/);
  assert.throws(() => parseParams("[1,"), /not valid JSON/);
});

Deno.test("SseParser handles split chunks, CRLF, comments, multi-line data and retry", () => {
  const p = new SseParser();
  assert.deepEqual(p.feed(": ping\n\nid: 4\nevent: lag\nda"), []);
  assert.deepEqual(p.feed('ta: {"type":"lag","dropped":2}\r'), []);
  assert.deepEqual(p.feed("\n\r\n"), [
    { id: "4", event: "lag", data: '{"type":"lag","dropped":2}' },
  ]);
  assert.deepEqual(p.feed("retry: 250\ndata: a\ndata:b\n\n"), [
    { id: "4", event: "message", data: "a\nb" },
  ]);
  assert.equal(p.retryMs, 250);
  assert.deepEqual(p.feed("id: 5\n\n"), []); // no data: nothing dispatched
});

Deno.test("toLine() puts the stream id first and keeps the event's wire object", () => {
  const data = '{"type":"IncomingMsg","account_id":1,"chat_id":7,"msg_id":3}';
  const line = toLine({ id: "12", event: "message", data });
  assert.equal(
    JSON.stringify(line.object),
    '{"id":12,"type":"IncomingMsg","account_id":1,"chat_id":7,"msg_id":3}',
  );
  assert.equal(line.type, "IncomingMsg");
  const raw = toLine({ id: undefined, event: "odd", data: "not json" });
  assert.deepEqual(raw.object, { type: "odd", data: "not json" });
});

Deno.test("labels: connectivity levels, state symbols, chat types, time", () => {
  const levels: [number, string][] = [
    [0, "not configured"],
    [1, "not connected"],
    [1999, "not connected"],
    [2000, "connecting"],
    [3999, "connected (working)"],
    [4000, "fully connected"],
    [5000, "fully connected"],
  ];
  for (const [level, label] of levels) assert.equal(connectivityLabel(level), label);
  const symbols: Record<number, string> = { 1: "", 10: "…", 16: "", 20: "✓", 26: "✓✓", 28: "👁" };
  for (const [state, symbol] of Object.entries(symbols)) {
    assert.equal(stateSymbol(Number(state)), symbol);
  }
  assert.deepEqual([100, 120, 130].map(chatTypeName), ["1:1", "group", "broadcast"]);
  assert.equal(formatTime(0), "");
  assert.equal(formatTime(1_767_225_600), "2026-01-01 00:00");
});

Deno.test("formatTable() aligns columns by display width (emoji count two)", () => {
  assert.equal(displayWidth("👁"), 2);
  assert.deepEqual(formatTable(["A", "B"], [["👁", "x"], ["ab", "y"]]), [
    "A   B",
    "👁  x",
    "ab  y",
  ]);
});

Deno.test("runCli() writes through the given CliIo", async () => {
  let out = "";
  let err = "";
  const io: CliIo = {
    stdout: (t) => Promise.resolve(void (out += t)),
    stderr: (t) => Promise.resolve(void (err += t)),
    env: () => undefined,
  };
  assert.equal(await runCli(["--version"], io), 0);
  assert.equal(out, `edge-gateway ${GATEWAY_VERSION}\n`);
  assert.equal(await runCli(["bogus"], io), 2);
  assert.match(err, /unknown command 'bogus'/);
});
