/**
 * A corpus of hostile or broken mail for one gateway (B) whose verified contact is A: broken
 * MIME, bad armor, forged or missing signatures, plaintext, a zip bomb, oversized headers and
 * forged SecureJoin steps, each built with the project's own MIME and OpenPGP modules as raw
 * bytes to put straight into B's INBOX (IMAP APPEND). Each item says whether the reception
 * pipeline must record it as a receive error (SecureJoin steps are refused or ignored instead).
 */
import * as openpgp from "openpgp";
import { armorMessage } from "../../src/crypto/armor.ts";
import { formatAutocrypt } from "../../src/crypto/autocrypt_header.ts";
import { generateAccountKey } from "../../src/crypto/keygen.ts";
import { readPrivateKey, readPublicKey } from "../../src/crypto/pgp.ts";
import { renderEncryptedEnvelope, rfc5322Date } from "../../src/mime/encrypted_envelope.ts";
import { renderChatMessage, renderSecureJoinStep } from "../../src/mime/factory.ts";
import type { SecureJoinStep } from "../../src/protocol.ts";
import { newToken } from "../../src/crypto/random.ts";

/** One hostile mail. */
export interface HostileMail {
  readonly name: string;
  readonly raw: Uint8Array;
  /** Message-ID without angle brackets ('' when the mail has none or it cannot be parsed). */
  readonly messageId: string;
  /** True when the pipeline must record it in receive_errors (else: a refused SecureJoin step). */
  readonly recorded: boolean;
}

/** What the corpus is built from. */
export interface CorpusInput {
  /** B: the receiving gateway. */
  readonly b: { addr: string; publicKey: Uint8Array };
  /** A: B's verified contact (its private key makes the zip bomb and the inner-header mail). */
  readonly a: { addr: string; publicKey: Uint8Array; privateKey: string; fingerprint: string };
  /** The invite number of an invite B made. */
  readonly inviteNumber: string;
  /** The auth token of that invite (a forged step carries it with a wrong fingerprint). */
  readonly auth: string;
  /** Domain for the attacker's address. */
  readonly domain: string;
}

/** Decompressed size of the zip bomb (over the 64 MiB limit). */
export const BOMB_BYTES = 100 * 1024 * 1024;

const enc = new TextEncoder();
const crlf = (lines: string[]) => enc.encode(lines.join("\r\n"));

function newId(name: string): string {
  return `hostile-${name}-${crypto.randomUUID()}@test.invalid`;
}

/** Builds the whole corpus (a fresh attacker key each time). */
export async function buildHostileCorpus(inp: CorpusInput): Promise<HostileMail[]> {
  const mallory = `mallory-${newToken().slice(0, 8).toLowerCase()}@${inp.domain}`;
  const x = await generateAccountKey(mallory);
  const xPriv = await readPrivateKey(x.privateKey);
  const aPriv = await readPrivateKey(inp.a.privateKey);
  const bKey = await readPublicKey(inp.b.publicKey);
  const date = new Date();
  const out: HostileMail[] = [];
  const add = (name: string, raw: Uint8Array, messageId: string, recorded = true) =>
    out.push({ name, raw, messageId, recorded });

  const encrypt = async (
    inner: Uint8Array,
    signWith: openpgp.PrivateKey | undefined,
    compress = false,
  ) =>
    await openpgp.encrypt({
      message: await openpgp.createMessage({ binary: inner }),
      encryptionKeys: [bKey],
      ...(signWith === undefined ? {} : { signingKeys: signWith }),
      wildcard: true,
      format: "binary",
      ...(compress
        ? { config: { preferredCompressionAlgorithm: openpgp.enums.compression.zlib } }
        : {}),
    }) as Uint8Array;
  const envelope = (from: string, id: string, ciphertext: Uint8Array) =>
    renderEncryptedEnvelope({
      from,
      messageId: `<${id}>`,
      date,
      ciphertext,
      boundary: crypto.randomUUID(),
    });
  const chatFromA = (id: string, text: string, extra: [string, string][] = []) =>
    renderChatMessage({
      from: { addr: inp.a.addr, name: "A" },
      to: [{ addr: inp.b.addr }],
      messageId: `<${id}>`,
      date,
      subject: "Message from A",
      autocryptKey: inp.a.publicKey,
      text,
      extra,
    });

  // --- broken MIME -------------------------------------------------------------------------
  {
    const id = newId("no-boundary");
    add(
      "multipart whose boundary never occurs",
      crlf([
        `From: <${inp.a.addr}>`,
        `To: <${inp.b.addr}>`,
        `Message-ID: <${id}>`,
        `Content-Type: multipart/mixed; boundary="never-there"`,
        "",
        "no delimiter line at all",
        "",
      ]),
      "",
    );
  }
  {
    const id = newId("unterminated");
    add(
      "multipart/encrypted, unterminated: armor cut off, no closing delimiter",
      crlf([
        `Content-Type: multipart/encrypted; protocol="application/pgp-encrypted"; boundary="u1"`,
        "MIME-Version: 1.0",
        `From: <${inp.a.addr}>`,
        `Message-ID: <${id}>`,
        "",
        "--u1",
        "Content-Type: application/pgp-encrypted",
        "",
        "Version: 1",
        "",
        "--u1",
        "Content-Type: application/octet-stream",
        "",
        "-----BEGIN PGP MESSAGE-----",
        "",
        "wV4DAAAAAAAAAAASAQdAb2xkIGFuZCBjdXQgb2Zm",
      ]),
      id,
    );
  }
  {
    // Printable and 8-bit garbage (no NUL: IMAP literals may not carry it), no header section.
    const bytes = crypto.getRandomValues(new Uint8Array(20_000)).map((v) => v === 0 ? 1 : v);
    add("20 kB of random bytes", bytes, "");
  }
  {
    const id = newId("deep");
    const depth = 30;
    const lines = [`From: <${inp.a.addr}>`, `Message-ID: <${id}>`];
    for (let i = 0; i < depth; i++) {
      lines.push(`Content-Type: multipart/mixed; boundary="deep${i}x"`, "", `--deep${i}x`);
    }
    lines.push("Content-Type: text/plain", "", "deep");
    for (let i = depth - 1; i >= 0; i--) lines.push(`--deep${i}x--`);
    add("multipart nested 30 deep", crlf(lines), "");
  }
  {
    const id = newId("many-parts");
    const lines = [
      `From: <${inp.a.addr}>`,
      `Message-ID: <${id}>`,
      `Content-Type: multipart/mixed; boundary="p"`,
      "",
    ];
    for (let i = 0; i < 2_000; i++) lines.push("--p", "", `part ${i}`);
    lines.push("--p--", "");
    add("2000 MIME parts", crlf(lines), "");
  }
  {
    const id = newId("big-header");
    const pad = Array.from({ length: 300 }, (_, i) => `X-Pad-${i}: ${"h".repeat(1_000)}`);
    add(
      "header section of 300 KiB",
      crlf([
        `From: <${inp.a.addr}>`,
        `To: <${inp.b.addr}>`,
        `Message-ID: <${id}>`,
        ...pad,
        "Content-Type: text/plain",
        "",
        "body",
        "",
      ]),
      "",
    );
  }

  // --- bad armor ---------------------------------------------------------------------------
  {
    const id = newId("bad-base64");
    const good = armorMessage(await encrypt(chatFromA(id, "never shown: bad base64"), aPriv));
    const lines = good.split("\r\n");
    // Corrupt a body line in the middle with characters outside the base64 alphabet.
    const mid = lines.findIndex((l, i) => i > 2 && l.length > 40);
    lines[mid] = "!!**$$" + lines[mid].slice(6, -6) + "%%^^&&";
    add(
      "armor with bytes outside base64",
      textEnvelope(inp.a.addr, id, lines.join("\r\n")),
      id,
    );
  }
  {
    const id = newId("bad-crc");
    const good = armorMessage(await encrypt(chatFromA(id, "never shown: bad checksum"), aPriv));
    const lines = good.split("\r\n");
    const crc = lines.findIndex((l) => /^=[A-Za-z0-9+/]{4}$/.test(l));
    if (crc >= 0) lines[crc] = lines[crc] === "=AAAA" ? "=BBBB" : "=AAAA";
    else lines.splice(lines.length - 2, 0, "=AAAA");
    add("armor with a wrong CRC", textEnvelope(inp.a.addr, id, lines.join("\r\n")), id);
  }
  {
    const id = newId("not-pgp");
    add(
      "armor of bytes that are no OpenPGP message",
      textEnvelope(inp.a.addr, id, armorMessage(crypto.getRandomValues(new Uint8Array(600)))),
      id,
    );
  }

  // --- signatures --------------------------------------------------------------------------
  {
    const id = newId("wrong-signer-a-autocrypt");
    // Claims A (with A's real Autocrypt key inside) but is signed by the attacker's key.
    add(
      "encrypted to B, From A with A's key, signed by another key",
      envelope(inp.a.addr, id, await encrypt(chatFromA(id, "never shown: forged signer"), xPriv)),
      id,
    );
  }
  {
    const id = newId("wrong-signer-no-autocrypt");
    const inner = crlf([
      `Content-Type: text/plain; charset="utf-8"; protected-headers="v1"`,
      `From: "A" <${inp.a.addr}>`,
      `To: <${inp.b.addr}>`,
      `Message-ID: <${id}>`,
      `Date: ${rfc5322Date(date)}`,
      "Chat-Version: 1.0",
      "MIME-Version: 1.0",
      "",
      "never shown: signed by a stranger, no key inside",
      "",
    ]);
    add(
      "encrypted to B, From A, no Autocrypt, signed by another key",
      envelope(inp.a.addr, id, await encrypt(inner, xPriv)),
      id,
    );
  }
  {
    const id = newId("unsigned");
    add(
      "encrypted to B, From A, unsigned",
      envelope(inp.a.addr, id, await encrypt(chatFromA(id, "never shown: unsigned"), undefined)),
      id,
    );
  }
  {
    const id = newId("from-mismatch");
    // Signed by A's real key, but the envelope From is someone else.
    add(
      "signed by A, encrypted From A inside an envelope From another address",
      envelope(mallory, id, await encrypt(chatFromA(id, "never shown: From mismatch"), aPriv)),
      id,
    );
  }
  {
    const id = newId("plaintext");
    add(
      "plaintext From A",
      crlf([
        `From: "A" <${inp.a.addr}>`,
        `To: <${inp.b.addr}>`,
        `Subject: plain`,
        `Date: ${rfc5322Date(date)}`,
        `Message-ID: <${id}>`,
        "Chat-Version: 1.0",
        `Autocrypt: ${
          formatAutocrypt({ addr: inp.a.addr, keydata: x.publicKey, preferEncrypt: "mutual" })
        }`,
        "MIME-Version: 1.0",
        `Content-Type: text/plain; charset="utf-8"`,
        "",
        "never shown: plaintext claiming to be A",
        "",
      ]),
      id,
    );
  }

  // --- size --------------------------------------------------------------------------------
  {
    const id = newId("zip-bomb");
    const head = chatFromA(id, "x");
    const bomb = new Uint8Array(head.length + BOMB_BYTES);
    bomb.set(head);
    bomb.fill(0x61, head.length);
    // Signed by A's real key: the decompressed size is the only thing wrong with it.
    add(
      "zip bomb: ZLIB-compressed, signed by A, 100 MiB when inflated",
      envelope(inp.a.addr, id, await encrypt(bomb, aPriv, true)),
      id,
    );
  }
  {
    const id = newId("inner-big-header");
    add(
      "signed by A, encrypted, inner header section of 300 KiB",
      envelope(
        inp.a.addr,
        id,
        await encrypt(
          chatFromA(id, "never shown: big inner header", [[
            "X-Pad",
            "i".repeat(300 * 1024),
          ]]),
          aPriv,
        ),
      ),
      id,
    );
  }

  // --- forged SecureJoin steps (refused or ignored, not recorded) --------------------------
  const step = async (
    name: string,
    from: string,
    stepName: SecureJoinStep,
    headers: [string, string][],
  ) => {
    const id = newId(name);
    const inner = renderSecureJoinStep({
      from: { addr: from, name: "Mallory" },
      to: [{ addr: inp.b.addr }],
      messageId: `<${id}>`,
      date,
      subject: "Secure-Join",
      autocryptKey: x.publicKey,
      step: stepName,
      headers,
    });
    add(name, envelope(from, id, await encrypt(inner, xPriv)), id, false);
  };
  await step("vc-request-with-auth with a wrong auth token", mallory, "vc-request-with-auth", [
    ["Secure-Join-Auth", newToken()],
    ["Secure-Join-Fingerprint", x.fingerprint],
    ["Secure-Join-Invitenumber", inp.inviteNumber],
  ]);
  await step(
    "vc-request-with-auth with the right token but A's fingerprint",
    mallory,
    "vc-request-with-auth",
    [
      ["Secure-Join-Auth", inp.auth],
      ["Secure-Join-Fingerprint", inp.a.fingerprint],
      ["Secure-Join-Invitenumber", inp.inviteNumber],
    ],
  );
  await step("vc-contact-confirm from a stranger's key", mallory, "vc-contact-confirm", []);
  await step("vc-contact-confirm From A by a stranger's key", inp.a.addr, "vc-contact-confirm", []);
  await step("vc-auth-required From A by a stranger's key", inp.a.addr, "vc-auth-required", []);
  return out;
}

/** A `multipart/encrypted` envelope around an armored text given as is. */
function textEnvelope(from: string, id: string, armored: string): Uint8Array {
  const b = crypto.randomUUID();
  return crlf([
    `Content-Type: multipart/encrypted; protocol="application/pgp-encrypted"; boundary="${b}"`,
    "MIME-Version: 1.0",
    `From: <${from}>`,
    `Subject: [...]`,
    `Message-ID: <${id}>`,
    "Chat-Version: 1.0",
    "",
    `--${b}`,
    "Content-Type: application/pgp-encrypted",
    "",
    "Version: 1",
    "",
    `--${b}`,
    "Content-Type: application/octet-stream",
    "",
    armored.replace(/\r\n$/, ""),
    `--${b}--`,
    "",
  ]);
}
