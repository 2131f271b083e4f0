/** Tests of the mail spool: whole files or nothing, removal, and the sweep of orphans at start. */
import assert from "node:assert/strict";
import { MailSpool } from "../../src/store/mod.ts";
import { withStore } from "./_store.ts";

async function* chunks(...parts: string[]): AsyncGenerator<Uint8Array> {
  for (const p of parts) yield new TextEncoder().encode(p);
}

async function* failing(): AsyncGenerator<Uint8Array> {
  yield new Uint8Array(1000);
  throw new Error("render failed");
}

async function names(dir: string): Promise<string[]> {
  const out: string[] = [];
  for await (const e of Deno.readDir(dir)) out.push(e.name);
  return out.sort();
}

Deno.test("MailSpool writes a whole file under a new name, removes it, sweeps orphans", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const spool = new MailSpool(`${dir}/spool`);
    const a = await spool.write(chunks("Subject: a\r\n", "\r\nbody\r\n"));
    await spool.write(chunks("b"));
    assert.match(a.name, /^[0-9a-f]{32}\.eml$/);
    assert.equal(a.bytes, 20);
    assert.equal(await Deno.readTextFile(spool.path(a.name)), "Subject: a\r\n\r\nbody\r\n");
    await Deno.writeTextFile(`${dir}/spool/0123.tmp`, "cut short by a crash");
    assert.equal(await spool.sweep(new Set([a.name])), 2, "b and the temporary file");
    assert.deepEqual(await names(`${dir}/spool`), [a.name]);
    await spool.remove(a.name);
    await spool.remove(a.name); // gone already: no error
    assert.deepEqual(await names(`${dir}/spool`), []);
    assert.throws(() => spool.path("../gateway.db"), /not a spool file name/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("MailSpool: a write that fails leaves nothing behind", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const spool = new MailSpool(dir);
    await assert.rejects(spool.write(failing()), /render failed/);
    assert.deepEqual(await names(dir), []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("outbox rows name a spool file instead of raw; rows with raw are unchanged", () => {
  withStore((s) => {
    const base = { rfc724Mid: "m@x", envelopeFrom: "a@x", recipients: ["b@x"] };
    const kept = s.outbox.enqueue({ ...base, msgId: 11, raw: new Uint8Array([1, 2, 3]) });
    const spooled = s.outbox.enqueue({
      ...base,
      msgId: 12,
      raw: new Uint8Array([9]),
      spool: "0123456789abcdef0123456789abcdef.eml",
    });
    assert.deepEqual([...s.outbox.get(kept)!.raw], [1, 2, 3]);
    assert.equal(s.outbox.get(kept)!.spool, "");
    assert.equal(s.outbox.get(spooled)!.raw.length, 0, "the row holds no bytes");
    assert.deepEqual(s.outbox.spools(), ["0123456789abcdef0123456789abcdef.eml"]);
    assert.deepEqual(s.outbox.spools(11), []);
    assert.deepEqual(s.outbox.spools(12), ["0123456789abcdef0123456789abcdef.eml"]);
  });
});
