/**
 * The documents link to each other by relative paths and heading anchors (README.md → docs/…,
 * docs/… → ../README.md#configuration, `#resuming` within a page): every such link names a file
 * that exists and, for a markdown file, a heading it has. Moving a section breaks this test, not a
 * reader's click.
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = normalize(join(dirname(fileURLToPath(import.meta.url)), "../.."));

/** The markdown documents whose links are checked, relative to the repository root. */
function documents(): string[] {
  const docs = readdirSync(join(ROOT, "docs")).filter((f) => f.endsWith(".md"));
  return ["README.md", "ARCHITECTURE.md", "BENCHMARKS.md", ...docs.map((f) => `docs/${f}`)];
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
export function anchorOf(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, "").replace(/ /g, "-");
}

/** The anchors of a markdown text's headings, outside fenced code. */
export function anchors(markdown: string): Set<string> {
  const out = new Set<string>();
  let fenced = false;
  for (const line of markdown.split("\n")) {
    if (line.startsWith("```")) fenced = !fenced;
    const h = fenced ? null : /^#{1,6}\s+(.+)$/.exec(line);
    if (h !== null) out.add(anchorOf(h[1]!));
  }
  return out;
}

/** The relative link targets of a markdown text (`](path#anchor)`), outside fenced code. */
export function relativeLinks(markdown: string): { line: number; target: string }[] {
  const out: { line: number; target: string }[] = [];
  let fenced = false;
  markdown.split("\n").forEach((text, i) => {
    if (text.startsWith("```")) fenced = !fenced;
    if (fenced) return;
    for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (!/^[a-z][a-z0-9+.-]*:/i.test(m[1]!)) out.push({ line: i + 1, target: m[1]! });
    }
  });
  return out;
}

/** What is wrong with each relative link of `doc`: a missing file or heading. */
function brokenLinks(doc: string): string[] {
  const bad: string[] = [];
  for (const { line, target } of relativeLinks(readFileSync(join(ROOT, doc), "utf8"))) {
    const [path, anchor] = target.split("#", 2) as [string, string | undefined];
    const file = path === "" ? doc : relative(ROOT, join(ROOT, dirname(doc), path));
    if (!existsSync(join(ROOT, file))) {
      bad.push(`${doc}:${line}: ${target}: ${file} does not exist`);
    } else if (anchor !== undefined && file.endsWith(".md")) {
      const have = anchors(readFileSync(join(ROOT, file), "utf8"));
      if (!have.has(anchor)) {
        bad.push(`${doc}:${line}: ${target}: ${file} has no heading #${anchor}`);
      }
    }
  }
  return bad;
}

Deno.test("every relative link in README, ARCHITECTURE, BENCHMARKS and docs/ resolves", () => {
  const docs = documents();
  const links = docs.flatMap((d) => relativeLinks(readFileSync(join(ROOT, d), "utf8")));
  assert.ok(links.length > 30, `only ${links.length} links found: is the scan broken?`);
  assert.deepEqual(docs.flatMap(brokenLinks), []);
});

Deno.test("links: targets outside code, absolute URLs skipped; anchors as GitHub makes them", () => {
  const md = "[a](events.md#resuming) [b](https://h/#z)\n```\n[c](nope.md)\n```\n[d](#first-start)";
  assert.deepEqual(relativeLinks(md), [
    { line: 1, target: "events.md#resuming" },
    { line: 5, target: "#first-start" },
  ]);
  assert.deepEqual(
    [...anchors("# Protected files (.prv)\n## Compatibility with the product's published API")],
    ["protected-files-prv", "compatibility-with-the-products-published-api"],
  );
});
