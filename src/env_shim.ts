/**
 * Must be main.ts's first import. Node packages may enumerate `process.env` at import time
 * (file-type's `debug` dependency does), which Deno refuses unless every variable may be read.
 * This replaces `process.env` with a view that lists no keys, hides `DEBUG*`, and answers
 * reads of variables the permission set does not allow with `undefined` instead of throwing.
 */
import process from "node:process";

const real = process.env;

function read(key: string): string | undefined {
  if (/^DEBUG/i.test(key)) return undefined;
  try {
    return real[key];
  } catch {
    return undefined; // not in --allow-env: behave as if unset
  }
}

const view = new Proxy({} as Record<string, string | undefined>, {
  get: (_t, key) => typeof key === "string" ? read(key) : undefined,
  has: (_t, key) => typeof key === "string" && read(key) !== undefined,
  set: (_t, key, value) => {
    if (typeof key === "string") {
      try {
        real[key] = String(value);
      } catch { /* not allowed: ignore */ }
    }
    return true;
  },
  deleteProperty: (_t, key) => {
    if (typeof key === "string") {
      try {
        delete real[key];
      } catch { /* not allowed: ignore */ }
    }
    return true;
  },
  ownKeys: () => [],
  getOwnPropertyDescriptor: () => undefined,
});

Object.defineProperty(process, "env", { value: view, configurable: true, writable: true });
