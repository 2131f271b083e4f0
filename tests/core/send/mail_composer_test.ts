/**
 * Tests of the mail composer: every kind of mail it writes passes the chatmail relay's
 * acceptance rules (scripts/relay/filter_check.mjs), is encrypted to the recipient and self,
 * signed, and carries the headers Delta Chat needs.
 */
import assert from "node:assert/strict";
import { checkOutgoing } from "../../../scripts/relay/filter_check.mjs";
import { readMail } from "../../../src/core/receive/mail_reader.ts";
import { PeerKeyCache } from "../../../src/core/contacts/peer_keys.ts";
import { SPOOL_FROM_FILE_BYTES } from "../../../src/constants.ts";
import { leaves, partText } from "../../../src/mime/parser.ts";
import { Capability, Header } from "../../../src/protocol.ts";
import { testAccount } from "../_accounts.ts";

Deno.test("chat messages, receipts and SecureJoin steps pass the relay filter and decrypt for both", async () => {
  const a = await testAccount("alice@relay.test", "Alice Ä");
  const b = await testAccount("bob@relay.test", "Bob");
  const to = { addr: b.addr, name: "Bob", publicKey: b.self.publicKey };
  const chat = await a.composer.renderChat(
    {
      chatId: 10,
      text: "hi",
      viewtype: "Text",
      timestamp: 1_700_000_000,
      inReplyTo: "p@x",
      quote: "",
    },
    { id: 10 } as never,
    [{ addr: b.addr, name: "", authName: "Bob", publicKey: b.self.publicKey } as never],
  );
  const mails = [
    chat,
    await a.composer.renderReceipt(to, ["m1@x", "m2@x"], "displayed"),
    await a.composer.renderSecureJoinStep(to, "vc-auth-required"),
    a.composer.renderSecureJoinRequest({ addr: b.addr }, "AAAAAAAAAAAAAAAAAAAAAAAA", "vc-request"),
  ];
  for (const m of mails) {
    const verdict = checkOutgoing(
      m.envelopeFrom,
      [...m.recipients],
      new TextDecoder().decode(m.raw),
    );
    assert.equal(verdict, null, `relay refused: ${verdict}`);
    assert.match(m.rfc724Mid, /^[\w-]{24}@relay\.test$/);
  }
  const deps = (acc: typeof a) => ({
    privateKey: acc.self.privateKey,
    keys: new PeerKeyCache(),
    knownKeys: () => [],
  });
  for (const reader of [b, a]) {
    const read = await readMail(chat.raw, deps(reader));
    assert.equal(read.signer, a.self.fingerprint, "signed by Alice, readable by Bob and by Alice");
  }
  const read = await readMail(chat.raw, deps(b));
  assert.equal(read.headers.get("chat-version"), "1.0");
  assert.equal(read.headers.get("chat-disposition-notification-to"), a.addr);
  assert.equal(read.headers.get("edge-delivery-receipt-to"), a.addr);
  assert.equal(read.headers.get("in-reply-to"), "<p@x>");
  assert.equal(read.headers.get("to"), `"Bob" <${b.addr}>`);
  assert.equal(read.from.name, "Alice Ä");
  const step = await readMail(mails[2].raw, deps(b));
  assert.equal(step.headers.get("secure-join"), "vc-auth-required");
  assert.deepEqual(step.gossip.map((g) => [g.addr, g.keydata]), [[b.addr, b.self.publicKey]]);
});

Deno.test("measureChat bounds the rendered size from the file size alone, closely", async () => {
  const dir = await Deno.makeTempDir();
  const a = await testAccount("alice@relay.test", "Alice", `${dir}/blobs`);
  const b = await testAccount("bob@relay.test", "Bob");
  const c = await testAccount("carol@relay.test", "Carol");
  try {
    const peers = [b, c].map((p) =>
      ({
        addr: p.addr,
        name: "",
        authName: p.self.name,
        publicKey: p.self.publicKey,
      }) as never
    );
    for (const size of [0, 1, 2, 3, 57, 58, 1000, 65_537, 300_001]) {
      const path = `${dir}/f${size}.bin`;
      await Deno.writeFile(path, crypto.getRandomValues(new Uint8Array(Math.min(size, 65_536))));
      if (size > 65_536) await Deno.truncate(path, size);
      for (const recipients of [peers.slice(0, 1), peers]) {
        const draft = {
          chatId: 10,
          text: "a file ✓",
          viewtype: "File" as const,
          timestamp: 1_700_000_000,
          inReplyTo: "",
          quote: "",
          file: { blob: `f${size}.bin`, path, name: `f${size}.bin`, mime: "", bytes: size },
        };
        const chat = { id: 10, ephemeralTimer: 0 } as never;
        const bound = a.composer.measureChat(draft, chat, recipients);
        let exact = -1;
        const mail = await a.composer.renderChat(draft, chat, recipients, (n) => exact = n);
        const length = mail.spool === undefined
          ? mail.raw.length
          : (await Deno.stat(a.ctx.spool.path(mail.spool))).size;
        assert.equal(mail.spool !== undefined, size >= SPOOL_FROM_FILE_BYTES, `${size} B spooled`);
        assert.equal(exact, length, `${size} B: the size admitted is the size written`);
        assert.ok(bound >= length, `${size} B: bound ${bound} < ${length}`);
        // The slack is the fixed OpenPGP allowance (per key and per message), not per byte.
        const slack = 2 * Math.ceil(size / 512) * 1.4 + 4096 + 1600 * (recipients.length + 1);
        assert.ok(bound - length <= slack, `${size} B: bound ${bound} too loose`);
      }
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a file from SPOOL_FROM_FILE_BYTES on is streamed into the spool: relay-conforming, readable, same bytes", async () => {
  const dir = await Deno.makeTempDir();
  const a = await testAccount("alice@relay.test", "Alice", `${dir}/blobs`);
  const b = await testAccount("bob@relay.test", "Bob");
  try {
    const size = 3 * 1024 * 1024 + 5;
    const bytes = new Uint8Array(size);
    for (let i = 0; i < size; i += 65_536) crypto.getRandomValues(bytes.subarray(i, i + 65_536));
    const path = `${dir}/clip.bin`;
    await Deno.writeFile(path, bytes);
    const mail = await a.composer.renderChat(
      {
        chatId: 10,
        text: "the clip",
        viewtype: "File",
        timestamp: 1_700_000_000,
        inReplyTo: "",
        quote: "",
        file: { blob: "clip.bin", path, name: "clip ✓.bin", mime: "", bytes: size },
      },
      { id: 10, ephemeralTimer: 0 } as never,
      [{ addr: b.addr, name: "", authName: "Bob", publicKey: b.self.publicKey } as never],
    );
    assert.ok(mail.spool !== undefined, "spooled");
    assert.equal(mail.raw.length, 0);
    const raw = await Deno.readFile(a.ctx.spool.path(mail.spool));
    const verdict = checkOutgoing(
      mail.envelopeFrom,
      [...mail.recipients],
      new TextDecoder().decode(raw),
    );
    assert.equal(verdict, null, `relay refused: ${verdict}`);
    for (const reader of [b, a]) {
      const read = await readMail(raw, {
        privateKey: reader.self.privateKey,
        keys: new PeerKeyCache(),
        knownKeys: () => [],
      });
      assert.equal(read.signer, a.self.fingerprint, "signed by Alice, readable by Bob and Alice");
      // The streamed render announces what this gateway takes, as the in-memory one does.
      assert.equal(read.headers.get(Header.EDGE_CAPABILITIES), Capability.LARGE_FILES);
      const [text, file] = leaves(read.content);
      assert.equal(partText(text), "the clip");
      assert.equal(file.disposition?.params.filename, "clip ✓.bin");
      assert.deepEqual(file.body, bytes);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
