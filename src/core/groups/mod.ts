/** Groups (chat type 120): changes, members, their mails (entry of core/groups/). */
export * from "./groups.ts";
export * from "./headers.ts";
export * from "./mail.ts";
export * from "./members.ts";
export * from "./receive.ts";
