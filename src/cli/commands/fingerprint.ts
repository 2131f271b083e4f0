/**
 * `fingerprint`: prints this machine's device fingerprint, the value a viewer presents to
 * `POST /auth` (SHA-256 of MAC and machine id). No daemon is needed.
 */
import type { Command, CommandContext } from "../command.ts";
import { cliFingerprint } from "../device.ts";

async function run(ctx: CommandContext): Promise<number> {
  const f = await cliFingerprint(ctx.accounts);
  if (ctx.out.json) await ctx.out.jsonLine({ device_fingerprint: f.fingerprint, source: f.source });
  else await ctx.out.line(f.fingerprint);
  return 0;
}

/** The `fingerprint` command. */
export const fingerprint: Command = {
  name: "fingerprint",
  usage: "fingerprint",
  summary: "print this machine's device fingerprint (what the viewer sends to /auth)",
  http: 'POST /auth {"device_fingerprint": …} takes it (computed locally, no request)',
  details: "With the global --accounts DIR it prints the value the daemon stored there; else it " +
    "computes it from the first non-loopback MAC and /etc/machine-id.",
  args: { min: 0, max: 0 },
  run,
};
