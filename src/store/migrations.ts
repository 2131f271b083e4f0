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

  // 2: messaging: contacts (peers by key fingerprint), chats and members, message details
  // (files, pre/post-message merge, receipts), the SMTP outbox, receive errors, SecureJoin state.
  `
  CREATE TABLE contacts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    addr TEXT NOT NULL DEFAULT '',
    auth_name TEXT NOT NULL DEFAULT '',
    name TEXT NOT NULL DEFAULT '',
    fingerprint TEXT NOT NULL DEFAULT '',
    public_key BLOB NOT NULL DEFAULT x'',
    verified INTEGER NOT NULL DEFAULT 0,
    verifier_id INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL DEFAULT (unixepoch()),
    last_seen INTEGER NOT NULL DEFAULT 0
  ) STRICT;
  CREATE UNIQUE INDEX contacts_fingerprint ON contacts (fingerprint) WHERE fingerprint <> '';
  CREATE UNIQUE INDEX contacts_address_only ON contacts (addr) WHERE fingerprint = '';
  CREATE INDEX contacts_addr ON contacts (addr);
  -- ids 1..9 are special contacts (1 = self): real contacts start at 10.
  INSERT INTO sqlite_sequence (name, seq) VALUES ('contacts', 9);

  CREATE TABLE chats (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    type INTEGER NOT NULL DEFAULT 100,
    name TEXT NOT NULL DEFAULT '',
    contact_id INTEGER NOT NULL DEFAULT 0,
    grpid TEXT NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL DEFAULT (unixepoch()),
    archived INTEGER NOT NULL DEFAULT 0,
    muted INTEGER NOT NULL DEFAULT 0
  ) STRICT;
  CREATE UNIQUE INDEX chats_single_contact ON chats (contact_id) WHERE type = 100;
  CREATE UNIQUE INDEX chats_grpid ON chats (grpid) WHERE grpid <> '';
  -- ids 1..9 are special chats (6 = archive link): real chats start at 10.
  INSERT INTO sqlite_sequence (name, seq) VALUES ('chats', 9);

  CREATE TABLE chat_contacts (
    chat_id INTEGER NOT NULL REFERENCES chats (id) ON DELETE CASCADE,
    contact_id INTEGER NOT NULL,
    added_at INTEGER NOT NULL DEFAULT (unixepoch()),
    PRIMARY KEY (chat_id, contact_id)
  ) STRICT;
  CREATE INDEX chat_contacts_contact ON chat_contacts (contact_id);

  ALTER TABLE msgs ADD COLUMN subject TEXT NOT NULL DEFAULT '';
  ALTER TABLE msgs ADD COLUMN timestamp_sent INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE msgs ADD COLUMN timestamp_rcvd INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE msgs ADD COLUMN viewtype TEXT NOT NULL DEFAULT 'Text';
  ALTER TABLE msgs ADD COLUMN file TEXT NOT NULL DEFAULT '';
  ALTER TABLE msgs ADD COLUMN file_name TEXT NOT NULL DEFAULT '';
  ALTER TABLE msgs ADD COLUMN file_mime TEXT NOT NULL DEFAULT '';
  ALTER TABLE msgs ADD COLUMN file_bytes INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE msgs ADD COLUMN hidden INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE msgs ADD COLUMN is_info INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE msgs ADD COLUMN mdn_requested INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE msgs ADD COLUMN error TEXT NOT NULL DEFAULT '';
  ALTER TABLE msgs ADD COLUMN in_reply_to TEXT NOT NULL DEFAULT '';
  ALTER TABLE msgs ADD COLUMN post_message_id TEXT NOT NULL DEFAULT '';
  ALTER TABLE msgs ADD COLUMN download_state TEXT NOT NULL DEFAULT 'Done';
  ALTER TABLE msgs ADD COLUMN from_fingerprint TEXT NOT NULL DEFAULT '';
  -- Rows written before Message-ID dedup existed: keep the first copy of each Message-ID.
  DELETE FROM msgs WHERE rfc724_mid <> '' AND id NOT IN
    (SELECT min(id) FROM msgs WHERE rfc724_mid <> '' GROUP BY rfc724_mid);
  CREATE UNIQUE INDEX msgs_rfc724_mid ON msgs (rfc724_mid) WHERE rfc724_mid <> '';
  CREATE INDEX msgs_chat_timestamp ON msgs (chat_id, timestamp);
  CREATE INDEX msgs_post_message_id ON msgs (post_message_id) WHERE post_message_id <> '';
  CREATE INDEX msgs_fresh ON msgs (chat_id) WHERE state = 1;
  CREATE INDEX msgs_file ON msgs (file) WHERE file <> '';

  CREATE TABLE outbox (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    msg_id INTEGER NOT NULL DEFAULT 0,
    rfc724_mid TEXT NOT NULL DEFAULT '',
    envelope_from TEXT NOT NULL DEFAULT '',
    recipients TEXT NOT NULL DEFAULT '[]',
    raw BLOB NOT NULL DEFAULT x'',
    attempts INTEGER NOT NULL DEFAULT 0,
    next_try_at INTEGER NOT NULL DEFAULT 0,
    last_error TEXT NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL DEFAULT (unixepoch())
  ) STRICT;
  CREATE INDEX outbox_next_try ON outbox (next_try_at, id);
  CREATE INDEX outbox_msg ON outbox (msg_id) WHERE msg_id <> 0;

  CREATE TABLE receipts (
    msg_id INTEGER NOT NULL REFERENCES msgs (id) ON DELETE CASCADE,
    contact_id INTEGER NOT NULL,
    timestamp INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (msg_id, contact_id)
  ) STRICT;

  CREATE TABLE receive_errors (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    message_id TEXT NOT NULL DEFAULT '',
    reason TEXT NOT NULL DEFAULT '',
    size INTEGER NOT NULL DEFAULT 0,
    received_at INTEGER NOT NULL DEFAULT (unixepoch()),
    raw BLOB
  ) STRICT;

  CREATE TABLE securejoin_tokens (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    kind TEXT NOT NULL CHECK (kind IN ('invite', 'auth')),
    token TEXT NOT NULL UNIQUE,
    chat_id INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL DEFAULT (unixepoch())
  ) STRICT;

  CREATE TABLE securejoin_joiner (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    invite TEXT NOT NULL DEFAULT '{}',
    contact_id INTEGER NOT NULL DEFAULT 0,
    chat_id INTEGER NOT NULL DEFAULT 0,
    step TEXT NOT NULL DEFAULT '',
    created_at INTEGER NOT NULL DEFAULT (unixepoch())
  ) STRICT;
  `,
  // 3: receipts the gateway owes peers, written in the same transaction as what caused them
  // (a stored message, a message marked seen), so a crash before they are sent loses none.
  `
  CREATE TABLE owed_receipts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    contact_id INTEGER NOT NULL,
    rfc724_mid TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('displayed', 'processed')),
    UNIQUE (contact_id, rfc724_mid, kind)
  ) STRICT;
  `,
  // 4: what Delta Chat peers do to messages after sending them: edits (Chat-Edit), reactions
  // (RFC 9078, one per contact and message), and the quote a reply carried above its text.
  `
  ALTER TABLE msgs ADD COLUMN edited INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE msgs ADD COLUMN quote TEXT NOT NULL DEFAULT '';

  CREATE TABLE reactions (
    msg_id INTEGER NOT NULL REFERENCES msgs (id) ON DELETE CASCADE,
    contact_id INTEGER NOT NULL,
    reaction TEXT NOT NULL,
    timestamp INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (msg_id, contact_id)
  ) STRICT;
  `,
  // 5: the kind of a system (info) message a peer sent, as Delta Chat names it
  // (`EphemeralTimerChanged`, `MemberAddedToGroup`, …); '' for chat messages.
  `
  ALTER TABLE msgs ADD COLUMN system_type TEXT NOT NULL DEFAULT '';
  `,
  // 6: a chat's disappearing-messages timer as its peer set it (Delta Chat's Ephemeral-Timer,
  // seconds; 0 off), echoed on our messages so a reply never turns the peer's setting off.
  `
  ALTER TABLE chats ADD COLUMN ephemeral_timer INTEGER NOT NULL DEFAULT 0;
  `,
  // 7: the SSE stream across restarts: the newest events as sent (wire JSON, for Last-Event-ID
  // replay) and the highest id reserved before use, so no id is issued twice, even after a
  // crash. Ids come from the event bus, not AUTOINCREMENT; gaps mark events a crash lost.
  `
  CREATE TABLE events (
    id INTEGER PRIMARY KEY,
    data TEXT NOT NULL
  ) STRICT;

  CREATE TABLE event_ids (
    singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
    reserved INTEGER NOT NULL
  ) STRICT;
  `,
  // 8: attempts at mails still in INBOX (UIDVALIDITY:UID), counted before each try, so a mail
  // that keeps failing or kills the process is given up on instead of blocking reception.
  `
  CREATE TABLE receive_attempts (
    mail_key TEXT PRIMARY KEY,
    attempts INTEGER NOT NULL DEFAULT 0,
    last_error TEXT NOT NULL DEFAULT '',
    updated_at INTEGER NOT NULL DEFAULT 0
  ) STRICT;
  `,
  // 9: contacts "seen" in the future (a forged Date header, before header dates were clamped to
  // receipt time) come back to the present, so such a key no longer sorts first for its address.
  `
  UPDATE contacts SET last_seen = unixepoch() WHERE last_seen > unixepoch();
  `,
  // 10: groups as Delta Chat keeps them: members with the times they were added and removed
  // (a member while added >= removed; past members stay listed), the time of the group name
  // and avatar (a newer one wins), whether the group was announced yet, and when its members'
  // keys were last gossiped.
  `
  ALTER TABLE chat_contacts ADD COLUMN add_timestamp INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE chat_contacts ADD COLUMN remove_timestamp INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE chats ADD COLUMN name_timestamp INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE chats ADD COLUMN avatar TEXT NOT NULL DEFAULT '';
  ALTER TABLE chats ADD COLUMN avatar_timestamp INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE chats ADD COLUMN unpromoted INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE chats ADD COLUMN gossiped_at INTEGER NOT NULL DEFAULT 0;
  `,
  // 11: broadcast channels (type 130): the secret posts are encrypted with, and who owns the
  // channel (1: we do; else the contact whose channel we subscribed to).
  `
  ALTER TABLE chats ADD COLUMN broadcast_secret TEXT NOT NULL DEFAULT '';
  ALTER TABLE chats ADD COLUMN owner_id INTEGER NOT NULL DEFAULT 0;
  `,
  // 12: protected files (docs/prv-format.md). `prv_sent`: files this gateway protected (file_id
  // is the id the API shows; the CEK stays here, the owner holds the plaintext anyway), with one
  // `prv_access` row per recipient (its S1, state and window). `prv_received`: .prv files received
  // with their PDUs (S1 only: S2 is held in memory, never stored). S1 and the CEK are stored
  // wrapped under a key derived from the device fingerprint; `device_tag` tells a copy apart.
  `
  CREATE TABLE prv_sent (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    file_uid TEXT NOT NULL UNIQUE,
    chat_id INTEGER NOT NULL,
    path TEXT NOT NULL,
    prv_sha256 TEXT NOT NULL,
    plaintext_sha256 TEXT NOT NULL,
    name TEXT NOT NULL,
    mime TEXT NOT NULL,
    size INTEGER NOT NULL,
    cek BLOB NOT NULL,
    allow_download INTEGER NOT NULL,
    allow_forward INTEGER NOT NULL,
    duration_minutes INTEGER NOT NULL,
    file_pdu TEXT NOT NULL,
    created_at INTEGER NOT NULL
  ) STRICT;
  CREATE INDEX prv_sent_hash ON prv_sent (prv_sha256);

  CREATE TABLE prv_access (
    file_id INTEGER NOT NULL REFERENCES prv_sent (id) ON DELETE CASCADE,
    contact_id INTEGER NOT NULL,
    fingerprint TEXT NOT NULL,
    s1 BLOB NOT NULL,
    otk_pdu TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'active',
    window_start INTEGER NOT NULL DEFAULT 0,
    window_end INTEGER NOT NULL DEFAULT 0,
    request_id TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (file_id, contact_id)
  ) STRICT;

  CREATE TABLE prv_received (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    msg_id INTEGER NOT NULL UNIQUE,
    chat_id INTEGER NOT NULL,
    owner_contact_id INTEGER NOT NULL,
    file_uid TEXT NOT NULL,
    prv_sha256 TEXT NOT NULL,
    s1 BLOB NOT NULL,
    allow_download INTEGER NOT NULL,
    allow_forward INTEGER NOT NULL,
    duration_minutes INTEGER NOT NULL,
    name TEXT NOT NULL,
    mime TEXT NOT NULL,
    size INTEGER NOT NULL,
    received_at INTEGER NOT NULL,
    window_end INTEGER NOT NULL DEFAULT 0,
    state TEXT NOT NULL DEFAULT 'open',
    request_id TEXT NOT NULL DEFAULT '',
    reason TEXT NOT NULL DEFAULT '',
    device_tag TEXT NOT NULL DEFAULT ''
  ) STRICT;
  CREATE INDEX prv_received_uid ON prv_received (file_uid);
  CREATE INDEX prv_received_hash ON prv_received (prv_sha256);
  `,
  // 13: forwarded protected files (docs/prv-format.md, Forwarding). Owner side: a recipient added
  // by a forward names its forwarder and keeps its own rules (JSON; '' = the file's rules).
  // Recipient side: the signed file_pdu as received, and the forward PDU when the file came
  // through a forward (it goes with the first request to the owner).
  `
  ALTER TABLE prv_access ADD COLUMN forwarded_by INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE prv_access ADD COLUMN rules TEXT NOT NULL DEFAULT '';
  ALTER TABLE prv_received ADD COLUMN file_pdu TEXT NOT NULL DEFAULT '';
  ALTER TABLE prv_received ADD COLUMN forward_pdu TEXT NOT NULL DEFAULT '';
  `,
  // 14: mails reception could not use for a reason that may pass or may be ours (a missing key,
  // a signature it could not check, a store error, a crash while processing), kept whole after
  // the retries instead of being deleted unread; the operator lists, retries or drops them.
  `
  CREATE TABLE quarantined_mails (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    message_id TEXT NOT NULL DEFAULT '',
    reason TEXT NOT NULL DEFAULT '',
    attempts INTEGER NOT NULL DEFAULT 0,
    size INTEGER NOT NULL DEFAULT 0,
    quarantined_at INTEGER NOT NULL DEFAULT 0,
    raw BLOB NOT NULL
  ) STRICT;
  `,
  // 15: the installation identity (docs/identity.md): `installation_id` (128 random bits, hex)
  // and `installation_secret` (32 random bytes, hex), created once here for new and existing
  // databases, so they move with the data directory and a backup. `prv_sent.key_tag` tells which
  // key a sent file's CEK is wrapped under ('' = the v1 device key, before this migration).
  `
  INSERT OR IGNORE INTO config (key, value) VALUES ('installation_id', lower(hex(randomblob(16))));
  INSERT OR IGNORE INTO config (key, value)
    VALUES ('installation_secret', lower(hex(randomblob(32))));
  ALTER TABLE prv_sent ADD COLUMN key_tag TEXT NOT NULL DEFAULT '';
  `,
  // 16: a mail rendered as a stream waits in a spool file (DataDirLayout.SPOOL_DIR) that the row
  // names instead of holding it in raw; '' for mails kept in raw, as before.
  `
  ALTER TABLE outbox ADD COLUMN spool TEXT NOT NULL DEFAULT '';
  `,
  // 17: files above the relay's one-mail limit travel as relay parts between gateways
  // (docs/transfer.md). A contact's gateway announced it can receive them (refreshed on every
  // verified mail from it); one row per transfer and direction: the sender's queue of parts, the
  // recipients still to confirm and those that refused, the receiver's bitmap of verified parts in its partial blob
  // and the announcing mail, held until the whole file is verified.
  `
  ALTER TABLE contacts ADD COLUMN large_files INTEGER NOT NULL DEFAULT 0;
  CREATE TABLE transfers (
    id TEXT NOT NULL,
    direction TEXT NOT NULL,
    peer_fingerprint TEXT NOT NULL DEFAULT '',
    chat_id INTEGER NOT NULL DEFAULT 0,
    msg_id INTEGER NOT NULL DEFAULT 0,
    state TEXT NOT NULL,
    reason TEXT NOT NULL DEFAULT '',
    name TEXT NOT NULL DEFAULT '',
    mime TEXT NOT NULL DEFAULT '',
    size INTEGER NOT NULL,
    sha256 TEXT NOT NULL,
    part_size INTEGER NOT NULL,
    parts INTEGER NOT NULL,
    blob TEXT NOT NULL DEFAULT '',
    next_part INTEGER NOT NULL DEFAULT 0,
    resend TEXT NOT NULL DEFAULT '[]',
    pending TEXT NOT NULL DEFAULT '[]',
    confirmed TEXT NOT NULL DEFAULT '[]',
    refused TEXT NOT NULL DEFAULT '[]',
    have BLOB NOT NULL DEFAULT x'',
    announce BLOB NOT NULL DEFAULT x'',
    requests INTEGER NOT NULL DEFAULT 0,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (direction, id, peer_fingerprint)
  ) STRICT;
  CREATE INDEX transfers_msg ON transfers (msg_id);
  `,
  // 18: the path that carries a transfer, or last carried it ('direct': the QUIC path; 'relay':
  // relay parts), kept with the row so events and get_transfer say it after a restart too.
  `
  ALTER TABLE transfers ADD COLUMN path TEXT NOT NULL DEFAULT 'relay'
    CHECK (path IN ('relay', 'direct'));
  `,
];
