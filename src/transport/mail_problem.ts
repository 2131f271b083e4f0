/** Why a mail connection keeps failing, when the operator can fix it: for `/health` and the log. */
import type { Logger } from "../log.ts";

/** The two connections to the relay. */
export type MailLink = "imap" | "smtp";

/** Reasons of the last connection failure worth a word in `/health`. */
export const MailError = { TLS_CLOCK: "tls_clock" } as const;
export type MailError = typeof MailError[keyof typeof MailError];

/** A reason with the operator's sentence. */
export interface MailProblem {
  readonly error: MailError;
  readonly detail: string;
}

/** Where the loops report it (core/connectivity.ts's ConnectivityMonitor). */
export interface MailProblemSink {
  /** The link's last connection failed for `problem`; undefined: it worked, or failed otherwise. */
  report(link: MailLink, problem: MailProblem | undefined): void;
}

/** One link's reports: forwards each change to the sink and logs one WARN when a problem starts. */
export class LinkProblem {
  #current: MailProblem | undefined;

  constructor(
    private readonly link: MailLink,
    private readonly log: Logger,
    private readonly sink?: MailProblemSink,
  ) {}

  /** The problem now reported, if any. */
  get current(): MailProblem | undefined {
    return this.#current;
  }

  /** Sets (or clears, with undefined) the link's problem. */
  set(problem: MailProblem | undefined): void {
    const before = this.#current;
    if (before?.error === problem?.error && before?.detail === problem?.detail) return;
    this.#current = problem;
    if (problem && problem.error !== before?.error) {
      this.log.warn(problem.detail, { link: this.link, error: problem.error });
    } else if (!problem) this.log.info("connection problem cleared", { link: this.link });
    this.sink?.report(this.link, problem);
  }
}
