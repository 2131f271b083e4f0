/** The store: one database per account, opened once by the daemon and passed to services. */
import { DiskState } from "./disk_state.ts";
import { Db } from "./db.ts";
import { ConfigStore } from "./config_store.ts";
import { KeysStore } from "./keys_store.ts";
import { ContactsStore } from "./contacts_store.ts";
import { ChatsStore } from "./chats_store.ts";
import { MsgsStore } from "./msgs_store.ts";
import { OutboxStore } from "./outbox_store.ts";
import { ReceiptsStore } from "./receipts_store.ts";
import { ReactionsStore } from "./reactions_store.ts";
import { OwedReceiptsStore } from "./owed_receipts_store.ts";
import { ReceiveAttemptsStore } from "./receive_attempts_store.ts";
import { ReceiveErrorsStore } from "./receive_errors_store.ts";
import { SecureJoinStore } from "./securejoin_store.ts";
import { EventsStore } from "./events_store.ts";
import { ProtectedFilesStore } from "./protected_files_store.ts";
import { QuarantineStore } from "./quarantine_store.ts";
import { TransfersStore } from "./transfers_store.ts";

export { ConfigKey } from "./config_store.ts";
export { relayMessageLimit, setRelayMessageLimit } from "./relay_limit.ts";
export { MailSpool, type SpooledMail } from "./mail_spool.ts";
export type { StoredKeyPair } from "./keys_store.ts";
export { Db } from "./db.ts";
export { DiskState, type DiskWord } from "./disk_state.ts";
export { DISK_SPACE_PROBE_MS, watchDiskSpace } from "./disk_space_watch.ts";
export type { ContactPatch, ContactRecord, NewContact } from "./contacts_store.ts";
export type { ChatListFilter, ChatRecord, MembershipRecord, NewChat } from "./chats_store.ts";
export type { MessageFile, MessageRecord, MessageStamp, NewMessage } from "./msgs_store.ts";
export type { NewOutboxMail, OutboxRecord } from "./outbox_store.ts";
export type { OwedReceipt, ReceiptKind } from "./owed_receipts_store.ts";
export type { ReceiptRecord } from "./receipts_store.ts";
export type { ReactionRecord } from "./reactions_store.ts";
export type { NewReceiveError, ReceiveErrorRecord } from "./receive_errors_store.ts";
export type { NewQuarantinedMail, QuarantinedMail } from "./quarantine_store.ts";
export type { JoinerRecord, NewJoiner, TokenKind, TokenRecord } from "./securejoin_store.ts";
export type { StoredEventRow } from "./events_store.ts";
export { snapshotDatabase, type SnapshotFacts } from "./snapshot.ts";
export type {
  NewTransfer,
  ResendRequest,
  TransferDirection,
  TransferPath,
  TransferRecord,
  TransferState,
} from "./transfers_store.ts";
export type {
  AccessRecord,
  AccessRowState,
  ReceivedFileRecord,
  ReceivedRowState,
  SentFileRecord,
} from "./protected_files_store.ts";

/** Table families of one account's database. */
export class Store {
  readonly config: ConfigStore;
  readonly keys: KeysStore;
  readonly contacts: ContactsStore;
  readonly chats: ChatsStore;
  readonly msgs: MsgsStore;
  readonly outbox: OutboxStore;
  readonly receipts: ReceiptsStore;
  readonly owedReceipts: OwedReceiptsStore;
  readonly reactions: ReactionsStore;
  readonly receiveErrors: ReceiveErrorsStore;
  readonly receiveAttempts: ReceiveAttemptsStore;
  readonly quarantine: QuarantineStore;
  readonly securejoin: SecureJoinStore;
  readonly events: EventsStore;
  readonly protectedFiles: ProtectedFilesStore;
  readonly transfers: TransfersStore;
  /** Whether the disk was last seen full (memory only; `/health`). */
  readonly disk: DiskState;

  constructor(readonly db: Db) {
    this.disk = db.disk;
    this.config = new ConfigStore(db);
    this.keys = new KeysStore(db);
    this.contacts = new ContactsStore(db);
    this.chats = new ChatsStore(db);
    this.msgs = new MsgsStore(db);
    this.outbox = new OutboxStore(db);
    this.receipts = new ReceiptsStore(db);
    this.owedReceipts = new OwedReceiptsStore(db);
    this.reactions = new ReactionsStore(db);
    this.receiveErrors = new ReceiveErrorsStore(db);
    this.receiveAttempts = new ReceiveAttemptsStore(db);
    this.quarantine = new QuarantineStore(db);
    this.securejoin = new SecureJoinStore(db);
    this.events = new EventsStore(db);
    this.protectedFiles = new ProtectedFilesStore(db);
    this.transfers = new TransfersStore(db);
  }

  /** Opens (and migrates) the database at `path`. */
  static open(path: string): Store {
    return new Store(new Db(path));
  }

  /** Opens an existing database for reading only (no migration; writes fail). */
  static openReadOnly(path: string): Store {
    return new Store(new Db(path, { readOnly: true }));
  }

  /** Number of chat messages stored (get_info `n_msgs_in_db`). */
  countMessages(): number {
    return this.db.get<{ n: number }>("SELECT count(*) AS n FROM msgs")?.n ?? 0;
  }

  close(): void {
    this.db.close();
  }
}
