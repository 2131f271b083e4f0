/** Sending: the send steps, mail rendering, controls, join waits, receipts (entry of core/send/). */
export * from "./controls.ts";
export * from "./join_wait.ts";
export * from "./mail_composer.ts";
export * from "./outgoing.ts";
export * from "./receipt_batcher.ts";
export * from "./rendered_mail.ts";
export * from "./size_limit.ts";
