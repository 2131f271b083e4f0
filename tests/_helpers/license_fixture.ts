/**
 * An in-process license server for unit tests: the real API (license_server/http.ts) on a
 * temporary database and signing key, reached through a `fetch` that can be switched "down".
 */
import { LicenseDb, type LicenseRow } from "../../license_server/db.ts";
import { licenseApp } from "../../license_server/http.ts";
import { loadSigningKey, type SigningKey } from "../../license_server/signing_key.ts";
import { importTrustedKey, type TrustedKey } from "../../src/license/verify.ts";
import { makeTempDir, type TempDir } from "./temp.ts";

/** The origin the fixture's delivery URLs use. */
export const FIXTURE_ORIGIN = "http://license.test";
const DAY_MS = 86_400_000;

/** Options of {@link LicenseFixture.issue}. */
export interface IssueOptions {
  readonly type?: string;
  readonly days?: number;
  readonly expiresAt?: number;
  readonly maxDevices?: number;
  readonly graceDays?: number;
  readonly customer?: string;
}

/** A running in-process license server. */
export class LicenseFixture implements AsyncDisposable {
  /** While true, `fetch` fails as an unreachable host does. */
  down = false;
  /** Requests seen, as "POST /v1/license/<token>/activate". */
  readonly requests: string[] = [];
  #n = 0;

  private constructor(
    readonly dir: TempDir,
    readonly db: LicenseDb,
    readonly key: SigningKey,
    readonly trusted: TrustedKey[],
    readonly clock: { now: number },
  ) {}

  /** Starts a fixture whose server clock is `clock.now` (settable). */
  static async start(now = Date.now()): Promise<LicenseFixture> {
    const dir = await makeTempDir("licsrv");
    const key = await loadSigningKey(dir.path);
    const trusted = [await importTrustedKey("fixture key", key.publicPem)];
    return new LicenseFixture(dir, new LicenseDb(`${dir.path}/licenses.db`), key, trusted, { now });
  }

  /** The server as `fetch`. */
  readonly fetch: typeof fetch = async (input, init) => {
    const req = new Request(input, init);
    this.requests.push(`${req.method} ${new URL(req.url).pathname}`);
    if (this.down) throw new TypeError("error sending request: Connection refused (os error 111)");
    const app = licenseApp({ db: this.db, key: this.key, clock: () => this.clock.now });
    return await app.fetch(req);
  };

  /** Issues a license; returns its row and delivery URL. */
  issue(o: IssueOptions = {}): { row: LicenseRow; url: string } {
    const n = ++this.#n;
    const row: LicenseRow = {
      id: `LIC-T${n}`,
      token: `token-${n}-${crypto.randomUUID()}`,
      type: o.type ?? "standard",
      customer: o.customer ?? "Test customer",
      issued_at: this.clock.now,
      expires_at: o.expiresAt ?? this.clock.now + (o.days ?? 30) * DAY_MS,
      max_devices: o.maxDevices ?? 2,
      grace_days: o.graceDays ?? 7,
      revoked_at: null,
    };
    this.db.insert(row);
    return { row, url: `${FIXTURE_ORIGIN}/v1/license/${row.token}` };
  }

  async [Symbol.asyncDispose](): Promise<void> {
    this.db.close();
    await this.dir.cleanup();
  }
}
