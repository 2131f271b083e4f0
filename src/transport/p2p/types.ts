/** The direct path's public types: offer, answer, source, sink, progress and outcome. */

/**
 * What the sender tells the receiver (the transfer layer carries it in a hidden, encrypted and
 * signed message). Every field is plain JSON; byte strings are base64url (token, cert) or hex.
 */
export interface P2pOffer {
  v: 1;
  transfer_id: string;
  /** File size in bytes. */
  size: number;
  /** SHA-256 of the whole file, lower-case hex. */
  sha256: string;
  /** Where the sender listens: `ip:port` or `[ipv6]:port` (interfaces and the STUN mapping). */
  candidates: string[];
  /** The sender's short-lived self-signed certificate (DER, base64url). */
  cert: string;
  /** SHA-256 of `cert`'s DER, hex: what the receiver pins. */
  pin: string;
  /** The certificate's only SAN, `<random>.p2p.invalid`: the TLS server name to check. */
  server_name: string;
  /** One-time token the receiver presents when it connects to the sender (base64url, 32 bytes). */
  token: string;
  /** Unix milliseconds after which the offer is refused. */
  expires_at: number;
}

/** What the receiver tells the sender back: the same for the reverse direction (hole punching). */
export interface P2pAnswer {
  v: 1;
  transfer_id: string;
  candidates: string[];
  cert: string;
  pin: string;
  server_name: string;
  /** One-time token the sender presents when it connects to the receiver. */
  token: string;
  expires_at: number;
}

/** The sender's bytes: a fresh stream of the file from `offset` to its end. */
export interface P2pSource {
  open(offset: number): ReadableStream<Uint8Array> | Promise<ReadableStream<Uint8Array>>;
}

/** Where the receiver puts the bytes; it keeps exactly the bytes whose `write` resolved. */
export interface P2pSink {
  /** How many bytes it already holds (from an earlier run): the transfer starts there. */
  resumeOffset(): Promise<number>;
  /** Appends a chunk; the promise resolves once it is stored (backpressure). */
  write(chunk: Uint8Array): Promise<void>;
  /** The first `length` bytes it holds, to hash them again when a run starts at `length` > 0. */
  readBack(length: number): ReadableStream<Uint8Array>;
}

/** A progress report: at most every 250 ms and 1 % of the file, and once at the end. */
export interface P2pProgress {
  transferId: string;
  direction: "out" | "in";
  bytes: number;
  total: number;
}

/** Why a direct transfer did not complete: the caller then moves it to relay parts. */
export type P2pFailure =
  | "connect_timeout" // no authenticated connection within the bound
  | "dropped" // connections kept dropping (attempts exhausted)
  | "hash_mismatch" // the bytes did not match the offered SHA-256
  | "protocol" // the peer broke the framing
  | "source_error" // the file could not be read (sender) or stored (receiver)
  | "cancelled";

/** The outcome of one side's run. */
export type P2pOutcome =
  | {
    ok: true;
    /** The file size. */
    bytes: number;
    /** Connections used (1 when nothing dropped). */
    attempts: number;
    /** The offset each connection started at (the first is the sink's resume offset). */
    resumedFrom: number[];
    /** File bytes this side put on (sender) or took from (receiver) the wire, all attempts. */
    wireBytes: number;
  }
  | {
    ok: false;
    reason: P2pFailure;
    /** Bytes the receiver holds (0 on the sender). */
    bytes: number;
    attempts: number;
    wireBytes: number;
    detail?: string;
  };

/** What a run may be given. */
export interface P2pRunOptions {
  onProgress?: (p: P2pProgress) => void;
  /** Aborts the run (outcome `cancelled`). */
  signal?: AbortSignal;
}
