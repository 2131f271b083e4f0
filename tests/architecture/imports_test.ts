/**
 * Dependencies point one way (ARCHITECTURE.md §1): parses the imports of every `src/**\/*.ts` and
 * fails on an import cycle, on a module importing a higher layer, on the CLI importing more
 * than its HTTP client and wire types, on a package reached past its entry module or importing
 * above its bound (`PACKAGES`), and on an import across the gateway's edge: `src/` importing the
 * license server (`license_server/`) or anything else outside it, and the license server importing
 * more of `src/` than it shares.
 */
import assert from "node:assert/strict";
import { dirname, join, normalize, relative } from "node:path";
import { fileURLToPath } from "node:url";

const SRC = normalize(join(dirname(fileURLToPath(import.meta.url)), "../../src"));
/** The license server, a second program beside the gateway; its paths here are `../license_server/…`. */
const LICENSE_SERVER = normalize(join(SRC, "../license_server"));

/**
 * Layers, lowest first; a module may import its own layer and lower ones. Longest matching
 * prefix wins. `cli/` stands apart (see `CLI_MAY_IMPORT`).
 */
const LAYERS: readonly (readonly string[])[] = [
  // 0: leaves: names, numbers, errors, logging, byte helpers, the event union and bus, the
  // process's memory upkeep
  [
    "constants.ts",
    "protocol.ts",
    "errors.ts",
    "log.ts",
    "env_shim.ts",
    "bytes.ts",
    "sleep.ts",
    "events/",
    "memory/",
  ],
  // 1: pure and effectful edges
  ["store/", "crypto/", "prv/", "mime/", "transport/", "config.ts"],
  // 2: the domain core
  ["core/"],
  // 3: domain services built on core
  ["securejoin/", "protected_files/", "viewer/", "license/", "provision/", "backup/"],
  // 4: the account core built once, the running account, and what RPC handlers get
  ["account/", "services.ts", "mail_runtime.ts"],
  // 5: JSON-RPC
  ["rpc/"],
  // 6: HTTP
  ["http/"],
  // 7: the program's composition roots and entries (the license server is a program of its own,
  // beside src/: see LICENSE_SERVER_MAY_IMPORT)
  ["daemon.ts", "daemon_start.ts", "shutdown.ts", "program_name.ts"],
];

/** A package others reach only through its entry module. */
interface PackageRule {
  readonly entry: string;
  /** The highest layer the package itself may import (besides itself). */
  readonly mayImportUpTo: number;
  /** Modules under this prefix may import past the entry too (default: the package itself). */
  readonly within?: string;
}

/**
 * Packages that others reach only through their entry module. `prv/`, the `.prv` container, is
 * pure: bytes and errors, no PDU, grant, store or account. Each sub-folder of `core/` is reached
 * from outside `core/` through its `mod.ts`; inside `core/` its files import each other directly.
 */
const PACKAGES: Readonly<Record<string, PackageRule>> = {
  "prv/": { entry: "prv/mod.ts", mayImportUpTo: 0 },
  // the direct path over QUIC: a building block the transfer layer calls, never the core
  "transport/p2p/": { entry: "transport/p2p/mod.ts", mayImportUpTo: 0 },
  ...Object.fromEntries(
    ["channels", "chats", "contacts", "groups", "receive", "send", "transfer"].map((sub) => [
      `core/${sub}/`,
      { entry: `core/${sub}/mod.ts`, mayImportUpTo: 2, within: "core/" },
    ]),
  ),
};

/**
 * What the license server may import from the gateway's `src/`: the claims it signs and the key
 * id it stamps on them, both without dependencies. Nothing in `src/` imports the license server.
 */
const LICENSE_SERVER_MAY_IMPORT = ["license/claims.ts", "license/spki.ts"];

/** What `cli/` may import besides itself: constants, wire types, and the offline license check. */
const CLI_MAY_IMPORT = [
  "constants.ts",
  "protocol.ts",
  "errors.ts",
  "events/types.ts",
  "rpc/types.ts",
  "license/inspect.ts",
  // `fingerprint` and `view` compute the viewer's device fingerprint exactly as the daemon does.
  "viewer/device_fingerprint.ts",
  // `backup import FILE --data-dir D` restores offline, exactly as the daemon does at start.
  "backup/restore.ts",
  "backup/errors.ts",
];

function layerOf(path: string): number {
  let best = -1, bestLen = -1;
  LAYERS.forEach((prefixes, i) => {
    for (const p of prefixes) {
      const hit = p.endsWith("/") ? path.startsWith(p) : path === p;
      if (hit && p.length > bestLen) [best, bestLen] = [i, p.length];
    }
  });
  return best;
}

/** Every `.ts` file under `dir`, relative to `SRC`. */
function sources(dir = SRC): string[] {
  const out: string[] = [];
  for (const e of Deno.readDirSync(dir)) {
    const path = join(dir, e.name);
    if (e.isDirectory) out.push(...sources(path));
    else if (e.name.endsWith(".ts")) out.push(relative(SRC, path));
  }
  return out.sort();
}

/** Relative imports of a file (static, re-exports, type-only and dynamic), resolved to `SRC`. */
export function importsOf(file: string, text: string): string[] {
  const specs = [
    ...text.matchAll(/^\s*(?:import|export)\b[^;]*?\bfrom\s*["']([^"']+)["']/gms),
    ...text.matchAll(/^\s*import\s*["']([^"']+)["']/gm),
    ...text.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g),
  ].map((m) => m[1]).filter((s) => s.startsWith("."));
  return [...new Set(specs.map((s) => relative(SRC, normalize(join(SRC, dirname(file), s)))))];
}

function graph(dir = SRC): Map<string, string[]> {
  const g = new Map<string, string[]>();
  for (const f of sources(dir)) g.set(f, importsOf(f, Deno.readTextFileSync(join(SRC, f))));
  return g;
}

/** Strongly connected components with more than one module, or a module importing itself. */
export function cycles(g: ReadonlyMap<string, readonly string[]>): string[][] {
  let index = 0;
  const idx = new Map<string, number>(), low = new Map<string, number>();
  const stack: string[] = [], on = new Set<string>(), out: string[][] = [];
  const visit = (v: string) => {
    idx.set(v, index), low.set(v, index++), stack.push(v), on.add(v);
    for (const w of g.get(v) ?? []) {
      if (!g.has(w)) continue;
      if (!idx.has(w)) visit(w), low.set(v, Math.min(low.get(v)!, low.get(w)!));
      else if (on.has(w)) low.set(v, Math.min(low.get(v)!, idx.get(w)!));
    }
    if (low.get(v) === idx.get(v)) {
      const scc: string[] = [];
      let w: string;
      do (w = stack.pop()!, on.delete(w), scc.push(w)); while (w !== v);
      if (scc.length > 1 || (g.get(v) ?? []).includes(v)) out.push(scc.sort());
    }
  };
  for (const v of g.keys()) if (!idx.has(v)) visit(v);
  return out;
}

/** Imports that break the layering, as `from → to` lines. */
export function layerViolations(g: ReadonlyMap<string, readonly string[]>): string[] {
  const bad: string[] = [];
  for (const [from, tos] of g) {
    for (const to of tos) {
      if (from.startsWith("cli/")) {
        if (!to.startsWith("cli/") && !CLI_MAY_IMPORT.includes(to)) bad.push(`${from} → ${to}`);
        continue;
      }
      if (to.startsWith("cli/")) {
        if (from !== "program_name.ts") bad.push(`${from} → ${to}`);
        continue;
      }
      const [a, b] = [layerOf(from), layerOf(to)];
      if (a < 0) bad.push(`${from}: not in any layer (add it to LAYERS)`);
      else if (b > a) bad.push(`${from} → ${to}`);
    }
  }
  return [...new Set(bad)];
}

/** Imports into a package other than through its entry, and a package's imports above its bound. */
export function packageViolations(g: ReadonlyMap<string, readonly string[]>): string[] {
  const bad: string[] = [];
  for (const [from, tos] of g) {
    for (const to of tos) {
      for (const [dir, { entry, mayImportUpTo, within }] of Object.entries(PACKAGES)) {
        const inside = from.startsWith(dir);
        if (!from.startsWith(within ?? dir) && to.startsWith(dir) && to !== entry) {
          bad.push(`${from} → ${to} (use ${entry})`);
        }
        if (inside && !to.startsWith(dir) && layerOf(to) > mayImportUpTo) {
          bad.push(`${from} → ${to} (${dir} imports layer ${mayImportUpTo} at most)`);
        }
      }
    }
  }
  return bad;
}

/**
 * Imports across the gateway's edge: from `src/` to anything outside it (the license server, the
 * tests, the benchmarks), and from the license server into `src/` beyond what it may share.
 */
export function edgeViolations(g: ReadonlyMap<string, readonly string[]>): string[] {
  const bad: string[] = [];
  for (const [from, tos] of g) {
    const server = from.startsWith("../license_server/");
    for (const to of tos) {
      if (server) {
        if (!to.startsWith("../license_server/") && !LICENSE_SERVER_MAY_IMPORT.includes(to)) {
          bad.push(`${from} → ${to}`);
        }
      } else if (to.startsWith("../")) bad.push(`${from} → ${to}`);
    }
  }
  return bad;
}

Deno.test("src/ has no import cycle", () => {
  assert.deepEqual(cycles(graph()), []);
});

Deno.test("src/ imports only its own layer or lower ones; the CLI only its client and wire types", () => {
  assert.deepEqual(layerViolations(graph()), []);
});

Deno.test("src/prv/ imports only layer 0; prv/ and core's sub-folders are reached through entries", () => {
  assert.deepEqual(packageViolations(graph()), []);
});

Deno.test("src/ imports nothing outside it; the license server only claims and key ids", () => {
  const g = new Map([...graph(), ...graph(LICENSE_SERVER)]);
  assert.ok([...g.keys()].some((f) => f.startsWith("../license_server/")), "license server found");
  assert.deepEqual(edgeViolations(g), []);
});

Deno.test("the checks catch a cycle and an upward import", () => {
  const g = new Map([
    ["core/a.ts", ["core/b.ts"]],
    ["core/b.ts", ["core/a.ts", "securejoin/x.ts"]],
    ["securejoin/x.ts", ["core/a.ts"]],
    ["cli/y.ts", ["core/a.ts"]],
  ]);
  assert.deepEqual(cycles(g), [["core/a.ts", "core/b.ts", "securejoin/x.ts"]]);
  assert.deepEqual(layerViolations(g), ["core/b.ts → securejoin/x.ts", "cli/y.ts → core/a.ts"]);
  assert.deepEqual(
    importsOf("core/a.ts", 'import type { X } from "../store/mod.ts";\nexport * from "./b.ts";'),
    ["store/mod.ts", "core/b.ts"],
  );
  const pkg = new Map([
    ["prv/mod.ts", ["prv/reader.ts"]],
    ["prv/reader.ts", ["bytes.ts", "errors.ts", "store/mod.ts"]],
    ["protected_files/a.ts", ["prv/mod.ts", "prv/reader.ts"]],
    ["rpc/x.ts", ["core/chats/mod.ts", "core/chats/chats.ts", "core/context.ts"]],
    ["core/send/a.ts", ["core/chats/chats.ts"]],
  ]);
  assert.deepEqual(packageViolations(pkg), [
    "prv/reader.ts → store/mod.ts (prv/ imports layer 0 at most)",
    "protected_files/a.ts → prv/reader.ts (use prv/mod.ts)",
    "rpc/x.ts → core/chats/chats.ts (use core/chats/mod.ts)",
  ]);
  const edge = new Map([
    ["daemon.ts", ["../license_server/http.ts"]],
    ["../license_server/sign.ts", ["license/claims.ts", "license/verify.ts"]],
  ]);
  assert.deepEqual(edgeViolations(edge), [
    "daemon.ts → ../license_server/http.ts",
    "../license_server/sign.ts → license/verify.ts",
  ]);
  assert.deepEqual(
    importsOf("../license_server/sign.ts", 'import { c } from "../src/license/claims.ts";'),
    ["license/claims.ts"],
  );
});
