/**
 * SecureJoin state: the inviter's tokens (`securejoin_tokens`: invite numbers and auth secrets
 * handed out in invite links) and the joiner's handshakes in progress (`securejoin_joiner`).
 */
import type { Db } from "./db.ts";

/** Kinds of inviter token: the `i=` invite number and the `s=` auth secret of a link. */
export type TokenKind = "invite" | "auth";

/** One inviter token. */
export interface TokenRecord {
  readonly id: number;
  readonly kind: TokenKind;
  readonly token: string;
  /** The group the link invites to; 0 for a 1:1 (setup-contact) invite. */
  readonly chatId: number;
  /** Unix seconds. */
  readonly createdAt: number;
}

/** One joiner handshake. `invite` is the parsed link as the SecureJoin code stored it. */
export interface JoinerRecord {
  readonly id: number;
  readonly invite: unknown;
  readonly contactId: number;
  readonly chatId: number;
  /** The last step taken, e.g. `vc-request` sent; free text owned by the SecureJoin code. */
  readonly step: string;
  /** Unix seconds. */
  readonly createdAt: number;
}

/** Fields of a new joiner handshake. */
export interface NewJoiner {
  readonly invite: unknown;
  readonly contactId: number;
  readonly chatId: number;
  readonly step: string;
  /** Unix seconds when the join started (default: the database's clock). */
  readonly createdAt?: number;
}

interface TokenRow {
  id: number;
  kind: TokenKind;
  token: string;
  chat_id: number;
  created_at: number;
}

interface JoinerRow {
  id: number;
  invite: string;
  contact_id: number;
  chat_id: number;
  step: string;
  created_at: number;
}

const TOKENS = "SELECT id, kind, token, chat_id, created_at FROM securejoin_tokens";
const JOINERS = "SELECT id, invite, contact_id, chat_id, step, created_at FROM securejoin_joiner";

function token(row: TokenRow): TokenRecord {
  return {
    id: row.id,
    kind: row.kind,
    token: row.token,
    chatId: row.chat_id,
    createdAt: row.created_at,
  };
}

function joiner(row: JoinerRow): JoinerRecord {
  return {
    id: row.id,
    invite: JSON.parse(row.invite),
    contactId: row.contact_id,
    chatId: row.chat_id,
    step: row.step,
    createdAt: row.created_at,
  };
}

/** Reads and writes SecureJoin tokens and joiner state. */
export class SecureJoinStore {
  constructor(private readonly db: Db) {}

  /** Stores a token (0 = a 1:1 invite); returns its row id. Throws on a duplicate token. */
  addToken(kind: TokenKind, value: string, chatId = 0): number {
    return this.db.run(
      "INSERT INTO securejoin_tokens (kind, token, chat_id) VALUES (?, ?, ?)",
      kind,
      value,
      chatId,
    ).lastId;
  }

  /** The token of this kind and value, or undefined (unknown, or of the other kind). */
  findToken(kind: TokenKind, value: string): TokenRecord | undefined {
    const row = this.db.get<TokenRow>(`${TOKENS} WHERE kind = ? AND token = ?`, kind, value);
    return row && token(row);
  }

  /** Tokens of one kind for a chat (0 = 1:1 invites), newest first. */
  tokens(kind: TokenKind, chatId = 0): TokenRecord[] {
    return this.db.all<TokenRow>(
      `${TOKENS} WHERE kind = ? AND chat_id = ? ORDER BY id DESC`,
      kind,
      chatId,
    ).map(token);
  }

  /** Removes a token (e.g. a used auth secret); returns true when it existed. */
  removeToken(value: string): boolean {
    return this.db.run("DELETE FROM securejoin_tokens WHERE token = ?", value).changes > 0;
  }

  /** Stores a joiner handshake; returns its id. */
  addJoiner(j: NewJoiner): number {
    return this.db.run(
      "INSERT INTO securejoin_joiner (invite, contact_id, chat_id, step, created_at) " +
        "VALUES (?, ?, ?, ?, coalesce(?, unixepoch()))",
      JSON.stringify(j.invite),
      j.contactId,
      j.chatId,
      j.step,
      j.createdAt ?? null,
    ).lastId;
  }

  /** The handshake with this id, or undefined. */
  joiner(id: number): JoinerRecord | undefined {
    const row = this.db.get<JoinerRow>(`${JOINERS} WHERE id = ?`, id);
    return row && joiner(row);
  }

  /** Handshakes with this inviter contact, newest first. */
  joinersForContact(contactId: number): JoinerRecord[] {
    return this.db.all<JoinerRow>(`${JOINERS} WHERE contact_id = ? ORDER BY id DESC`, contactId)
      .map(joiner);
  }

  /** Every handshake in progress, oldest first (resumed after a restart). */
  joiners(): JoinerRecord[] {
    return this.db.all<JoinerRow>(`${JOINERS} ORDER BY id`).map(joiner);
  }

  /** Records the step a handshake reached. */
  setJoinerStep(id: number, step: string): void {
    this.db.run("UPDATE securejoin_joiner SET step = ? WHERE id = ?", step, id);
  }

  /** Removes a finished or abandoned handshake; returns true when it existed. */
  removeJoiner(id: number): boolean {
    return this.db.run("DELETE FROM securejoin_joiner WHERE id = ?", id).changes > 0;
  }
}
