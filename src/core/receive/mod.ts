/** Reception: a raw mail read, assigned to its chat and stored (entry of core/receive/). */
export * from "./assignment.ts";
export * from "./content.ts";
export * from "./controls.ts";
export * from "./inbox_reception.ts";
export * from "./incoming.ts";
export * from "./mail_reader.ts";
export * from "./pipeline.ts";
export * from "./text.ts";
