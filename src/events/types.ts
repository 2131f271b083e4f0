/**
 * Every event the gateway emits, as one union tagged on `kind` (Delta Chat's names and
 * camelCase fields). SSE writes `event: <kind>` and the object as one-line JSON `data:`.
 */

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
  | { kind: "SecurejoinJoinerProgress"; contactId: number; progress: number }
  | { kind: "ViewerSessionStarted"; expiresAt: number }
  | { kind: "ViewerSessionEnded"; reason: "expired" | "replaced" }
  | { kind: "ViewerFileStreamed"; msgId: number; bytes: number }
  /** Emitted to one subscriber that fell behind or asked for events no longer buffered. */
  | { kind: "lag"; missed: number; oldestAvailable: number };

export type GatewayEventKind = GatewayEvent["kind"];

/** An event with its position in the stream (the SSE `id:`). */
export interface SequencedEvent {
  readonly id: number;
  readonly event: GatewayEvent;
}

/** Anything that accepts events for delivery (implemented by `events/bus.ts`). */
export interface EventSink {
  publish(event: GatewayEvent): void;
}
