/**
 * What both SecureJoin roles share: the mail queue they send through and the maximum age of an
 * auth token that still verifies. Step and header names are in protocol.ts.
 */
import type { RenderedMail } from "../core/chats/mod.ts";

/** Auth tokens older than this still add the contact but no longer verify it (as Delta Chat). */
export const VERIFICATION_TIMEOUT_SECONDS = 7 * 24 * 3600;

/** Queues a finished mail for the SMTP loop (outbox row; the loop is woken after the commit). */
export type QueueMail = (mail: RenderedMail) => void;
