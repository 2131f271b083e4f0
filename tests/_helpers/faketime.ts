/** A wrong clock for one daemon (Debian's libfaketime, file-controlled) and certificates on it. */
import { type Relay, startRelay } from "./relay.ts";
import { makeTempDir, type TempDir } from "./temp.ts";

/**
 * The preload library in Debian's multiarch layout (`libfaketime`), for this machine's arch. The
 * plain one, not `libfaketimeMT.so.1` (a lock around time calls, for the speed-up modes).
 */
export const LIBFAKETIME = `/usr/lib/${Deno.build.arch}-linux-gnu/faketime/libfaketime.so.1`;

/** True when libfaketime and the `faketime` command are installed (install-deps.sh does it). */
export function faketimeInstalled(): boolean {
  try {
    Deno.statSync(LIBFAKETIME);
    return new Deno.Command("faketime", { args: ["--help"], stdout: "null", stderr: "null" })
      .outputSync().success;
  } catch {
    return false;
  }
}

/** `"+30s"`, `"-400d"`, `"+0"`: libfaketime's relative offsets (s, m, h, d, y). */
const OFFSET = /^([+-]\d+(?:\.\d+)?)([smhdy]?)$/;
const UNIT_MS: Record<string, number> = {
  "": 1_000,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  y: 365 * 86_400_000,
};

/** Milliseconds of a libfaketime relative offset such as `"-2d"`. */
export function offsetMs(offset: string): number {
  const m = OFFSET.exec(offset);
  if (!m) throw new Error(`not a libfaketime offset: ${offset}`);
  return Number(m[1]) * UNIT_MS[m[2]];
}

/**
 * A clock that runs `offset` away from the real one, for the processes given {@link env}; the
 * test moves it with {@link set} while they run (a wrong clock that NTP later corrects).
 *
 * What the environment does, measured with Deno 2.9.5 and Debian's libfaketime 0.9.10:
 * - `LD_PRELOAD` intercepts glibc's `clock_gettime`/`gettimeofday`/`time`: V8's `Date` and Rust's
 *   `SystemTime` see the fake time, so rustls's certificate validity check does too (the daemon's
 *   IMAP log says "certificate not valid yet: verification time <fake>"). scripts/start.sh passes
 *   the environment to deno unchanged, so the daemon runs under it; its log lines carry the fake
 *   time ({@link logTimes}).
 * - `FAKETIME_TIMESTAMP_FILE` + `FAKETIME_NO_CACHE=1`: the offset is read from the file on every
 *   call, so a rewrite applies at once (about 1.5 µs per `Date.now()` instead of 0.06; nothing in
 *   the daemon calls it that often). The file is replaced by rename, never seen half written.
 * - `FAKETIME_DONT_FAKE_MONOTONIC=1`: `CLOCK_MONOTONIC` (`performance.now()`, timers, tokio) stays
 *   real, as on a box whose wall clock is stepped; without it timers jump too, and every
 *   `performance.now()` reads the file.
 * - `NO_FAKE_STAT=1`: without it about half of all deno processes died of SIGSEGV at exit, after
 *   their work: a thread's `fstat` went through libfaketime's stat hook, which waits on a
 *   semaphore in libfaketime's shared memory that its destructor had already unmapped (core
 *   dump: `__fxstat64` → `lock_for_stat` → `sem_wait`). `FAKETIME_DISABLE_SHM=1`,
 *   `FAKETIME_FORCE_MONOTONIC_FIX` and `libfaketimeMT.so.1` did not help; with `NO_FAKE_STAT=1`
 *   0 of 150 crashed. So file times stay real (Deno's own `stat` is `statx`, never faked anyway).
 * - Deno's threads (tokio workers, V8 platform threads, a Worker) then ran under it for minutes
 *   without a deadlock or a crash.
 */
export class FakeClock implements AsyncDisposable {
  #offset: string;

  private constructor(readonly dir: TempDir, readonly file: string, offset: string) {
    this.#offset = offset;
  }

  /** A clock starting at `offset` (default `"+0"`: right until the test moves it). */
  static async create(offset = "+0"): Promise<FakeClock> {
    const dir = await makeTempDir("faketime");
    const clock = new FakeClock(dir, `${dir.path}/offset`, offset);
    await clock.set(offset);
    return clock;
  }

  /** The environment that puts a process on this clock (e.g. `spawnDaemon`'s `env`). */
  get env(): Record<string, string> {
    return {
      LD_PRELOAD: LIBFAKETIME,
      FAKETIME_TIMESTAMP_FILE: this.file,
      FAKETIME_NO_CACHE: "1",
      FAKETIME_DONT_FAKE_MONOTONIC: "1",
      NO_FAKE_STAT: "1",
    };
  }

  /** The current offset, e.g. `"-400d"`. */
  get offset(): string {
    return this.#offset;
  }

  /** The current offset in milliseconds. */
  get offsetMs(): number {
    return offsetMs(this.#offset);
  }

  /** Moves the clock to `offset` (`"+5s"`, `"-2d"`, `"+0"`) for every process on it, at once. */
  async set(offset: string): Promise<void> {
    offsetMs(offset); // refuses what libfaketime would misread
    const tmp = `${this.file}.new`;
    await Deno.writeTextFile(tmp, `${offset}\n`);
    await Deno.rename(tmp, this.file);
    this.#offset = offset;
  }

  /**
   * How far ahead (ms, negative: behind) a fresh deno process on this clock sees the time: the
   * harness's own check that the environment works, independent of the daemon.
   */
  async probeMs(): Promise<number> {
    const before = Date.now();
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["eval", "console.log(Date.now())"],
      env: this.env,
      stdout: "piped",
      stderr: "piped",
    }).output();
    const after = Date.now();
    if (!out.success) {
      throw new Error(`deno under libfaketime failed: ${new TextDecoder().decode(out.stderr)}`);
    }
    const seen = Number(new TextDecoder().decode(out.stdout).trim());
    return seen - (before + after) / 2;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.dir.cleanup();
  }
}

/**
 * The times of the daemon's log lines (src/log.ts writes its own `Date` first) in `output` from
 * index `from` on: what the daemon believes the time is.
 */
export function logTimes(output: string, from = 0): number[] {
  const times: number[] = [];
  for (const m of output.slice(from).matchAll(/^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z) /gm)) {
    times.push(Date.parse(m[1]));
  }
  return times;
}

/** A key and certificate pair on disk. */
export interface CertFiles {
  readonly cert: string;
  readonly key: string;
}

/**
 * A relay certificate that looks like a real one (Let's Encrypt's 90 days): valid from
 * `notBeforeDays` ago (default 30) to `notAfterDays` from now (default 60), made by openssl under
 * libfaketime; the same leaf shape as scripts/relay/conf.sh's (CA:FALSE, serverAuth, the relay's
 * names), to pass to the relay as `--tls-cert`/`--tls-key`. A clock outside that window cannot
 * talk TLS to the relay: "not yet valid" or "expired", as in the field.
 */
export async function makeRealisticCert(
  dir: string,
  domain = "_relay.test",
  notBeforeDays = 30,
  notAfterDays = 60,
): Promise<CertFiles> {
  const cert = `${dir}/cert.pem`;
  const key = `${dir}/key.pem`;
  // libfaketime preloaded straight, not through the `faketime` command: that wrapper names a
  // POSIX shared-memory segment after its PID and refuses to start when a killed run left one
  // behind under a PID the kernel has since reused ("shm_open: File exists").
  const out = await new Deno.Command("openssl", {
    env: { LD_PRELOAD: LIBFAKETIME, FAKETIME: `-${notBeforeDays}d` },
    args: [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-days",
      String(notBeforeDays + notAfterDays),
      "-subj",
      `/CN=${domain}`,
      "-addext",
      `subjectAltName=DNS:${domain},DNS:localhost,IP:127.0.0.1`,
      "-addext",
      "basicConstraints=critical,CA:FALSE",
      "-addext",
      "keyUsage=critical,digitalSignature",
      "-addext",
      "extendedKeyUsage=serverAuth",
      "-keyout",
      key,
      "-out",
      cert,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) {
    throw new Error(`openssl under libfaketime failed: ${new TextDecoder().decode(out.stderr)}`);
  }
  return { cert, key };
}

/** The validity window of a PEM certificate, read by openssl. */
export async function certValidity(certFile: string): Promise<{ from: number; to: number }> {
  const out = await new Deno.Command("openssl", {
    args: ["x509", "-in", certFile, "-noout", "-startdate", "-enddate"],
    stdout: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  const from = /notBefore=(.+)/.exec(text)?.[1];
  const to = /notAfter=(.+)/.exec(text)?.[1];
  if (!out.success || !from || !to) throw new Error(`openssl x509 could not read ${certFile}`);
  return { from: Date.parse(from), to: Date.parse(to) };
}

/**
 * A filtered test relay serving a certificate like a real one ({@link makeRealisticCert});
 * disposing it stops the relay, then removes the certificate.
 */
export async function startFieldRelay(): Promise<Relay> {
  const certDir = await makeTempDir("relay-cert");
  const tls = await makeRealisticCert(certDir.path);
  const relay = await startRelay({
    filter: true,
    args: ["--tls-cert", tls.cert, "--tls-key", tls.key],
  });
  const stop = relay[Symbol.asyncDispose].bind(relay);
  return Object.assign(relay, {
    [Symbol.asyncDispose]: async () => {
      await stop();
      await certDir.cleanup();
    },
  });
}
