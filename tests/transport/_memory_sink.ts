/**
 * An in-memory `MailSink` for ImapLoop tests: attempts per UIDVALIDITY:UID, what was delivered
 * (by Subject), what was given up on or quarantined, and an optional failure rule.
 */
import type { InboxMessage, MailSink } from "../../src/transport/inbox_drain.ts";
import type { MailSource } from "../../src/mime/mail_source.ts";

/** The bytes of a delivered mail (a spooled one read from its file, which lives until delivery settles). */
export function sourceBytes(raw: MailSource): Uint8Array {
  return raw.kind === "bytes" ? raw.bytes : Deno.readFileSync(raw.path);
}

/** A given-up mail as the sink saw it. */
export interface GivenUp {
  readonly subject: string;
  readonly reason: string;
  readonly size: number;
  readonly headBytes: number;
}

/** A quarantined mail as the sink saw it (whole). */
export interface Quarantined {
  readonly subject: string;
  readonly reason: string;
  readonly bytes: number;
}

/** The Subject of a raw mail (or of its head), '?' when missing. */
export function subjectOf(raw: Uint8Array): string {
  return /^Subject: (.*)$/m.exec(new TextDecoder().decode(raw))?.[1].trim() ?? "?";
}

/** A sink that records everything; `fail(subject)` true makes delivery throw. */
export class MemorySink implements MailSink {
  readonly attempts = new Map<string, number>();
  readonly delivered: string[] = [];
  readonly tried: string[] = [];
  readonly givenUp: GivenUp[] = [];
  readonly quarantined: Quarantined[] = [];
  #waiters: (() => void)[] = [];

  constructor(private readonly fail: (subject: string) => boolean = () => false) {}

  static key(m: InboxMessage): string {
    return `${m.uidValidity}:${m.uid}`;
  }

  begin(m: InboxMessage): number {
    const before = this.attempts.get(MemorySink.key(m)) ?? 0;
    this.attempts.set(MemorySink.key(m), before + 1);
    return before;
  }

  deliver(raw: MailSource): Promise<void> {
    const subject = subjectOf(sourceBytes(raw));
    this.tried.push(subject);
    this.#wake();
    if (this.fail(subject)) return Promise.reject(new Error(`cannot parse ${subject} (test)`));
    this.delivered.push(subject);
    return Promise.resolve();
  }

  failed(): void {}

  forgive(m: InboxMessage): void {
    const key = MemorySink.key(m);
    this.attempts.set(key, Math.max(0, (this.attempts.get(key) ?? 0) - 1));
  }

  giveUp(m: InboxMessage, reason: string, head: Uint8Array): Promise<void> {
    this.givenUp.push({ subject: subjectOf(head), reason, size: m.size, headBytes: head.length });
    this.#wake();
    return Promise.resolve();
  }

  quarantine(_m: InboxMessage, reason: string, raw: Uint8Array): Promise<void> {
    this.quarantined.push({ subject: subjectOf(raw), reason, bytes: raw.length });
    this.#wake();
    return Promise.resolve();
  }

  /** Resolves once `done()` holds (checked after each delivery or give-up), or after `ms`. */
  async until(done: () => boolean, ms = 20_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!done() && Date.now() < deadline) {
      await new Promise<void>((r) => {
        const t = setTimeout(r, 200);
        this.#waiters.push(() => {
          clearTimeout(t);
          r();
        });
      });
    }
  }

  #wake(): void {
    for (const w of this.#waiters.splice(0)) w();
  }
}
