/**
 * Received-mail memory benchmark (`BENCH_ONLY=large-mail deno task bench`, and part of a full
 * run): two real gateways joined by SecureJoin; mails from A carrying a file of 1 KiB (the
 * baseline: what any received message costs), of a size whose mail is near the relay's limit
 * (30 MiB), and of 25 MiB (a mail of ~47 MiB, put into B's INBOX by IMAP APPEND, which the
 * relay's SMTP limit does not apply to) reach B one after the other. For each, B's RSS at rest
 * before it and its peak (VmHWM, reset before each mail) while receiving it; the file's SHA-256 is
 * checked. Writes its section of BENCHMARKS.md between `<!-- large-mail:begin -->` and
 * `<!-- large-mail:end -->`.
 */
import { Buffer } from "node:buffer";
import { createHash } from "node:crypto";
import { encryptAndSign, readPrivateKey, readPublicKey } from "../../src/crypto/pgp.ts";
import { renderEncryptedEnvelope } from "../../src/mime/encrypted_envelope.ts";
import { renderChatMessage } from "../../src/mime/factory.ts";
import { chatMessages, joinBySecureJoin, messagesById } from "../../tests/_helpers/gateway_pair.ts";
import { readStoredAccount, type StoredAccount } from "../../tests/_helpers/gateway_store.ts";
import { randomBytes } from "../../tests/_helpers/huge_mail.ts";
import { rssMb } from "../../tests/_helpers/rss.ts";
import { TwoGateways } from "../../tests/_helpers/two_gateways.ts";
import { closeMailbox, openMailbox } from "../../tests/_helpers/relay_mailbox.ts";
import { writeBenchmarkSection } from "../drivers/benchmarks_md.ts";

const BEGIN = "<!-- large-mail:begin -->";
const END = "<!-- large-mail:end -->";
const MIB = 1024 * 1024;
/** The chatmail relay's message limit (Postfix `message_size_limit`). */
const RELAY_LIMIT = 30 * MIB;
/** The target: receiving raises RSS by less than this over rest (issue 17 §0). */
const TARGET_MB = 64;

/** One received mail's figures. */
export interface LargeMailCase {
  readonly label: string;
  readonly fileBytes: number;
  readonly mailBytes: number;
  readonly restMb: number;
  readonly peakMb: number;
  readonly seconds: number;
  readonly hashOk: boolean;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A chat mail from A to B with a random file of `bytes`; returns it with the file's hash. */
async function mailWithFile(a: StoredAccount, b: StoredAccount, bytes: number, text: string) {
  const file = randomBytes(bytes);
  const sha256 = createHash("sha256").update(file).digest("hex");
  const messageId = `<bench-${crypto.randomUUID()}@test.invalid>`;
  const date = new Date();
  const raw = renderEncryptedEnvelope({
    from: a.addr,
    messageId,
    date,
    boundary: crypto.randomUUID(),
    ciphertext: await encryptAndSign({
      plaintext: renderChatMessage({
        from: { addr: a.addr, name: "A" },
        to: [{ addr: b.addr }],
        messageId,
        date,
        subject: "Message from A",
        autocryptKey: a.publicKey,
        text,
        file: { name: "file.bin", mime: "application/octet-stream", bytes: file },
      }),
      recipients: [await readPublicKey(b.publicKey)],
      signingKey: await readPrivateKey(a.privateKey),
    }),
  });
  return { raw, sha256 };
}

/** Resets a process's peak RSS (VmHWM) to its current RSS (Linux `clear_refs` 5). */
async function resetPeak(pid: number): Promise<void> {
  await Deno.writeTextFile(`/proc/${pid}/clear_refs`, "5");
}

/** Runs the cases once. */
export async function largeMailBench(): Promise<LargeMailCase[]> {
  const env = { EDGE_LOG_LEVEL: "info" };
  await using gws = await TwoGateways.start({ name: "A", env }, { name: "B", env });
  const { relay, a, b } = gws;
  const pair = await joinBySecureJoin(a, b);
  const aAcc = readStoredAccount(`${a.dir.path}/data`);
  const bAcc = readStoredAccount(`${b.dir.path}/data`);
  // A file whose mail lands just under the relay's limit (base64 twice: ×1.37 each, and headers).
  const nearLimit = Math.floor((RELAY_LIMIT - MIB) / 1.37 / 1.37);
  const cases = [
    { label: "1 KiB file (baseline)", bytes: 1024 },
    { label: `file near the relay's limit (mail < ${RELAY_LIMIT / MIB} MiB)`, bytes: nearLimit },
    { label: "25 MiB file", bytes: 25 * MIB },
  ];
  const out: LargeMailCase[] = [];
  const imap = await openMailbox(relay, bAcc);
  try {
    for (const [i, c] of cases.entries()) {
      const text = `bench file ${i}`;
      const { raw, sha256 } = await mailWithFile(aAcc, bAcc, c.bytes, text);
      await sleep(2_000);
      const rest = await rssMb(b.daemon.pid);
      await resetPeak(b.daemon.pid);
      const t0 = performance.now();
      await imap.append("INBOX", Buffer.from(raw));
      const msgs = await b.poll(
        () => chatMessages(b, pair.joinerChat),
        (m) => m.some((x) => x.text === text),
        300_000,
      );
      const seconds = (performance.now() - t0) / 1000;
      const peak = await rssMb(b.daemon.pid);
      const id = msgs.find((x) => x.text === text)!.id;
      const [m] = await messagesById(b, [id]) as unknown as { file: string }[];
      const stored = await Deno.readFile(m.file);
      out.push({
        label: c.label,
        fileBytes: c.bytes,
        mailBytes: raw.length,
        restMb: rest.now,
        peakMb: peak.peak,
        seconds,
        hashOk: createHash("sha256").update(stored).digest("hex") === sha256,
      });
    }
  } finally {
    await closeMailbox(imap);
  }
  return out;
}

function render(cases: readonly LargeMailCase[], command: string): string {
  const base = cases[0].peakMb - cases[0].restMb;
  const rows = cases.map((c) => {
    const growth = c.peakMb - c.restMb;
    const ok = growth < TARGET_MB ? "✔" : "✘";
    return `| ${c.label} | ${(c.fileBytes / MIB).toFixed(2)} MiB | ${
      (c.mailBytes / MIB).toFixed(1)
    } MiB | ${c.restMb} MB | ${c.peakMb} MB | +${growth} MB (< ${TARGET_MB} ${ok}) | ${
      growth - base >= 0 ? "+" : ""
    }${growth - base} MB | ${c.seconds.toFixed(1)} s | ${c.hashOk} |`;
  });
  return `## Received mail memory (\`bench/scenarios/large_mail.ts\`)

Produced by \`${command}\` on ${new Date().toISOString()}. Two real daemons (A, B) on the test
relay, joined by SecureJoin. Chat mails from A with one file are put into B's INBOX (IMAP APPEND,
so the relay's SMTP limit does not stop the 25 MiB one), one at a time; B fetches a mail above
1 MiB in ranges into a temp file and reads it as a stream (docs/behaviour.md, "Large mails"). The
baseline is the first row, a message with a 1 KiB file, measured in the same run: "over baseline"
is how much more a large file costs than any message. Peak: VmHWM, reset before each mail; rest:
VmRSS 2 s after the previous one; time: APPEND until the message is listed on B.

| mail | file | mail size | B at rest | B peak | growth (target) | over baseline | time | SHA-256 equal |
| ---- | ---- | --------- | --------- | ------ | --------------- | ------------- | ---- | ------------- |
${rows.join("\n")}

Before this (issue 17): the receiver peaked at 527 MB for a 16 MB file (rest ~110 MB), and mails
above 40 MiB were recorded from their head and deleted unread.
`;
}

/** Runs the cases and writes the section. */
export async function runLargeMailSection(
  command = "npx --yes deno@2.9.5 task bench",
): Promise<LargeMailCase[]> {
  const r = await largeMailBench();
  await writeBenchmarkSection({ begin: BEGIN, end: END }, render(r, command));
  return r;
}
