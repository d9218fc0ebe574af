/**
 * Rows → the nested JSON of the reference API. The SQL in queries.ts aliases event columns with a
 * phase prefix (`relay_blockNumber`); these functions pick them out explicitly, so key order and
 * types are fixed here: block numbers and raw amounts stay exact strings, timestamps and chain ids
 * are numbers, `sendChainGas` (stored by Ponder as integer 0/1) becomes a boolean, addresses are
 * EIP-55 checksummed and hashes, ids and bytes lower case (hex.ts): the same answer on every layout.
 */
import type {
  Bridge, BridgeClaim, BridgeDispute, BridgeProof, BridgeRefund, BridgeRelay, BridgeRequest, DisputeItem,
  InvalidRelayItem, MissingClaimItem, MissingProofItem, MissingRelayItem, RefundedAndRelayedItem, TransactionDetail,
} from '../types.js';
import { decodeRequest } from './request-decode.js';
import { eip55, lowerHex } from './hex.js';

export type Row = Record<string, unknown>;

export type Phase = 'request' | 'relay' | 'proof' | 'claim' | 'refund' | 'dispute';

function text(v: unknown): string {
  return typeof v === 'string' ? v : v === null || v === undefined ? '' : String(v);
}
/** An address column: EIP-55 on every layout (Ponder 0.4 stores it so, 0.12+ in lower case). */
const address = (v: unknown): string => eip55(text(v));
/** A hash, id or bytes column: lower case on every layout. */
const hex = (v: unknown): string => lowerHex(text(v));
function nullableText(v: unknown): string | null {
  return v === null || v === undefined ? null : text(v);
}
function int(v: unknown): number {
  return typeof v === 'number' ? v : Number(v);
}
/** Ponder stores booleans as integer 0/1; a database with a real boolean column also works. */
export function toBoolean(v: unknown): boolean {
  return v === true || v === 1 || v === '1' || v === 't' || v === 'true';
}

export function bridgeOf(row: Row): Bridge {
  const request = hex(row.request);
  return {
    transactionId: hex(row.transactionId),
    originChain: text(row.originChain),
    destChain: text(row.destChain),
    originChainId: int(row.originChainId),
    destChainId: int(row.destChainId),
    originToken: address(row.originToken),
    destToken: address(row.destToken),
    originAmountFormatted: text(row.originAmountFormatted),
    destAmountFormatted: text(row.destAmountFormatted),
    sender: address(row.sender),
    request,
    sendChainGas: toBoolean(row.sendChainGas),
    originAmount: nullableText(row.originAmount),
    destAmount: text(row.destAmount),
    decodedRequest: decodeRequest(request),
  };
}

/** Whether a LEFT JOINed phase exists in the row (its NOT NULL transactionHash is present). */
export function hasPhase(row: Row, phase: Phase): boolean {
  const v = row[`${phase}_transactionHash`];
  return v !== null && v !== undefined;
}

// Each phase and item is one object literal with its keys in output order, columns read by their
// static names. (Spreading a shared part into a bigger object, the obvious factoring, made the
// shaping of a 100-row page about 20 times slower and its JSON.stringify slower too.)

export const requestOf = (row: Row): BridgeRequest => ({
  blockNumber: text(row.request_blockNumber),
  blockTimestamp: int(row.request_blockTimestamp),
  transactionHash: hex(row.request_transactionHash),
});
export const relayOf = (row: Row): BridgeRelay => ({
  blockNumber: text(row.relay_blockNumber),
  blockTimestamp: int(row.relay_blockTimestamp),
  transactionHash: hex(row.relay_transactionHash),
  relayer: address(row.relay_relayer),
  to: address(row.relay_to),
});
export const proofOf = (row: Row): BridgeProof => ({
  blockNumber: text(row.proof_blockNumber),
  blockTimestamp: int(row.proof_blockTimestamp),
  transactionHash: hex(row.proof_transactionHash),
  relayer: address(row.proof_relayer),
});
export const claimOf = (row: Row): BridgeClaim => ({
  blockNumber: text(row.claim_blockNumber),
  blockTimestamp: int(row.claim_blockTimestamp),
  transactionHash: hex(row.claim_transactionHash),
  to: address(row.claim_to),
  relayer: address(row.claim_relayer),
  amountFormatted: text(row.claim_amountFormatted),
  token: address(row.claim_token),
  amount: text(row.claim_amount),
});
export const refundOf = (row: Row): BridgeRefund => ({
  blockNumber: text(row.refund_blockNumber),
  blockTimestamp: int(row.refund_blockTimestamp),
  transactionHash: hex(row.refund_transactionHash),
  to: address(row.refund_to),
  amountFormatted: text(row.refund_amountFormatted),
  token: address(row.refund_token),
  amount: text(row.refund_amount),
});
export const disputeOf = (row: Row): BridgeDispute => ({
  blockNumber: text(row.dispute_blockNumber),
  blockTimestamp: int(row.dispute_blockTimestamp),
  transactionHash: hex(row.dispute_transactionHash),
  originChainId: int(row.dispute_originChainId),
  originChain: text(row.dispute_originChain),
  relayer: address(row.dispute_relayer),
});

/**
 * Seconds from the timestamp a list is ordered by (its `_sortTs` column: the request of
 * missing-relay, the relay of missing-proof, the proof of missing-claim, …) to `now`.
 */
const ageOf = (row: Row, now: number): number => now - int(row._sortTs);

export const missingRelayItem = (row: Row, now: number): MissingRelayItem => ({
  ageSeconds: ageOf(row, now), Bridge: bridgeOf(row), BridgeRequest: requestOf(row),
});
export const missingProofItem = (row: Row, now: number): MissingProofItem => ({
  ageSeconds: ageOf(row, now), Bridge: bridgeOf(row), BridgeRequest: requestOf(row), BridgeRelay: relayOf(row),
});
export const missingClaimItem = (row: Row, now: number): MissingClaimItem => ({
  ageSeconds: ageOf(row, now), Bridge: bridgeOf(row), BridgeRequest: requestOf(row), BridgeRelay: relayOf(row), BridgeProof: proofOf(row),
});
export const refundedAndRelayedItem = (row: Row, now: number): RefundedAndRelayedItem => ({
  ageSeconds: ageOf(row, now), Bridge: bridgeOf(row), BridgeRequest: requestOf(row), BridgeRelay: relayOf(row), BridgeRefund: refundOf(row),
});
export const disputeItem = (row: Row, now: number): DisputeItem => ({
  ageSeconds: ageOf(row, now),
  Bridge: { transactionId: hex(row.transactionId) },
  BridgeDispute: disputeOf(row),
});

export function invalidRelayItem(row: Row, now: number): InvalidRelayItem {
  return {
    ageSeconds: ageOf(row, now),
    transactionId: hex(row.transactionId),
    blockNumber: text(row.blockNumber),
    blockTimestamp: int(row.blockTimestamp),
    transactionHash: hex(row.transactionHash),
    originChain: text(row.originChain),
    destChain: text(row.destChain),
    originChainId: int(row.originChainId),
    destChainId: int(row.destChainId),
    originToken: address(row.originToken),
    destToken: address(row.destToken),
    originAmountFormatted: text(row.originAmountFormatted),
    destAmountFormatted: text(row.destAmountFormatted),
    to: address(row.to),
    relayer: address(row.relayer),
  };
}

/** The full record of one bridge; phases that did not happen are left out. */
export function transactionDetail(row: Row): TransactionDetail {
  const detail: TransactionDetail = { Bridge: bridgeOf(row), BridgeRequest: requestOf(row) };
  if (hasPhase(row, 'relay')) detail.BridgeRelay = relayOf(row);
  if (hasPhase(row, 'proof')) detail.BridgeProof = proofOf(row);
  if (hasPhase(row, 'claim')) detail.BridgeClaim = claimOf(row);
  if (hasPhase(row, 'refund')) detail.BridgeRefund = refundOf(row);
  if (hasPhase(row, 'dispute')) detail.BridgeDispute = disputeOf(row);
  return detail;
}
