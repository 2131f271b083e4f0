/**
 * A veth pair in the test's network namespace (this kernel has no dummy driver), whose first end
 * carries an IPv4 address, so it is the first interface with a MAC that daemons see; the test
 * changes its MAC and address between restarts, as a re-created container gets new ones.
 */

async function ip(...args: string[]): Promise<void> {
  const out = await new Deno.Command("ip", { args, stdout: "piped", stderr: "piped" }).output();
  if (out.code !== 0) {
    throw new Error(`ip ${args.join(" ")}: ${new TextDecoder().decode(out.stderr).trim()}`);
  }
}

/** The veth pair; disposing deletes it. */
export interface Veth extends AsyncDisposable {
  readonly name: string;
  /** Gives the first end another MAC and IPv4 address (`cidr`, e.g. `10.77.0.2/24`). */
  renew(mac: string, cidr: string): Promise<void>;
}

/** Creates `name` (peer `<name>p`) with `mac` and `cidr`, both ends up. */
export async function createVeth(name: string, mac: string, cidr: string): Promise<Veth> {
  await ip("link", "add", name, "type", "veth", "peer", "name", `${name}p`);
  const renew = async (m: string, c: string) => {
    await ip("link", "set", "dev", name, "down");
    await ip("link", "set", "dev", name, "address", m);
    await ip("addr", "flush", "dev", name);
    await ip("addr", "add", c, "dev", name);
    await ip("link", "set", "dev", name, "up");
  };
  try {
    await ip("link", "set", "dev", `${name}p`, "up");
    await renew(mac, cidr);
  } catch (err) {
    await ip("link", "del", name).catch(() => {});
    throw err;
  }
  return {
    name,
    renew,
    [Symbol.asyncDispose]: () => ip("link", "del", name).catch(() => {}),
  };
}
