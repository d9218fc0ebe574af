/**
 * The JSON the indexer API returns. Names and nesting follow the reference API (`Bridge`,
 * `BridgeRequest`, `BridgeRelay`, …) so its clients keep working; what changed is typed here:
 * `sendChainGas` is a boolean, `blockNumber` and raw amounts are exact decimal strings.
 */

/** The bridge transaction as requested on the origin chain. */
export interface Bridge {
  transactionId: string;
  originChain: string;
  destChain: string;
  originChainId: number;
  destChainId: number;
  originToken: string;
  destToken: string;
  originAmountFormatted: string;
  destAmountFormatted: string;
  sender: string;
  request: string;
  sendChainGas: boolean;
  /** Raw origin amount in token units (exact decimal string); null when the indexer did not store it. */
  originAmount: string | null;
  /** Raw destination amount in token units (exact decimal string). */
  destAmount: string;
  /** The bridge `request` encodes (FastBridge v1 or v2 layout); null when it is neither. */
  decodedRequest: DecodedRequest | null;
}

export type { DecodedRequest } from './read/request-decode.js';
import type { DecodedRequest } from './read/request-decode.js';

/** Seconds since the timestamp the list is ordered by (now − that time), on every list item. */
export interface Aged { ageSeconds: number }

/** Where and when an event was emitted. */
export interface EventInfo {
  /** Exact decimal string (the column is numeric(78,0)). */
  blockNumber: string;
  blockTimestamp: number;
  transactionHash: string;
}

export type BridgeRequest = EventInfo;
export interface BridgeRelay extends EventInfo { relayer: string; to: string }
export interface BridgeProof extends EventInfo { relayer: string }
export interface BridgeClaim extends EventInfo { to: string; relayer: string; amountFormatted: string; token: string; amount: string }
export interface BridgeRefund extends EventInfo { to: string; amountFormatted: string; token: string; amount: string }
export interface BridgeDispute extends EventInfo { originChainId: number; originChain: string; relayer: string }

export interface MissingRelayItem extends Aged { Bridge: Bridge; BridgeRequest: BridgeRequest }
export interface MissingProofItem extends MissingRelayItem { BridgeRelay: BridgeRelay }
export interface MissingClaimItem extends MissingProofItem { BridgeProof: BridgeProof }
export interface RefundedAndRelayedItem extends MissingProofItem { BridgeRefund: BridgeRefund }
export type ConflictingProofItem = MissingClaimItem;
export interface DisputeItem extends Aged { Bridge: { transactionId: string }; BridgeDispute: BridgeDispute }

/** A relay with no matching request (flat, as in the reference). */
export interface InvalidRelayItem extends Aged {
  transactionId: string;
  blockNumber: string;
  blockTimestamp: number;
  transactionHash: string;
  originChain: string;
  destChain: string;
  originChainId: number;
  destChainId: number;
  originToken: string;
  destToken: string;
  originAmountFormatted: string;
  destAmountFormatted: string;
  to: string;
  relayer: string;
}

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
  | MissingRelayItem | MissingProofItem | MissingClaimItem | RefundedAndRelayedItem
  | DisputeItem | InvalidRelayItem;
