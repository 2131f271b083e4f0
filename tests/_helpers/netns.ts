/**
 * Network namespaces for the direct-path tests and benchmark (iproute2, nftables): created with
 * unique names, joined by veth pairs, deleted again by `destroy()`. Needs root (the test run is).
 */

/** Runs a command; throws with its stderr when it fails. */
export async function sh(...argv: string[]): Promise<string> {
  const out = await new Deno.Command(argv[0]!, {
    args: argv.slice(1),
    stdout: "piped",
    stderr: "piped",
  })
    .output();
  if (!out.success) {
    throw new Error(`${argv.join(" ")}: ${new TextDecoder().decode(out.stderr).trim()}`);
  }
  return new TextDecoder().decode(out.stdout);
}

/** True when namespaces can be made here (root and iproute2). */
export async function canMakeNamespaces(): Promise<boolean> {
  if (Deno.uid() !== 0) return false;
  try {
    await sh("ip", "-V");
    return true;
  } catch {
    return false;
  }
}

/** A set of namespaces made by one test. */
export class NetLab {
  readonly #prefix: string;
  readonly #made: string[] = [];

  constructor(tag: string) {
    this.#prefix = `p2p${tag}${Deno.pid % 10000}`;
  }

  /** Makes namespace `name` (prefixed) with loopback up; returns its full name. */
  async ns(name: string): Promise<string> {
    const full = `${this.#prefix}${name}`;
    await sh("ip", "netns", "add", full);
    this.#made.push(full);
    await this.exec(full, "ip", "link", "set", "lo", "up");
    return full;
  }

  /** Runs a command inside namespace `ns`. */
  exec(ns: string, ...argv: string[]): Promise<string> {
    return sh("ip", "netns", "exec", ns, ...argv);
  }

  /** A veth pair between two namespaces, addresses given as CIDR (null: none); both ends up. */
  async link(
    a: string,
    aDev: string,
    aAddr: string | null,
    b: string,
    bDev: string,
    bAddr: string,
  ) {
    await sh(
      "ip",
      "link",
      "add",
      aDev,
      "netns",
      a,
      "type",
      "veth",
      "peer",
      "name",
      bDev,
      "netns",
      b,
    );
    if (aAddr) await this.exec(a, "ip", "addr", "add", aAddr, "dev", aDev);
    await this.exec(b, "ip", "addr", "add", bAddr, "dev", bDev);
    await this.exec(a, "ip", "link", "set", aDev, "up");
    await this.exec(b, "ip", "link", "set", bDev, "up");
  }

  /** Loads an nftables ruleset into namespace `ns`. */
  async nft(ns: string, ruleset: string): Promise<void> {
    const child = new Deno.Command("ip", {
      args: ["netns", "exec", ns, "nft", "-f", "-"],
      stdin: "piped",
      stderr: "piped",
    }).spawn();
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode(ruleset));
    await w.close();
    const out = await child.output();
    if (!out.success) throw new Error(`nft: ${new TextDecoder().decode(out.stderr)}`);
  }

  /** `await using lab = new NetLab(…)`: the namespaces go however the test ends. */
  [Symbol.asyncDispose](): Promise<void> {
    return this.destroy();
  }

  /** Deletes every namespace made (their veth ends go with them). */
  async destroy(): Promise<void> {
    for (const ns of this.#made.splice(0).reverse()) {
      await sh("ip", "netns", "delete", ns).catch(() => {});
    }
  }
}
