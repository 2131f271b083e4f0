/** Chats, their messages and message states (entry of core/chats/). */
export * from "./chats.ts";
export * from "./control.ts";
export * from "./message_states.ts";
export * from "./messages.ts";
