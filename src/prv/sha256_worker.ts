/**
 * Two SHA-256 digests (the `.prv` writer's plaintext and output hashes): on a shared worker
 * thread, so hashing runs beside the sealing instead of on the main thread, on the calling
 * thread for small inputs, or deferred to the end.
 */
import { createHash, type Hash } from "node:crypto";
import { Worker } from "node:worker_threads";
import { toHex } from "../bytes.ts";

/**
 * The worker's code. Given as source (`eval`) rather than as a module file: the daemon runs
 * with a read allow-list that does not include its own source tree, and a compiled binary
 * would need the file included by hand. Messages: `{ping}` is answered `{pong}` (it started);
 * `{job, which, buf}` adds `buf` to digest `which` of `job` and is answered `{job, hashed, buf}`
 * (the buffer moved back, for the caller to reuse);
 * `{job, end: true}` is answered `{job, digests}`; `{job, abort: true}` drops the job.
 */
const WORKER_SOURCE = `
const { parentPort } = require("node:worker_threads");
const { createHash } = require("node:crypto");
const jobs = new Map();
parentPort.on("message", (m) => {
  if (m.ping) return void parentPort.postMessage({ pong: true });
  if (m.abort) return void jobs.delete(m.job);
  let hashes = jobs.get(m.job);
  if (!hashes) jobs.set(m.job, hashes = [createHash("sha256"), createHash("sha256")]);
  if (m.end) {
    jobs.delete(m.job);
    parentPort.postMessage({ job: m.job, digests: hashes.map((h) => h.digest("hex")) });
  } else {
    hashes[m.which].update(new Uint8Array(m.buf));
    parentPort.postMessage({ job: m.job, hashed: m.buf.byteLength, buf: m.buf }, [m.buf]);
  }
});
`;

/** Which of the two digests: 0 and 1 (the writer uses 0 for the plaintext, 1 for the output). */
export type DigestIndex = 0 | 1;

/** Two running SHA-256 digests. */
export interface Sha256Pair {
  /** Whether update() hashes right away on the calling thread (else on the worker, later). */
  readonly here: boolean;
  /**
   * Adds `bytes` to digest `which`. With `give`, the caller gives `bytes` away: when they span
   * their whole buffer it is moved to the worker (no copy) and is empty here afterwards.
   * Without it, the bytes are copied.
   */
  update(which: DigestIndex, bytes: Uint8Array, give?: boolean): void;
  /**
   * A buffer of exactly `bytes` bytes that update() was given and is done with (moved back from
   * the worker), to fill again instead of allocating one; undefined when there is none. Its old
   * content is still there.
   */
  reuse(bytes: number): Uint8Array | undefined;
  /** Resolves when at most `maxBytes` handed to update() are still waiting to be hashed. */
  drained(maxBytes: number): Promise<void>;
  /** The two digests (lower-case hex); the pair is finished. */
  digest(): Promise<[string, string]>;
  /** Drops the pair (after a failure); digest() must not be called afterwards. */
  abort(): void;
}

/** Buffers moved back from the worker kept for reuse, per pair (a few batches' worth). */
const SPARE_BUFFERS = 4;

interface Job {
  pending: number;
  /** Buffers the worker is done with, for reuse(). */
  spare: ArrayBuffer[];
  waiters: (() => void)[];
  done?: { resolve: (d: [string, string]) => void; reject: (e: Error) => void };
}

/** The shared worker and its jobs; replaced by a new one after the worker failed. */
interface Pool {
  readonly worker: Worker;
  readonly jobs: Map<number, Job>;
  /** Resolves true once the worker answered its first message, false if it failed first. */
  readonly started: Promise<boolean>;
}

let pool: Pool | undefined;
let nextJob = 0;

/** Ends a job; the worker no longer keeps the process alive once it has none. */
function endJob(p: Pool, id: number): void {
  if (p.jobs.delete(id) && p.jobs.size === 0) p.worker.unref();
}

function failAll(p: Pool, err: Error): void {
  if (pool === p) pool = undefined;
  for (const job of p.jobs.values()) {
    job.done?.reject(err);
    for (const wake of job.waiters.splice(0)) wake();
  }
  p.jobs.clear();
  p.worker.unref();
}

function startPool(): Pool {
  const worker = new Worker(WORKER_SOURCE, { eval: true });
  let started!: (ok: boolean) => void;
  const p: Pool = {
    worker,
    jobs: new Map(),
    started: new Promise((resolve) => started = resolve),
  };
  worker.on(
    "message",
    (m: {
      pong?: true;
      job: number;
      hashed?: number;
      buf?: ArrayBuffer;
      digests?: [string, string];
    }) => {
      if (m.pong) {
        worker.unref(); // referenced only while it has jobs: an idle worker keeps no process alive
        return started(true);
      }
      const job = p.jobs.get(m.job);
      if (!job) return;
      if (m.digests) {
        endJob(p, m.job);
        job.done?.resolve(m.digests);
      } else {
        job.pending -= m.hashed ?? 0;
        if (m.buf && job.spare.length < SPARE_BUFFERS) job.spare.push(m.buf);
        for (const wake of job.waiters.splice(0)) wake();
      }
    },
  );
  const fail = (err: Error) => {
    started(false);
    failAll(p, err);
  };
  worker.on("error", (err: Error) => fail(new Error(`the hash worker failed: ${err.message}`)));
  worker.on("exit", () => fail(new Error("the hash worker stopped")));
  worker.postMessage({ ping: true }); // referenced until it answers, so the start completes
  return p;
}

/** The shared worker, started if there is none; undefined when none can be started. */
function sharedPool(): Pool | undefined {
  try {
    return pool ??= startPool();
  } catch {
    return undefined;
  }
}

/**
 * Starts the shared hash worker if it is not running; resolves to whether it is ready. Callers
 * need not call it (sha256PairFor does); a server may, to have it ready for its first large file.
 */
export async function startSha256Worker(): Promise<boolean> {
  const p = sharedPool();
  return p ? await p.started : false;
}

/** The pair on the shared worker (started on first use). */
function workerPair(p: Pool): Sha256Pair {
  const id = nextJob++;
  const job: Job = { pending: 0, spare: [], waiters: [] };
  if (p.jobs.size === 0) p.worker.ref(); // its answers are awaited
  p.jobs.set(id, job);
  const gone = () => !p.jobs.has(id);
  return {
    here: false,
    update(which, bytes, give = false) {
      if (gone()) return; // the worker failed: digest() reports it
      const whole = give && bytes.byteOffset === 0 &&
        bytes.byteLength === bytes.buffer.byteLength && bytes.buffer instanceof ArrayBuffer;
      const buf = whole ? bytes.buffer as ArrayBuffer : bytes.slice().buffer;
      job.pending += buf.byteLength;
      p.worker.postMessage({ job: id, which, buf }, [buf]);
    },
    reuse(bytes) {
      const at = job.spare.findIndex((b) => b.byteLength === bytes);
      return at < 0 ? undefined : new Uint8Array(job.spare.splice(at, 1)[0]);
    },
    async drained(maxBytes) {
      while (job.pending > maxBytes && !gone()) {
        await new Promise<void>((wake) => job.waiters.push(wake));
      }
    },
    digest() {
      if (gone()) return Promise.reject(new Error("the hash worker stopped"));
      return new Promise((resolve, reject) => {
        job.done = { resolve, reject };
        p.worker.postMessage({ job: id, end: true });
      });
    },
    abort() {
      if (gone()) return;
      endJob(p, id);
      p.worker.postMessage({ job: id, abort: true });
    },
  };
}

/** The pair on the calling thread: for small inputs, or where no worker can be started. */
export function sha256PairHere(): Sha256Pair {
  const hashes: [Hash, Hash] = [createHash("sha256"), createHash("sha256")];
  return {
    here: true,
    update: (which, bytes) => void hashes[which].update(bytes),
    reuse: () => undefined,
    drained: () => Promise.resolve(),
    digest: () => Promise.resolve([hashes[0].digest("hex"), hashes[1].digest("hex")]),
    abort: () => {},
  };
}

/**
 * The pair that hashes only when asked for the digests: update() keeps the bytes (given ones as
 * they are, others copied) and digest() hashes them, digest 0 on WebCrypto's thread pool when it
 * is one buffer and digest 1 on this thread, side by side. For a caller with idle time at the end
 * rather than during its work: the `.prv` writer of a one-batch file, whose last step waits for
 * an fdatasync.
 */
export function sha256PairDeferred(): Sha256Pair {
  const kept: [Uint8Array[], Uint8Array[]] = [[], []];
  const hereHex = (parts: Uint8Array[]) => {
    const h = createHash("sha256");
    for (const part of parts) h.update(part);
    return h.digest("hex");
  };
  return {
    here: false,
    update: (which, bytes, give = false) => void kept[which].push(give ? bytes : bytes.slice()),
    reuse: () => undefined,
    drained: () => Promise.resolve(),
    async digest() {
      const [first, second] = kept;
      const onPool = first.length === 1
        ? crypto.subtle.digest("SHA-256", first[0] as BufferSource)
        : undefined;
      const secondHex = hereHex(second);
      const firstHex = onPool ? toHex(new Uint8Array(await onPool)) : hereHex(first);
      return [firstHex, secondHex];
    },
    abort: () => void kept.forEach((parts) => parts.splice(0)),
  };
}

/**
 * Inputs from this size are hashed on the worker (16 MiB). Smaller ones are hashed here: they
 * gain little from it (measured: bench/scenarios/prv.ts), and a message costs more than a small hash.
 */
export const WORKER_MIN_BYTES = 16 << 20;

/**
 * Two SHA-256 digests for about `bytes` bytes of input: on the shared worker thread from
 * WORKER_MIN_BYTES (waiting for its start, ~20 ms once per process), else on this thread.
 * A worker that cannot start is never relied on: its pairs are hashed here.
 */
export async function sha256PairFor(bytes: number): Promise<Sha256Pair> {
  if (bytes < WORKER_MIN_BYTES) return sha256PairHere();
  const p = sharedPool();
  if (!p || !await p.started || pool !== p) return sha256PairHere();
  return workerPair(p);
}
