/**
 * What operators watch: how many bridges wait in each stage and for how long (`/api/stats`), and
 * how far the index has come on each chain (`/api/status`). Both are aggregates over whole tables,
 * so they are computed at most once per `maxAgeSeconds` (one flight at a time, shared by the REST
 * route, GraphQL and the Prometheus gauges), never once per request or per scrape.
 *
 * Stages (the same meaning as the lists of queries.ts, per origin → destination chain pair; a
 * refunded or claimed bridge is in none):
 *   missingRelay    requested, no relay, no active proof, requested within the missing-relay window,
 *                   its deadline not passed
 *   exceedDeadline  the same, past its deadline or requested before the window (the exceed-deadline list)
 *   missingProof    relayed, no active proof (ages from the relay)
 *   missingClaim    active proof, relay row or not (ages from the proof)
 *   disputed        active disputes (ages from the dispute; the destination is null when the
 *                   request row is missing)
 *
 * The SQL is written once in the Ponder 0.4–0.6 spelling and rewritten for the layout the API
 * reads (layout.ts `translate()`: camelCase or snake_case columns, a schema or views schema), so
 * both answer the same whichever Ponder generation wrote the tables.
 *
 * Status comes from Ponder's own bookkeeping, whichever the version keeps (ponder-sh/ponder,
 * packages/core/src/database):
 *   0.11 and later  `_ponder_checkpoint`: one row per chain, latest checkpoint; from 0.13 also
 *                   `finalized_checkpoint` (0.11–0.12 have only a crash-recovery `safe_checkpoint`)
 *   0.9–0.10        `_ponder_status`: one row per network, latest block and time, `ready`
 *   0.4.42–0.8      `_ponder_meta` row `status`: {network: {block: {number, timestamp}, ready}}
 *                   (0.4.42 added it with Ponder's `/status` endpoint; null until the first status)
 *   0.4.0–0.4.41    nothing per chain: the newest indexed event per chain (a lower bound)
 * They are tried in this order, and the first that exists and gives a row is the source; when none
 * does (a version before 0.4.42, or `_ponder_meta` before Ponder wrote its first status), the
 * newest events are. And
 * the finalized position where Ponder records one: per chain from 0.13; before 0.9 one
 * checkpoint for the whole app (`ponder.namespace_lock.finalized_checkpoint` in 0.4–0.5, the
 * `app` value's `checkpoint` of `_ponder_meta` in 0.6–0.8): every chain is final up to its time,
 * and its block is that of the chain the checkpoint names. The tables are looked up next to the
 * indexer's (the layout's schema, views schema, or the search path).
 */
import { chainById, CHAINS } from '../chains.js';
import { bound, rows, statement, type IndexerDb } from '../db/pool.js';
import { indexesPresent } from '../db/indexes.js';
import { PONDER_04_LAYOUT, tableRef, translate, withLayout, type Layout, type LayoutSource } from '../db/layout.js';
import { ANSWER_MARGIN_SECONDS, deadlinePassed, nowWord, requestsOf, youngUnanswered, type QueryContext } from '../read/queries.js';

/** Ponder's own progress tables, by the versions that write them (see above). */
export const PONDER_META = {
  checkpoint: '_ponder_checkpoint',
  status: '_ponder_status',
  meta: '_ponder_meta',
  /** Ponder 0.4–0.5, in its internal schema `ponder`, one row per user schema (`namespace`). */
  namespaceLock: 'ponder.namespace_lock',
} as const;

export const STAGES = ['missingRelay', 'exceedDeadline', 'missingProof', 'missingClaim', 'disputed'] as const;
export type Stage = (typeof STAGES)[number];

export interface StageStat {
  stage: Stage;
  originChainId: number;
  /** Null for a dispute whose request row is missing. */
  destChainId: number | null;
  count: number;
  /** Seconds since the oldest item of the stage on this pair entered it. */
  oldestAgeSeconds: number;
}

export interface StatsSnapshot {
  /** Unix seconds the snapshot was computed at (ages are relative to it). */
  generatedAt: number;
  /** Stage × chain pair, only those with at least one item; ordered by stage, then pair. */
  stages: StageStat[];
}

export interface ChainStatus {
  chainId: number | null;
  chain: string;
  /** Latest indexed block (exact decimal string), and its time. */
  latestBlock: string | null;
  latestTimestamp: number | null;
  /** now − latestTimestamp. */
  ageSeconds: number | null;
  /** The finalized block and time, where Ponder records them; else null (see the top of this file). */
  finalizedBlock: string | null;
  finalizedTimestamp: number | null;
  /** Ponder's readiness flag where it records one (0.5–0.10); else null. */
  ready: boolean | null;
}

export type StatusSource = 'ponder_checkpoint' | 'ponder_status' | 'ponder_meta' | 'events';

export interface StatusSnapshot {
  generatedAt: number;
  /**
   * Where the positions come from: `ponder_checkpoint` (_ponder_checkpoint, 0.11+),
   * `ponder_status` (_ponder_status, 0.9–0.10), `ponder_meta` (_ponder_meta's status row,
   * 0.4.42–0.8), or `events` (before 0.4.42, or before Ponder's first status: the newest indexed
   * event per chain, a lower bound, since a chain with no recent bridge event shows the block of
   * its last event).
   */
  source: StatusSource;
  chains: ChainStatus[];
}

/**
 * The one statement of a stats snapshot, in the Ponder 0.4 spelling (translated per layout).
 * One pass over the requests: each request joined to its relay, whether it was refunded or
 * claimed, and its active proofs (proofs with no later dispute, aggregated per transaction), gets
 * the stage it waits in; the disputes are their own small branch. The deadline is read only from the
 * rows of the few young requests with no relay or refund (`youngUnanswered`), joined as one small
 * set: the wide `request` column stays out of the pass, which reads narrow indexes. The joins are hash joins over
 * narrow columns (the indexes of indexes.ts let the probes read no heap), not a scan of the
 * requests per stage.
 */
const STATS_SQL = (floor: string) => `WITH active_proof AS (
  SELECT p."transactionId" AS tx, count(*) AS n, min(p."blockTimestamp") AS ts
  FROM "BridgeProofProvidedEvents" p
  WHERE NOT EXISTS (SELECT 1 FROM "BridgeProofDisputedEvents" dd
    WHERE dd."transactionId" = p."transactionId" AND dd."blockNumber" >= p."blockNumber")
  GROUP BY 1
), staged AS (
  SELECT r."originChainId" AS origin, r."destChainId" AS dest,
    CASE WHEN c.tx IS NOT NULL THEN NULL
         WHEN ap.tx IS NOT NULL THEN 'missingClaim'
         WHEN f.tx IS NOT NULL THEN NULL
         WHEN l."transactionId" IS NOT NULL THEN 'missingProof'
         WHEN r."blockTimestamp" > $1 AND x.tx IS NULL THEN 'missingRelay' ELSE 'exceedDeadline' END AS stage,
    CASE WHEN ap.tx IS NOT NULL THEN ap.ts WHEN l."transactionId" IS NOT NULL THEN l."blockTimestamp" ELSE r."blockTimestamp" END AS ts,
    CASE WHEN ap.tx IS NOT NULL THEN ap.n ELSE 1 END AS n
  FROM "BridgeRequestEvents" r
  LEFT JOIN "BridgeRelayedEvents" l ON l."transactionId" = r."transactionId"
  LEFT JOIN (SELECT DISTINCT x."transactionId" AS tx FROM "BridgeDepositRefundedEvents" x) f ON f.tx = r."transactionId"
  LEFT JOIN active_proof ap ON ap.tx = r."transactionId"
  LEFT JOIN (SELECT DISTINCT cy."transactionId" AS tx FROM "BridgeDepositClaimedEvents" cy) c ON c.tx = r."transactionId"
  LEFT JOIN (SELECT rd."transactionId" AS tx FROM ${requestsOf(youngUnanswered('$1', '$3'), 'rd')}
    WHERE ${deadlinePassed('rd', '$2')}) x ON x.tx = r."transactionId"
  WHERE ${floor}
)
SELECT stage, origin AS "originChainId", dest AS "destChainId", sum(n) AS count, min(ts) AS oldest
  FROM staged WHERE stage IS NOT NULL GROUP BY 1, 2, 3
UNION ALL
SELECT 'disputed', d."originChainId", r."destChainId", count(*), min(d."blockTimestamp")
  FROM "BridgeProofDisputedEvents" d LEFT JOIN "BridgeRequestEvents" r ON r."transactionId" = d."transactionId"
  WHERE NOT EXISTS (SELECT 1 FROM "BridgeProofProvidedEvents" pp
    WHERE pp."transactionId" = d."transactionId" AND pp."blockNumber" > d."blockNumber")
    AND NOT EXISTS (SELECT 1 FROM "BridgeDepositClaimedEvents" dc WHERE dc."transactionId" = d."transactionId")
  GROUP BY 2, 3`;

/** The stats statement for a layout (default: the Ponder 0.4 tables in the search path). */
export function statsStatement(ctx: QueryContext, layout: Layout = PONDER_04_LAYOUT) {
  const cutoff = Math.trunc(ctx.now - ctx.missingRelayWindowSeconds);
  const floor = ctx.lookbackFloor === undefined ? 'TRUE' : `r."blockTimestamp" >= ${Math.trunc(ctx.lookbackFloor)}`;
  return statement(translate(STATS_SQL(floor), layout), [cutoff, nowWord(ctx.now), cutoff - ANSWER_MARGIN_SECONDS]);
}

interface StatRow { stage: Stage; originChainId: unknown; destChainId: unknown; count: unknown; oldest: unknown }

export async function runStats(db: IndexerDb, ctx: QueryContext): Promise<StatsSnapshot> {
  // The default work_mem on purpose: more turns the planner to hash joins over the heaps, slower
  // on a large index than the merge of index-only scans it picks within the default.
  const result = await withLayout(ctx.layouts, (layout) => rows<StatRow>(db, statsStatement(ctx, layout)));
  const order = new Map(STAGES.map((s, i) => [s, i]));
  const stages = result.map((r): StageStat => ({
    stage: r.stage,
    originChainId: Number(r.originChainId),
    destChainId: r.destChainId === null ? null : Number(r.destChainId),
    count: Number(r.count),
    oldestAgeSeconds: Math.max(0, ctx.now - Number(r.oldest)),
  })).sort((a, b) => order.get(a.stage)! - order.get(b.stage)! || a.originChainId - b.originChainId
    || (a.destChainId ?? -1) - (b.destChainId ?? -1));
  return { generatedAt: ctx.now, stages };
}

/**
 * A Ponder checkpoint: block timestamp (10 digits), chain id (16), block number (16), then the
 * position inside the block. Returns null for anything else, and for the zero checkpoint (Ponder's
 * "nothing yet").
 */
export function parseCheckpoint(checkpoint: unknown): { timestamp: number; chainId: number; blockNumber: string } | null {
  if (typeof checkpoint !== 'string' || !/^\d{42}/.test(checkpoint) || /^0+$/.test(checkpoint)) return null;
  return {
    timestamp: Number(checkpoint.slice(0, 10)),
    chainId: Number(checkpoint.slice(10, 26)),
    blockNumber: BigInt(checkpoint.slice(26, 42)).toString(),
  };
}

const chainIdByName = new Map(CHAINS.map((c) => [c.name, c.id]));
const nameOf = (id: number) => chainById(id)?.name ?? String(id);
const quote = (id: string) => `"${id.replace(/"/g, '""')}"`;

/** One row per chain, the same columns whatever the source (the statements below). */
interface PositionRow {
  name: unknown;
  id: unknown;
  block: unknown;
  ts: unknown;
  /** A checkpoint string for the latest position, where the source keeps one instead of block/ts. */
  latest: unknown;
  finalized: unknown;
  ready: unknown;
}

interface Found {
  checkpoint: string | null;
  status: string | null;
  meta: string | null;
  lock: string | null;
  has_finalized: boolean;
  tables_schema: string | null;
}

/** Which of Ponder's bookkeeping tables exist next to the layout's tables (one catalog read). */
async function findMeta(db: IndexerDb, layout: Layout): Promise<Found> {
  const ref = (name: string) => (layout.schema === undefined ? quote(name) : `${quote(layout.schema)}.${quote(name)}`);
  const [found] = await db.any<Found>(bound(statement(`SELECT to_regclass($1)::text AS checkpoint, to_regclass($2)::text AS status,
  to_regclass($3)::text AS meta, to_regclass($4)::text AS lock,
  EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = to_regclass($1) AND a.attname = 'finalized_checkpoint' AND NOT a.attisdropped) AS has_finalized,
  (SELECT n.nspname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = to_regclass($5)) AS tables_schema`,
  [ref(PONDER_META.checkpoint), ref(PONDER_META.status), ref(PONDER_META.meta), PONDER_META.namespaceLock, tableRef(layout, 'request')])));
  return found!;
}

/** The indexes (indexes.ts, migration 0005) that make the newest event per chain a few probes. */
export const CHAIN_BLOCK_INDEXES = ['request', 'relay', 'proof', 'dispute', 'claim', 'refund'].map((k) => `omnigate_${k}_chain_block`);

/**
 * The newest event per chain (relays are emitted on the destination chain, the rest on the origin
 * chain), from each of the six tables. With the (chain, blockNumber) indexes: per table a loose
 * index scan, the chains found one `max()` probe at a time and each chain's newest event one more
 * probe (PostgreSQL has no skip scan for DISTINCT ON before 18): a few probes instead of a scan
 * of each table. Without them (an index still being built) those probes would each be a scan:
 * then one DISTINCT ON scan per table.
 */
const newestEvents = (probes: boolean): string => {
  const probe = (table: string, chain: string) => `WITH RECURSIVE c(chain) AS (
    SELECT max(e."${chain}") FROM "${table}" e
    UNION ALL
    SELECT (SELECT max(e."${chain}") FROM "${table}" e WHERE e."${chain}" < c.chain) FROM c WHERE c.chain IS NOT NULL)
  SELECT c.chain, n.block, n.ts FROM c CROSS JOIN LATERAL (SELECT e."blockNumber" AS block, e."blockTimestamp" AS ts
    FROM "${table}" e WHERE e."${chain}" = c.chain ORDER BY e."blockNumber" DESC LIMIT 1) n`;
  const scan = (table: string, chain: string) => `SELECT DISTINCT ON (e."${chain}") e."${chain}" AS chain, e."blockNumber" AS block,
    e."blockTimestamp" AS ts FROM "${table}" e ORDER BY e."${chain}", e."blockNumber" DESC`;
  const newest = probes ? probe : scan;
  const parts = [newest('BridgeRequestEvents', 'originChainId'), newest('BridgeRelayedEvents', 'destChainId'),
    newest('BridgeProofProvidedEvents', 'originChainId'), newest('BridgeProofDisputedEvents', 'originChainId'),
    newest('BridgeDepositClaimedEvents', 'originChainId'), newest('BridgeDepositRefundedEvents', 'originChainId')];
  return `SELECT DISTINCT ON (chain) NULL AS name, chain AS id, block, ts, NULL AS latest, NULL AS finalized, NULL::boolean AS ready
  FROM (${parts.map((p) => `(${p})`).join('\nUNION ALL\n')}) x ORDER BY chain, block DESC`;
};
const NEWEST_EVENTS = { probes: newestEvents(true), scan: newestEvents(false) };

/** The statement reading one source's positions (PositionRow columns), and the app-wide finalized checkpoint's, if any. */
function positionsSql(source: StatusSource, found: Found, layout: Layout, probes = false): string {
  switch (source) {
    case 'ponder_checkpoint':
      return `SELECT chain_name AS name, chain_id AS id, NULL AS block, NULL AS ts, latest_checkpoint AS latest,
  ${found.has_finalized ? 'finalized_checkpoint' : 'NULL'} AS finalized, NULL::boolean AS ready FROM ${found.checkpoint} ORDER BY chain_id`;
    case 'ponder_status':
      return `SELECT network_name AS name, NULL AS id, block_number AS block, block_timestamp AS ts, NULL AS latest, NULL AS finalized,
  ready FROM ${found.status} ORDER BY 1`;
    case 'ponder_meta':
      return `SELECT s.key AS name, NULL AS id, s.value -> 'block' ->> 'number' AS block, s.value -> 'block' ->> 'timestamp' AS ts,
  NULL AS latest, NULL AS finalized, (s.value ->> 'ready')::boolean AS ready
  FROM ${found.meta} m CROSS JOIN LATERAL jsonb_each(CASE WHEN jsonb_typeof(m.value) = 'object' THEN m.value ELSE '{}'::jsonb END) s
  WHERE m.key = 'status' ORDER BY 1`;
    case 'events':
      return translate(probes ? NEWEST_EVENTS.probes : NEWEST_EVENTS.scan, layout);
  }
}

/** Ponder before 0.9: one finalized checkpoint for the whole app (0.6–0.8 `_ponder_meta` app value, 0.4–0.5 namespace_lock). */
function appFinalizedStatement(found: Found) {
  const parts: string[] = [];
  if (found.meta) {
    parts.push(`SELECT max(a.value ->> 'checkpoint') AS cp FROM ${found.meta} a
  WHERE (a.key = 'app' OR a.key LIKE 'app\\_%') AND jsonb_typeof(a.value) = 'object'`);
  }
  // namespace_lock has one row per user schema: the one holding the tables.
  if (found.lock) parts.push(`SELECT max(k.finalized_checkpoint) AS cp FROM ${found.lock} k WHERE k.namespace = $1::text`);
  return parts.length === 0 ? undefined
    : statement(`SELECT max(cp) AS cp FROM (${parts.join(' UNION ALL ')}) x`, found.lock ? [found.tables_schema] : []);
}

export async function runStatus(db: IndexerDb, now: number, layouts?: LayoutSource): Promise<StatusSnapshot> {
  return withLayout(layouts, async (layout) => {
    const found = await findMeta(db, layout);
    const order: StatusSource[] = ['ponder_checkpoint', 'ponder_status', 'ponder_meta', 'events'];
    const available = order.filter((s) => s === 'events' || (s === 'ponder_checkpoint' ? found.checkpoint : s === 'ponder_status' ? found.status : found.meta));
    let source: StatusSource = 'events';
    let result: PositionRow[] = [];
    for (const s of available) {
      const probes = s === 'events' && await indexesPresent(db, layout, CHAIN_BLOCK_INDEXES);
      result = await rows<PositionRow>(db, statement(positionsSql(s, found, layout, probes)));
      source = s;
      if (result.length > 0) break; // e.g. _ponder_meta before Ponder wrote its first status: the events
    }
    const app = source === 'ponder_checkpoint' || source === 'ponder_status' ? undefined : appFinalizedStatement(found);
    const appFinalized = app === undefined ? null : parseCheckpoint((await rows<{ cp: unknown }>(db, app))[0]?.cp);
    const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));
    return {
      generatedAt: now,
      source,
      chains: result.map((r): ChainStatus => {
        const latest = parseCheckpoint(r.latest);
        const finalized = parseCheckpoint(r.finalized);
        const chainId = num(r.id) ?? latest?.chainId ?? (typeof r.name === 'string' ? chainIdByName.get(r.name) ?? null : null);
        const ts = latest ? latest.timestamp : num(r.ts);
        const block = latest ? latest.blockNumber : r.block === null || r.block === undefined ? null : String(r.block);
        return {
          chainId,
          chain: typeof r.name === 'string' ? r.name : chainId === null ? 'unknown' : nameOf(chainId),
          latestBlock: block,
          latestTimestamp: ts,
          ageSeconds: ts === null ? null : Math.max(0, now - ts),
          finalizedBlock: finalized ? finalized.blockNumber : appFinalized && appFinalized.chainId === chainId ? appFinalized.blockNumber : null,
          finalizedTimestamp: finalized ? finalized.timestamp : appFinalized ? appFinalized.timestamp : null,
          ready: typeof r.ready === 'boolean' ? r.ready : null,
        };
      }),
    };
  });
}

/** A value recomputed at most once per `maxAgeSeconds`, one computation at a time. */
export interface Cached<T> {
  get(): Promise<T>;
  /** Recomputes now (the gauge refresher), sharing a computation already under way. */
  refresh(): Promise<T>;
}

export function cached<T>(compute: () => Promise<T>, maxAgeSeconds: number, clock: () => number): Cached<T> {
  let value: { at: number; v: T } | undefined;
  let flight: Promise<T> | undefined;
  const refresh = () => {
    flight ??= compute().then((v) => {
      value = { at: clock(), v };
      return v;
    }).finally(() => {
      flight = undefined;
    });
    return flight;
  };
  return {
    get: () => (value && clock() - value.at < maxAgeSeconds ? Promise.resolve(value.v) : refresh()),
    refresh,
  };
}

/** The snapshots one API instance serves, cached. */
export interface OpsSource {
  stats: Cached<StatsSnapshot>;
  status: Cached<StatusSnapshot>;
}

export function createOpsSource(db: IndexerDb, queryContext: () => QueryContext, maxAgeSeconds: number): OpsSource {
  const clock = () => queryContext().now;
  return {
    stats: cached(() => runStats(db, queryContext()), maxAgeSeconds, clock),
    status: cached(() => runStatus(db, clock(), queryContext().layouts), maxAgeSeconds, clock),
  };
}
