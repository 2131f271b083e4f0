/** The direct path over QUIC (docs/p2p.md): the endpoint, the offer and answer, the interfaces. */
export {
  type IncomingTransfer,
  type OutgoingTransfer,
  P2pEndpoint,
  type P2pEndpointOptions,
} from "./endpoint.ts";
export { type Candidate, formatCandidate, parseCandidate } from "./candidates.ts";
export { OnceLog, type P2pRefusal } from "./once_log.ts";
export type { DescriptionRefusal, RefusedDescription } from "./offer.ts";
export type {
  P2pAnswer,
  P2pFailure,
  P2pOffer,
  P2pOutcome,
  P2pProgress,
  P2pRunOptions,
  P2pSink,
  P2pSource,
} from "./types.ts";
