/** Runs tests/_helpers/p2p_peer.ts in a network namespace and talks to it in JSON lines. */
import type { P2pEndpointOptions } from "../../src/transport/p2p/mod.ts";

const PEER = new URL("./p2p_peer.ts", import.meta.url).pathname;

// deno-lint-ignore no-explicit-any
type Msg = Record<string, any>;

export class PeerProcess {
  readonly #child: Deno.ChildProcess;
  readonly #writer: WritableStreamDefaultWriter<Uint8Array>;
  readonly #inbox: Msg[] = [];
  #wake: (() => void) | undefined;
  #ended = false;
  readonly #reading: Promise<void>;
  /** The highest progress the peer reported. */
  progress = 0;
  /** Called on each progress line. */
  onProgress: ((bytes: number) => void) | undefined;

  constructor(
    ns: string | null,
    cfg: {
      role: "send" | "receive";
      size: number;
      transferId: string;
      endpoint: P2pEndpointOptions;
      sha256?: string;
    },
  ) {
    const deno = [
      Deno.execPath(),
      "run",
      "-A",
      "--no-prompt",
      "--unstable-net",
      "--v8-flags=--expose-gc", // the daemon's runtime flags (scripts/permissions.sh)
      PEER,
      JSON.stringify(cfg),
    ];
    const argv = ns ? ["ip", "netns", "exec", ns, ...deno] : deno;
    this.#child = new Deno.Command(argv[0]!, {
      args: argv.slice(1),
      stdin: "piped",
      stdout: "piped",
      stderr: "inherit",
      env: { MALLOC_MMAP_THRESHOLD_: "4194304" }, // as scripts/start.sh and the image run it
    }).spawn();
    this.#writer = this.#child.stdin.getWriter();
    this.#reading = this.#read();
  }

  async #read(): Promise<void> {
    let buf = "";
    for await (const text of this.#child.stdout.pipeThrough(new TextDecoderStream())) {
      buf += text;
      let nl: number;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        let msg: Msg;
        try {
          msg = JSON.parse(line);
        } catch {
          continue; // a stray line (a warning) is not ours
        }
        if (typeof msg.progress === "number") {
          this.progress = msg.progress;
          this.onProgress?.(msg.progress);
          continue;
        }
        this.#inbox.push(msg);
        this.#wake?.();
      }
    }
    this.#ended = true;
    this.#wake?.();
  }

  send(msg: Msg): Promise<void> {
    return this.#writer.write(new TextEncoder().encode(JSON.stringify(msg) + "\n"));
  }

  /** The next message that has one of `keys`. */
  async next(...keys: string[]): Promise<Msg> {
    for (;;) {
      const i = this.#inbox.findIndex((m) => keys.some((k) => k in m));
      if (i >= 0) return this.#inbox.splice(i, 1)[0]!;
      if (this.#ended) throw new Error(`the peer ended before sending ${keys.join(" or ")}`);
      await new Promise<void>((r) => this.#wake = r);
    }
  }

  /** Waits for the process to exit (killing it after a bound) and releases its pipes. */
  async stop(): Promise<void> {
    await this.#writer.close().catch(() => {});
    const exited = await Promise.race([
      this.#child.status.then(() => true),
      new Promise<false>((r) => {
        const t = setTimeout(() => r(false), 5_000);
        this.#child.status.finally(() => clearTimeout(t));
      }),
    ]);
    if (!exited) {
      try {
        this.#child.kill("SIGKILL");
      } catch {
        // gone meanwhile
      }
      await this.#child.status;
    }
    await this.#reading;
  }
}

/** Offer, answer, run: returns both sides' closing messages. */
export async function runPair(sender: PeerProcess, receiver: PeerProcess, withAnswer = true) {
  const { offer } = await sender.next("offer");
  await receiver.send({ offer });
  const first = await receiver.next("answer", "refused");
  if ("refused" in first) {
    await sender.send({ answer: null });
    return {
      refused: first.refused as string,
      sender: await sender.next("outcome"),
      receiver: null,
    };
  }
  await sender.send({ answer: withAnswer ? first.answer : null });
  const [s, r] = await Promise.all([sender.next("outcome"), receiver.next("outcome")]);
  return { refused: null, sender: s, receiver: r };
}
