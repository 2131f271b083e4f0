/**
 * The progress bar of `send-file` on a terminal: when the file goes as relay parts
 * (`get_transfer` knows the message), follows `/events` for the message's `TransferProgress`
 * until `TransferDone` or `TransferFailed` (docs/transfer.md), drawing one line on stderr.
 */
import { ACCOUNT_ID } from "../constants.ts";
import type { CommandContext } from "./command.ts";
import { followEvents } from "./sse_client.ts";

/** `[#####.....]  42 %  1.2 / 3.0 MB` for `bytes` of `total`. */
export function progressLine(bytes: number, total: number, width = 30): string {
  const ratio = total > 0 ? Math.min(1, bytes / total) : 1;
  const filled = Math.round(ratio * width);
  const mb = (n: number) => (n / 1_000_000).toFixed(1);
  return `[${"#".repeat(filled)}${".".repeat(width - filled)}] ${
    String(Math.floor(ratio * 100)).padStart(3)
  } %  ${mb(bytes)} / ${mb(total)} MB`;
}

interface TransferState {
  readonly state: string;
  readonly reason: string;
  readonly bytes: number;
  readonly total: number;
}

async function transferOf(ctx: CommandContext, msgId: number): Promise<TransferState | undefined> {
  try {
    return await ctx.rpc.call("get_transfer", [ACCOUNT_ID, msgId]) as TransferState;
  } catch {
    return undefined; // no transfer: the file went as one mail
  }
}

/**
 * Draws the progress of message `msgId`'s outgoing transfer until it ends (or Ctrl-C); nothing
 * when stderr is no terminal, under `--json`, or when the file went as one mail.
 */
export async function showTransferProgress(ctx: CommandContext, msgId: number): Promise<void> {
  if (!ctx.out.drawsProgress) return;
  const first = await transferOf(ctx, msgId);
  if (first === undefined || first.state !== "active") return;
  const stop = new AbortController();
  const signal = AbortSignal.any([stop.signal, ctx.signal]);
  await ctx.out.progress(progressLine(first.bytes, first.total));
  const end = async (text: string) => {
    await ctx.out.progress(text, true);
    stop.abort();
  };
  await followEvents({
    http: { ...ctx.http, signal },
    onEvent: async (m) => {
      let e: Record<string, unknown>;
      try {
        e = JSON.parse(m.data) as Record<string, unknown>;
      } catch {
        return;
      }
      if (e.msg_id !== msgId || e.direction !== "out") return;
      const bytes = Number(e.bytes), total = Number(e.total);
      if (e.type === "TransferProgress") await ctx.out.progress(progressLine(bytes, total));
      else if (e.type === "TransferDone") await end(`${progressLine(total, total)}  delivered`);
      else if (e.type === "TransferFailed") await end(`transfer failed: ${e.reason}`);
    },
    onNotice: () => Promise.resolve(),
    // Connected: whatever ended before the stream opened is read once more.
    onConnected: async () => {
      const now = await transferOf(ctx, msgId);
      if (now === undefined || now.state === "active") return;
      await end(
        now.state === "done"
          ? `${progressLine(now.total, now.total)}  delivered`
          : `transfer ${now.state}: ${now.reason}`,
      );
    },
  }).catch((err) => {
    if (!signal.aborted) throw err;
  });
}
