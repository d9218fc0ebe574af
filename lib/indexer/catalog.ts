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
    description: 'Bridges a relay can still land: requested within the last 7 days, their on-chain deadline '
      + '(Bridge.decodedRequest.deadline) not passed (both computed per request against the server\'s clock), with no relay, refund, '
      + 'active proof or claim (a bridge proven or claimed on the origin chain was relayed, even if its relay is not indexed: it is in '
      + 'missing-claim or in no list). A request whose bytes carry no deadline (decodedRequest null) is judged by its age alone.',
    sortedBy: 'BridgeRequest.blockTimestamp',
  },
  {
    query: 'exceedDeadline',
    paths: ['/api/pending-transactions/exceed-deadline', '/api/pending-transactions-exceed-deadline'],
    graphqlField: 'pendingTransactionsMissingRelayExceedDeadline',
    itemType: 'PendingTransactionMissingRelay',
    summary: 'Pending transactions missing a relay past their deadline or for more than 7 days',
    description: 'Bridges with no relay, refund, active proof or claim whose on-chain deadline (Bridge.decodedRequest.deadline) has passed, '
      + 'where a relay reverts and the origin may refund, or requested 7 days ago or more (both computed per request against the '
      + 'server\'s clock).',
    sortedBy: 'BridgeRequest.blockTimestamp',
  },
  {
    query: 'missingProof',
    paths: ['/api/pending-transactions/missing-proof', '/api/pending-transactions-missing-proof'],
    graphqlField: 'pendingTransactionsMissingProof',
    itemType: 'PendingTransactionMissingProof',
    summary: 'Pending transactions missing a proof',
    description: 'Relayed bridges, not refunded or claimed, with no active proof: never proven, or the last proof was disputed '
      + '(a dispute in the same origin-chain block as the proof or a later one).',
    sortedBy: 'BridgeRelay.blockTimestamp',
  },
  {
    query: 'missingClaim',
    paths: ['/api/pending-transactions/missing-claim', '/api/pending-transactions-missing-claim'],
    graphqlField: 'pendingTransactionsMissingClaim',
    itemType: 'PendingTransactionMissingClaim',
    summary: 'Pending transactions missing a claim',
    description: 'Bridges with an active proof, no claim and no refund. BridgeRelay is null when the relay is not indexed '
      + '(the destination chain not watched, or behind): the proof says it was relayed.',
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
    description: 'Disputes with no proof in a later block, of bridges not claimed. Bridge carries only the transactionId (disputes are not joined to requests).',
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
