/**
 * Golden tests of JSON-RPC 2.0 dispatch: envelope errors, batches, notifications, 204 mapping,
 * the license gate, and error mapping (GatewayError, permission errors, internal errors).
 */
import assert from "node:assert/strict";
import { GatewayError } from "../../src/errors.ts";
import { setLogSink } from "../../src/log.ts";
import {
  dispatch,
  dispatchJson,
  MAX_BATCH_ANSWER_CHARS,
  MAX_BATCH_MEMBERS,
  toRpcError,
} from "../../src/rpc/dispatch.ts";
import { fakeServices } from "./_fake_services.ts";
import { calls, testMethods } from "./_test_methods.ts";

const methods = testMethods;

async function rpc(body: string, license = "no_license") {
  const services = fakeServices({ license });
  try {
    return await dispatch(body, services, methods);
  } finally {
    services.store.close();
  }
}

function quietLogs(): () => void {
  const prev = setLogSink(() => {});
  return () => setLogSink(prev);
}

Deno.test("dispatch() answers a single request with result and id", async () => {
  assert.deepEqual(await rpc('{"jsonrpc":"2.0","method":"get","params":[1],"id":7}'), {
    status: 200,
    body: { jsonrpc: "2.0", id: 7, result: 42 },
  });
  assert.deepEqual(await rpc('{"jsonrpc":"2.0","method":"echo","params":["x"],"id":"a"}'), {
    status: 200,
    body: { jsonrpc: "2.0", id: "a", result: "x" },
  });
  assert.deepEqual(await rpc('{"jsonrpc":"2.0","method":"echo","params":[1],"id":null}'), {
    status: 200,
    body: { jsonrpc: "2.0", id: null, result: 1 },
  });
});

Deno.test("dispatch() answers -32700 with id null for bad JSON", async () => {
  const reply = await rpc('{"jsonrpc":"2.0","method":');
  assert.equal(reply.status, 200);
  assert.ok(reply.status === 200 && !Array.isArray(reply.body) && "error" in reply.body);
  assert.equal(reply.body.id, null);
  assert.equal(reply.body.error.code, -32700);
  assert.match(reply.body.error.message, /^parse error: body is not JSON/);
});

Deno.test("dispatch() answers -32600 for malformed envelopes", async () => {
  const cases: [string, unknown, string][] = [
    ["1", null, "invalid request: a request must be a JSON object"],
    ['"x"', null, "invalid request: a request must be a JSON object"],
    ['{"method":"get","params":[1],"id":1}', 1, 'invalid request: "jsonrpc" must be "2.0"'],
    ['{"jsonrpc":"1.0","method":"get","id":1}', 1, 'invalid request: "jsonrpc" must be "2.0"'],
    ['{"jsonrpc":"2.0","method":5,"id":"q"}', "q", 'invalid request: "method" must be a string'],
    [
      '{"jsonrpc":"2.0","method":"get","id":{}}',
      null,
      'invalid request: "id" must be a string, number or null',
    ],
    [
      '{"jsonrpc":"2.0","method":"get","params":"x","id":2}',
      2,
      'invalid request: "params" must be an array',
    ],
    [
      '{"jsonrpc":"2.0","method":"get","params":null,"id":2}',
      2,
      'invalid request: "params" must be an array',
    ],
    ['{"jsonrpc":"2.0","method":1}', null, 'invalid request: "method" must be a string'],
  ];
  for (const [body, id, message] of cases) {
    assert.deepEqual(await rpc(body), {
      status: 200,
      body: { jsonrpc: "2.0", id, error: { code: -32600, message } },
    }, body);
  }
});

Deno.test("dispatch() answers -32601 for an unknown method", async () => {
  assert.deepEqual(await rpc('{"jsonrpc":"2.0","method":"nope","params":[],"id":3}'), {
    status: 200,
    body: { jsonrpc: "2.0", id: 3, error: { code: -32601, message: 'method not found: "nope"' } },
  });
});

Deno.test("dispatch() answers -32602 for named params and for wrong params", async () => {
  assert.deepEqual(await rpc('{"jsonrpc":"2.0","method":"get","params":{"account_id":1},"id":4}'), {
    status: 200,
    body: {
      jsonrpc: "2.0",
      id: 4,
      error: {
        code: -32602,
        message: "params must be a positional array (named params are not supported by get)",
      },
    },
  });
  assert.deepEqual(await rpc('{"jsonrpc":"2.0","method":"get","id":5}'), {
    status: 200,
    body: {
      jsonrpc: "2.0",
      id: 5,
      error: { code: -32602, message: "get takes 1 parameter [account_id], got 0" },
    },
  });
  assert.deepEqual(await rpc('{"jsonrpc":"2.0","method":"get","params":[2],"id":6}'), {
    status: 200,
    body: { jsonrpc: "2.0", id: 6, error: { code: -1, message: "account with id 2 not found" } },
  });
});

Deno.test("dispatch() gives a method() handler its params as declared", async () => {
  const params = [1, 41, "hi", [1, 2, 3], ["a", "b"], false, { mode: "slow", extra: [1] }];
  const body = JSON.stringify({ jsonrpc: "2.0", method: "typed", params, id: 1 });
  assert.deepEqual(await rpc(body), {
    status: 200,
    body: {
      jsonrpc: "2.0",
      id: 1,
      result: { id: 42, note: "HI", sum: 6, tags: "a,b", flag: true, mode: "slow", limit: null },
    },
  });
});

Deno.test("dispatch() answers a wrong param of each kind with -32602 naming it", async () => {
  const good = [1, 41, null, [], [], true, { mode: "fast", limit: null }];
  const wrong = (at: number, value: unknown) => good.map((v, i) => i === at ? value : v);
  const cases: [unknown[], string][] = [
    [
      wrong(1, "41"),
      "parameter 2 (id) of typed must be an unsigned 32-bit integer (u32), got string",
    ],
    [wrong(2, 7), "parameter 3 (note) of typed must be a string or null, got number"],
    [
      wrong(3, [1, -2]),
      "parameter 4 (ids) of typed must be an array of unsigned 32-bit integers (u32), " +
      "got an array whose element 1 is -2",
    ],
    [wrong(4, "a"), "parameter 5 (tags) of typed must be an array of strings, got string"],
    [wrong(5, null), "parameter 6 (flag) of typed must be a boolean, got null"],
    [wrong(6, []), "parameter 7 (options) of typed must be an object, got array"],
    [
      wrong(6, { mode: "fast", limit: 1.5 }),
      'parameter 7 (options) of typed: field "limit" must be an unsigned 32-bit integer (u32) ' +
      "or null, got 1.5",
    ],
    [
      wrong(6, { mode: "quick" }),
      'parameter 7 (options) of typed: field "mode" must be one of "fast", "slow", got "quick"',
    ],
    [
      wrong(6, { limit: 3 }),
      'parameter 7 (options) of typed: field "mode" is missing; it must be one of "fast", "slow"',
    ],
  ];
  for (const [params, message] of cases) {
    const reply = await rpc(JSON.stringify({ jsonrpc: "2.0", method: "typed", params, id: 3 }));
    assert.deepEqual(reply, {
      status: 200,
      body: { jsonrpc: "2.0", id: 3, error: { code: -32602, message } },
    });
  }
});

Deno.test("dispatch() accepts absent params for a method without params", async () => {
  const reply = await rpc('{"jsonrpc":"2.0","method":"undef","id":1}');
  assert.deepEqual(reply, { status: 200, body: { jsonrpc: "2.0", id: 1, result: null } });
});

Deno.test("dispatch() maps a void method to 204 and keeps null results at 200", async () => {
  assert.deepEqual(await rpc('{"jsonrpc":"2.0","method":"nothing","id":1}'), { status: 204 });
  assert.deepEqual(await rpc('{"jsonrpc":"2.0","method":"echo","params":[null],"id":1}'), {
    status: 200,
    body: { jsonrpc: "2.0", id: 1, result: null },
  });
});

Deno.test("dispatch() runs notifications without answering them", async () => {
  calls.length = 0;
  assert.deepEqual(await rpc('{"jsonrpc":"2.0","method":"echo","params":["n"]}'), { status: 204 });
  assert.deepEqual(await rpc('{"jsonrpc":"2.0","method":"nope"}'), { status: 204 });
  assert.deepEqual(calls, ['echo:"n"']);
});

Deno.test("dispatch() answers a batch in order, skipping notifications", async () => {
  calls.length = 0;
  const body = JSON.stringify([
    { jsonrpc: "2.0", method: "echo", params: [1], id: 1 },
    { jsonrpc: "2.0", method: "echo", params: [2] },
    { jsonrpc: "2.0", method: "nothing", id: 3 },
    { jsonrpc: "2.0", method: "nope", id: 4 },
    1,
    { jsonrpc: "2.0", method: "echo", params: [5], id: "five" },
  ]);
  assert.deepEqual(await rpc(body), {
    status: 200,
    body: [
      { jsonrpc: "2.0", id: 1, result: 1 },
      { jsonrpc: "2.0", id: 3, result: null },
      { jsonrpc: "2.0", id: 4, error: { code: -32601, message: 'method not found: "nope"' } },
      {
        jsonrpc: "2.0",
        id: null,
        error: { code: -32600, message: "invalid request: a request must be a JSON object" },
      },
      { jsonrpc: "2.0", id: "five", result: 5 },
    ],
  });
  assert.deepEqual(calls, ["echo:1", "echo:2", "nothing", "echo:5"], "sequential, in order");
});

Deno.test("dispatch() answers an empty batch with one -32600 and invalid members each", async () => {
  assert.deepEqual(await rpc("[]"), {
    status: 200,
    body: {
      jsonrpc: "2.0",
      id: null,
      error: { code: -32600, message: "invalid request: empty batch" },
    },
  });
  const reply = await rpc("[1,2,3]");
  assert.ok(reply.status === 200 && Array.isArray(reply.body));
  assert.equal(reply.body.length, 3);
  for (const r of reply.body) assert.ok("error" in r && r.error.code === -32600 && r.id === null);
});

Deno.test("dispatch() answers 204 for a batch of only notifications", async () => {
  const body = '[{"jsonrpc":"2.0","method":"echo","params":[1]},{"jsonrpc":"2.0","method":"x"}]';
  assert.deepEqual(await rpc(body), { status: 204 });
});

Deno.test("dispatch() gates license methods with -32001 and the contract's message", async () => {
  const body = '{"jsonrpc":"2.0","method":"secure_thing","params":[1],"id":9}';
  assert.deepEqual(await rpc(body), {
    status: 200,
    body: {
      jsonrpc: "2.0",
      id: 9,
      error: {
        code: -32001,
        message: 'License required: "secure_thing" needs an active license, but the license ' +
          "status is no_license. Activate one with: edge-gateway license activate <url>",
      },
    },
  });
  const expired = await rpc(body, "expired");
  assert.ok(expired.status === 200 && !Array.isArray(expired.body) && "error" in expired.body);
  assert.equal(expired.body.error.code, -32001);
  assert.match(expired.body.error.message, /license status is expired/);
  assert.deepEqual(await rpc(body, "active"), {
    status: 200,
    body: { jsonrpc: "2.0", id: 9, result: "ran" },
  });
});

Deno.test("dispatch() maps GatewayError, permission and unexpected errors", async () => {
  const restore = quietLogs();
  try {
    assert.deepEqual(await rpc('{"jsonrpc":"2.0","method":"missing","id":1}'), {
      status: 200,
      body: {
        jsonrpc: "2.0",
        id: 1,
        error: { code: -1, message: "chat 7 not found: no chat has this id" },
      },
    });
    assert.deepEqual(await rpc('{"jsonrpc":"2.0","method":"boom","id":2}'), {
      status: 200,
      body: { jsonrpc: "2.0", id: 2, error: { code: -32603, message: "internal error" } },
    });
    const denied = await rpc('{"jsonrpc":"2.0","method":"denied","id":3}');
    assert.ok(denied.status === 200 && !Array.isArray(denied.body) && "error" in denied.body);
    assert.equal(denied.body.error.code, -1);
    assert.equal(
      denied.body.error.message,
      "denied: access denied: the path is outside what the daemon may access (its data " +
        'directory and files directory): Requires read access to "/etc/shadow"',
    );
  } finally {
    restore();
  }
});

Deno.test("toRpcError() finds a permission error in the cause chain and logs internals", () => {
  const lines: string[] = [];
  const prev = setLogSink((l) => lines.push(l));
  try {
    const wrapped = new Error("read failed", {
      cause: new Deno.errors.PermissionDenied("Permission denied (os error 13)"),
    });
    assert.deepEqual(toRpcError(wrapped, "m"), {
      code: -1,
      message: "m: permission denied by the operating system: Permission denied (os error 13)",
    });
    assert.deepEqual(toRpcError(new GatewayError("x", -32002), "m"), {
      code: -32002,
      message: "x",
    });
    assert.deepEqual(toRpcError("str", "m"), { code: -32603, message: "internal error" });
    assert.ok(lines.some((l) => l.includes("m failed unexpectedly") && l.includes("str")));
  } finally {
    setLogSink(prev);
  }
});

Deno.test("dispatchJson() takes an already parsed request", async () => {
  const services = fakeServices();
  try {
    const reply = await dispatchJson(
      { jsonrpc: "2.0", method: "echo", params: [[1]], id: 1 },
      services,
      methods,
    );
    assert.deepEqual(reply, { status: 200, body: { jsonrpc: "2.0", id: 1, result: [1] } });
  } finally {
    services.store.close();
  }
});

Deno.test("dispatch() refuses a batch over MAX_BATCH_MEMBERS with one -32600 and runs none", async () => {
  calls.length = 0;
  const member = '{"jsonrpc":"2.0","method":"echo","params":[1],"id":1}';
  const reply = await rpc(`[${Array(MAX_BATCH_MEMBERS + 1).fill(member).join(",")}]`);
  assert.deepEqual(reply, {
    status: 200,
    body: {
      jsonrpc: "2.0",
      id: null,
      error: {
        code: -32600,
        message: `invalid request: a batch may hold at most ${MAX_BATCH_MEMBERS} requests, ` +
          `this one holds ${MAX_BATCH_MEMBERS + 1}; nothing was run`,
      },
    },
  });
  assert.deepEqual(calls, []);
  const full = await rpc(`[${Array(MAX_BATCH_MEMBERS).fill(member).join(",")}]`);
  assert.ok(full.status === 200 && Array.isArray(full.body));
  assert.equal(full.body.length, MAX_BATCH_MEMBERS);
});

Deno.test("dispatch() stops running a batch once its answer reaches the size limit", async () => {
  calls.length = 0;
  const big = "x".repeat(MAX_BATCH_ANSWER_CHARS / 2);
  const echo = (id: number) => ({ jsonrpc: "2.0", method: "echo", params: [big], id });
  const batch = [
    echo(1),
    echo(2),
    echo(3),
    { jsonrpc: "2.0", method: "echo", params: [1] },
    echo(4),
  ];
  const reply = await rpc(JSON.stringify(batch));
  assert.ok(reply.status === 200 && Array.isArray(reply.body));
  // The first two answers pass the limit; the rest are not run, the notification not answered.
  assert.equal(calls.length, 2);
  assert.deepEqual(reply.body.map((r) => r.id), [1, 2, 3, 4]);
  for (const r of reply.body.slice(2)) {
    assert.ok("error" in r);
    assert.equal(r.error.code, -32000);
    assert.match(
      r.error.message,
      /not run: the batch's answer reached its limit of \d+ characters/,
    );
  }
});

Deno.test("toRpcError() answers -1 saying the disk is full (SQLITE_FULL, ENOSPC, in a cause)", () => {
  const restore = quietLogs();
  try {
    const sqlite = toRpcError(new Error("database or disk is full"), "send_msg");
    assert.equal(sqlite.code, -1);
    assert.match(sqlite.message, /^send_msg: the disk is full \(database or disk is full\)/);
    const enospc = Object.assign(new Error("No space left on device (os error 28)"), {
      code: "ENOSPC",
    });
    const wrapped = toRpcError(new Error("copying the file", { cause: enospc }), "send_msg");
    assert.equal(wrapped.code, -1);
    assert.match(wrapped.message, /the disk is full/);
    assert.doesNotMatch(wrapped.message, /internal error/);
  } finally {
    restore();
  }
});
