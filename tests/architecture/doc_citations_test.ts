/**
 * The repository explains itself: every citation of a document under docs/ or of ARCHITECTURE.md
 * (`docs/contract.md §4.2`, `docs/product-compat.md#method-names`) names a file that exists and a
 * section or heading that file has; nothing cites the documents the project was built from but
 * does not hold (the service specification, the design card, the research notes, the product's
 * contract by item number); and every path ARCHITECTURE.md names exists.
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, join, normalize, relative } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = normalize(join(dirname(fileURLToPath(import.meta.url)), "../.."));
const SELF = relative(ROOT, fileURLToPath(import.meta.url));

/** Folders whose text files are scanned, and the top-level files beside them. */
const SCANNED_DIRS = ["src", "license_server", "tests", "bench", "scripts", "docs"];
const SCANNED_FILES = [
  "main.ts",
  "README.md",
  "BENCHMARKS.md",
  "ARCHITECTURE.md",
  "Dockerfile",
  "compile.sh",
  "deno.json",
];
const TEXT = /\.(ts|mjs|js|sh|md|json)$/;

/** Citations of documents a clone does not hold. */
const FOREIGN: readonly [RegExp, string][] = [
  [/\bSPEC\b/, "the service specification (cite docs/contract.md)"],
  [/\bDESIGN\b/, "the design card (cite ARCHITECTURE.md or docs/design-decisions.md)"],
  [/\bP-\d{2}\b/, "a product contract item (cite a docs/product-compat.md heading)"],
  [
    /\b(protocols|deltachat-groups|deltachat-reference|interop-recipe|peers|ecosystem|deno-notes)\.md\b/,
    "a research note (cite docs/protocol-notes.md)",
  ],
  [/privitty-edge-contract|protected-files-research/, "a research note"],
  [/\.\.\/shared\b/, "the folder beside the repository"],
];

/** One citation: where it is, the document, and the sections or anchors it names. */
export interface Citation {
  readonly at: string;
  readonly doc: string;
  readonly sections: readonly string[];
  readonly anchors: readonly string[];
}

/**
 * The citations in `text`: `docs/<name>.md` and `ARCHITECTURE.md` always; a bare `<name>.md` only
 * with a `§` or `#` after it (a link between docs/ files), resolved in docs/. Sections and anchors
 * may be listed: `§2, §11`, `§4.5, §2 and §5`, `#daemon-flags, #environment`.
 */
export function citationsIn(at: string, text: string): Citation[] {
  const out: Citation[] = [];
  const cite =
    /(?<![\w/.-])(docs\/)?([a-z][a-z0-9-]*\.md|ARCHITECTURE\.md)\b((?:(?:\s*,\s*|\s+and\s+|\s*)(?:§\d+(?:\.\d+)*|#[a-z0-9-]+))*)/g;
  text.split("\n").forEach((line, i) => {
    for (const m of line.matchAll(cite)) {
      const [, prefix, name, tail] = m as unknown as [string, string | undefined, string, string];
      if (name !== "ARCHITECTURE.md" && prefix === undefined && tail === "") continue;
      const doc = name === "ARCHITECTURE.md" ? name : `docs/${name}`;
      out.push({
        at: `${at}:${i + 1}`,
        doc,
        sections: [...tail.matchAll(/§(\d+(?:\.\d+)*)/g)].map((s) => s[1]!),
        anchors: [...tail.matchAll(/#([a-z0-9-]+)/g)].map((s) => s[1]!),
      });
    }
  });
  return out;
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
export function slug(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, "").replace(/ /g, "-");
}

/** The numbered sections (`1`, `1.2`) and heading anchors of a markdown text, outside code. */
export function outline(markdown: string): { sections: Set<string>; anchors: Set<string> } {
  const sections = new Set<string>(), anchors = new Set<string>();
  let fenced = false;
  for (const line of markdown.split("\n")) {
    if (line.startsWith("```")) fenced = !fenced;
    const h = fenced ? null : /^#{1,6}\s+(.+)$/.exec(line);
    if (h === null) continue;
    anchors.add(slug(h[1]!));
    const n = /^(\d+(?:\.\d+)*)\.?\s/.exec(h[1]!);
    if (n !== null) sections.add(n[1]!);
  }
  return { sections, anchors };
}

/** What is wrong with each citation: a missing document, section or anchor. */
export function brokenCitations(
  citations: readonly Citation[],
  read: (doc: string) => string | undefined,
): string[] {
  const bad: string[] = [];
  const outlines = new Map<string, ReturnType<typeof outline> | undefined>();
  for (const c of citations) {
    if (!outlines.has(c.doc)) {
      const text = read(c.doc);
      outlines.set(c.doc, text === undefined ? undefined : outline(text));
    }
    const o = outlines.get(c.doc);
    if (o === undefined) {
      bad.push(`${c.at}: ${c.doc} does not exist`);
      continue;
    }
    for (const s of c.sections) if (!o.sections.has(s)) bad.push(`${c.at}: ${c.doc} has no §${s}`);
    for (const a of c.anchors) if (!o.anchors.has(a)) bad.push(`${c.at}: ${c.doc} has no #${a}`);
  }
  return bad;
}

/**
 * The comment text of a line: all of it in markdown and JSON, `#` lines in shell, and in code
 * the lines of a comment block and what follows `//` (strings such as help texts are code).
 */
export function commentOf(path: string, line: string): string {
  if (/\.(md|json)$/.test(path)) return line;
  if (/\.sh$|Dockerfile$/.test(path)) return /^\s*#/.test(line) ? line : "";
  if (/^\s*(\/\/|\/\*|\*)/.test(line)) return line;
  const i = line.indexOf(" // ");
  return i < 0 ? "" : line.slice(i);
}

/** Comments citing documents the repository does not hold, as `file:line: what` lines. */
export function foreignCitations(at: string, text: string): string[] {
  const bad: string[] = [];
  text.split("\n").forEach((line, i) => {
    const comment = commentOf(at, line);
    for (const [re, what] of FOREIGN) {
      if (re.test(comment)) bad.push(`${at}:${i + 1}: cites ${what}`);
    }
  });
  return bad;
}

/** Repository paths a markdown text names in backticks (`src/…`, `tests/…`, …). */
export function namedPaths(markdown: string): string[] {
  const named = /`((?:src|license_server|tests|bench|scripts|docs)\/[\w./-]*|main\.ts)/g;
  const paths = [...markdown.matchAll(named)].map((m) => m[1]!.replace(/\.$/, ""));
  return [...new Set(paths)];
}

function read(path: string): string | undefined {
  const full = join(ROOT, path);
  return existsSync(full) && statSync(full).isFile() ? readFileSync(full, "utf8") : undefined;
}

/** Every scanned text file, relative to the repository root. */
function scanned(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      const path = join(dir, e.name);
      if (e.isDirectory()) walk(path);
      else if (TEXT.test(e.name) || basename(e.name) === "Dockerfile") out.push(path);
    }
  };
  for (const d of SCANNED_DIRS) if (existsSync(join(ROOT, d))) walk(d);
  return [...out, ...SCANNED_FILES.filter((f) => existsSync(join(ROOT, f)))].sort();
}

Deno.test("every citation of docs/ or ARCHITECTURE.md names a file, section and heading that exist", () => {
  const citations = scanned().filter((f) => f !== SELF).flatMap((f) => citationsIn(f, read(f)!));
  assert.ok(citations.length > 50, `only ${citations.length} citations found: is the scan broken?`);
  assert.deepEqual(brokenCitations(citations, read), []);
});

Deno.test("no comment cites the specification, the design card, research notes or P-nn items", () => {
  const bad = scanned().filter((f) => f !== SELF).flatMap((f) => foreignCitations(f, read(f)!));
  assert.deepEqual(bad, []);
});

Deno.test("every path ARCHITECTURE.md names exists", () => {
  const text = read("ARCHITECTURE.md");
  assert.ok(text !== undefined, "ARCHITECTURE.md is missing");
  const paths = namedPaths(text);
  assert.ok(paths.length > 40, `only ${paths.length} paths found: is the scan broken?`);
  assert.deepEqual(paths.filter((p) => !existsSync(join(ROOT, p))), []);
});

Deno.test("the checks catch a missing document, section and anchor, and foreign citations", () => {
  const docs: Record<string, string> = {
    "docs/a.md": "# A\n\n## 1. One\n\n### 1.2 Two\n\n## Method names\n\n```\n## 9. Code\n```\n",
  };
  const text = [
    "// docs/a.md §1.2, §1 and #method-names; a.md §3; docs/a.md#nope",
    "/** docs/b.md; see a.md for more (not a citation); ARCHITECTURE.md §2 */",
    " * docs/a.md §9 is inside a code block",
  ].join("\n");
  const found = citationsIn("x.ts", text);
  assert.deepEqual(found.map((c) => [c.doc, c.sections, c.anchors]), [
    ["docs/a.md", ["1.2", "1"], ["method-names"]],
    ["docs/a.md", ["3"], []],
    ["docs/a.md", [], ["nope"]],
    ["docs/b.md", [], []],
    ["ARCHITECTURE.md", ["2"], []],
    ["docs/a.md", ["9"], []],
  ]);
  assert.deepEqual(brokenCitations(found, (d) => docs[d]), [
    "x.ts:1: docs/a.md has no §3",
    "x.ts:1: docs/a.md has no #nope",
    "x.ts:2: docs/b.md does not exist",
    "x.ts:2: ARCHITECTURE.md does not exist",
    "x.ts:3: docs/a.md has no §9",
  ]);
  assert.deepEqual(
    foreignCitations(
      "y.ts",
      '// SPEC §4\n * P-51 and P-256\nconst SPEC_PREFIX = "SPEC §1";\nf(); // DESIGN §3',
    ),
    [
      "y.ts:1: cites the service specification (cite docs/contract.md)",
      "y.ts:2: cites a product contract item (cite a docs/product-compat.md heading)",
      "y.ts:4: cites the design card (cite ARCHITECTURE.md or docs/design-decisions.md)",
    ],
  );
  assert.deepEqual(namedPaths("`src/a.ts` and `tests/b/` and `accounts/1/x.db`; `main.ts`."), [
    "src/a.ts",
    "tests/b/",
    "main.ts",
  ]);
});
