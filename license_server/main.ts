/**
 * `deno task license-server <command>`: the project's small license server for tests, trials
 * and operators — serve the delivery URLs, issue, renew, revoke and list licenses, print the
 * public key gateways trust. State lives in `--data-dir` (licenses.db, signing-key.pem).
 */
import { parseArgs } from "node:util";
import { LicenseDb, type LicenseRow } from "./db.ts";
import { licenseApp } from "./http.ts";
import { loadSigningKey } from "./signing_key.ts";

const DEFAULT_PORT = 7300;
const DAY_MS = 86_400_000;
const BASE_URL_SETTING = "base_url";

export const USAGE = `usage: license-server <command> --data-dir D [options]

  serve [--port ${DEFAULT_PORT}] [--host 127.0.0.1]   serve /v1/license/<token> (Ctrl-C stops)
  issue --type T (--days N | --expires-at ISO) --max-devices M
        [--customer NAME] [--grace-days G] [--base-url URL]
                                          new license; prints its delivery URL last
  renew <license id> (--days N | --expires-at ISO)   new expiry (gateways see it on sync)
  revoke <license id>                     revoke (gateways see it on sync)
  release <license id> <device id>        free a device's seat (a gateway that is gone)
  list [--json]                           every license with its seats
  public-key                              the signing key's public half (SPKI PEM)`;

class UsageError extends Error {}

const OPTIONS = {
  "data-dir": { type: "string" },
  port: { type: "string" },
  host: { type: "string" },
  type: { type: "string" },
  days: { type: "string" },
  "expires-at": { type: "string" },
  "max-devices": { type: "string" },
  customer: { type: "string" },
  "grace-days": { type: "string" },
  "base-url": { type: "string" },
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

type Options = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>[
  "values"
];

function int(value: string | undefined, name: string, min: number): number {
  const n = Number(value);
  if (value === undefined || !/^-?\d+$/.test(value) || n < min) {
    throw new UsageError(
      `--${name} needs an integer of at least ${min}, got ${value ?? "nothing"}`,
    );
  }
  return n;
}

function expiry(o: Options, now: number): number {
  if (o["expires-at"] !== undefined) {
    const t = Date.parse(o["expires-at"]);
    if (Number.isNaN(t)) throw new UsageError(`--expires-at "${o["expires-at"]}" is not a date`);
    return t;
  }
  return now + int(o.days, "days", 0) * DAY_MS;
}

function randomText(bytes: number): string {
  const raw = crypto.getRandomValues(new Uint8Array(bytes));
  return btoa(String.fromCharCode(...raw)).replace(/\+/g, "-").replace(/\//g, "_").replace(
    /=+$/,
    "",
  );
}

function deliveryUrl(db: LicenseDb, license: LicenseRow, base?: string): string {
  const origin = base ?? db.setting(BASE_URL_SETTING) ?? `http://127.0.0.1:${DEFAULT_PORT}`;
  return `${origin.replace(/\/+$/, "")}/v1/license/${license.token}`;
}

function openDb(dataDir: string): LicenseDb {
  Deno.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  return new LicenseDb(`${dataDir}/licenses.db`);
}

async function serve(dataDir: string, o: Options): Promise<number> {
  const db = openDb(dataDir);
  const key = await loadSigningKey(dataDir);
  const port = o.port === undefined ? DEFAULT_PORT : int(o.port, "port", 0);
  const host = o.host ?? "127.0.0.1";
  const app = licenseApp({ db, key });
  const stop = new AbortController();
  const server = Deno.serve(
    { hostname: host, port, signal: stop.signal, onListen: () => {} },
    app.fetch,
  );
  const shown = host.includes(":") ? `[${host}]` : host;
  const base = `http://${shown === "0.0.0.0" ? "127.0.0.1" : shown}:${server.addr.port}`;
  db.setSetting(BASE_URL_SETTING, base);
  console.log(`license server listening on ${base} (key id ${key.keyId})`);
  const onSignal = () => stop.abort();
  Deno.addSignalListener("SIGINT", onSignal);
  Deno.addSignalListener("SIGTERM", onSignal);
  await server.finished;
  Deno.removeSignalListener("SIGINT", onSignal);
  Deno.removeSignalListener("SIGTERM", onSignal);
  db.close();
  return 0;
}

async function run(command: string, rest: string[], o: Options, dataDir: string): Promise<number> {
  const now = Date.now();
  switch (command) {
    case "serve":
      return await serve(dataDir, o);
    case "public-key": {
      const key = await loadSigningKey(dataDir);
      await Deno.stdout.write(new TextEncoder().encode(key.publicPem.trim() + "\n"));
      return 0;
    }
    case "issue": {
      if (!o.type) throw new UsageError("issue needs --type (e.g. trial, standard)");
      const row: LicenseRow = {
        id: `LIC-${randomText(6).toUpperCase().replace(/[-_]/g, "X")}`,
        token: randomText(24),
        type: o.type,
        customer: o.customer ?? "Trial customer",
        issued_at: now,
        expires_at: expiry(o, now),
        max_devices: int(o["max-devices"], "max-devices", 1),
        grace_days: o["grace-days"] === undefined ? 7 : int(o["grace-days"], "grace-days", 0),
        revoked_at: null,
      };
      await loadSigningKey(dataDir); // created now, so public-key is stable from here on
      const db = openDb(dataDir);
      db.insert(row);
      console.log(
        `issued license ${row.id}: type ${row.type}, customer ${row.customer}, expires ` +
          `${new Date(row.expires_at).toISOString()}, max devices ${row.max_devices}, grace ` +
          `${row.grace_days} day(s)`,
      );
      console.log(deliveryUrl(db, row, o["base-url"]));
      db.close();
      return 0;
    }
    case "renew":
    case "revoke": {
      const [id] = rest;
      if (id === undefined || rest.length > 1) {
        throw new UsageError(`${command} needs <license id>`);
      }
      const db = openDb(dataDir);
      try {
        if (db.byId(id) === undefined) {
          console.error(`license-server: no license ${id} (see: license-server list)`);
          return 1;
        }
        if (command === "revoke") {
          console.log(db.revoke(id, now) ? `revoked ${id}` : `${id} was already revoked`);
        } else {
          const until = expiry(o, now);
          db.renew(id, until);
          console.log(`renewed ${id} until ${new Date(until).toISOString()}`);
        }
        return 0;
      } finally {
        db.close();
      }
    }
    case "release": {
      const [id, device] = rest;
      if (id === undefined || device === undefined || rest.length > 2) {
        throw new UsageError("release needs <license id> <device id> (see: list)");
      }
      const db = openDb(dataDir);
      try {
        if (db.byId(id) === undefined) {
          console.error(`license-server: no license ${id} (see: license-server list)`);
          return 1;
        }
        if (!db.release(id, device)) {
          console.error(`license-server: device ${device} holds no seat of ${id}`);
          return 1;
        }
        console.log(`released the seat of device ${device} on ${id}`);
        return 0;
      } finally {
        db.close();
      }
    }
    case "list": {
      const db = openDb(dataDir);
      const rows = db.all().map((l) => ({
        license_id: l.id,
        license_type: l.type,
        customer_name: l.customer,
        expires_at: new Date(l.expires_at).toISOString(),
        max_devices: l.max_devices,
        grace_days: l.grace_days,
        devices: db.seats(l.id).map((s) => s.device_id),
        revoked: l.revoked_at !== null,
        url: deliveryUrl(db, l),
      }));
      db.close();
      if (o.json) console.log(JSON.stringify(rows, null, 2));
      else {
        for (const r of rows) {
          console.log(
            `${r.license_id}  ${r.license_type}  ${r.customer_name}  expires ${r.expires_at}  ` +
              `seats ${r.devices.length}/${r.max_devices}${r.revoked ? "  REVOKED" : ""}  ${r.url}`,
          );
        }
      }
      return 0;
    }
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

/** Runs one command; returns the exit code (2 for usage errors). */
export async function main(args: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (err) {
    console.error(`license-server: ${(err as Error).message}\n${USAGE}`);
    return 2;
  }
  const [command, ...rest] = parsed.positionals;
  if (parsed.values.help || command === undefined) {
    console.log(USAGE);
    return command === undefined && !parsed.values.help ? 2 : 0;
  }
  const dataDir = parsed.values["data-dir"];
  try {
    if (dataDir === undefined) throw new UsageError("--data-dir is required");
    return await run(command, rest, parsed.values, dataDir);
  } catch (err) {
    if (err instanceof UsageError) {
      console.error(`license-server: ${err.message}\n${USAGE}`);
      return 2;
    }
    throw err;
  }
}

if (import.meta.main) Deno.exit(await main(Deno.args));
