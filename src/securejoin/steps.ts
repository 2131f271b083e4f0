/**
 * SecureJoin step names and header names (protocols.md §7.2), and what both roles share: the
 * mail queue they send through and the maximum age of an auth token that still verifies.
 */
import type { RenderedMail } from "../core/messages.ts";

/** Legacy setup-contact steps. */
export const Step = {
  REQUEST: "vc-request",
  AUTH_REQUIRED: "vc-auth-required",
  REQUEST_WITH_AUTH: "vc-request-with-auth",
  CONTACT_CONFIRM: "vc-contact-confirm",
} as const;

/** Header names (looked up lower-case by the parser). */
export const Header = {
  STEP: "secure-join",
  INVITE_NUMBER: "secure-join-invitenumber",
  AUTH: "secure-join-auth",
  FINGERPRINT: "secure-join-fingerprint",
} as const;

/** Auth tokens older than this still add the contact but no longer verify it (as Delta Chat). */
export const VERIFICATION_TIMEOUT_SECONDS = 7 * 24 * 3600;

/** Queues a finished mail for the SMTP loop (outbox row + wake-up). */
export type QueueMail = (mail: RenderedMail) => void;

/** `SecurejoinInviterProgress.chatType` of a 1:1 chat (SPEC numbering). */
export const SINGLE_CHAT_TYPE = 100;
