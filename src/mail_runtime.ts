/**
 * The running account: its core (`src/account/core.ts`, built once here) with the transports
 * around it: the SMTP outbox loop, the IMAP drain's sink (`reception`) and the sweep of messages
 * waiting for a join. The daemon wires `reception` into the IMAP loop and `core` into `Services`.
 */
import { type AccountCore, createAccountCore } from "./account/core.ts";
import { removeReceiveLeftovers } from "./core/blobs.ts";
import { blobDirOf } from "./core/context.ts";
import { loadIdentity } from "./core/contacts/mod.ts";
import { InboxReception } from "./core/receive/mod.ts";
import type { DirectEndpoint } from "./core/transfer/mod.ts";
import type { EventSink } from "./events/types.ts";
import type { LicenseSource } from "./license/manager.ts";
import type { StoredSecretKeys } from "./protected_files/key_shares.ts";
import { logger } from "./log.ts";
import { setRelayMessageLimit, type Store } from "./store/mod.ts";
import { monotonicNow } from "./transport/clock.ts";
import type { MailProblemSink } from "./transport/mail_problem.ts";
import type { ServerParams } from "./transport/server_params.ts";
import { type OutboxQueue, SmtpLoop } from "./transport/smtp_loop.ts";

const log = logger("mail");

/** How often messages waiting for a join are checked for a join that timed out. */
const JOIN_SWEEP_MS = 30_000;
/** How often relay-part transfers are looked at (parts to queue, parts to ask for again). */
const TRANSFER_SWEEP_MS = 1_000;

/** Inputs of {@link createMailRuntime}. */
export interface MailRuntimeOptions {
  readonly store: Store;
  readonly events: EventSink;
  readonly dataDir: string;
  readonly serverParams: ServerParams;
  readonly password: string;
  /** The keys protected files' stored secrets are wrapped under (docs/identity.md). */
  readonly secretKeys?: StoredSecretKeys;
  /** Told the size of each mail reception went through (`InboxReceptionOptions`). */
  readonly noteGarbage?: (bytes: number) => void;
  /** Told when sending fails because of the device's clock (the daemon's ConnectivityMonitor). */
  readonly problems?: MailProblemSink;
  /** Gates sharing protected files. */
  readonly license: LicenseSource;
  /** The direct path's QUIC endpoint (docs/p2p.md); none when `--p2p-listen off` or unbound. */
  readonly p2p?: DirectEndpoint | undefined;
}

/** What the daemon wires. */
export interface MailRuntime {
  /** The account's core; its outbox writes wake the SMTP loop after their commit. */
  readonly core: AccountCore;
  /** Where the IMAP loop drains INBOX to (the pipeline with an attempt count per mail). */
  readonly reception: InboxReception;
  start(signal: AbortSignal): void;
  /** Sends pending receipts into the queue and stops the SMTP loop (queued rows stay). */
  stop(): Promise<void>;
}

/** The outbox table as the SMTP loop sees it. */
export function outboxQueue(core: AccountCore): OutboxQueue {
  const states = core.states;
  const outbox = core.ctx.store.outbox;
  const spool = core.ctx.spool;
  return {
    due: (now, limit) =>
      outbox.due(now, limit).map((row) =>
        row.spool === "" ? row : { ...row, spoolPath: spool.path(row.spool) }
      ),
    nextDueAt: () => outbox.nextDueAt(),
    pullBack: (now, maxAhead) => outbox.pullBack(now, maxAhead),
    sent: (id) => {
      // A mail of no message (a relay part, a control mail): a transfer's window may have room
      // now, so its next part is sealed and queued at once rather than at the next sweep.
      if (states.outboxSent(id) === 0) void core.transfers.pump();
    },
    retry: (id, error, nextTryAt, counted) => outbox.recordFailure(id, error, nextTryAt, counted),
    gaveUp: (id, error) => void states.outboxGaveUp(id, error),
  };
}

/** Builds the runtime for a provisioned account (loads and parses the key once). */
export async function createMailRuntime(o: MailRuntimeOptions): Promise<MailRuntime> {
  const loops: { smtp?: SmtpLoop } = {};
  const core = createAccountCore({
    store: o.store,
    events: o.events,
    blobDir: blobDirOf(o.dataDir),
    self: await loadIdentity(o.store),
    license: o.license,
    secretKeys: o.secretKeys,
    wakeSender: () => loops.smtp?.wake(),
    p2p: o.p2p,
  });
  // Mails rendered for sends that never committed (a crash between the two) have no row.
  const orphans = await core.ctx.spool.sweep(new Set(o.store.outbox.spools()));
  if (orphans > 0) log.info("spool files without an outbox row removed", { files: orphans });
  // A process killed while it read a large mail left its temp files; the mail is still on the server.
  await removeReceiveLeftovers(core.ctx.blobDir);
  const smtp = loops.smtp = new SmtpLoop({
    endpoint: o.serverParams.smtp,
    password: o.password,
    queue: outboxQueue(core),
    events: o.events,
    now: () => core.ctx.now(),
    monotonic: monotonicNow,
    problems: o.problems,
    onSizeLimit: (bytes) => {
      try {
        if (setRelayMessageLimit(o.store, bytes)) {
          log.info("relay message size limit", { bytes: bytes ?? null });
        }
      } catch (err) {
        log.warn("relay message size limit not stored", {
          error: err instanceof Error ? err.message : String(err),
        });
      }
    },
  });
  let sweep: ReturnType<typeof setInterval> | undefined;
  let transferTimer: ReturnType<typeof setTimeout> | undefined;
  let transferSweep = Promise.resolve();
  /** One transfer sweep at a time, then the next after a pause; `stop()` waits for the last. */
  const sweepTransfers = (signal: AbortSignal) => {
    transferSweep = core.transfers.sweep().catch((err) =>
      log.warn("transfer sweep failed", { error: err instanceof Error ? err.message : String(err) })
    ).then(() => {
      if (!signal.aborted) {
        transferTimer = setTimeout(() => sweepTransfers(signal), TRANSFER_SWEEP_MS);
      }
    });
  };
  let settling = Promise.resolve();
  /** One settle at a time; `stop()` waits for the last before the store closes. */
  const settle = (all: boolean) => {
    settling = settling.then(() => core.settleJoinWaits(all)).catch((err) =>
      log.warn("messages waiting for a join could not be settled", {
        error: err instanceof Error ? err.message : String(err),
      })
    );
  };
  return {
    core,
    reception: new InboxReception(core.ctx, core.receiver, { noteGarbage: o.noteGarbage }),
    start: (signal) => {
      smtp.start(signal);
      settle(true);
      sweep = setInterval(() => settle(false), JOIN_SWEEP_MS);
      sweepTransfers(signal);
      signal.addEventListener("abort", () => {
        clearInterval(sweep);
        clearTimeout(transferTimer);
      }, { once: true });
    },
    stop: async () => {
      clearInterval(sweep);
      clearTimeout(transferTimer);
      core.transfers.close(); // direct transfers waiting for an answer stop waiting
      await settling;
      await transferSweep;
      try {
        await core.receipts.close(); // a full disk may refuse the queueing
      } finally {
        await smtp.stop();
      }
    },
  };
}
