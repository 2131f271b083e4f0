/**
 * Rows of the `chats` and `chat_contacts` tables. A 1:1 chat (type 100) names its peer in
 * `contact_id` and lists only the peer as member, as Delta Chat stores it; groups list self (1)
 * too. A row is a current member while `add_timestamp >= remove_timestamp`, else a past member.
 */
import type { Db } from "./db.ts";

/** One chat as stored. */
export interface ChatRecord {
  readonly id: number;
  /** 100 single, 120 group, 130 broadcast (docs/contract.md §2 numbering, `ChatType`). */
  readonly type: number;
  /** Stored name; '' for 1:1 chats, whose name is the peer's display name. */
  readonly name: string;
  /** The peer of a 1:1 chat; 0 otherwise. */
  readonly contactId: number;
  /** Group id (`Chat-Group-ID`); '' for 1:1 chats. */
  readonly grpid: string;
  /** Unix seconds. */
  readonly createdAt: number;
  readonly archived: boolean;
  readonly muted: boolean;
  /** Disappearing-messages timer in seconds as the peer set it (`Ephemeral-Timer`); 0 off. */
  readonly ephemeralTimer: number;
  /** Unix seconds the group name was set (`Chat-Group-Name-Timestamp`); 0 unknown. */
  readonly nameTimestamp: number;
  /** Blob name of the group avatar; '' none. */
  readonly avatar: string;
  /** Unix seconds of the avatar's last change; 0 never. */
  readonly avatarTimestamp: number;
  /** A group we created and have not announced by mail yet. */
  readonly unpromoted: boolean;
  /** Unix seconds we last sent every member's key (`Autocrypt-Gossip`); 0 never. */
  readonly gossipedAt: number;
  /** A channel's secret (posts are encrypted with it); '' for other chats or after leaving. */
  readonly broadcastSecret: string;
  /** A channel's owner: 1 when we own it, else the contact we subscribed to; 0 other chats. */
  readonly ownerId: number;
}

/** One member row of a chat: a current member while `addTimestamp >= removeTimestamp`. */
export interface MembershipRecord {
  readonly contactId: number;
  /** Unix seconds. */
  readonly addTimestamp: number;
  /** Unix seconds; 0 when never removed. */
  readonly removeTimestamp: number;
}

/** Fields of a new chat. */
export interface NewChat {
  readonly type: number;
  readonly name?: string;
  readonly contactId?: number;
  readonly grpid?: string;
  /** Unix seconds; default now (SQLite's clock). */
  readonly createdAt?: number;
  readonly nameTimestamp?: number;
  readonly unpromoted?: boolean;
  readonly broadcastSecret?: string;
  readonly ownerId?: number;
}

/** Filters of `listByActivity`. */
export interface ChatListFilter {
  /** true: archived chats only; false: unarchived chats only. */
  readonly archived: boolean;
  /** Only chats that have this contact as a member; undefined: any chat. */
  readonly contactId?: number | undefined;
}

interface ChatRow {
  id: number;
  type: number;
  name: string;
  contact_id: number;
  grpid: string;
  created_at: number;
  archived: number;
  muted: number;
  ephemeral_timer: number;
  name_timestamp: number;
  avatar: string;
  avatar_timestamp: number;
  unpromoted: number;
  gossiped_at: number;
  broadcast_secret: string;
  owner_id: number;
}

const COLUMNS =
  "id, type, name, contact_id, grpid, created_at, archived, muted, ephemeral_timer, " +
  "name_timestamp, avatar, avatar_timestamp, unpromoted, gossiped_at, broadcast_secret, owner_id";
const SELECT = `SELECT ${COLUMNS} FROM chats`;

function toRecord(row: ChatRow | undefined): ChatRecord | undefined {
  return row && {
    id: row.id,
    type: row.type,
    name: row.name,
    contactId: row.contact_id,
    grpid: row.grpid,
    createdAt: row.created_at,
    archived: row.archived !== 0,
    muted: row.muted !== 0,
    ephemeralTimer: row.ephemeral_timer,
    nameTimestamp: row.name_timestamp,
    avatar: row.avatar,
    avatarTimestamp: row.avatar_timestamp,
    unpromoted: row.unpromoted !== 0,
    gossipedAt: row.gossiped_at,
    broadcastSecret: row.broadcast_secret,
    ownerId: row.owner_id,
  };
}

/** Reads and writes rows of `chats` and `chat_contacts`. */
export class ChatsStore {
  constructor(private readonly db: Db) {}

  /** The chat with this id, or undefined. */
  get(id: number): ChatRecord | undefined {
    return toRecord(this.db.get<ChatRow>(`${SELECT} WHERE id = ?`, id));
  }

  /** The 1:1 chat with this peer, or undefined. */
  singleByContact(contactId: number): ChatRecord | undefined {
    return toRecord(
      this.db.get<ChatRow>(`${SELECT} WHERE type = 100 AND contact_id = ?`, contactId),
    );
  }

  /** The chat with this group id, or undefined. */
  byGrpid(grpid: string): ChatRecord | undefined {
    if (grpid === "") return undefined;
    return toRecord(this.db.get<ChatRow>(`${SELECT} WHERE grpid = ?`, grpid));
  }

  /** Inserts a chat and returns its id (≥ 10). Members are added with `addMember`. */
  insert(c: NewChat): number {
    return this.db.run(
      "INSERT INTO chats (type, name, contact_id, grpid, created_at, name_timestamp, unpromoted, " +
        "broadcast_secret, owner_id) VALUES (?, ?, ?, ?, coalesce(?, unixepoch()), ?, ?, ?, ?)",
      c.type,
      c.name ?? "",
      c.contactId ?? 0,
      c.grpid ?? "",
      c.createdAt ?? null,
      c.nameTimestamp ?? 0,
      c.unpromoted ? 1 : 0,
      c.broadcastSecret ?? "",
      c.ownerId ?? 0,
    ).lastId;
  }

  /** Adds a member (no-op when present). */
  addMember(chatId: number, contactId: number): void {
    this.db.run(
      "INSERT INTO chat_contacts (chat_id, contact_id) VALUES (?, ?) ON CONFLICT DO NOTHING",
      chatId,
      contactId,
    );
  }

  /** Deletes a member row (a channel subscriber who left: no past-member entry). */
  deleteMember(chatId: number, contactId: number): void {
    this.db.run(
      "DELETE FROM chat_contacts WHERE chat_id = ? AND contact_id = ?",
      chatId,
      contactId,
    );
  }

  /** Writes a member row's timestamps (creating the row when missing). */
  setMembership(chatId: number, m: MembershipRecord): void {
    this.db.run(
      "INSERT INTO chat_contacts (chat_id, contact_id, add_timestamp, remove_timestamp) " +
        "VALUES (?, ?, ?, ?) ON CONFLICT DO UPDATE SET " +
        "add_timestamp = excluded.add_timestamp, remove_timestamp = excluded.remove_timestamp",
      chatId,
      m.contactId,
      m.addTimestamp,
      m.removeTimestamp,
    );
  }

  /** A contact's row in a chat (current or past member), or undefined. */
  membership(chatId: number, contactId: number): MembershipRecord | undefined {
    const r = this.db.get<{ contact_id: number; add_timestamp: number; remove_timestamp: number }>(
      "SELECT contact_id, add_timestamp, remove_timestamp FROM chat_contacts " +
        "WHERE chat_id = ? AND contact_id = ?",
      chatId,
      contactId,
    );
    return r && {
      contactId: r.contact_id,
      addTimestamp: r.add_timestamp,
      removeTimestamp: r.remove_timestamp,
    };
  }

  /** Every member row of a chat, current and past, newest addition first (Delta Chat's order). */
  memberships(chatId: number): MembershipRecord[] {
    return this.db.all<{ contact_id: number; add_timestamp: number; remove_timestamp: number }>(
      "SELECT contact_id, add_timestamp, remove_timestamp FROM chat_contacts WHERE chat_id = ? " +
        "ORDER BY add_timestamp DESC, rowid DESC",
      chatId,
    ).map((r) => ({
      contactId: r.contact_id,
      addTimestamp: r.add_timestamp,
      removeTimestamp: r.remove_timestamp,
    }));
  }

  /** Current member contact ids, in the order they were added. */
  memberIds(chatId: number): number[] {
    return this.db.all<{ contact_id: number }>(
      "SELECT contact_id FROM chat_contacts WHERE chat_id = ? " +
        "AND add_timestamp >= remove_timestamp ORDER BY added_at, rowid",
      chatId,
    ).map((r) => r.contact_id);
  }

  /** Past members removed at or after `since` (Unix seconds), most recently removed first. */
  pastMemberIds(chatId: number, since: number): number[] {
    return this.db.all<{ contact_id: number }>(
      "SELECT contact_id FROM chat_contacts WHERE chat_id = ? AND remove_timestamp > " +
        "add_timestamp AND remove_timestamp >= ? ORDER BY remove_timestamp DESC, rowid",
      chatId,
      since,
    ).map((r) => r.contact_id);
  }

  /** Sets the group name and the time it was set. */
  setGroupName(id: number, name: string, timestamp: number): void {
    this.db.run(
      "UPDATE chats SET name = ?, name_timestamp = ? WHERE id = ?",
      name,
      timestamp,
      id,
    );
  }

  /** Sets the group avatar (blob name, '' none) and the time of the change. */
  setAvatar(id: number, avatar: string, timestamp: number): void {
    this.db.run(
      "UPDATE chats SET avatar = ?, avatar_timestamp = ? WHERE id = ?",
      avatar,
      timestamp,
      id,
    );
  }

  /** Marks a group announced (its first mail is queued). */
  setPromoted(id: number): void {
    this.db.run("UPDATE chats SET unpromoted = 0 WHERE id = ?", id);
  }

  /** Sets a channel's secret ('' after leaving it). */
  setBroadcastSecret(id: number, secret: string): void {
    this.db.run("UPDATE chats SET broadcast_secret = ? WHERE id = ?", secret, id);
  }

  /** Secrets of the channels we subscribe to (for decrypting their posts). */
  subscribedSecrets(): string[] {
    return this.db.all<{ broadcast_secret: string }>(
      "SELECT broadcast_secret FROM chats WHERE type = 130 AND owner_id <> 1 " +
        "AND broadcast_secret <> ''",
    ).map((r) => r.broadcast_secret);
  }

  /** Records when every member's key was last gossiped. */
  setGossipedAt(id: number, timestamp: number): void {
    this.db.run("UPDATE chats SET gossiped_at = ? WHERE id = ?", timestamp, id);
  }

  /** Sets the stored name. */
  setName(id: number, name: string): void {
    this.db.run("UPDATE chats SET name = ? WHERE id = ?", name, id);
  }

  /** Sets the archived flag. */
  setArchived(id: number, archived: boolean): void {
    this.db.run("UPDATE chats SET archived = ? WHERE id = ?", archived ? 1 : 0, id);
  }

  /** Sets the muted flag. */
  setMuted(id: number, muted: boolean): void {
    this.db.run("UPDATE chats SET muted = ? WHERE id = ?", muted ? 1 : 0, id);
  }

  /** Sets the disappearing-messages timer (seconds, 0 off). */
  setEphemeralTimer(id: number, seconds: number): void {
    this.db.run("UPDATE chats SET ephemeral_timer = ? WHERE id = ?", seconds, id);
  }

  /**
   * Chats ordered by newest activity first: the sort timestamp of the newest visible message,
   * or the creation time of a chat without one; ties by newest message, then newest chat.
   */
  listByActivity(filter: ChatListFilter): ChatRecord[] {
    const member = filter.contactId === undefined
      ? ""
      : "AND c.id IN (SELECT chat_id FROM chat_contacts WHERE contact_id = ? " +
        "AND add_timestamp >= remove_timestamp)";
    const params = filter.contactId === undefined ? [] : [filter.contactId];
    return this.db.all<ChatRow>(
      `SELECT ${COLUMNS.split(", ").map((c) => `c.${c}`).join(", ")}
       FROM chats c
       LEFT JOIN (SELECT chat_id, max(timestamp) AS ts, max(id) AS last_id FROM msgs
                  WHERE hidden = 0 GROUP BY chat_id) m ON m.chat_id = c.id
       WHERE c.archived = ? ${member}
       ORDER BY coalesce(m.ts, c.created_at) DESC, coalesce(m.last_id, 0) DESC, c.id DESC`,
      filter.archived ? 1 : 0,
      ...params,
    ).map((r) => toRecord(r)!);
  }

  /** Number of fresh (state 1, visible) messages in a chat. */
  freshCount(chatId: number): number {
    return this.db.get<{ n: number }>(
      "SELECT count(*) AS n FROM msgs WHERE chat_id = ? AND state = 1 AND hidden = 0",
      chatId,
    )?.n ?? 0;
  }

  /** Number of fresh messages over all archived chats (the archive link's counter). */
  archivedFreshCount(): number {
    return this.db.get<{ n: number }>(
      "SELECT count(*) AS n FROM msgs WHERE state = 1 AND hidden = 0 AND chat_id IN " +
        "(SELECT id FROM chats WHERE archived = 1)",
    )?.n ?? 0;
  }

  /** Number of archived chats. */
  countArchived(): number {
    return this.db.get<{ n: number }>("SELECT count(*) AS n FROM chats WHERE archived = 1")?.n ??
      0;
  }
}
