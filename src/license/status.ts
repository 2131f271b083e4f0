/**
 * License status from `<dataDir>/license.json`: read at construction and on `reload()`, judged
 * against the clock on every call so a license expires while the daemon runs. Never throws.
 */
import { DataDirLayout, LicenseStatus } from "../constants.ts";
import { describeError } from "../errors.ts";
import { logger } from "../log.ts";

const log = logger("license");

/** License state consulted by the dispatch gate (`license: true` methods). */
export interface LicenseSource {
  /** `"no_license"` or another status value; gated methods run only when `isActive()`. */
  status(): string;
  isActive(): boolean;
  /** Optional: the status plus the license's public fields (id, type, expiry), for `license_status`. */
  describe?(): Record<string, string | number | null>;
}

/** Every status this source reports; `no_license` is the SPEC's, the others are ours. */
export const LicenseState = {
  NO_LICENSE: LicenseStatus.NO_LICENSE,
  ACTIVE: LicenseStatus.ACTIVE,
  EXPIRED: "expired",
  INVALID: "invalid",
} as const;
export type LicenseState = typeof LicenseState[keyof typeof LicenseState];

/** The public fields of a license file (it may hold more; those are never reported). */
export interface LicenseRecord {
  readonly id: string | null;
  readonly type: string | null;
  /** Expiry in Unix milliseconds. */
  readonly expiresAt: number;
  readonly maxDevices: number | null;
}

type Loaded =
  | { readonly kind: "absent" }
  | { readonly kind: "invalid"; readonly reason: string }
  | { readonly kind: "record"; readonly record: LicenseRecord };

/** Test seams of `FileLicenseSource`. */
export interface FileLicenseOptions {
  /** Clock in Unix ms (default `Date.now`). */
  readonly now?: () => number;
  /** Reads a text file synchronously (default `Deno.readTextFileSync`). */
  readonly readTextFile?: (path: string) => string;
}

/**
 * Parses license JSON. Accepted: an object with `expires_at` as an ISO 8601 string or Unix
 * seconds, optional `id`/`license_id`, `type`/`license_type` (strings), `max_devices` (integer).
 * Returns the record, or a reason why the text is not a license.
 */
export function parseLicense(text: string): LicenseRecord | string {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    return `not valid JSON (${describeError(err)})`;
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return "not a JSON object";
  const o = raw as Record<string, unknown>;
  const expiresAt = typeof o.expires_at === "number" && Number.isFinite(o.expires_at)
    ? o.expires_at * 1000
    : typeof o.expires_at === "string"
    ? Date.parse(o.expires_at)
    : NaN;
  if (Number.isNaN(expiresAt) || Math.abs(expiresAt) > 8.64e15) {
    return "expires_at is missing or is neither an ISO 8601 date nor Unix seconds";
  }
  const str = (...keys: string[]) => {
    const v = keys.map((k) => o[k]).find((x) => typeof x === "string" || typeof x === "number");
    return v === undefined ? null : String(v);
  };
  const devices = o.max_devices;
  return {
    id: str("id", "license_id"),
    type: str("type", "license_type"),
    expiresAt,
    maxDevices: typeof devices === "number" && Number.isInteger(devices) ? devices : null,
  };
}

/** A `LicenseSource` backed by the license file in the data directory. */
export class FileLicenseSource implements LicenseSource {
  /** Absolute path of the license file. */
  readonly path: string;
  readonly #now: () => number;
  readonly #read: (path: string) => string;
  #loaded: Loaded = { kind: "absent" };

  constructor(dataDir: string, options: FileLicenseOptions = {}) {
    this.path = `${dataDir}/${DataDirLayout.LICENSE_FILE}`;
    this.#now = options.now ?? Date.now;
    this.#read = options.readTextFile ?? Deno.readTextFileSync;
    this.reload();
  }

  /** Re-reads the license file (after activation, sync or deactivation). */
  reload(): void {
    let text: string;
    try {
      text = this.#read(this.path);
    } catch (err) {
      if (err instanceof Deno.errors.NotFound) {
        this.#loaded = { kind: "absent" };
        return;
      }
      this.#loaded = { kind: "invalid", reason: `cannot be read (${describeError(err)})` };
      log.warn("license file is unusable", { path: this.path, reason: this.#loaded.reason });
      return;
    }
    const parsed = parseLicense(text);
    this.#loaded = typeof parsed === "string"
      ? { kind: "invalid", reason: parsed }
      : { kind: "record", record: parsed };
    if (typeof parsed === "string") {
      log.warn("license file is unusable", { path: this.path, reason: parsed });
    }
  }

  /** `no_license`, `active`, `expired` or `invalid`. */
  status(): LicenseState {
    switch (this.#loaded.kind) {
      case "absent":
        return LicenseState.NO_LICENSE;
      case "invalid":
        return LicenseState.INVALID;
      case "record":
        return this.#loaded.record.expiresAt > this.#now()
          ? LicenseState.ACTIVE
          : LicenseState.EXPIRED;
    }
  }

  /** True only while a well-formed license has not expired. */
  isActive(): boolean {
    return this.status() === LicenseState.ACTIVE;
  }

  /** The loaded record, if the file held one (expired or not). */
  record(): LicenseRecord | undefined {
    return this.#loaded.kind === "record" ? this.#loaded.record : undefined;
  }

  /** Status plus public fields, as `license_status` reports them. */
  describe(): Record<string, string | number | null> {
    const out: Record<string, string | number | null> = { status: this.status() };
    if (this.#loaded.kind === "invalid") out.reason = `license file ${this.#loaded.reason}`;
    if (this.#loaded.kind === "record") {
      const r = this.#loaded.record;
      out.license_id = r.id;
      out.license_type = r.type;
      out.expires_at = new Date(r.expiresAt).toISOString();
      out.max_devices = r.maxDevices;
    }
    return out;
  }
}
