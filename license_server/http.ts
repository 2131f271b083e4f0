/**
 * The license server's HTTP API (docs/licenses.md#license-server-api): a delivery URL
 * `/v1/license/<token>` with `activate`, `sync` and `deactivate` below it, each a POST of
 * `{"device_id"}` (activate and sync also take `installation_id` and `previous_device_id`, to move
 * an installation's seat: docs/identity.md); errors are `{"error": code, "message": text}`.
 */
import { Hono } from "hono";
import type { LicenseDb, LicenseRow } from "./db.ts";
import { signLicense } from "./sign.ts";
import type { SigningKey } from "./signing_key.ts";

const DEVICE_ID = /^[0-9a-f]{64}$/;
const INSTALLATION_ID = /^[0-9a-f]{32}$/;

/** What the HTTP API needs. */
export interface LicenseApiDeps {
  readonly db: LicenseDb;
  readonly key: SigningKey;
  /** Unix ms (default `Date.now`). */
  readonly clock?: () => number;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** The Hono app serving the license API. */
export function licenseApp(deps: LicenseApiDeps): Hono {
  const { db, key } = deps;
  const clock = deps.clock ?? Date.now;
  const app = new Hono();
  const fail = (status: 400 | 404 | 409 | 410, error: string, message: string) =>
    new Response(JSON.stringify({ error, message }), {
      status,
      headers: { "Content-Type": "application/json" },
    });
  const unknown = () => fail(404, "unknown_license", "no license has this delivery URL");

  app.get("/health", (c) => c.json({ status: "ok", service: "edge-license-server" }));

  app.get("/v1/license/:token", (c) => {
    const license = db.byToken(c.req.param("token"));
    if (!license) return unknown();
    return c.json({
      license_id: license.id,
      license_type: license.type,
      customer_name: license.customer,
      expires_at: iso(license.expires_at),
      max_devices: license.max_devices,
      grace_days: license.grace_days,
      activated_devices: db.seats(license.id).length,
      revoked: license.revoked_at !== null,
    });
  });

  app.post("/v1/license/:token/:action", async (c) => {
    const action = c.req.param("action");
    if (action !== "activate" && action !== "sync" && action !== "deactivate") {
      return fail(404, "unknown_action", `unknown action "${action}" (activate, sync, deactivate)`);
    }
    const license = db.byToken(c.req.param("token"));
    if (!license) return unknown();
    let body: unknown;
    try {
      body = await c.req.json();
    } catch {
      body = undefined;
    }
    const o = (typeof body === "object" && body !== null ? body : {}) as Record<string, unknown>;
    const device = o.device_id;
    if (typeof device !== "string" || !DEVICE_ID.test(device)) {
      return fail(400, "bad_request", 'expected a JSON body {"device_id": "<64 lower-case hex>"}');
    }
    const installation = o.installation_id;
    if (
      installation !== undefined &&
      (typeof installation !== "string" || !INSTALLATION_ID.test(installation))
    ) {
      return fail(400, "bad_request", '"installation_id" is 32 lower-case hex digits');
    }
    const previous = o.previous_device_id;
    if (previous !== undefined && (typeof previous !== "string" || !DEVICE_ID.test(previous))) {
      return fail(400, "bad_request", '"previous_device_id" is 64 lower-case hex digits');
    }
    const now = clock();
    if (action === "deactivate") return c.json({ released: db.release(license.id, device) });
    const request = { device, installation, previous, newSeat: action === "activate" };
    if (action === "sync") {
      if (db.bind(license, request, now).kind === "absent") {
        return fail(
          409,
          "not_activated",
          `this device holds no seat of license ${license.id} (deactivated, or freed by the ` +
            "operator); activate it again",
        );
      }
      return c.json(await delivered(license, device, now));
    }
    if (license.revoked_at !== null) {
      return fail(
        410,
        "revoked",
        `license ${license.id} was revoked at ${iso(license.revoked_at)}`,
      );
    }
    const bound = db.bind(license, request, now);
    if (bound.kind === "full") {
      return fail(
        409,
        "seat_limit",
        `license ${license.id} allows ${license.max_devices} device(s) and all are in use; ` +
          "deactivate one of them first",
      );
    }
    return c.json(await delivered(license, device, now));
  });

  async function delivered(license: LicenseRow, device: string, now: number) {
    return {
      license_jwt: await signLicense(key, license, device, now),
      customer_name: license.customer,
    };
  }

  app.notFound(() => fail(404, "not_found", "no such endpoint"));
  return app;
}
