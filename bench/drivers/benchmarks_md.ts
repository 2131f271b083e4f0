/**
 * Writes one benchmark's section of BENCHMARKS.md between its begin/end markers: replaced in place,
 * else placed at the end of a named `## ` section, else appended; then formatted as committed.
 */

const ROOT = new URL("../../", import.meta.url).pathname;

/** Where a benchmark's text goes in BENCHMARKS.md. */
export interface BenchmarkSection {
  /** The marker line before it, e.g. `<!-- e2e:begin -->`. */
  readonly begin: string;
  /** The marker line after it. */
  readonly end: string;
  /** A `## ` heading whose section takes it when the markers are not there yet (else: appended). */
  readonly under?: string;
}

/** Puts `text` between the section's markers in BENCHMARKS.md, formats the file, prints it. */
export async function writeBenchmarkSection(s: BenchmarkSection, text: string): Promise<void> {
  const path = `${ROOT}BENCHMARKS.md`;
  const body = `${s.begin}\n\n${text}\n${s.end}\n`;
  let md = await Deno.readTextFile(path).catch(() => "# Benchmarks\n");
  const a = md.indexOf(s.begin), b = md.indexOf(s.end);
  if (a >= 0 && b > a) {
    md = md.slice(0, a) + body + md.slice(b + s.end.length).replace(/^\n/, "");
  } else if (s.under !== undefined && md.includes(`\n${s.under}`)) {
    // At the end of that section (before the next "## " heading, if any).
    const next = md.indexOf("\n## ", md.indexOf(`\n${s.under}`) + 1);
    const at = next >= 0 ? next + 1 : md.length;
    md = `${md.slice(0, at).replace(/\n*$/, "\n")}\n${body}\n${md.slice(at)}`;
  } else if (s.under !== undefined) {
    md = `${md.replace(/\n*$/, "\n")}\n${s.under}\n\n${body}`;
  } else md = `${md.replace(/\n*$/, "\n")}\n${body}`;
  await Deno.writeTextFile(path, md);
  // As committed: formatted (`deno fmt --check` is part of `deno task ok`).
  await new Deno.Command(Deno.execPath(), { args: ["fmt", "--quiet", path], cwd: ROOT }).output();
  console.log(body);
}
