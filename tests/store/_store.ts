/** Runs a store test against a fresh in-memory database, closed afterwards. */
import { Store } from "../../src/store/mod.ts";

/** Calls `fn` with a new `:memory:` store and closes it, whatever `fn` does. */
export function withStore(fn: (s: Store) => void): void {
  const store = Store.open(":memory:");
  try {
    fn(store);
  } finally {
    store.close();
  }
}
