/**
 * Tests of `list_quarantined_mails`, `retry_quarantined_mail`, `delete_quarantined_mail` and
 * `get_info`'s `quarantined` through dispatch and the full method table.
 */
import assert from "node:assert/strict";
import { InboxReception, type QuarantineRetry } from "../../../src/core/receive/inbox_reception.ts";
import type { Receiver } from "../../../src/core/receive/pipeline.ts";
import { dispatch, type RpcReply } from "../../../src/rpc/dispatch.ts";
import { buildMethodTable } from "../../../src/rpc/methods/mod.ts";
import type { Services } from "../../../src/services.ts";
import type { Store } from "../../../src/store/mod.ts";
import { type FakeServices, fakeServices } from "../_fake_services.ts";

const methods = buildMethodTable();

function rpc(s: Services, method: string, params: unknown[]): Promise<RpcReply> {
  return dispatch(JSON.stringify({ jsonrpc: "2.0", method, params, id: 1 }), s, methods);
}

async function call(s: Services, method: string, params: unknown[]) {
  const reply = await rpc(s, method, params);
  assert.equal(reply.status, 200);
  return (reply as { body: unknown }).body as {
    result?: unknown;
    error?: { code: number; message: string };
  };
}

/** Quarantines a small mail `tag` straight in the store; returns its id. */
function keep(store: Store, tag: string, at: number, reason = "failed 5 times: no key"): number {
  const raw = new TextEncoder().encode(`Message-ID: <${tag}@x>\r\nSubject: ${tag}\r\n\r\nbody\r\n`);
  return store.quarantine.add({ messageId: `${tag}@x`, reason, attempts: 5, raw, at });
}

async function infoOf(s: FakeServices): Promise<Record<string, string>> {
  return (await call(s, "get_info", [1])).result as Record<string, string>;
}

Deno.test("list_quarantined_mails lists snake_case rows, oldest first, without the mail", async () => {
  const s = fakeServices();
  try {
    assert.deepEqual(await call(s, "list_quarantined_mails", [1]), {
      jsonrpc: "2.0",
      id: 1,
      result: [],
    });
    const first = keep(s.store, "one", 1_700_000_000);
    const second = keep(s.store, "two", 1_700_000_500, "not processed after 5 attempts");
    s.store.quarantine.failedAgain(first, "still no key");
    const size = s.store.quarantine.get(first)!.size;
    assert.deepEqual(await call(s, "list_quarantined_mails", [1]), {
      jsonrpc: "2.0",
      id: 1,
      result: [
        {
          id: first,
          message_id: "one@x",
          reason: "still no key",
          attempts: 6,
          size,
          quarantined_at: 1_700_000_000,
        },
        {
          id: second,
          message_id: "two@x",
          reason: "not processed after 5 attempts",
          attempts: 5,
          size: s.store.quarantine.get(second)!.size,
          quarantined_at: 1_700_000_500,
        },
      ],
    });
    assert.equal((await call(s, "list_quarantined_mails", [2])).error?.code, -1, "account 1 only");
  } finally {
    s.store.close();
  }
});

Deno.test("retry_quarantined_mail hands the id to services.quarantine and answers its outcome", async () => {
  const calls: number[] = [];
  const answers: QuarantineRetry[] = [
    { outcome: "received", kind: "message" },
    { outcome: "quarantined", reason: "not signed by a key of a@relay.test (invalid)" },
  ];
  const base = fakeServices();
  const s: Services = {
    ...base,
    quarantine: {
      retryQuarantined(id) {
        calls.push(id);
        return Promise.resolve(answers.shift()!);
      },
    },
  };
  try {
    assert.deepEqual(await call(s, "retry_quarantined_mail", [1, 7]), {
      jsonrpc: "2.0",
      id: 1,
      result: { outcome: "received", kind: "message" },
    });
    assert.deepEqual(await call(s, "retry_quarantined_mail", [1, 8]), {
      jsonrpc: "2.0",
      id: 1,
      result: { outcome: "quarantined", reason: "not signed by a key of a@relay.test (invalid)" },
    });
    assert.deepEqual(calls, [7, 8]);
    const wrong = await call(s, "retry_quarantined_mail", [1, "7"]);
    assert.equal(wrong.error?.code, -32602);
    const zero = await call(s, "retry_quarantined_mail", [1, 0]);
    assert.equal(zero.error?.code, -1);
    assert.match(zero.error!.message, /quarantine id/);
    assert.deepEqual(calls, [7, 8], "bad ids never reach reception");
  } finally {
    base.store.close();
  }
});

Deno.test("retry_quarantined_mail through InboxReception: taken mail leaves, unknown id is -1", async () => {
  const base = fakeServices();
  const receiver = {
    receive: () => Promise.resolve({ kind: "ignored", reason: "stub" }),
  } as unknown as Receiver;
  const s: Services = { ...base, quarantine: new InboxReception(base.core.ctx, receiver) };
  try {
    const id = keep(base.store, "kept", 1);
    assert.deepEqual(await call(s, "retry_quarantined_mail", [1, id]), {
      jsonrpc: "2.0",
      id: 1,
      result: { outcome: "received", kind: "ignored" },
    });
    assert.equal(base.store.quarantine.count(), 0);
    assert.deepEqual(await call(s, "retry_quarantined_mail", [1, id]), {
      jsonrpc: "2.0",
      id: 1,
      error: { code: -1, message: `no quarantined mail with id ${id}` },
    });
  } finally {
    base.store.close();
  }
});

Deno.test("delete_quarantined_mail drops the mail and answers nothing (204); unknown id is -1", async () => {
  const s = fakeServices();
  try {
    const a = keep(s.store, "a", 1);
    const b = keep(s.store, "b", 2);
    assert.deepEqual(await rpc(s, "delete_quarantined_mail", [1, a]), { status: 204 });
    assert.equal(s.store.quarantine.get(a), undefined);
    assert.equal(s.store.quarantine.raw(a), undefined, "the bytes are gone too");
    assert.deepEqual(s.store.quarantine.list().map((m) => m.id), [b]);
    assert.deepEqual(await call(s, "delete_quarantined_mail", [1, a]), {
      jsonrpc: "2.0",
      id: 1,
      error: { code: -1, message: `no quarantined mail with id ${a}` },
    });
    assert.deepEqual(await call(s, "delete_quarantined_mail", [1, 4242]), {
      jsonrpc: "2.0",
      id: 1,
      error: { code: -1, message: "no quarantined mail with id 4242" },
    });
    assert.equal(s.store.quarantine.count(), 1, "a failed delete drops nothing");
  } finally {
    s.store.close();
  }
});

Deno.test("get_info counts the quarantined mails", async () => {
  const s = fakeServices();
  try {
    assert.equal((await infoOf(s)).quarantined, "0");
    const a = keep(s.store, "a", 1);
    keep(s.store, "b", 2);
    assert.equal((await infoOf(s)).quarantined, "2");
    assert.deepEqual(await rpc(s, "delete_quarantined_mail", [1, a]), { status: 204 });
    assert.equal((await infoOf(s)).quarantined, "1");
    assert.equal((await infoOf(s)).receive_errors, "0", "not counted as receive errors");
  } finally {
    s.store.close();
  }
});
