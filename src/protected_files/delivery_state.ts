/**
 * Whether the owner's file reached a recipient at all: a message whose send failed, or a file
 * still travelling (or refused) as relay parts, is not `active` for that recipient in the owner's
 * `secure_get_file_status` (docs/transfer.md).
 */
import { MessageState } from "../constants.ts";
import type { CoreContext } from "../core/context.ts";
import { FileAccessState } from "./access_state.ts";

/** `in_transfer` or `undelivered` for recipient `contactId` of message `msgId`, else undefined. */
export function deliveryState(
  ctx: CoreContext,
  msgId: number,
  contactId: number,
): FileAccessState | undefined {
  const t = ctx.store.transfers.byMessage(msgId);
  if (t === undefined || t.direction !== "out") {
    const failed = ctx.store.msgs.get(msgId)?.state === MessageState.FAILED;
    return failed ? FileAccessState.UNDELIVERED : undefined;
  }
  // A recipient that confirmed has the file, whatever happened to the others.
  const addr = ctx.store.contacts.get(contactId)?.addr;
  if (addr === undefined || t.confirmed.includes(addr)) return undefined;
  if (t.refused.includes(addr)) return FileAccessState.UNDELIVERED;
  if (t.state === "done" || !t.pending.includes(addr)) return undefined;
  return t.state === "active" ? FileAccessState.IN_TRANSFER : FileAccessState.UNDELIVERED;
}
