/**
 * The license server's SQLite database (`<data dir>/licenses.db`, Deno's built-in node:sqlite):
 * licenses with their delivery tokens, and the seats (devices) bound to each.
 */
import { DatabaseSync } from "node:sqlite";

/** A license as the server keeps it; times in Unix ms. */
export interface LicenseRow {
  readonly id: string;
  readonly token: string;
  readonly type: string;
  readonly customer: string;
  readonly issued_at: number;
  readonly expires_at: number;
  readonly max_devices: number;
  readonly grace_days: number;
  readonly revoked_at: number | null;
}

/** A device bound to a license. */
export interface SeatRow {
  readonly license_id: string;
  readonly device_id: string;
  /** The gateway installation holding the seat ('' for seats of builds that did not say). */
  readonly installation_id: string;
  readonly activated_at: number;
  readonly last_sync_at: number;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS licenses (
  id TEXT PRIMARY KEY,
  token TEXT NOT NULL UNIQUE,
  type TEXT NOT NULL,
  customer TEXT NOT NULL,
  issued_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL,
  max_devices INTEGER NOT NULL,
  grace_days INTEGER NOT NULL,
  revoked_at INTEGER
) STRICT;
CREATE TABLE IF NOT EXISTS seats (
  license_id TEXT NOT NULL REFERENCES licenses(id),
  device_id TEXT NOT NULL,
  activated_at INTEGER NOT NULL,
  last_sync_at INTEGER NOT NULL,
  PRIMARY KEY (license_id, device_id)
) STRICT;
CREATE TABLE IF NOT EXISTS settings (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;
`;

/** The outcome of binding a device. */
export type Bind =
  | { readonly kind: "bound"; readonly fresh: boolean }
  /** The installation's seat moved from `from` to the device (docs/identity.md). */
  | { readonly kind: "rebound"; readonly from: string }
  | { readonly kind: "full"; readonly used: number }
  /** No seat and `newSeat` was false (a sync). */
  | { readonly kind: "absent" };

/** Who asks to be bound, besides its device id. */
export interface BindRequest {
  readonly device: string;
  /** The gateway's installation id: its seat under another device id moves to this one. */
  readonly installation?: string | undefined;
  /** The device id of the license copy the gateway holds (a seat to move when it is its own). */
  readonly previous?: string | undefined;
  /** Whether a new seat may be taken (activate) or not (sync). */
  readonly newSeat: boolean;
}

/** Queries of the license server; one instance per process (WAL lets CLI and server share). */
export class LicenseDb {
  readonly #db: DatabaseSync;

  constructor(path: string) {
    this.#db = new DatabaseSync(path);
    this.#db.exec("PRAGMA journal_mode = WAL");
    this.#db.exec("PRAGMA busy_timeout = 5000");
    this.#db.exec("PRAGMA foreign_keys = ON");
    this.#db.exec(SCHEMA);
    const columns = this.#db.prepare("PRAGMA table_info(seats)").all() as { name: string }[];
    if (!columns.some((c) => c.name === "installation_id")) {
      this.#db.exec("ALTER TABLE seats ADD COLUMN installation_id TEXT NOT NULL DEFAULT ''");
    }
  }

  insert(row: LicenseRow): void {
    this.#db.prepare(
      `INSERT INTO licenses (id, token, type, customer, issued_at, expires_at, max_devices,
         grace_days, revoked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      row.id,
      row.token,
      row.type,
      row.customer,
      row.issued_at,
      row.expires_at,
      row.max_devices,
      row.grace_days,
      row.revoked_at,
    );
  }

  byToken(token: string): LicenseRow | undefined {
    return this.#db.prepare("SELECT * FROM licenses WHERE token = ?").get(token) as
      | LicenseRow
      | undefined;
  }

  byId(id: string): LicenseRow | undefined {
    return this.#db.prepare("SELECT * FROM licenses WHERE id = ?").get(id) as
      | LicenseRow
      | undefined;
  }

  all(): LicenseRow[] {
    return this.#db.prepare("SELECT * FROM licenses ORDER BY issued_at, id")
      .all() as unknown as LicenseRow[];
  }

  seats(licenseId: string): SeatRow[] {
    return this.#db.prepare(
      "SELECT * FROM seats WHERE license_id = ? ORDER BY activated_at, device_id",
    ).all(licenseId) as unknown as SeatRow[];
  }

  /**
   * Binds `r.device` to the license. A seat it holds is kept; a seat its installation holds
   * under another device id (or the seat of `r.previous` that no other installation claims)
   * moves to it, freeing the old one; otherwise a new seat is taken when `r.newSeat` and one is
   * free.
   */
  bind(license: LicenseRow, r: BindRequest, now: number): Bind {
    this.#db.exec("BEGIN IMMEDIATE");
    try {
      const seats = this.seats(license.id);
      const installation = r.installation ?? "";
      const own = seats.find((s) => s.device_id === r.device);
      const moving = own === undefined
        ? seats.find((s) => installation !== "" && s.installation_id === installation) ??
          seats.find((s) =>
            r.previous !== undefined && s.device_id === r.previous &&
            (s.installation_id === "" || s.installation_id === installation)
          )
        : undefined;
      let out: Bind;
      if (own !== undefined) {
        this.#db.prepare(
          "UPDATE seats SET last_sync_at = ?, installation_id = CASE WHEN ? = '' THEN " +
            "installation_id ELSE ? END WHERE license_id = ? AND device_id = ?",
        ).run(now, installation, installation, license.id, r.device);
        out = { kind: "bound", fresh: false };
      } else if (moving !== undefined) {
        this.#db.prepare(
          "UPDATE seats SET device_id = ?, installation_id = ?, last_sync_at = ? " +
            "WHERE license_id = ? AND device_id = ?",
        ).run(
          r.device,
          installation || moving.installation_id,
          now,
          license.id,
          moving.device_id,
        );
        out = { kind: "rebound", from: moving.device_id };
      } else if (!r.newSeat) {
        out = { kind: "absent" };
      } else if (seats.length >= license.max_devices) {
        out = { kind: "full", used: seats.length };
      } else {
        this.#db.prepare(
          "INSERT INTO seats (license_id, device_id, installation_id, activated_at, last_sync_at) " +
            "VALUES (?, ?, ?, ?, ?)",
        ).run(license.id, r.device, installation, now, now);
        out = { kind: "bound", fresh: true };
      }
      this.#db.exec("COMMIT");
      return out;
    } catch (err) {
      this.#db.exec("ROLLBACK");
      throw err;
    }
  }

  /** Frees the device's seat; false when it held none. */
  release(licenseId: string, device: string): boolean {
    const r = this.#db.prepare("DELETE FROM seats WHERE license_id = ? AND device_id = ?")
      .run(licenseId, device);
    return Number(r.changes) > 0;
  }

  revoke(id: string, now: number): boolean {
    const r = this.#db.prepare(
      "UPDATE licenses SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL",
    ).run(now, id);
    return Number(r.changes) > 0;
  }

  /** Sets a new expiry (renewal). */
  renew(id: string, expiresAt: number): boolean {
    const r = this.#db.prepare("UPDATE licenses SET expires_at = ? WHERE id = ?").run(
      expiresAt,
      id,
    );
    return Number(r.changes) > 0;
  }

  setting(key: string): string | undefined {
    const row = this.#db.prepare("SELECT value FROM settings WHERE key = ?").get(key) as
      | { value: string }
      | undefined;
    return row?.value;
  }

  setSetting(key: string, value: string): void {
    this.#db.prepare(
      "INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
    ).run(key, value);
  }

  close(): void {
    this.#db.close();
  }
}
