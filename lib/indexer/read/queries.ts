/**
 * Every query the indexer answers, once. REST routes and GraphQL resolvers both call these
 * functions: no second copy to drift apart (the API this one replaces had two, which disagreed).
 *
 * Meaning (the queries of the API this one replaces), with its bugs fixed:
 * - a proof is *active* unless a dispute for the same transaction came in its block or later; a
 *   dispute is active unless a proof came in a later block or the bridge was claimed: never both.
 *   Block numbers are compared: proofs and disputes are both emitted on the origin chain, and
 *   timestamps tie on chains with sub-second blocks. Within one block Ponder's tables keep no
 *   order (their `id` is the transactionId and the proof and dispute rows are upserts holding the
 *   latest of each): a dispute in the proof's block is read as the later event, as the contract
 *   needs a proof before any dispute;
 * - a bridge is in at most one of missing-relay (or exceed-deadline), missing-proof and
 *   missing-claim, the stage an operator acts on next, and in none once refunded or claimed. An
 *   active proof or a claim on the origin chain says the bridge was relayed even when its relay
 *   row is missing (the destination not indexed, or not yet): it waits for its claim, with
 *   `BridgeRelay` null, instead of asking for a relay that would revert. Missing-relay holds only
 *   bridges a relay can still land: the on-chain deadline in the request bytes not passed (the
 *   API it replaces split them by age alone); past it, or older than the 7-day window (kept for the
 *   reference's clients), a bridge waiting for a relay is in exceed-deadline;
 * - time windows are computed from the request's `now` (never once at start-up, which froze them);
 * - there is no hard-coded lookback floor: `lookbackFloor` is an optional setting that
 *   drops requests older than it from the request-based lists;
 * - every list is ordered by (sort timestamp desc, transactionId desc) and paged with a keyset
 *   cursor on that pair, so a page is an index range scan however deep the client goes.
 */
import { encodeCursor } from './cursor.js';
import { rows, SqlBuilder, type IndexerDb } from '../db/pool.js';
import type { ListFilter } from './params.js';
import {
  conflictingProofItem, disputeItem, invalidRelayItem, missingClaimItem, missingProofItem, missingRelayItem, refundedAndRelayedItem,
  transactionDetail, type Row,
} from './shape.js';
import type { TransactionDetail } from '../types.js';
import { BRIDGE_FIELDS, INVALID_RELAY_FIELDS, phaseSelectOf, selectOf } from './fields.js';
import { aliasSelect, isIdentity, PONDER_04_LAYOUT, translate, withLayout, type Layout, type LayoutSource } from '../db/layout.js';

export interface QueryContext {
  /** Current unix time in seconds; windows are relative to it. */
  now: number;
  /** Requests with blockTimestamp below this (unix seconds) are ignored by request-based lists. */
  lookbackFloor?: number;
  /** Age that separates missing-relay from exceed-deadline, seconds (default 7 days). */
  missingRelayWindowSeconds: number;
  /** How far back invalid-relays looks, seconds (default 14 days). */
  invalidRelayWindowSeconds: number;
  /** Where and how Ponder wrote the tables (layout.ts); absent: the Ponder 0.4 tables in the search path. */
  layouts?: LayoutSource;
}

export const WINDOW_DEFAULTS = {
  missingRelayWindowSeconds: 7 * 24 * 3600,
  invalidRelayWindowSeconds: 14 * 24 * 3600,
} as const;

export interface Page<T> {
  items: T[];
  /** The cursor of each item (a client may resume after any of them). */
  cursors: string[];
  /** Cursor for the next page, or null when this page is the last. */
  nextCursor: string | null;
}

// The select lists come from the field tables (fields.ts): `r."transactionId", …` for the bridge,
// `l."blockNumber" AS "relay_blockNumber", …` for a joined event (the prefix shape.ts reads).
const REQUEST_COLUMNS = `${selectOf(BRIDGE_FIELDS, 'r')},
  ${phaseSelectOf('request', 'r')}`;
const RELAY_COLUMNS = phaseSelectOf('relay', 'l');
const PROOF_COLUMNS = phaseSelectOf('proof', 'p');
const CLAIM_COLUMNS = phaseSelectOf('claim', 'c');
const REFUND_COLUMNS = phaseSelectOf('refund', 'f');
const DISPUTE_COLUMNS = phaseSelectOf('dispute', 'd');
const INVALID_RELAY_COLUMNS = selectOf(INVALID_RELAY_FIELDS, 'l');

/** Proof `p` has no dispute in its block or a later one (see the top of this file). */
const PROOF_ACTIVE = `NOT EXISTS (SELECT 1 FROM "BridgeProofDisputedEvents" dd
  WHERE dd."transactionId" = p."transactionId" AND dd."blockNumber" >= p."blockNumber")`;
// The "nothing answered it yet" tests below are each one NOT EXISTS over a UNION ALL of probes
// by transactionId: PostgreSQL keeps such a subquery a per-row test that stops at the first row it
// finds (the first probe answers most rows), where separate NOT EXISTS become anti-joins the
// planner may answer by hashing a whole table to return one page. The probes of the lists' hot
// paths select `transactionHash`, a column only the row has: the probe is then the hash index on
// transactionId (its bucket page, then the row) rather than an index-only descent of the stats
// btrees on the same column, which reads three pages per probe.

/**
 * Nothing answered dispute `d`: no proof in a later block, no claim (a claim needs a proof that
 * stood: the dispute came before it, even in one block).
 */
const DISPUTE_ACTIVE = `NOT EXISTS (SELECT 1 FROM "BridgeProofProvidedEvents" pp
    WHERE pp."transactionId" = d."transactionId" AND pp."blockNumber" > d."blockNumber"
  UNION ALL SELECT 1 FROM "BridgeDepositClaimedEvents" dc WHERE dc."transactionId" = d."transactionId")`;
/**
 * Proof `p` says the bridge was relayed: it is active, or its bridge was claimed (a claim needs a
 * proof that stood, and follows it on the same chain: every claimed bridge has its proof row).
 */
const PROOF_STOOD = `(${PROOF_ACTIVE}
    OR EXISTS (SELECT 1 FROM "BridgeDepositClaimedEvents" c WHERE c."transactionId" = p."transactionId"))`;
/**
 * Request `r` waits for a relay: no relay, no refund, and no proof that stood (a bridge proven or
 * claimed on the origin chain was relayed, relay row or not).
 */
const AWAITS_RELAY = `NOT EXISTS (SELECT l."transactionHash" FROM "BridgeRelayedEvents" l WHERE l."transactionId" = r."transactionId"
  UNION ALL SELECT f."transactionHash" FROM "BridgeDepositRefundedEvents" f WHERE f."transactionId" = r."transactionId"
  UNION ALL SELECT p."transactionHash" FROM "BridgeProofProvidedEvents" p WHERE p."transactionId" = r."transactionId" AND ${PROOF_STOOD})`;
/**
 * Relay `l` waits for a proof: no proof that stood (claimed: it needs none), no refund (a refunded
 * bridge can no longer be proven). Correlated on the relay, which drives the walk: relays with an
 * active proof drop out before their wide request rows are fetched.
 */
const AWAITS_PROOF = `NOT EXISTS (SELECT p."transactionHash" FROM "BridgeProofProvidedEvents" p WHERE p."transactionId" = l."transactionId" AND ${PROOF_STOOD}
  UNION ALL SELECT f."transactionHash" FROM "BridgeDepositRefundedEvents" f WHERE f."transactionId" = l."transactionId")`;
/**
 * Active proof `p` waits for its claim. A refund needs no test here: the contract refunds only a
 * bridge whose last proof was disputed (in its block or later), and none can be proven after it.
 */
const AWAITS_CLAIM = `NOT EXISTS (SELECT 1 FROM "BridgeDepositClaimedEvents" c WHERE c."transactionId" = p."transactionId")`;

/**
 * The 64 hex digits of the `deadline` word in the `request` bytes of request row `alias` (hex text,
 * `0x` first, as Ponder writes it), read where `decodeRequest` (request-decode.ts) reads it and from
 * bytes of the same shape: bytes 186–218 of a FastBridgeV2 request (`0x0002…`, at least 334
 * bytes), word 10 of a FastBridge v1 one (exactly 12 words, the first with its uint32 padding);
 * NULL for any other bytes. Lower-cased: fixed-width lower-case hex compares as its number under
 * the "C" collation, so no 256-bit arithmetic is needed (a deadline may be any uint256). Byte
 * lengths (the text is ASCII) and no regular expression: in a UTF-8 database with a linguistic
 * collation, length() and `~` cost several times what the rest of the test does. Ponder's hex
 * columns hold hex digits only (t.hex() checks them), so the word is not checked for them again.
 */
const deadlineWord = (alias: string) => `lower(CASE WHEN left(${alias}."request", 6) = '0x0002' AND octet_length(${alias}."request") >= 670
    THEN substr(${alias}."request", 375, 64)
  WHEN octet_length(${alias}."request") = 770 AND left(${alias}."request", 58) = '0x${'0'.repeat(56)}'
    THEN substr(${alias}."request", 643, 64) END)`;

/** `now` as a deadline word: 64 lower-case hex digits. */
export const nowWord = (now: number) => Math.max(0, Math.trunc(now)).toString(16).padStart(64, '0');

/**
 * The deadline of request row `alias` has passed at `now` (the SQL of a bound `nowWord`): FastBridge's
 * `relay` reverts once `block.timestamp > deadline`, and from then the origin can refund it. False
 * when the bytes carry no deadline (decodedRequest null): such a request is judged by its age only.
 * The clock is the server's, the `now` of the windows and ages: a relay sent now lands in a block
 * stamped now or a little later (block times follow wall time and never go back), so a relay sent
 * after the deadline reverts on any chain. Not the indexed head's time: it lags whenever the
 * indexer is behind, and would keep expired bridges in missing-relay.
 */
export const deadlinePassed = (alias: string, now: string) => `COALESCE(${deadlineWord(alias)} COLLATE "C" < ${now}, false)`;

/**
 * A relay or a refund comes after its request (block times of two chains differ by seconds, far
 * under this margin): the ones of requests younger than a cutoff are younger than cutoff − margin.
 * Only how much `youngUnanswered` leaves depends on it, not what a list holds: every request it
 * leaves is still tested for its relay, refund and proofs (AWAITS_RELAY; in the stats, the stage's
 * CASE tests the relay and refund first).
 */
export const ANSWER_MARGIN_SECONDS = 24 * 3600;

/**
 * The transactionIds of the requests younger than `cutoff` with no relay or refund: three
 * range scans of narrow time indexes and a hash of their ids, the window's size whatever the
 * tables' (a probe per request, as the lists do, costs several index pages per request of the
 * window, nearly all relayed). The few it leaves are tested one by one (proofs, the deadline).
 */
export const youngUnanswered = (cutoff: string, margin: string) => `SELECT y."transactionId" FROM "BridgeRequestEvents" y WHERE y."blockTimestamp" > ${cutoff}
    EXCEPT SELECT yl."transactionId" FROM "BridgeRelayedEvents" yl WHERE yl."blockTimestamp" > ${margin}
    EXCEPT SELECT yf."transactionId" FROM "BridgeDepositRefundedEvents" yf WHERE yf."blockTimestamp" > ${margin}`;

const REQUESTS = `"BridgeRequestEvents" r`;
const WITH_RELAY = `${REQUESTS} JOIN "BridgeRelayedEvents" l ON l."transactionId" = r."transactionId"`;
const WITH_PROOF = `${WITH_RELAY} JOIN "BridgeProofProvidedEvents" p ON p."transactionId" = r."transactionId"`;
/** The proof's bridge, with its relay when indexed (missing-claim: the proof says it was relayed). */
const PROOF_MAYBE_RELAY = `${REQUESTS} JOIN "BridgeProofProvidedEvents" p ON p."transactionId" = r."transactionId"
LEFT JOIN "BridgeRelayedEvents" l ON l."transactionId" = r."transactionId"`;

/** What one list selects and how it is filtered and ordered. */
interface ListPlan {
  select: string;
  from: string;
  where: string[];
  /** Column the list is ordered, windowed (since/until) and paged by. */
  sortTs: string;
  /** Tie-breaker column (a transactionId). */
  sortId: string;
  /**
   * When set, the list is the union of one page per condition (each ANDed to `where`), merged:
   * for a disjunction whose sides want different plans (an index range, a small set of ids).
   */
  branches?: readonly { from?: string; where: string }[];
  originChainColumn: string;
  destChainColumn: string;
}

/**
 * The request rows of a set of transactionIds, as `alias`: the set drives, each of its ids one probe
 * of the requests' hash index (a lateral subquery the planner cannot pull up: joined plainly, it
 * walks the whole window in time order to spare a sort, testing each row against the set).
 */
export const requestsOf = (ids: string, alias: string) => `(${ids}) yu
  CROSS JOIN LATERAL (SELECT * FROM "BridgeRequestEvents" rq WHERE rq."transactionId" = yu."transactionId" OFFSET 0) ${alias}`;

function exceedBranches(s: SqlBuilder, ctx: QueryContext): { from?: string; where: string }[] {
  const cutoff = s.param(ctx.now - ctx.missingRelayWindowSeconds, 'integer');
  const margin = s.param(ctx.now - ctx.missingRelayWindowSeconds - ANSWER_MARGIN_SECONDS, 'integer');
  return [
    { where: `r."blockTimestamp" <= ${cutoff}` },
    {
      from: requestsOf(youngUnanswered(cutoff, margin), 'r'),
      where: `r."blockTimestamp" > ${cutoff} AND ${deadlinePassed('r', s.param(nowWord(ctx.now), 'text'))}`,
    },
  ];
}

function floor(s: SqlBuilder, ctx: QueryContext): string[] {
  return ctx.lookbackFloor === undefined ? [] : [`r."blockTimestamp" >= ${s.param(ctx.lookbackFloor, 'integer')}`];
}

const requestKeys = { originChainColumn: 'r."originChainId"', destChainColumn: 'r."destChainId"' };

/** The list queries by name, each a plan builder plus the row shaper for its items. */
export const LIST_QUERIES = {
  missingRelay: {
    shape: missingRelayItem,
    plan: (s: SqlBuilder, ctx: QueryContext): ListPlan => ({
      select: REQUEST_COLUMNS, from: REQUESTS, ...requestKeys,
      where: [AWAITS_RELAY, `r."blockTimestamp" > ${s.param(ctx.now - ctx.missingRelayWindowSeconds, 'integer')}`,
        `NOT ${deadlinePassed('r', s.param(nowWord(ctx.now), 'text'))}`, ...floor(s, ctx)],
      sortTs: 'r."blockTimestamp"', sortId: 'r."transactionId"',
    }),
  },
  exceedDeadline: {
    shape: missingRelayItem,
    plan: (s: SqlBuilder, ctx: QueryContext): ListPlan => ({
      select: REQUEST_COLUMNS, from: REQUESTS, ...requestKeys,
      where: [AWAITS_RELAY, ...floor(s, ctx)],
      sortTs: 'r."blockTimestamp"', sortId: 'r."transactionId"',
      // Older than the window (the index range of before), or younger and past the deadline:
      // among the window's requests only the few with no relay or refund have their bytes read.
      branches: exceedBranches(s, ctx),
    }),
  },
  missingProof: {
    shape: missingProofItem,
    plan: (s: SqlBuilder, ctx: QueryContext): ListPlan => ({
      select: `${REQUEST_COLUMNS}, ${RELAY_COLUMNS}`, from: WITH_RELAY, ...requestKeys,
      where: [AWAITS_PROOF, ...floor(s, ctx)],
      sortTs: 'l."blockTimestamp"', sortId: 'l."transactionId"',
    }),
  },
  missingClaim: {
    shape: missingClaimItem,
    plan: (s: SqlBuilder, ctx: QueryContext): ListPlan => ({
      // Both checks on the proof that drives the walk, so claimed proofs drop out before the
      // request and relay rows are fetched (as in missingProof).
      select: `${REQUEST_COLUMNS}, ${RELAY_COLUMNS}, ${PROOF_COLUMNS}`, from: PROOF_MAYBE_RELAY, ...requestKeys,
      where: [PROOF_ACTIVE, AWAITS_CLAIM, ...floor(s, ctx)],
      sortTs: 'p."blockTimestamp"', sortId: 'p."transactionId"',
    }),
  },
  refundedAndRelayed: {
    shape: refundedAndRelayedItem,
    plan: (s: SqlBuilder, ctx: QueryContext): ListPlan => ({
      select: `${REQUEST_COLUMNS}, ${RELAY_COLUMNS}, ${REFUND_COLUMNS}`,
      from: `${WITH_RELAY} JOIN "BridgeDepositRefundedEvents" f ON f."transactionId" = r."transactionId"`, ...requestKeys,
      where: floor(s, ctx),
      sortTs: 'f."blockTimestamp"', sortId: 'f."transactionId"',
    }),
  },
  conflictingProofs: {
    shape: conflictingProofItem,
    plan: (s: SqlBuilder, ctx: QueryContext): ListPlan => ({
      select: `${REQUEST_COLUMNS}, ${RELAY_COLUMNS}, ${PROOF_COLUMNS}`, from: WITH_PROOF, ...requestKeys,
      where: [PROOF_ACTIVE, 'lower(l."relayer") <> lower(p."relayer")', ...floor(s, ctx)],
      sortTs: 'p."blockTimestamp"', sortId: 'p."transactionId"',
    }),
  },
  disputes: {
    shape: disputeItem,
    plan: (): ListPlan => ({
      select: `d."transactionId", ${DISPUTE_COLUMNS}`,
      // Joined only so destChainId can filter; a dispute is listed even without its request row.
      from: `"BridgeProofDisputedEvents" d LEFT JOIN "BridgeRequestEvents" r ON r."transactionId" = d."transactionId"`,
      where: [DISPUTE_ACTIVE],
      sortTs: 'd."blockTimestamp"', sortId: 'd."transactionId"',
      originChainColumn: 'd."originChainId"', destChainColumn: 'r."destChainId"',
    }),
  },
  invalidRelays: {
    shape: invalidRelayItem,
    plan: (s: SqlBuilder, ctx: QueryContext): ListPlan => ({
      select: INVALID_RELAY_COLUMNS, from: `"BridgeRelayedEvents" l`,
      where: [
        `NOT EXISTS (SELECT 1 FROM "BridgeRequestEvents" r WHERE r."transactionId" = l."transactionId")`,
        `l."blockTimestamp" > ${s.param(ctx.now - ctx.invalidRelayWindowSeconds, 'integer')}`,
      ],
      sortTs: 'l."blockTimestamp"', sortId: 'l."transactionId"',
      originChainColumn: 'l."originChainId"', destChainColumn: 'l."destChainId"',
    }),
  },
} as const;

export type ListQueryName = keyof typeof LIST_QUERIES;
export type ListItemOf<N extends ListQueryName> = ReturnType<(typeof LIST_QUERIES)[N]['shape']>;
export const LIST_QUERY_NAMES = Object.keys(LIST_QUERIES) as ListQueryName[];

/** Builds the SQL of one list page (exported for tests and EXPLAIN). */
export function listStatement(
  name: ListQueryName, filter: ListFilter, ctx: QueryContext, layout: Layout = PONDER_04_LAYOUT,
): { text: string; values: unknown[] } {
  const s = new SqlBuilder();
  const plan = LIST_QUERIES[name].plan(s, ctx);
  const where = [...plan.where];
  if (filter.originChainId !== undefined) where.push(`${plan.originChainColumn} = ${s.param(filter.originChainId, 'integer')}`);
  if (filter.destChainId !== undefined) where.push(`${plan.destChainColumn} = ${s.param(filter.destChainId, 'integer')}`);
  if (filter.since !== undefined) where.push(`${plan.sortTs} >= ${s.param(filter.since, 'integer')}`);
  if (filter.until !== undefined) where.push(`${plan.sortTs} < ${s.param(filter.until, 'integer')}`);
  if (filter.cursor) {
    where.push(`(${plan.sortTs}, ${plan.sortId}) < (${s.param(filter.cursor.ts, 'integer')}, ${s.param(filter.cursor.id, 'text')})`);
  }
  // One row more than asked tells whether a next page exists. The LIMIT is a literal (the page
  // size is a validated integer), so an unfiltered list has no parameters (see SqlBuilder.integer).
  // Written in the Ponder 0.4 spelling; translate() renames for the layout (identity for 0.4).
  const select = isIdentity(layout) ? plan.select : aliasSelect(plan.select);
  const page = (conditions: string[], from = plan.from) => `SELECT ${select}, ${plan.sortTs} AS "_sortTs", ${plan.sortId} AS "_sortId"
FROM ${from}
WHERE ${conditions.length > 0 ? conditions.join('\n  AND ') : 'TRUE'}
ORDER BY ${plan.sortTs} DESC, ${plan.sortId} DESC
LIMIT ${s.integer(filter.limit + 1)}`;
  if (!plan.branches) return s.statement(translate(page(where), layout));
  return s.statement(translate(`SELECT * FROM (${plan.branches.map((b) => `(${page([...where, b.where], b.from)})`).join('\nUNION ALL\n')}) u
ORDER BY "_sortTs" DESC, "_sortId" DESC
LIMIT ${s.integer(filter.limit + 1)}`, layout));
}

export async function runList<N extends ListQueryName>(
  db: IndexerDb, name: N, filter: ListFilter, ctx: QueryContext,
): Promise<Page<ListItemOf<N>>> {
  // A list's text depends only on the query, the filters present and the page size; unfiltered
  // (no parameters), it runs as a prepared statement, planned once per connection (see prepared()).
  const result = await withLayout(ctx.layouts, (layout) => rows<Row>(db, listStatement(name, filter, ctx, layout), { prepare: true }));
  const page = result.slice(0, filter.limit);
  const shape = LIST_QUERIES[name].shape as (row: Row, now: number) => ListItemOf<N>;
  const last = page[page.length - 1];
  // Every item's cursor is encoded only when asked for (GraphQL edges); REST needs the last one.
  let cursors: string[] | undefined;
  return {
    items: page.map((row) => shape(row, ctx.now)),
    get cursors() {
      return (cursors ??= page.map(cursorOf));
    },
    nextCursor: result.length > filter.limit && last ? cursorOf(last) : null,
  };
}

function cursorOf(row: Row): string {
  return encodeCursor({ ts: Number(row._sortTs), id: String(row._sortId) });
}

/** Requested, not relayed, refunded, proven or claimed, requested within the window, its deadline not passed. */
export const missingRelay = (db: IndexerDb, f: ListFilter, ctx: QueryContext) => runList(db, 'missingRelay', f, ctx);
/** The same, past its deadline or requested before the window (older than 7 days by default). */
export const exceedDeadline = (db: IndexerDb, f: ListFilter, ctx: QueryContext) => runList(db, 'exceedDeadline', f, ctx);
/** Relayed, with no active proof, not refunded or claimed. */
export const missingProof = (db: IndexerDb, f: ListFilter, ctx: QueryContext) => runList(db, 'missingProof', f, ctx);
/** Active proof, no claim, not refunded (the relay row may be missing). */
export const missingClaim = (db: IndexerDb, f: ListFilter, ctx: QueryContext) => runList(db, 'missingClaim', f, ctx);
/** Relayed on the destination and refunded on the origin (the anomaly). */
export const refundedAndRelayed = (db: IndexerDb, f: ListFilter, ctx: QueryContext) => runList(db, 'refundedAndRelayed', f, ctx);
/** Active proof by a relayer other than the one that relayed (case-insensitive). */
export const conflictingProofs = (db: IndexerDb, f: ListFilter, ctx: QueryContext) => runList(db, 'conflictingProofs', f, ctx);
/** Disputes with no later proof. */
export const activeDisputes = (db: IndexerDb, f: ListFilter, ctx: QueryContext) => runList(db, 'disputes', f, ctx);
/** Relays in the window whose transactionId has no request row. */
export const invalidRelays = (db: IndexerDb, f: ListFilter, ctx: QueryContext) => runList(db, 'invalidRelays', f, ctx);

/**
 * One bridge by transactionId or by the hash of the origin transaction that requested it, with
 * every phase (proofs even if disputed; only a dispute with no later proof). When several requests
 * share an origin transaction hash, an exact transactionId match wins, then the newest request.
 * A phase with several rows (proven, disputed, proven again) shows its latest, by block number:
 * the joins yield one row per combination, and without this order PostgreSQL may return any of
 * them, e.g. the disputed first proof next to no dispute (its dispute has a later proof).
 */
export async function findTransaction(db: IndexerDb, key: string, layouts?: LayoutSource): Promise<TransactionDetail | null> {
  const result = await withLayout(layouts, (layout) => rows<Row>(db, transactionStatement(key, layout)));
  const row = result[0];
  return row ? transactionDetail(row) : null;
}

function transactionStatement(key: string, layout: Layout): { text: string; values: unknown[] } {
  const s = new SqlBuilder();
  const k = s.param(key, 'text');
  const select = `${REQUEST_COLUMNS}, ${RELAY_COLUMNS}, ${PROOF_COLUMNS},
  ${CLAIM_COLUMNS}, ${REFUND_COLUMNS}, ${DISPUTE_COLUMNS}`;
  return s.statement(translate(`SELECT ${isIdentity(layout) ? select : aliasSelect(select)}
FROM "BridgeRequestEvents" r
LEFT JOIN "BridgeRelayedEvents" l ON l."transactionId" = r."transactionId"
LEFT JOIN "BridgeProofProvidedEvents" p ON p."transactionId" = r."transactionId"
LEFT JOIN "BridgeDepositClaimedEvents" c ON c."transactionId" = r."transactionId"
LEFT JOIN "BridgeDepositRefundedEvents" f ON f."transactionId" = r."transactionId"
LEFT JOIN "BridgeProofDisputedEvents" d ON d."transactionId" = r."transactionId" AND ${DISPUTE_ACTIVE}
WHERE r."transactionId" = ${k} OR r."transactionHash" = ${k}
ORDER BY (r."transactionId" = ${k}) DESC, r."blockTimestamp" DESC, r."transactionId" DESC,
  p."blockNumber" DESC NULLS LAST, d."blockNumber" DESC NULLS LAST, l."blockNumber" DESC NULLS LAST,
  c."blockNumber" DESC NULLS LAST, f."blockNumber" DESC NULLS LAST
LIMIT 1`, layout));
}
