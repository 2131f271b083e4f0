/**
 * Numbered, append-only schema migrations; index i brings the database to version i+1.
 * Never edit a released entry: add a new one.
 */

export const MIGRATIONS: readonly string[] = [
  // 1: account configuration, own keys, and the message table counted by get_info.
  `
  CREATE TABLE config (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
  ) STRICT;

  CREATE TABLE keypairs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    fingerprint TEXT NOT NULL UNIQUE,
    private_key TEXT NOT NULL,
    public_key BLOB NOT NULL,
    created_at INTEGER NOT NULL DEFAULT (unixepoch())
  ) STRICT;

  CREATE TABLE msgs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    rfc724_mid TEXT NOT NULL DEFAULT '',
    chat_id INTEGER NOT NULL DEFAULT 0,
    from_id INTEGER NOT NULL DEFAULT 0,
    text TEXT NOT NULL DEFAULT '',
    timestamp INTEGER NOT NULL DEFAULT 0,
    state INTEGER NOT NULL DEFAULT 0
  ) STRICT;
  -- ids 1..9 are special in Delta Chat (9 = day marker): real messages start at 10.
  INSERT INTO sqlite_sequence (name, seq) VALUES ('msgs', 9);
  `,
];
