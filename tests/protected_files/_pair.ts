/**
 * Alice (owner) and Bob (recipient) in memory for protected-file tests: real keys and account cores
 * (tests/core/_accounts.ts), a files directory and blob directories on disk, one shared clock
 * the test moves, and helpers to protect, send and deliver.
 */
import { dirname } from "node:path";
import { Chats } from "../../src/core/chats/chats.ts";
import { blobDirOf } from "../../src/core/context.ts";
import { openAttachableFile } from "../../src/core/file_access.ts";
import { Messages } from "../../src/core/chats/messages.ts";
import { createAccountCore } from "../../src/account/core.ts";
import { openInstallation } from "../../src/provision/installation.ts";
import type { LicenseSource } from "../../src/license/manager.ts";
import type { AccessRules } from "../../src/protected_files/pdu.ts";
import type { SendFileResult } from "../../src/protected_files/service.ts";
import { makeTempDir, type TempDir } from "../_helpers/temp.ts";
import {
  ACTIVE_LICENSE,
  deliverAll,
  introduce,
  mailBytes,
  type TestAccount,
  testAccount,
} from "../core/_accounts.ts";

/** The pair with everything a test needs. */
export interface PrvPair extends AsyncDisposable {
  alice: TestAccount;
  bob: TestAccount;
  readonly dir: TempDir;
  readonly filesDir: string;
  /** Alice's chat with Bob and Bob's contact id there. */
  readonly aliceChat: number;
  readonly bobOnAlice: number;
  /** Bob's contact id of Alice. */
  readonly aliceOnBob: number;
  /** The shared clock (Unix ms); tests move it forward. */
  clock: { now: number };
}

/** Creates the pair; their licenses gate sharing protected files (default: active). */
export async function prvPair(
  licenses: { readonly alice?: LicenseSource; readonly bob?: LicenseSource } = {},
): Promise<PrvPair> {
  const dir = await makeTempDir("prv-pair");
  const filesDir = `${dir.path}/files`;
  await Deno.mkdir(filesDir);
  const clock = { now: Date.UTC(2026, 0, 2, 3, 4, 5) };
  const now = () => clock.now;
  const alice = await testAccount(
    "alice@relay.test",
    "Alice",
    blobDirOf(`${dir.path}/a-data`),
    3_600_000,
    now,
    licenses.alice,
  );
  const bob = await testAccount(
    "bob@relay.test",
    "Bob",
    blobDirOf(`${dir.path}/b-data`),
    3_600_000,
    now,
    licenses.bob,
  );
  const { bOnA, aOnB } = introduce(alice, bob);
  const aliceChat = new Chats(alice.ctx).getOrCreate1to1(bOnA).chatId;
  new Chats(bob.ctx).getOrCreate1to1(aOnB);
  return {
    alice,
    bob,
    dir,
    filesDir,
    aliceChat,
    bobOnAlice: bOnA,
    aliceOnBob: aOnB,
    clock,
    [Symbol.asyncDispose]: async () => {
      await alice.receipts.close();
      await bob.receipts.close();
      alice.store.close();
      bob.store.close();
      await dir.cleanup();
    },
  };
}

/** Writes `bytes` as `name` in the files directory; returns its path. */
export async function plainFile(p: PrvPair, name: string, bytes: Uint8Array): Promise<string> {
  const path = `${p.filesDir}/${name}`;
  await Deno.writeFile(path, bytes);
  return path;
}

/** Alice protects `path` for Bob. */
export function protect(p: PrvPair, path: string, rules: AccessRules): Promise<SendFileResult> {
  return p.alice.protectedFiles.protect({
    chatId: p.aliceChat,
    peerContactId: p.bobOnAlice,
    plaintextPath: path,
    rules,
    roots: { filesDir: p.filesDir, dataDir: `${p.dir.path}/a-data` },
    method: "secure_send_file",
  });
}

/**
 * `from` sends the file at `path` in chat `chatId` the way send_msg does (PDUs added, forwarding
 * rules checked); returns the message id and the raw mail.
 */
export async function sendFile(
  from: TestAccount,
  chatId: number,
  path: string,
  filesDir: string,
): Promise<{ msgId: number; raw: Uint8Array }> {
  await using file = await openAttachableFile(
    path,
    { filesDir, dataDir: dirname(from.ctx.blobDir), blobDir: from.ctx.blobDir },
    { method: "send_msg", verb: "sent" },
  );
  const msgId = await new Messages(from.ctx).createOutgoing(
    { chatId, file: { source: file } },
    from.send,
  );
  const row = from.store.outbox.due(Number.MAX_SAFE_INTEGER).find((r) => r.msgId === msgId)!;
  return { msgId, raw: await mailBytes(from, row) };
}

/** Protects and sends a file from Alice to Bob; returns the result and both message ids. */
export async function protectAndSend(
  p: PrvPair,
  bytes: Uint8Array,
  rules: AccessRules,
  name = "report.bin",
): Promise<{ result: SendFileResult; aliceMsg: number; bobMsg: number }> {
  const result = await protect(p, await plainFile(p, name, bytes), rules);
  const sent = await sendFile(p.alice, p.aliceChat, result.encrypted_path, p.filesDir);
  const out = await p.bob.receiver.receive(sent.raw);
  if (out.kind !== "message") throw new Error(`not stored: ${JSON.stringify(out)}`);
  return { result, aliceMsg: sent.msgId, bobMsg: out.msgId };
}

/** Hands the hidden PDU mails each side queued to the other, until none are left. */
export async function exchange(p: PrvPair): Promise<void> {
  while (p.alice.outbox.length > 0 || p.bob.outbox.length > 0) {
    await deliverAll(p.alice, p.bob);
    await deliverAll(p.bob, p.alice);
  }
}

/**
 * Bob's gateway restarted (a new account core over his store: nothing in memory survives); the
 * receipts it owed go out before (and are dropped here: the tests look at PDU mails). With
 * `machine`, the start runs as the daemon's does (provision/installation.ts) on that machine id
 * and device fingerprint: another machine id is the data directory on another host.
 */
export function restartBob(p: PrvPair, machine?: Machine): Promise<void> {
  return restartAccount(p, "bob", machine);
}

/** Alice's gateway restarted, as {@link restartBob}. */
export function restartAlice(p: PrvPair, machine?: Machine): Promise<void> {
  return restartAccount(p, "alice", machine);
}

/** What a start sees of its machine (the pair starts on machine id "" with fingerprint ""). */
export interface Machine {
  readonly machineId: string;
  readonly fingerprint?: string;
}

async function restartAccount(p: PrvPair, who: "alice" | "bob", machine?: Machine): Promise<void> {
  const account = p[who];
  await account.receipts.close();
  account.outbox.splice(0);
  const installation = machine && await openInstallation(
    account.store,
    { machineId: machine.machineId, fingerprint: machine.fingerprint ?? "" },
    account.ctx.blobDir,
    p.clock.now,
  );
  const core = createAccountCore({
    store: account.store,
    events: account.sink,
    blobDir: account.ctx.blobDir,
    now: account.ctx.now,
    self: account.self,
    license: ACTIVE_LICENSE,
    receiptWindowMs: 3_600_000,
    secretKeys: installation?.keys,
    queue: (mail) => account.outbox.push(mail),
  });
  p[who] = { ...account, ...core };
}

/** Reads a whole stream. */
export async function readAll(stream: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  return new Uint8Array(await new Response(stream).arrayBuffer());
}
