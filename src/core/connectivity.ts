/**
 * The live connectivity level (docs/contract.md §3.2: 0 not configured, 1000 not connected, 2000
 * connecting, 3000 working, 4000 connected), published as `ConnectivityChanged` only when it
 * changes, and why the mail connections fail when the operator can fix it (a wrong clock).
 */
import { Connectivity } from "../constants.ts";
import type { EventSink } from "../events/types.ts";
import type { MailLink, MailProblem, MailProblemSink } from "../transport/mail_problem.ts";

/** Reports the live mail connection state (`get_connectivity`, `/health`). */
export interface ConnectivitySource {
  /** Current level, see `Connectivity` in constants.ts. */
  level(): number;
  /** Why the last IMAP or SMTP connection failed, when that is worth telling (memory only). */
  mailProblem?(): MailProblem | undefined;
}

/** Holds the current level; the IMAP loop sets it, `get_connectivity` and `/health` read it. */
export class ConnectivityMonitor implements ConnectivitySource, MailProblemSink {
  #level: number;
  readonly #problems = new Map<MailLink, MailProblem>();

  /** Starts at `initial` (0, "not configured", unless the daemon knows better) without an event. */
  constructor(
    private readonly events: EventSink,
    initial: number = Connectivity.NOT_CONFIGURED,
  ) {
    this.#level = initial;
  }

  /** The current level. */
  level(): number {
    return this.#level;
  }

  /** Sets the level; publishes `{kind: "ConnectivityChanged", connectivity}` only on change. */
  set(level: number): void {
    if (level === this.#level) return;
    this.#level = level;
    this.events.publish({ kind: "ConnectivityChanged", connectivity: level });
  }

  /** A loop's report: its last connection failed for `problem`, or undefined (worked, or other). */
  report(link: MailLink, problem: MailProblem | undefined): void {
    if (problem) this.#problems.set(link, problem);
    else this.#problems.delete(link);
  }

  /** The IMAP link's problem, else the SMTP link's, else undefined. */
  mailProblem(): MailProblem | undefined {
    return this.#problems.get("imap") ?? this.#problems.get("smtp");
  }
}
