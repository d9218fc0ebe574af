/**
 * The public surface of every list query in one table: its REST paths (the first is canonical;
 * the others are aliases clients already use), its GraphQL field and item type, and its
 * documentation. routes.ts, lib/indexer/graphql/endpoint.ts and openapi.ts are all generated from this table.
 */
import type { ListQueryName } from './read/queries.js';

export interface ListRoute {
  readonly query: ListQueryName;
  readonly paths: readonly string[];
  readonly graphqlField: string;
  /** GraphQL item type, also the OpenAPI component schema of one item. */
  readonly itemType: string;
  readonly summary: string;
  readonly description: string;
  /** The timestamp the list is ordered, windowed (since/until) and paged by. */
  readonly sortedBy: string;
}

export const LIST_ROUTES: readonly ListRoute[] = [
  {
    query: 'missingRelay',
    paths: ['/api/pending-transactions/missing-relay', '/api/pending-transactions-missing-relay'],
    graphqlField: 'pendingTransactionsMissingRelay',
    itemType: 'PendingTransactionMissingRelay',
    summary: 'Pending transactions missing a relay',
    description: 'Bridges requested within the last 7 days (computed per request) that have no relay and no refund.',
    sortedBy: 'BridgeRequest.blockTimestamp',
  },
  {
    query: 'exceedDeadline',
    paths: ['/api/pending-transactions/exceed-deadline', '/api/pending-transactions-exceed-deadline'],
    graphqlField: 'pendingTransactionsMissingRelayExceedDeadline',
    itemType: 'PendingTransactionMissingRelay',
    summary: 'Pending transactions missing a relay for more than 7 days',
    description: 'Bridges requested more than 7 days ago (computed per request) that have no relay and no refund. '
      + 'This is an age heuristic, not the on-chain deadline (each item has that as Bridge.decodedRequest.deadline).',
    sortedBy: 'BridgeRequest.blockTimestamp',
  },
  {
    query: 'missingProof',
    paths: ['/api/pending-transactions/missing-proof', '/api/pending-transactions-missing-proof'],
    graphqlField: 'pendingTransactionsMissingProof',
    itemType: 'PendingTransactionMissingProof',
    summary: 'Pending transactions missing a proof',
    description: 'Relayed bridges with no active proof: never proven, or the last proof was disputed later '
      + '(a dispute at a higher origin-chain block than the proof).',
    sortedBy: 'BridgeRelay.blockTimestamp',
  },
  {
    query: 'missingClaim',
    paths: ['/api/pending-transactions/missing-claim', '/api/pending-transactions-missing-claim'],
    graphqlField: 'pendingTransactionsMissingClaim',
    itemType: 'PendingTransactionMissingClaim',
    summary: 'Pending transactions missing a claim',
    description: 'Relayed bridges with an active proof and no claim.',
    sortedBy: 'BridgeProof.blockTimestamp',
  },
  {
    query: 'refundedAndRelayed',
    paths: ['/api/refunded-and-relayed'],
    graphqlField: 'refundedAndRelayedTransactions',
    itemType: 'RefundedAndRelayedTransaction',
    summary: 'Transactions both refunded and relayed',
    description: 'Bridges refunded on the origin chain although they were relayed on the destination chain.',
    sortedBy: 'BridgeRefund.blockTimestamp',
  },
  {
    query: 'conflictingProofs',
    paths: ['/api/conflicting-proofs'],
    graphqlField: 'conflictingProofs',
    itemType: 'ConflictingProof',
    summary: 'Active proofs by a relayer other than the one that relayed',
    description: 'Bridges whose active proof was submitted by a relayer different (case-insensitively) from the relayer of the relay.',
    sortedBy: 'BridgeProof.blockTimestamp',
  },
  {
    query: 'disputes',
    paths: ['/api/disputes'],
    graphqlField: 'disputes',
    itemType: 'ActiveDispute',
    summary: 'Active disputes',
    description: 'Disputes with no later proof. Bridge carries only the transactionId (disputes are not joined to requests).',
    sortedBy: 'BridgeDispute.blockTimestamp',
  },
  {
    query: 'invalidRelays',
    paths: ['/api/invalid-relays'],
    graphqlField: 'recentInvalidRelays',
    itemType: 'InvalidRelay',
    summary: 'Recent relays without a request',
    description: 'Relays of the last 14 days (computed per request) whose transactionId has no request row. '
      + 'Flat objects, as in the reference API. A lagging origin-chain index shows up here too.',
    sortedBy: 'blockTimestamp (of the relay)',
  },
];

/** Path of the single-transaction lookup; the last segment is the id or origin tx hash. */
export const TRANSACTION_PATH_PREFIX = '/api/transaction-id/';
