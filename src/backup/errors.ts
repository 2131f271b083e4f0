/** Why a backup cannot be read or written; each reason has its own message (JSON-RPC -1). */
import { GatewayError } from "../errors.ts";

/** The reasons a backup is refused. */
export const BackupFault = {
  /** Not a backup file of this gateway (unknown magic or version). */
  NOT_A_BACKUP: "not-a-backup",
  /** The passphrase does not open it (or the header's salt or cost was changed). */
  WRONG_PASSPHRASE: "wrong-passphrase",
  /** It ends early: at a chunk boundary before the last chunk, or inside the header. */
  TRUNCATED: "truncated",
  /** A chunk does not authenticate: changed, reordered, cut inside, or data appended. */
  DAMAGED: "damaged",
  /** The data directory to restore into already holds a gateway's state. */
  TARGET_NOT_EMPTY: "target-not-empty",
  /** Another export of this account is still running. */
  BUSY: "busy",
} as const;
export type BackupFault = typeof BackupFault[keyof typeof BackupFault];

/** A refused backup operation; `fault` says which rule. */
export class BackupError extends GatewayError {
  constructor(readonly fault: BackupFault, message: string, options?: ErrorOptions) {
    super(message, undefined, options);
  }
}
