/** What the sending methods share: the mail transport's renderer, or a clear -1 without one. */
import { GatewayError } from "../../errors.ts";

/** `render` (a renderer of `Services.outgoing`), or -1 when the mail transport is not running. */
export function requireTransport<T>(render: T | undefined): T {
  if (render === undefined) {
    throw new GatewayError("sending is not available: the mail transport is not running");
  }
  return render;
}
