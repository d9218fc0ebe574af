/**
 * Rows → the nested JSON of the reference API. The SQL in queries.ts aliases event columns with a
 * phase prefix (`relay_blockNumber`); each object is made by the mapper of its field table
 * (fields.ts), which fixes key order and types: block numbers and raw amounts stay exact strings,
 * timestamps and chain ids are numbers, `sendChainGas` (stored by Ponder as integer 0/1) becomes a
 * boolean, addresses are EIP-55 checksummed and hashes, ids and bytes lower case (hex.ts): the same
 * answer on every layout. This file only nests them into list items.
 */
import type {
  ConflictingProofItem, DisputeItem, InvalidRelayItem, MissingClaimItem, MissingProofItem, MissingRelayItem, RefundedAndRelayedItem, TransactionDetail,
} from '../types.js';
import {
  agedMapperOf, BRIDGE_FIELDS, INVALID_RELAY_FIELDS, mapperOf, phaseMapperOf, phasePrefix, TRANSACTION_REF_FIELDS, type Phase, type Row,
} from './fields.js';

export { toBoolean, type Phase, type Row } from './fields.js';

function int(v: unknown): number {
  return typeof v === 'number' ? v : Number(v);
}

export const bridgeOf = mapperOf(BRIDGE_FIELDS);
const transactionRefOf = mapperOf(TRANSACTION_REF_FIELDS);

/** Whether a LEFT JOINed phase exists in the row (its NOT NULL transactionHash is present). */
export function hasPhase(row: Row, phase: Phase): boolean {
  const v = row[`${phasePrefix(phase)}transactionHash`];
  return v !== null && v !== undefined;
}

// Each list item is one object literal with its keys in output order. (Spreading a shared part
// into a bigger object made the shaping of a 100-row page about 20 times slower; the mappers of
// fields.ts are compiled object literals for the same reason.)

export const requestOf = phaseMapperOf('request');
export const relayOf = phaseMapperOf('relay');
export const proofOf = phaseMapperOf('proof');
export const claimOf = phaseMapperOf('claim');
export const refundOf = phaseMapperOf('refund');
export const disputeOf = phaseMapperOf('dispute');
const invalidRelayOf = agedMapperOf(INVALID_RELAY_FIELDS);

/**
 * Seconds from the timestamp a list is ordered by (its `_sortTs` column: the request of
 * missing-relay, the relay of missing-proof, the proof of missing-claim, …) to `now`. Never
 * negative: a block whose time is ahead of this server's clock (a skewed clock, or a chain's
 * timestamps running ahead) is 0 seconds old, so a sort by age keeps it with the newest.
 */
const ageOf = (row: Row, now: number): number => Math.max(0, now - int(row._sortTs));

export const missingRelayItem = (row: Row, now: number): MissingRelayItem => ({
  ageSeconds: ageOf(row, now), Bridge: bridgeOf(row), BridgeRequest: requestOf(row),
});
export const missingProofItem = (row: Row, now: number): MissingProofItem => ({
  ageSeconds: ageOf(row, now), Bridge: bridgeOf(row), BridgeRequest: requestOf(row), BridgeRelay: relayOf(row),
});
export const missingClaimItem = (row: Row, now: number): MissingClaimItem => ({
  ageSeconds: ageOf(row, now), Bridge: bridgeOf(row), BridgeRequest: requestOf(row),
  BridgeRelay: hasPhase(row, 'relay') ? relayOf(row) : null, BridgeProof: proofOf(row),
});
export const conflictingProofItem = (row: Row, now: number): ConflictingProofItem => ({
  ageSeconds: ageOf(row, now), Bridge: bridgeOf(row), BridgeRequest: requestOf(row), BridgeRelay: relayOf(row), BridgeProof: proofOf(row),
});
export const refundedAndRelayedItem = (row: Row, now: number): RefundedAndRelayedItem => ({
  ageSeconds: ageOf(row, now), Bridge: bridgeOf(row), BridgeRequest: requestOf(row), BridgeRelay: relayOf(row), BridgeRefund: refundOf(row),
});
export const disputeItem = (row: Row, now: number): DisputeItem => ({
  ageSeconds: ageOf(row, now),
  Bridge: transactionRefOf(row),
  BridgeDispute: disputeOf(row),
});

/** `ageSeconds` first, then the relay's fields (flat). */
export const invalidRelayItem = (row: Row, now: number): InvalidRelayItem => invalidRelayOf(row, ageOf(row, now));

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
