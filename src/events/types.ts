/**
 * Every event the gateway emits, as one union tagged on `kind` (Delta Chat's names, camelCase
 * fields, as emitters write them), and `toWire()`, the one mapping to what `/events` sends.
 */
import { ACCOUNT_ID } from "../constants.ts";

export type GatewayEvent =
  | { kind: "ConnectivityChanged"; connectivity: number }
  | { kind: "ImapConnected"; msg: string }
  | { kind: "SmtpConnected"; msg: string }
  | { kind: "ConfigureProgress"; progress: number; comment: string | null }
  | { kind: "Info"; msg: string }
  | { kind: "Warning"; msg: string }
  | { kind: "Error"; msg: string }
  | { kind: "IncomingMsg"; chatId: number; msgId: number }
  | { kind: "MsgsChanged"; chatId: number; msgId: number }
  | { kind: "MsgDelivered"; chatId: number; msgId: number }
  | { kind: "MsgRead"; chatId: number; msgId: number }
  | { kind: "MsgFailed"; chatId: number; msgId: number }
  | { kind: "MsgsNoticed"; chatId: number }
  | { kind: "MsgDeleted"; chatId: number; msgId: number }
  | { kind: "ReactionsChanged"; chatId: number; msgId: number; contactId: number }
  | { kind: "IncomingReaction"; chatId: number; contactId: number; msgId: number; reaction: string }
  | { kind: "ChatModified"; chatId: number }
  | { kind: "ChatEphemeralTimerModified"; chatId: number; timer: number }
  | { kind: "ContactsChanged"; contactId: number | null }
  | {
    kind: "SecurejoinInviterProgress";
    contactId: number;
    chatType: number;
    chatId: number;
    progress: number;
  }
  | {
    kind: "SecurejoinJoinerProgress";
    contactId: number;
    chatType: number;
    chatId: number;
    progress: number;
  }
  /** A mail reception kept failing was kept whole instead (`list_quarantined_mails`). */
  | { kind: "MailQuarantined"; quarantineId: number; messageId: string; reason: string }
  /** Backup export (Delta Chat's names): progress 1..999 running, 1000 done, 0 failed. */
  | { kind: "ImexProgress"; progress: number }
  | { kind: "ImexFileWritten"; path: string }
  | { kind: "ViewerSessionStarted"; expiresAt: number }
  | { kind: "ViewerSessionEnded"; reason: "expired" | "replaced" }
  | { kind: "ViewerFileStreamed"; msgId: number; bytes: number }
  // Protected files, with the product's names (docs/product-compat.md#protected-file-events).
  | { kind: "PrivittyFileEncrypted"; chatId: number; msgId: number }
  | { kind: "PrivittyFileDecrypted"; chatId: number; msgId: number }
  | { kind: "PrivittyFileAccessRevoked"; chatId: number; contactId: number; fileId: number }
  | { kind: "PrivittyFileAccessChanged"; chatId: number; fileId: number }
  | {
    kind: "PrivittyAccessRenewRequested";
    chatId: number;
    fileId: number;
    requesterContactId: number;
  }
  // Files sent or received as relay parts or directly (docs/transfer.md); msgId is null for an
  // incoming file before its message is shown (chatId then 0 unless its chat exists already).
  | ({ kind: "TransferProgress" } & TransferFields)
  | ({ kind: "TransferDone" } & TransferFields)
  | ({ kind: "TransferFailed"; reason: string } & TransferFields)
  /**
   * Sent by the bus to one subscriber: `dropped` events it will never get (it fell behind, or
   * resumed from an id no longer held, or from an id this gateway never issued).
   */
  | { kind: "lag"; dropped: number; oldestAvailable: number };

/** What every transfer event says (docs/transfer.md). */
export interface TransferFields {
  readonly chatId: number;
  readonly msgId: number | null;
  readonly transferId: string;
  readonly direction: "out" | "in";
  /** Bytes sent to the relay (out) or verified and written (in). */
  readonly bytes: number;
  readonly total: number;
  /** Which path carries the bytes: relay parts, or a direct connection between the gateways. */
  readonly path: "direct" | "relay";
}

export type GatewayEventKind = GatewayEvent["kind"];

/** The one event type sent as a named SSE event (`event: lag`); every other frame is unnamed. */
export const LAG_EVENT = "lag" satisfies GatewayEventKind;

/** `chatId` → `chat_id`, at the type level (mirrors `snakeCase()`). */
type SnakeCase<S extends string> = S extends `${infer C}${infer Rest}`
  ? `${C extends Lowercase<C> ? C : `_${Lowercase<C>}`}${SnakeCase<Rest>}`
  : S;

type Flatten<T> = { [K in keyof T]: T[K] };

/** The wire form of one union member: `type`, `account_id`, then its fields in snake_case. */
type WireOf<E> = E extends { kind: infer K } ? Flatten<
    & { type: K; account_id: typeof ACCOUNT_ID }
    & { [P in Exclude<keyof E, "kind"> as SnakeCase<P & string>]: E[P] }
  >
  : never;

/**
 * An event as `/events` sends it in its `data:` line (the product's published shape), e.g.
 * `{"type":"IncomingMsg","account_id":1,"chat_id":7,"msg_id":42}`. Derived from
 * `GatewayEvent`, so a new union member has its wire form without further code.
 */
export type WireEvent = WireOf<GatewayEvent>;

/** The type names of the wire events (the same strings as `GatewayEventKind`). */
export type WireEventType = WireEvent["type"];

function snakeCase(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);
}

/** Maps an event to its wire object: `kind` → `type`, `account_id: 1`, snake_case members. */
export function toWire(event: GatewayEvent): WireEvent {
  const out: Record<string, unknown> = { type: event.kind, account_id: ACCOUNT_ID };
  for (const [name, value] of Object.entries(event)) {
    if (name !== "kind") out[snakeCase(name)] = value;
  }
  return out as WireEvent;
}

/** An event with its position in the stream (the SSE `id:`), in wire form. */
export interface SequencedEvent {
  readonly id: number;
  readonly event: WireEvent;
}

/** Anything that accepts events for delivery (implemented by `events/bus.ts`). */
export interface EventSink {
  publish(event: GatewayEvent): void;
}
