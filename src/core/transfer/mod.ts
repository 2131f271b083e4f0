/** Files above the relay's one-mail limit: relay parts and the direct path (entry of core/transfer/). */
export * from "./direct_path.ts";
export * from "./headers.ts";
export * from "./manager.ts";
export * from "./options.ts";
export * from "./part_mail.ts";
