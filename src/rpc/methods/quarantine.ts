/**
 * Quarantine RPC methods (gateway extras): `list_quarantined_mails`, `retry_quarantined_mail`,
 * `delete_quarantined_mail`. A quarantined mail failed reception several times for a reason that
 * may pass or may be ours; it is kept whole here instead of being deleted unread.
 */
import { GatewayError } from "../../errors.ts";
import { ACCOUNT_PARAM, method, type MethodEntry, type ParamSpec } from "../method.ts";

const ID_PARAM = {
  name: "id",
  type: "u32",
  description: "The quarantine id (`list_quarantined_mails`, `MailQuarantined`).",
} as const satisfies ParamSpec;

/** `value` (a u32, validated) when it can be a quarantine id; 0 → -1. */
function idOf(value: number): number {
  if (value < 1) {
    throw new GatewayError(`id must be a quarantine id (a positive integer), not ${value}`);
  }
  return value;
}

/**
 * `list_quarantined_mails [account_id]` → `[{id, message_id, reason, attempts, size,
 * quarantined_at}]`, the oldest first (`quarantined_at` in Unix seconds). No side effects.
 */
export const listQuarantinedMails = method({
  name: "list_quarantined_mails",
  scope: "read",
  summary: "Mails kept whole after reception failed on them several times, oldest first.",
  params: [ACCOUNT_PARAM],
  result: {
    type: "array<object>",
    description: "{id, message_id, reason, attempts, size, quarantined_at} per mail.",
  },
  handler(services) {
    return services.store.quarantine.list().map((m) => ({
      id: m.id,
      message_id: m.messageId,
      reason: m.reason,
      attempts: m.attempts,
      size: m.size,
      quarantined_at: m.quarantinedAt,
    }));
  },
});

/**
 * `retry_quarantined_mail [account_id, id]` → `{outcome: "received", kind}` when reception took
 * the mail (it leaves the quarantine; `kind` says what it was: message, receipt, …) or
 * `{outcome: "quarantined", reason}` when it failed again (it stays). Unknown id → -1.
 */
export const retryQuarantinedMail = method({
  name: "retry_quarantined_mail",
  scope: "send",
  summary: "Runs a quarantined mail through reception again; it leaves the quarantine if taken.",
  params: [ACCOUNT_PARAM, ID_PARAM],
  result: { type: "object", description: "{outcome: received|quarantined, kind|reason}" },
  handler: (services, [, id]) => services.quarantine.retryQuarantined(idOf(id)),
});

/** `delete_quarantined_mail [account_id, id]` → nothing (HTTP 204): dropped. Unknown id → -1. */
export const deleteQuarantinedMail = method({
  name: "delete_quarantined_mail",
  scope: "admin",
  summary: "Drops a quarantined mail for good.",
  params: [ACCOUNT_PARAM, ID_PARAM],
  result: { type: "null", description: "Nothing." },
  void: true,
  handler(services, [, given]) {
    const id = idOf(given);
    if (!services.store.quarantine.remove(id)) {
      throw new GatewayError(`no quarantined mail with id ${id}`);
    }
  },
});

/** The quarantine methods, in documentation order. */
export const QUARANTINE_METHODS: readonly MethodEntry[] = [
  listQuarantinedMails,
  retryQuarantinedMail,
  deleteQuarantinedMail,
];
