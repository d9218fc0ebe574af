/**
 * The JSON the indexer API returns. Names and nesting follow the reference API (`Bridge`,
 * `BridgeRequest`, `BridgeRelay`, …) so its clients keep working; what changed is typed here:
 * `sendChainGas` is a boolean, `blockNumber` and raw amounts are exact decimal strings.
 */
import type {
  BRIDGE_FIELDS, CLAIM_FIELDS, DISPUTE_FIELDS, INVALID_RELAY_FIELDS, PROOF_FIELDS, REFUND_FIELDS, RELAY_FIELDS, REQUEST_FIELDS,
  RowOf, TRANSACTION_REF_FIELDS,
} from './read/fields.js';

/** The bridge transaction as requested on the origin chain (fields: read/fields.ts). */
export type Bridge = RowOf<typeof BRIDGE_FIELDS>;
export type { DecodedRequest } from './read/fields.js';
/** Seconds since the timestamp the list is ordered by (now − that time), on every list item. */
export interface Aged { ageSeconds: number }

// Each event's fields, with their kinds and descriptions, are in read/fields.ts.
export type BridgeRequest = RowOf<typeof REQUEST_FIELDS>;
export type BridgeRelay = RowOf<typeof RELAY_FIELDS>;
export type BridgeProof = RowOf<typeof PROOF_FIELDS>;
export type BridgeClaim = RowOf<typeof CLAIM_FIELDS>;
export type BridgeRefund = RowOf<typeof REFUND_FIELDS>;
export type BridgeDispute = RowOf<typeof DISPUTE_FIELDS>;
/** The `Bridge` of a dispute item: disputes are not joined to requests. */
export type TransactionRef = RowOf<typeof TRANSACTION_REF_FIELDS>;

export interface MissingRelayItem extends Aged { Bridge: Bridge; BridgeRequest: BridgeRequest }
export interface MissingProofItem extends MissingRelayItem { BridgeRelay: BridgeRelay }
/** `BridgeRelay` is null when the proof's relay is not indexed (the destination chain not watched, or behind). */
export interface MissingClaimItem extends MissingRelayItem { BridgeRelay: BridgeRelay | null; BridgeProof: BridgeProof }
export interface RefundedAndRelayedItem extends MissingProofItem { BridgeRefund: BridgeRefund }
export interface ConflictingProofItem extends MissingProofItem { BridgeProof: BridgeProof }
export interface DisputeItem extends Aged { Bridge: TransactionRef; BridgeDispute: BridgeDispute }

/** A relay with no matching request (flat, as in the reference). */
export interface InvalidRelayItem extends Aged, RowOf<typeof INVALID_RELAY_FIELDS> {}

/** Everything known about one bridge; phases that did not happen are absent. */
export interface TransactionDetail {
  Bridge: Bridge;
  BridgeRequest: BridgeRequest;
  BridgeRelay?: BridgeRelay;
  BridgeProof?: BridgeProof;
  BridgeClaim?: BridgeClaim;
  BridgeRefund?: BridgeRefund;
  BridgeDispute?: BridgeDispute;
}

export type ListItem =
  | MissingRelayItem | MissingProofItem | MissingClaimItem | ConflictingProofItem | RefundedAndRelayedItem
  | DisputeItem | InvalidRelayItem;
