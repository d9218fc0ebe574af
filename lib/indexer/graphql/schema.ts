/**
 * The GraphQL schema (SDL). Type names follow the reference API's schema (`Transaction`,
 * `Deposit`, `Relay`, …) so existing fragments keep matching; its bugs are fixed: block numbers
 * are exact strings, `sendChainGas` is a Boolean, every list takes the REST parameters, and each
 * item has a `cursor` to pass back as `cursor` for the next page. The fields of the bridge and
 * its events come from their tables in read/fields.ts.
 */
import { buildSchema, type GraphQLSchema } from 'graphql';
import { LIST_ROUTES } from '../catalog.js';
import {
  BRIDGE_FIELDS, CLAIM_FIELDS, DECODED_REQUEST_FIELDS, DISPUTE_FIELDS, INVALID_RELAY_FIELDS, PROOF_FIELDS, REFUND_FIELDS, RELAY_FIELDS, REQUEST_FIELDS, sdlOf,
  TRANSACTION_REF_FIELDS,
} from '../read/fields.js';

const LIST_ARGS = `(
    "Page size (default and maximum in the API docs)."
    limit: Int
    "The cursor of the last item already seen (from an item's cursor field)."
    cursor: String
    originChainId: Int
    destChainId: Int
    "Inclusive lower bound (unix seconds) on the timestamp the list is ordered by."
    since: Int
    "Exclusive upper bound (unix seconds) on the timestamp the list is ordered by."
    until: Int
  )`;

const ITEM_CURSOR = `
  "Pass as cursor to get the items after this one."
  cursor: String!
  "Seconds from the timestamp the list is ordered by to now (0 for a time ahead of the server's clock)."
  ageSeconds: Int!`;

export const SDL = `
"The bridge as requested on the origin chain (REST: Bridge)."
type Transaction {${sdlOf(BRIDGE_FIELDS)}
}

"The bridge a request's bytes encode. Integers of 256 bits are exact decimal strings."
type DecodedRequest {${sdlOf(DECODED_REQUEST_FIELDS)}
}

"A transactionId alone (disputes are not joined to requests)."
type TransactionRef {${sdlOf(TRANSACTION_REF_FIELDS)}
}

"The BridgeRequested event (REST: BridgeRequest)."
type Deposit {${sdlOf(REQUEST_FIELDS)}
}

"The BridgeRelayed event on the destination chain (REST: BridgeRelay)."
type Relay {${sdlOf(RELAY_FIELDS)}
}

"The BridgeProofProvided event (REST: BridgeProof)."
type Proof {${sdlOf(PROOF_FIELDS)}
}

"The BridgeDepositClaimed event (REST: BridgeClaim)."
type Claim {${sdlOf(CLAIM_FIELDS)}
}

"The BridgeDepositRefunded event (REST: BridgeRefund)."
type Refund {${sdlOf(REFUND_FIELDS)}
}

"The BridgeProofDisputed event (REST: BridgeDispute)."
type Dispute {${sdlOf(DISPUTE_FIELDS)}
}

type PendingTransactionMissingRelay {${ITEM_CURSOR}
  Bridge: Transaction!
  BridgeRequest: Deposit!
}

type PendingTransactionMissingProof {${ITEM_CURSOR}
  Bridge: Transaction!
  BridgeRequest: Deposit!
  BridgeRelay: Relay!
}

type PendingTransactionMissingClaim {${ITEM_CURSOR}
  Bridge: Transaction!
  BridgeRequest: Deposit!
  "Null when the relay is not indexed (the destination chain not watched, or behind): the active proof says it happened."
  BridgeRelay: Relay
  BridgeProof: Proof!
}

type RefundedAndRelayedTransaction {${ITEM_CURSOR}
  Bridge: Transaction!
  BridgeRequest: Deposit!
  BridgeRelay: Relay!
  BridgeRefund: Refund!
}

type ConflictingProof {${ITEM_CURSOR}
  Bridge: Transaction!
  BridgeRequest: Deposit!
  BridgeRelay: Relay!
  BridgeProof: Proof!
}

type ActiveDispute {${ITEM_CURSOR}
  Bridge: TransactionRef!
  BridgeDispute: Dispute!
}

"A relay whose transactionId has no request (flat, as in REST)."
type InvalidRelay {${ITEM_CURSOR}${sdlOf(INVALID_RELAY_FIELDS)}
}

"Everything known about one bridge; phases that did not happen are null."
type CompleteTransaction {
  Bridge: Transaction!
  BridgeRequest: Deposit!
  BridgeRelay: Relay
  "The latest proof, even if a later dispute voided it."
  BridgeProof: Proof
  BridgeClaim: Claim
  BridgeRefund: Refund
  "The latest dispute, only if no proof came after it."
  BridgeDispute: Dispute
}

enum Stage { missingRelay exceedDeadline missingProof missingClaim disputed }

"How many bridges wait in one stage on one chain pair, and since when."
type StageStat {
  stage: Stage!
  originChainId: Int!
  "Null for a dispute whose request row is missing."
  destChainId: Int
  count: Int!
  "Seconds since the oldest item of the stage on this pair entered it."
  oldestAgeSeconds: Int!
}

"REST: GET /api/stats."
type Stats {
  "Unix seconds the snapshot was computed at (ages are relative to it)."
  generatedAt: Int!
  stages: [StageStat!]!
}

"How far the index has come on one chain."
type ChainStatus {
  chainId: Int
  chain: String!
  "Latest indexed block (exact decimal string)."
  latestBlock: String
  latestTimestamp: Int
  "Seconds since latestTimestamp."
  ageSeconds: Int
  "Finalized block where Ponder records it (per chain from 0.13; before 0.9 one app-wide checkpoint, whose block is that of the chain it names)."
  finalizedBlock: String
  finalizedTimestamp: Int
  "Ponder's readiness flag where it records one."
  ready: Boolean
}

"REST: GET /api/status."
type IndexerStatus {
  generatedAt: Int!
  "ponder_checkpoint (0.11+), ponder_status (0.9–0.10), ponder_meta (0.4.42–0.8), or events (the newest indexed event per chain: before 0.4.42, or before Ponder's first status)."
  source: String!
  chains: [ChainStatus!]!
}

type Query {
${LIST_ROUTES.map((r) => `  """${r.summary}. ${r.description} Ordered by ${r.sortedBy}, newest first. REST: GET ${r.paths[0]}"""
  ${r.graphqlField}${LIST_ARGS}: [${r.itemType}!]!`).join('\n')}
  "One bridge by transactionId or by the hash of the origin transaction that requested it; null when unknown. REST: GET /api/transaction-id/{id}"
  transaction(id: String!): CompleteTransaction
  "Counts and oldest age per stage and chain pair. REST: GET /api/stats"
  stats: Stats!
  "Latest indexed block and its age per chain. REST: GET /api/status"
  status: IndexerStatus!
  "The reference API's lookup, as a list of zero or one item."
  transactionById(transactionId: String!): [CompleteTransaction!]! @deprecated(reason: "Use transaction(id).")
}
`;

export function buildIndexerSchema(): GraphQLSchema {
  return buildSchema(SDL);
}
