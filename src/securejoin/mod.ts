/**
 * SecureJoin for one account: the inviter and joiner roles behind one receiver the reception
 * pipeline hands SecureJoin mail to, and the two operations the RPC methods call.
 */
import type { ReadMail } from "../core/receive/mod.ts";
import type { SecureJoinReceiver } from "../core/receive/mod.ts";
import { logger } from "../log.ts";
import { Inviter, type InviterDeps } from "./inviter.ts";
import { Joiner, type JoinerDeps } from "./joiner.ts";
import { SecureJoinStep } from "../protocol.ts";

const log = logger("securejoin");

/** What RPC methods use (`get_chat_securejoin_qr_code`, `secure_join`). */
export interface SecureJoinService {
  /** A new invite link: 1:1 (`chatId` 0 or absent) or to a group we are a member of. */
  createInvite(chatId?: number): string;
  /** Starts joining; resolves with the 1:1 or group chat id at once. */
  join(link: string): Promise<number>;
}

/** Both roles; the reception pipeline's `SecureJoinReceiver`. */
export class SecureJoin implements SecureJoinService, SecureJoinReceiver {
  readonly inviter: Inviter;
  readonly joiner: Joiner;

  constructor(deps: InviterDeps & Pick<JoinerDeps, "onJoined">) {
    this.inviter = new Inviter(deps);
    this.joiner = new Joiner(deps);
  }

  createInvite(chatId = 0): string {
    return this.inviter.createInvite(chatId);
  }

  join(link: string): Promise<number> {
    return this.joiner.join(link);
  }

  async onRequest(mail: ReadMail, step: "vc-request" | "vg-request"): Promise<void> {
    await this.inviter.onRequest(mail, step);
  }

  async onStep(mail: ReadMail, step: SecureJoinStep): Promise<void> {
    switch (step) {
      case SecureJoinStep.VC_AUTH_REQUIRED:
      case SecureJoinStep.VG_AUTH_REQUIRED:
        await this.joiner.onAuthRequired(mail);
        return;
      case SecureJoinStep.VC_REQUEST_WITH_AUTH:
      case SecureJoinStep.VG_REQUEST_WITH_AUTH:
        await this.inviter.onRequestWithAuth(mail, step);
        return;
      case SecureJoinStep.VC_CONTACT_CONFIRM:
        await this.joiner.onContactConfirm(mail);
        return;
      case SecureJoinStep.VG_MEMBER_ADDED:
        // The reception pipeline applies it as the group's message afterwards.
        this.joiner.onMemberAdded(mail);
        return;
      default:
        log.info("SecureJoin step not handled; ignored", { step, from: mail.from.addr });
    }
  }
}
