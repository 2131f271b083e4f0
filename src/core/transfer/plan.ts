/**
 * The one decision of the send side: a file goes as one chat mail, or, when it does not fit the
 * relay's limit and every recipient's gateway announced the large-file capability, as relay
 * parts. Anything else stays one mail (the pre-send size check refuses what cannot fit).
 */
import { fitsOneMail, partPayloadBytes } from "./limit.ts";

/** How a file reaches its recipients. */
export type DeliveryPlan =
  | { readonly kind: "one-mail" }
  | { readonly kind: "parts"; readonly partSize: number; readonly parts: number };

/**
 * Plans a file of `fileBytes` under the relay limit `limit` (undefined: unknown) to recipients
 * whose capability is `capable` (one entry per recipient).
 */
export function planFileDelivery(
  fileBytes: number,
  limit: number | undefined,
  capable: readonly boolean[],
): DeliveryPlan {
  if (limit === undefined || fitsOneMail(fileBytes, limit)) return { kind: "one-mail" };
  if (capable.length === 0 || !capable.every((c) => c)) return { kind: "one-mail" };
  const partSize = partPayloadBytes(limit);
  return { kind: "parts", partSize, parts: Math.max(1, Math.ceil(fileBytes / partSize)) };
}
