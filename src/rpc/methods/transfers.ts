/**
 * Files sent or received as relay parts (docs/transfer.md): read a transfer's state by message
 * id, cancel an outgoing one.
 */
import { GatewayError, NotFoundError } from "../../errors.ts";
import { ACCOUNT_PARAM, method, type MethodEntry, type ParamSpec } from "../method.ts";

const MSG_ID = {
  name: "msg_id",
  type: "u32",
  description: "The message whose file is (or was) in transfer.",
} as const satisfies ParamSpec;

/**
 * `get_transfer [account_id, msg_id]` → Transfer {transfer_id, direction, state, reason, bytes,
 * total, parts, parts_done, path, pending}. `state`: active, done, failed or cancelled; `pending`
 * the recipients of an outgoing file that have not confirmed it. -1 for a message whose file
 * travelled as one mail (no transfer).
 */
export const getTransfer = method({
  name: "get_transfer",
  scope: "read",
  summary: "The state of a message's file transfer (relay parts).",
  params: [ACCOUNT_PARAM, MSG_ID],
  result: {
    type: "object",
    description:
      "Transfer {transfer_id, direction, state, reason, bytes, total, parts, parts_done, path, pending}",
  },
  handler: (s, [, msgId]) => {
    const v = s.core.transfers.view(msgId);
    if (v === undefined) throw new NotFoundError(`message ${msgId} has no file transfer`);
    return {
      transfer_id: v.transferId,
      direction: v.direction,
      state: v.state,
      reason: v.reason,
      bytes: v.bytes,
      total: v.total,
      parts: v.parts,
      parts_done: v.partsDone,
      path: v.path,
      pending: v.pending,
    };
  },
});

/**
 * `cancel_transfer [account_id, msg_id]` → nothing (HTTP 204). Stops sending the message's file:
 * queued parts are dropped, the recipients told; the message fails (`MsgFailed`,
 * `TransferFailed{reason: "cancelled"}`). -1 when the message has no outgoing transfer running.
 */
export const cancelTransfer = method({
  name: "cancel_transfer",
  scope: "send",
  summary: "Cancels the outgoing transfer of a message's file.",
  params: [ACCOUNT_PARAM, MSG_ID],
  result: { type: "null", description: "Nothing" },
  void: true,
  handler: async (s, [, msgId]) => {
    if (!await s.core.transfers.cancel(msgId)) {
      throw new GatewayError(`message ${msgId} has no outgoing file transfer running`);
    }
  },
});

/** The transfer methods, in documentation order. */
export const TRANSFER_METHODS: readonly MethodEntry[] = [getTransfer, cancelTransfer];
