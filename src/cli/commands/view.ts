/**
 * `view <msg_id> [--out F]`: authenticates like the viewer (`POST /auth` with this machine's
 * fingerprint) and streams the message's protected file (`GET /stream/:msg_id`) to stdout, or
 * to the file F when its owner allowed downloads. Note: /auth replaces the viewer's session.
 */
import { parseId } from "../args.ts";
import { type Command, type CommandContext, stringOption } from "../command.ts";
import { cliFingerprint } from "../device.ts";
import { CliFailure } from "../offline_license.ts";
import { gatewayFetch } from "../rpc_client.ts";

async function token(ctx: CommandContext): Promise<string> {
  const { fingerprint } = await cliFingerprint(ctx.accounts);
  const { response, text } = await gatewayFetch(ctx.http, "/auth", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ device_fingerprint: fingerprint }),
  });
  const body = await text();
  if (response.status !== 200) {
    throw new CliFailure(
      `POST /auth answered HTTP ${response.status}: ${body.trim().slice(0, 200)}`,
    );
  }
  return (JSON.parse(body) as { token: string }).token;
}

async function run(ctx: CommandContext): Promise<number> {
  const msgId = parseId(ctx.positionals[0], "msg_id", "view");
  const out = stringOption(ctx, "out");
  const bearer = await token(ctx);
  const { response, text } = await gatewayFetch(ctx.http, `/stream/${msgId}`, {
    headers: { authorization: `Bearer ${bearer}` },
  }, false);
  if (response.status !== 200) {
    const body = (await text()).trim();
    let detail = body.slice(0, 300);
    try {
      const j = JSON.parse(body) as { state?: string; reason?: string; error?: string };
      detail = j.state ? `${j.state}: ${j.reason ?? ""}` : j.error ?? detail;
    } catch { /* not JSON */ }
    throw new CliFailure(`GET /stream/${msgId} answered HTTP ${response.status}: ${detail}`);
  }
  const body = response.body!;
  if (out === undefined) {
    await body.pipeTo(Deno.stdout.writable, { preventClose: true });
    return 0;
  }
  if (response.headers.get("x-prv-allow-download") === "false") {
    await body.cancel();
    throw new CliFailure(
      `the owner of this file did not allow downloads (allow_download=false): it can be viewed ` +
        `(view ${msgId} without --out) but not saved to ${out}`,
    );
  }
  const file = await Deno.open(out, { write: true, createNew: true, mode: 0o600 });
  await body.pipeTo(file.writable);
  await ctx.out.line(`wrote ${out}`);
  return 0;
}

/** The `view` command. */
export const view: Command = {
  name: "view",
  usage: "view <msg_id> [--out F]",
  summary: "decrypt a message's protected file via the viewer API (stdout, or F if allowed)",
  http: "POST /auth, then GET /stream/<msg_id>",
  details: "Authenticates as the viewer does (this replaces the viewer's session). With --out F " +
    "the plaintext is written to F (a new file, mode 0600) only when the owner allowed downloads.",
  options: [{
    name: "out",
    kind: "string",
    value: "F",
    help: "write the plaintext to the new file F",
  }],
  args: { min: 1, max: 1 },
  defaultTimeoutMs: 60_000,
  run,
};
