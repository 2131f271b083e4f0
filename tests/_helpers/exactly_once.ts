/** "Every message arrives exactly once" between chat peers, with every failure reported at once. */
import { AssertionError } from "node:assert";
import type { DeltaChatPeer } from "./deltachat_peer.ts";
import type { GatewayPeer } from "./gateway_peer.ts";
import { poll } from "./poll.ts";

/** One end of a 1:1 chat as the checks see it. */
export interface ChatSide {
  readonly name: string;
  /** Sends `text` into the chat; rejects with what the peer answered. */
  send(text: string): Promise<void>;
  /** Texts of the messages received in the chat (own messages left out). */
  receivedTexts(): Promise<string[]>;
  /** Mails this side could not use so far (receive errors plus quarantined; 0 if it cannot tell). */
  failedReceptions(): Promise<number>;
  /** Where this side's log is now, for {@link diagnostics}. */
  mark(): number;
  /** Warnings and errors since `mark`, to name the symptom in a failure. */
  diagnostics(mark: number): string;
}

/** `get_info`'s counts of mails the gateway could not use: `receive_errors` and `quarantined`. */
export async function gatewayFailedReceptions(gw: GatewayPeer): Promise<number> {
  const info = await gw.call<Record<string, string>>("get_info", 1);
  return Number(info.receive_errors ?? 0) + Number(info.quarantined ?? 0);
}

/** The gateway's WARN and ERROR log lines from output index `from` on, the last `n`. */
export function gatewayWarnings(gw: GatewayPeer, from = 0, n = 12): string {
  return gw.daemon.output().slice(from).split("\n").filter((l) => / (WARN |ERROR) \[/.test(l))
    .slice(-n).join("\n");
}

/** A gateway's end of chat `chatId`. */
export function gatewaySide(gw: GatewayPeer, chatId: number, name = gw.name): ChatSide {
  return {
    name,
    async send(text) {
      await gw.call<number>("send_msg", 1, chatId, { text });
    },
    async receivedTexts() {
      const ids = (await gw.call<number[]>("get_message_ids", 1, chatId, false, false))
        .filter((id) => id > 9);
      if (ids.length === 0) return [];
      const msgs = await gw.call<Record<string, { text: string; fromId: number }>>(
        "get_messages",
        1,
        ids,
      );
      return ids.map((id) => msgs[String(id)]).filter((m) => m.fromId !== 1).map((m) => m.text);
    },
    failedReceptions: () => gatewayFailedReceptions(gw),
    mark: () => gw.daemon.output().length,
    diagnostics: (from) => gatewayWarnings(gw, from),
  };
}

/** A Delta Chat core's end of chat `chatId`. */
export function deltaChatSide(dc: DeltaChatPeer, chatId: number, name = dc.name): ChatSide {
  return {
    name,
    async send(text) {
      await dc.call<number>("send_msg", dc.accountId, chatId, { text });
    },
    async receivedTexts() {
      const ids = await dc.call<number[]>("get_message_ids", dc.accountId, chatId, false, false);
      if (ids.length === 0) return [];
      const msgs = await dc.call<Record<string, { text: string; fromId: number }>>(
        "get_messages",
        dc.accountId,
        ids,
      );
      return ids.map((id) => msgs[String(id)]).filter((m) => m.fromId !== 1).map((m) => m.text);
    },
    failedReceptions: () => Promise.resolve(0),
    mark: () => dc.events.length,
    diagnostics: (from) =>
      dc.events.slice(from).filter((e) => e.event.kind === "Warning" || e.event.kind === "Error")
        .slice(-12).map((e) => `${e.event.kind}: ${e.event.msg}`).join("\n"),
  };
}

interface Expected {
  readonly from: ChatSide;
  readonly to: ChatSide;
  readonly text: string;
}

/**
 * Messages sent between sides, then checked: each arrived exactly once (counted by text in the
 * receiver's chat, again after a settle), and no receiver counted a mail it could not use. Soft:
 * every problem (a refused send, a loss, a duplicate, a counted failure, an extra `check`) is
 * collected and {@link verify} throws them all together, so one run shows every symptom.
 */
export class ExactlyOnce {
  readonly #expected: Expected[] = [];
  readonly #problems: string[] = [];
  readonly #baseline = new Map<ChatSide, number>();
  readonly #marks = new Map<ChatSide, number>();

  private constructor(readonly sides: readonly ChatSide[]) {}

  /** Records each side's count of unusable mails before anything is sent. */
  static async begin(...sides: ChatSide[]): Promise<ExactlyOnce> {
    const x = new ExactlyOnce(sides);
    for (const s of sides) {
      x.#baseline.set(s, await s.failedReceptions());
      x.#marks.set(s, s.mark());
    }
    return x;
  }

  /** `from` sends `text` to `to`; a refused send is a problem (and nothing to wait for). */
  async send(from: ChatSide, to: ChatSide, text: string): Promise<void> {
    try {
      await from.send(text);
      this.#expected.push({ from, to, text });
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      this.#problems.push(
        `${from.name} could not send "${text}": ${(err as Error).message}` +
          (typeof code === "number" ? ` (${code})` : ""),
      );
    }
  }

  /** A further assertion of the scenario, collected instead of thrown. */
  async check(what: string, fn: () => unknown): Promise<void> {
    try {
      await fn();
    } catch (err) {
      this.#problems.push(`${what}: ${(err as Error).message}`);
    }
  }

  /**
   * Waits (up to `timeoutMs`) until every message arrived, or its receiver counted a failed
   * reception (today's loss is final), lets late duplicates come in for `settleMs`, then throws
   * every problem seen.
   */
  async verify(timeoutMs = 45_000, settleMs = 2_000): Promise<void> {
    const receivers = [...new Set(this.#expected.map((e) => e.to))];
    const snapshot = async () => {
      const texts = new Map<ChatSide, string[]>();
      const failed = new Map<ChatSide, number>();
      for (const r of receivers) {
        texts.set(r, await r.receivedTexts());
        failed.set(r, (await r.failedReceptions()) - (this.#baseline.get(r) ?? 0));
      }
      return { texts, failed };
    };
    const count = (s: Awaited<ReturnType<typeof snapshot>>, e: Expected) =>
      s.texts.get(e.to)!.filter((t) => t === e.text).length;
    await poll(
      snapshot,
      (s) => this.#expected.every((e) => count(s, e) >= 1 || s.failed.get(e.to)! > 0),
      timeoutMs,
      250,
    );
    await new Promise((r) => setTimeout(r, settleMs));
    const last = await snapshot();
    for (const e of this.#expected) {
      const n = count(last, e);
      if (n !== 1) {
        this.#problems.push(`"${e.text}" from ${e.from.name} arrived ${n} times on ${e.to.name}`);
      }
    }
    for (const side of this.sides) {
      const now = await side.failedReceptions();
      const grew = now - (this.#baseline.get(side) ?? 0);
      if (grew !== 0) {
        this.#problems.push(
          `${side.name} counted ${grew} mail(s) it could not use (receive_errors + quarantined)`,
        );
      }
    }
    if (this.#problems.length > 0) {
      const logs = this.sides.map((side) =>
        `--- ${side.name}: warnings since the start of the check ---\n` +
        indent(side.diagnostics(this.#marks.get(side) ?? 0) || "(none)")
      );
      throw new AssertionError({ message: [...this.#problems, ...logs].join("\n") });
    }
  }
}

function indent(text: string): string {
  return text.split("\n").map((l) => `    ${l}`).join("\n");
}
