/**
 * docs/methods.md's method table is generated from the method declarations
 * (scripts/method_table.ts): these tests fail when the block between its markers differs from what
 * the generator renders for this build (a method added, renamed or re-described without
 * regenerating), and name the command that regenerates it.
 */
import assert from "node:assert/strict";
import { buildMethodTable } from "../../src/rpc/methods/mod.ts";
import type { MethodEntry } from "../../src/rpc/method.ts";
import {
  BEGIN_MARKER,
  currentMethodTable,
  END_MARKER,
  generatedBlock,
  METHODS_DOC,
  REGENERATE,
  renderMethodTable,
  replaceGeneratedBlock,
  tableRows,
} from "../../scripts/method_table.ts";

const DOC = Deno.readTextFileSync(new URL(`../../${METHODS_DOC}`, import.meta.url));
const STALE = `${METHODS_DOC}'s method table is not what src/rpc/methods/ declares: run ` +
  `\`${REGENERATE}\` and commit the result`;

/** The method names a table row's first cell lists (the method and its aliases). */
function namesIn(row: readonly string[]): string[] {
  return [...(row[0] ?? "").matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
}

Deno.test("docs/methods.md's generated method table matches the method declarations", () => {
  const inDoc = tableRows(generatedBlock(DOC));
  const expected = tableRows(currentMethodTable());
  const differs = expected.findIndex((row, i) => JSON.stringify(row) !== JSON.stringify(inDoc[i]));
  if (differs >= 0 || inDoc.length !== expected.length) {
    const at = differs >= 0 ? differs : Math.min(inDoc.length, expected.length);
    assert.fail(
      `${STALE}\nfirst differing row ${at}:\n  in the doc:   ${
        JSON.stringify(inDoc[at] ?? null)
      }\n  declarations: ${JSON.stringify(expected[at] ?? null)}`,
    );
  }
});

Deno.test("every method of the table appears exactly once in docs/methods.md's table", () => {
  const rows = tableRows(generatedBlock(DOC)).slice(2); // header and delimiter
  const listed = rows.flatMap(namesIn);
  const declared = buildMethodTable().entries.map((e) => e.name);
  const counts = new Map<string, number>();
  for (const name of listed) counts.set(name, (counts.get(name) ?? 0) + 1);
  assert.deepEqual([...counts].filter(([, n]) => n !== 1), [], `listed more than once; ${STALE}`);
  assert.deepEqual(declared.filter((n) => !counts.has(n)), [], `missing from the table; ${STALE}`);
  assert.deepEqual(listed.filter((n) => !declared.includes(n)), [], `not a method; ${STALE}`);
});

Deno.test("deno task docs runs the generator and formats the document", () => {
  const tasks = JSON.parse(Deno.readTextFileSync(new URL("../../deno.json", import.meta.url)))
    .tasks as Record<string, string>;
  assert.match(tasks.docs ?? "", /scripts\/method_table\.ts .*deno fmt docs\/methods\.md/);
  assert.equal(REGENERATE, "npx --yes deno@2.9.5 task docs");
});

Deno.test("the generator: aliases beside their method, void and gated marked, | escaped", () => {
  const base = {
    params: [{ name: "account_id", type: "u32", description: "" }],
    scope: "send",
    handler: () => null,
  } as const;
  const entries: MethodEntry[] = [
    {
      ...base,
      name: "secure_x",
      summary: "Does x.",
      result: { type: "null", description: "Nothing" },
      void: true,
      license: true,
    },
    {
      ...base,
      name: "privitty_x",
      summary: "Does x.",
      result: { type: "null", description: "Nothing" },
      aliasOf: "secure_x",
    },
    {
      ...base,
      params: [...base.params, { name: "id", type: "u32?", description: "" }],
      name: "get_y",
      scope: "read",
      summary: "Reads y.",
      result: { type: "object", description: "{a|b}" },
    },
    {
      name: "rpc.z",
      scope: "admin",
      summary: "Z.",
      params: [],
      result: { type: "object", description: "Z" },
      handler: () => null,
    },
  ];
  assert.equal(
    renderMethodTable(entries),
    [
      "| Method | Params | Result | Scope | License | Summary |",
      "| --- | --- | --- | --- | --- | --- |",
      "| `secure_x` (also `privitty_x`) | `[1]` | none (HTTP 204) | send | required | Does x. |",
      "| `get_y` | `[1, id: u32?]` | `object`: {a\\|b} | read |  | Reads y. |",
      "| `rpc.z` | none | `object`: Z | admin |  | Z. |",
    ].join("\n"),
  );
  assert.deepEqual(tableRows("| a | `x\\|y` |\n|:--|--:|\ntext"), [["a", "`x\\|y`"], [
    "---",
    "---",
  ]]);
});

Deno.test("the generator rewrites only the block between the markers, and needs both", () => {
  const doc = `# T\n\nbefore\n\n${BEGIN_MARKER}\n\nold\n\n${END_MARKER}\n\nafter\n`;
  assert.equal(
    replaceGeneratedBlock(doc, "| new |"),
    `# T\n\nbefore\n\n${BEGIN_MARKER}\n\n| new |\n\n${END_MARKER}\n\nafter\n`,
  );
  assert.throws(() => generatedBlock("# T\n"), /must hold one/);
  assert.throws(() => generatedBlock(`${END_MARKER}\n${BEGIN_MARKER}`), /must hold one/);
  assert.throws(
    () => generatedBlock(`${BEGIN_MARKER}${BEGIN_MARKER}${END_MARKER}`),
    /must hold one/,
  );
});
