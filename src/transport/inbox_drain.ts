/**
 * Drains INBOX one message at a time: lists UIDs and sizes, then per message counts an attempt,
 * fetches that one body, hands it to reception and deletes it only once reception resolved (it
 * committed first). A small mail is fetched into memory; a larger one, when the sink has a spool,
 * in ranges into a temp file (removed when its attempt ends), so memory does not grow with the
 * mail. Mail above the sink's cap is recorded from its head. A mail that keeps failing is quarantined
 * whole (kept by the sink) before it leaves the server, never deleted unread. A full disk is not
 * the mail's fault: the attempt does not count, the mail stays on the server and the whole drain
 * pauses with a growing back-off (no reconnect) until a write succeeds again.
 */
import { diskFullError } from "../errors.ts";
import { logger } from "../log.ts";
import { mailBytes, mailHead, type MailSource, mailWhole } from "../mime/mail_source.ts";
import { type MonotonicClock, monotonicNow } from "./clock.ts";
import type { createImapClient } from "./imap_client.ts";

const log = logger("imap");

type Client = ReturnType<typeof createImapClient>;

/** One message in INBOX, as listed before its body is fetched. */
export interface InboxMessage {
  readonly uid: number;
  /** INBOX's UIDVALIDITY: with `uid`, names the message across connections and restarts. */
  readonly uidValidity: string;
  /** RFC822.SIZE in bytes. */
  readonly size: number;
}

/** Where the drain fetches mails too large for memory, and the largest it fetches at all. */
export interface MailSpool {
  /** A directory for the temp files (hidden names, see `SPOOL_PREFIX`). */
  readonly dir: string;
  /** Mails larger than this are recorded from their head and deleted (read per mail). */
  maxMailBytes(): number;
}

/** Prefix of the temp file a large mail is fetched into. */
export const SPOOL_PREFIX = ".incoming-";

/** What the drain hands mail to (implemented by the core; the transport never imports it). */
export interface MailSink {
  /** Large mails go to files here; without it every mail is fetched into memory. */
  readonly spool?: MailSpool;
  /**
   * Durably counts an attempt at `msg` before its body is fetched and returns the number of
   * attempts made before this one (so a mail that killed the process while being processed is
   * counted too).
   */
  begin(msg: InboxMessage): number;
  /**
   * Receives one raw message (in memory, or a file that is removed once this settles); resolving
   * means "committed (or recorded), safe to delete".
   */
  deliver(raw: MailSource, msg: InboxMessage): Promise<void>;
  /** Notes why an attempt failed (for the record made when the drain gives up). */
  failed(msg: InboxMessage, reason: string): void;
  /**
   * The attempt `begin` counted failed for a reason that is not the mail's (the disk is full):
   * it does not count. Never throws (what cannot be written now is taken off at the next begin).
   */
  forgive(msg: InboxMessage): void;
  /**
   * Whether the disk is known to be full still (optional): once it says false, a drain paused for
   * the disk retries at once instead of at the end of its back-off.
   */
  diskFull?(): boolean;
  /**
   * Records a mail the drain does not fetch whole: too large, or the process stopped even while
   * fetching it for the quarantine. `head` is the start of the mail (all of it when
   * `head.length === msg.size`). Resolving means "safe to delete".
   */
  giveUp(msg: InboxMessage, reason: string, head: Uint8Array): Promise<void>;
  /**
   * Keeps a mail whole that failed `maxAttempts` times (or was being processed when the process
   * died that often), without processing it. Resolving means "kept durably, safe to delete".
   */
  quarantine(msg: InboxMessage, reason: string, raw: Uint8Array): Promise<void>;
}

/** Limits of the drain. */
export interface DrainLimits {
  /**
   * Mails larger than this are recorded and deleted without being fetched (the sink's spool,
   * when it has one, sets this instead).
   */
  readonly maxMailBytes: number;
  /** Mails up to this size are fetched into memory; larger ones into the sink's spool. */
  readonly inMemoryMailBytes: number;
  /** Bytes fetched per range when a mail goes to the spool. */
  readonly fetchChunkBytes: number;
  /**
   * The largest spooled mail kept whole in the quarantine (a database row, read into memory to
   * store and to retry); a larger one that keeps failing is recorded from its head instead.
   */
  readonly quarantineMaxBytes: number;
  /** Attempts (failures or deaths while processing) before a mail is quarantined. */
  readonly maxAttempts: number;
  /** Wait before the first retry of a failed mail; each further retry waits 4 times longer. */
  readonly retryBaseMs: number;
  /** Messages listed per pass (the rest follow in the next pass). */
  readonly listLimit: number;
}

/**
 * Defaults: without a spool, mail is read in memory, and 40 MiB (the chatmail relay's own limit is
 * 30 MiB, Postfix `message_size_limit`) refuses only mail no relay would have delivered. With a
 * spool, its cap applies (the account's reception: twice the relay's limit, at least 64 MiB).
 */
export const DEFAULT_DRAIN_LIMITS: DrainLimits = {
  maxMailBytes: 40 * 1024 * 1024,
  inMemoryMailBytes: 1024 * 1024,
  fetchChunkBytes: 1024 * 1024,
  quarantineMaxBytes: 16 * 1024 * 1024,
  maxAttempts: 5,
  retryBaseMs: 60_000,
  listLimit: 500,
};

/** Bytes of a given-up mail fetched for its record (Message-ID, and the raw mail when small). */
export const GIVE_UP_HEAD_BYTES = 256 * 1024;

/**
 * Back-off of the whole drain while the disk is full: the first retry after this, each next one
 * twice as late, at most {@link DISK_FULL_RETRY_MAX_MS}; the first success resets it.
 */
export const DISK_FULL_RETRY_MIN_MS = 2_000;
export const DISK_FULL_RETRY_MAX_MS = 60_000;

/** Keeps the connection alive while one mail is being processed (see {@link InboxDrain}). */
export type KeepAlive = <T>(work: Promise<T>) => Promise<T>;

function reasonOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

function bytesOf(source: Uint8Array | undefined): Uint8Array {
  if (source === undefined) return new Uint8Array();
  // imapflow hands a Buffer: view its bytes instead of copying a mail of many megabytes.
  return new Uint8Array(source.buffer, source.byteOffset, source.byteLength);
}

/**
 * The drain of one IMAP connection. Failed mails wait (`retryBaseMs`, ×4 each time) before the
 * next attempt; that schedule lasts for the connection, the attempt count lasts in the store.
 */
export class InboxDrain {
  readonly #retryAt = new Map<number, number>();
  /** While the disk is full: when the drain may try again, and how many times it found it full. */
  #diskRetryAt: number | undefined;
  #diskFailures = 0;

  constructor(
    private readonly sink: MailSink,
    private readonly limits: DrainLimits = DEFAULT_DRAIN_LIMITS,
    /** Retry times are on this clock, so a wall-clock jump neither hastens nor stalls them. */
    private readonly now: MonotonicClock = monotonicNow,
  ) {}

  /** Milliseconds until a failed mail may be retried (Infinity when none waits). */
  nextRetryIn(): number {
    if (this.#diskRetryAt !== undefined) {
      return this.#spaceBack() ? 0 : Math.max(0, this.#diskRetryAt - this.now());
    }
    let next = Infinity;
    for (const at of this.#retryAt.values()) next = Math.min(next, at - this.now());
    return Math.max(0, next);
  }

  /** True while the drain waits for disk space (a full disk paused it). */
  get pausedForDisk(): boolean {
    return this.#diskRetryAt !== undefined && this.#diskRetryAt > this.now() &&
      !this.#spaceBack();
  }

  /** The sink says the disk has space again (a write succeeded since the pause began). */
  #spaceBack(): boolean {
    return this.sink.diskFull?.() === false;
  }

  /** The disk was full: pause every mail, twice as long as the last time. */
  #pauseForDisk(err: Error, msg: InboxMessage): void {
    const wait = Math.min(
      DISK_FULL_RETRY_MAX_MS,
      DISK_FULL_RETRY_MIN_MS * 2 ** Math.min(this.#diskFailures, 20),
    );
    this.#diskFailures++;
    this.#diskRetryAt = this.now() + wait;
    log.warn("the disk is full: the message stays on the server; reception pauses", {
      uid: msg.uid,
      retry_in_ms: wait,
      error: err.message,
    });
  }

  /** Runs passes until one handles nothing; returns how many mails were delivered or given up. */
  async drain(client: Client, keepAlive: KeepAlive, stopped: () => boolean): Promise<number> {
    let total = 0;
    for (;;) {
      const n = await this.#pass(client, keepAlive, stopped);
      total += n;
      if (n === 0 || stopped()) return total;
    }
  }

  async #pass(client: Client, keepAlive: KeepAlive, stopped: () => boolean): Promise<number> {
    const box = client.mailbox;
    if (!box || box.exists === 0) return 0;
    const uidValidity = String(box.uidValidity);
    const listed: InboxMessage[] = [];
    const range = `1:${Math.min(box.exists, this.limits.listLimit)}`;
    for await (const m of client.fetch(range, { uid: true, size: true })) {
      listed.push({ uid: m.uid, uidValidity, size: m.size ?? 0 });
    }
    if (box.exists <= this.limits.listLimit) {
      // Mail that left INBOX some other way waits for no retry.
      const present = new Set(listed.map((m) => m.uid));
      for (const uid of this.#retryAt.keys()) if (!present.has(uid)) this.#retryAt.delete(uid);
    }
    let handled = 0;
    for (const msg of listed) {
      if (stopped() || this.pausedForDisk) break;
      const due = this.#retryAt.get(msg.uid);
      if (due !== undefined && due > this.now()) continue;
      try {
        if (await this.#one(client, msg, keepAlive)) handled++;
      } catch (err) {
        const full = diskFullError(err);
        if (full === undefined) throw err;
        this.#pauseForDisk(full, msg);
        break;
      }
      this.#diskRetryAt = undefined;
      this.#diskFailures = 0;
    }
    return handled;
  }

  /** Handles one message; true when it was delivered or given up (and deleted). */
  async #one(client: Client, msg: InboxMessage, keepAlive: KeepAlive): Promise<boolean> {
    const maxMailBytes = this.sink.spool?.maxMailBytes() ?? this.limits.maxMailBytes;
    if (msg.size > maxMailBytes) {
      return await this.#giveUp(client, msg, `larger than ${maxMailBytes} bytes`);
    }
    const before = this.sink.begin(msg); // a full disk throws here: nothing counted
    try {
      return await this.#attempt(client, msg, before, keepAlive);
    } catch (err) {
      if (diskFullError(err) !== undefined) this.sink.forgive(msg);
      throw err;
    }
  }

  /** The counted attempt `before + 1` at one message. */
  async #attempt(
    client: Client,
    msg: InboxMessage,
    before: number,
    keepAlive: KeepAlive,
  ): Promise<boolean> {
    const { maxAttempts } = this.limits;
    if (before > maxAttempts) {
      // Even fetching it to quarantine it stopped the process: keep its head only.
      return await this.#giveUp(client, msg, `not processed after ${before} attempts`);
    }
    const spool = this.sink.spool;
    if (spool === undefined || msg.size <= this.limits.inMemoryMailBytes) {
      const fetched = await client.fetchOne(String(msg.uid), { uid: true, source: true }, {
        uid: true,
      });
      if (fetched === false || fetched.source === undefined) return false; // expunged meanwhile
      return await this.#process(
        client,
        msg,
        before,
        keepAlive,
        mailBytes(bytesOf(fetched.source)),
      );
    }
    await Deno.mkdir(spool.dir, { recursive: true });
    const path = await Deno.makeTempFile({ dir: spool.dir, prefix: SPOOL_PREFIX });
    try {
      const size = await this.#fetchToFile(client, msg, path);
      if (size === undefined) return false; // expunged meanwhile
      return await this.#process(client, msg, before, keepAlive, { kind: "file", path, size });
    } finally {
      await Deno.remove(path).catch(() => {});
    }
  }

  /** Fetches a mail in ranges into `path`; its size, or undefined when it is gone. */
  async #fetchToFile(client: Client, msg: InboxMessage, path: string): Promise<number | undefined> {
    using file = await Deno.open(path, { write: true, truncate: true });
    const chunk = this.limits.fetchChunkBytes;
    let size = 0;
    for (;;) {
      const part = await client.fetchOne(
        String(msg.uid),
        { uid: true, source: { start: size, maxLength: chunk } },
        { uid: true },
      );
      if (part === false) return undefined;
      const bytes = bytesOf(part.source);
      for (let off = 0; off < bytes.byteLength;) off += await file.write(bytes.subarray(off));
      size += bytes.byteLength;
      if (bytes.byteLength < chunk) return size;
    }
  }

  /** Hands a fetched mail to the sink (or quarantines it) and settles the attempt. */
  async #process(
    client: Client,
    msg: InboxMessage,
    before: number,
    keepAlive: KeepAlive,
    raw: MailSource,
  ): Promise<boolean> {
    const { maxAttempts } = this.limits;
    if (before === maxAttempts) {
      const reason = `not processed after ${before} attempts (the process stopped while it ran)`;
      return await this.#quarantine(client, msg, reason, raw);
    }
    try {
      await keepAlive(this.sink.deliver(raw, msg));
    } catch (err) {
      if (diskFullError(err) !== undefined) throw err; // not the mail's fault: not counted
      const reason = reasonOf(err);
      this.sink.failed(msg, reason);
      const attempts = before + 1;
      log.warn("could not process a message; it stays on the server", {
        uid: msg.uid,
        bytes: msg.size,
        attempt: attempts,
        error: reason,
      });
      if (attempts >= maxAttempts) {
        return await this.#quarantine(client, msg, `failed ${attempts} times: ${reason}`, raw);
      }
      this.#retryAt.set(msg.uid, this.now() + this.limits.retryBaseMs * 4 ** (attempts - 1));
      return false;
    }
    this.#retryAt.delete(msg.uid);
    await client.messageDelete(String(msg.uid), { uid: true });
    return true;
  }

  async #quarantine(
    client: Client,
    msg: InboxMessage,
    reason: string,
    raw: MailSource,
  ): Promise<boolean> {
    const max = this.limits.quarantineMaxBytes;
    if (raw.kind === "file" && raw.size > max) {
      const why = `${reason}; larger than ${max} bytes, not kept whole`;
      await this.sink.giveUp(msg, why, await mailHead(raw, GIVE_UP_HEAD_BYTES));
      return await this.#delete(client, msg, why, "gave up on a message; recorded as an error");
    }
    await this.sink.quarantine(msg, reason, await mailWhole(raw));
    return await this.#delete(client, msg, reason, "quarantined a message; kept whole");
  }

  async #giveUp(client: Client, msg: InboxMessage, reason: string): Promise<boolean> {
    const head = await client.fetchOne(
      String(msg.uid),
      { uid: true, source: { start: 0, maxLength: GIVE_UP_HEAD_BYTES } },
      { uid: true },
    );
    if (head === false) return false;
    await this.sink.giveUp(msg, reason, bytesOf(head.source));
    return await this.#delete(client, msg, reason, "gave up on a message; recorded as an error");
  }

  /** Deletes a mail the sink has kept or recorded, with one WARN line saying which. */
  async #delete(client: Client, msg: InboxMessage, reason: string, what: string): Promise<true> {
    log.warn(`${what} and deleted from the server`, { uid: msg.uid, bytes: msg.size, reason });
    this.#retryAt.delete(msg.uid);
    await client.messageDelete(String(msg.uid), { uid: true });
    return true;
  }
}
