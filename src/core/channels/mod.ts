/** Broadcast channels (chat type 130) and their mails (entry of core/channels/). */
export * from "./channels.ts";
export * from "./mail.ts";
