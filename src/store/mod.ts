/** The store: one database per account, opened once by the daemon and passed to services. */
import { Db } from "./db.ts";
import { ConfigStore } from "./config_store.ts";
import { KeysStore } from "./keys_store.ts";

export { ConfigKey } from "./config_store.ts";
export type { StoredKeyPair } from "./keys_store.ts";
export { Db } from "./db.ts";

/** Table families of one account's database. */
export class Store {
  readonly config: ConfigStore;
  readonly keys: KeysStore;

  constructor(readonly db: Db) {
    this.config = new ConfigStore(db);
    this.keys = new KeysStore(db);
  }

  /** Opens (and migrates) the database at `path`. */
  static open(path: string): Store {
    return new Store(new Db(path));
  }

  /** Number of chat messages stored (get_info `n_msgs_in_db`). */
  countMessages(): number {
    return this.db.get<{ n: number }>("SELECT count(*) AS n FROM msgs")?.n ?? 0;
  }

  close(): void {
    this.db.close();
  }
}
