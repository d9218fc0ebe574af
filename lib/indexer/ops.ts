/**
 * What operators watch: how many bridges wait in each stage and for how long (`/api/stats`), and
 * how far the index has come on each chain (`/api/status`). Both are aggregates over whole tables,
 * so they are computed at most once per `maxAgeSeconds` (one flight at a time, shared by the REST
 * route, GraphQL and the Prometheus gauges), never once per request or per scrape.
 *
 * Stages (the same meaning as the lists of queries.ts, per origin → destination chain pair):
 *   missingRelay    requested, no relay, no refund, requested within the missing-relay window
 *   exceedDeadline  the same, requested before the window (the exceed-deadline list)
 *   missingProof    relayed, no active proof (ages from the relay)
 *   missingClaim    active proof, no claim (ages from the proof)
 *   disputed        active disputes (ages from the dispute; the destination is null when the
 *                   request row is missing)
 *
 * Every table and column name the SQL uses is in TABLES / COLUMNS below, so a table layout (the
 * casing of another Ponder generation, a schema) can be mapped in one place.
 */
import { chainById, CHAINS } from './chains.js';
import { rows, statement, type IndexerDb } from './db.js';
import type { QueryContext } from './queries.js';

/** The tables read here, quoted as they appear in SQL (Ponder 0.4–0.6 names). */
export const TABLES = {
  requests: '"BridgeRequestEvents"',
  relays: '"BridgeRelayedEvents"',
  proofs: '"BridgeProofProvidedEvents"',
  disputes: '"BridgeProofDisputedEvents"',
  claims: '"BridgeDepositClaimedEvents"',
  refunds: '"BridgeDepositRefundedEvents"',
} as const;

/** The columns read here, quoted (Ponder 0.4–0.6 camelCase). */
export const COLUMNS = {
  transactionId: '"transactionId"',
  blockNumber: '"blockNumber"',
  blockTimestamp: '"blockTimestamp"',
  originChainId: '"originChainId"',
  destChainId: '"destChainId"',
} as const;

/** Ponder's own progress tables, looked up through the search path (to_regclass). */
export const PONDER_META = {
  /** Ponder ≥ 0.11: one row per chain, checkpoints as 75-digit strings. */
  checkpoint: { table: '_ponder_checkpoint', chainName: 'chain_name', chainId: 'chain_id', latest: 'latest_checkpoint', finalized: 'finalized_checkpoint' },
  /** Ponder 0.7–0.10: one row per network, the latest indexed block. */
  status: { table: '_ponder_status', network: 'network_name', blockNumber: 'block_number', blockTimestamp: 'block_timestamp', ready: 'ready' },
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
  /** The finalized block and time, where Ponder records them (its checkpoint table); else null. */
  finalizedBlock: string | null;
  finalizedTimestamp: number | null;
  /** Ponder's readiness flag where it records one (0.7–0.10); else null. */
  ready: boolean | null;
}

export interface StatusSnapshot {
  generatedAt: number;
  /**
   * Where the positions come from: `ponder_checkpoint` (_ponder_checkpoint), `ponder_status`
   * (_ponder_status), or `events` (the newest indexed event per chain: a lower bound, since a
   * chain with no recent bridge event shows the block of its last event).
   */
  source: 'ponder_checkpoint' | 'ponder_status' | 'events';
  chains: ChainStatus[];
}

const T = TABLES;
const C = COLUMNS;

const PROOF_ACTIVE = (p: string) => `NOT EXISTS (SELECT 1 FROM ${T.disputes} dd
    WHERE dd.${C.transactionId} = ${p}.${C.transactionId} AND dd.${C.blockNumber} > ${p}.${C.blockNumber})`;
const DISPUTE_ACTIVE = `NOT EXISTS (SELECT 1 FROM ${T.proofs} pp
    WHERE pp.${C.transactionId} = d.${C.transactionId} AND pp.${C.blockNumber} > d.${C.blockNumber})`;

/** The one statement of a stats snapshot: every stage, grouped by chain pair. */
export function statsStatement(ctx: QueryContext) {
  const cutoff = Math.trunc(ctx.now - ctx.missingRelayWindowSeconds);
  const floor = ctx.lookbackFloor === undefined ? 'TRUE' : `r.${C.blockTimestamp} >= ${Math.trunc(ctx.lookbackFloor)}`;
  const pair = `r.${C.originChainId} AS "originChainId", r.${C.destChainId} AS "destChainId"`;
  return statement(`WITH pending_relay AS (
  SELECT ${pair}, r.${C.blockTimestamp} AS ts FROM ${T.requests} r
  WHERE NOT EXISTS (SELECT 1 FROM ${T.relays} l WHERE l.${C.transactionId} = r.${C.transactionId})
    AND NOT EXISTS (SELECT 1 FROM ${T.refunds} f WHERE f.${C.transactionId} = r.${C.transactionId})
    AND ${floor}
)
SELECT 'missingRelay' AS stage, "originChainId", "destChainId", count(*) AS count, min(ts) AS oldest
  FROM pending_relay WHERE ts > $1 GROUP BY 2, 3
UNION ALL
SELECT 'exceedDeadline', "originChainId", "destChainId", count(*), min(ts)
  FROM pending_relay WHERE ts <= $1 GROUP BY 2, 3
UNION ALL
SELECT 'missingProof', ${pair}, count(*), min(l.${C.blockTimestamp})
  FROM ${T.requests} r JOIN ${T.relays} l ON l.${C.transactionId} = r.${C.transactionId}
  WHERE NOT EXISTS (SELECT 1 FROM ${T.proofs} p WHERE p.${C.transactionId} = l.${C.transactionId} AND ${PROOF_ACTIVE('p')})
    AND ${floor}
  GROUP BY 2, 3
UNION ALL
SELECT 'missingClaim', ${pair}, count(*), min(p.${C.blockTimestamp})
  FROM ${T.requests} r JOIN ${T.relays} l ON l.${C.transactionId} = r.${C.transactionId}
  JOIN ${T.proofs} p ON p.${C.transactionId} = r.${C.transactionId}
  WHERE ${PROOF_ACTIVE('p')}
    AND NOT EXISTS (SELECT 1 FROM ${T.claims} c WHERE c.${C.transactionId} = p.${C.transactionId})
    AND ${floor}
  GROUP BY 2, 3
UNION ALL
SELECT 'disputed', d.${C.originChainId}, r.${C.destChainId}, count(*), min(d.${C.blockTimestamp})
  FROM ${T.disputes} d LEFT JOIN ${T.requests} r ON r.${C.transactionId} = d.${C.transactionId}
  WHERE ${DISPUTE_ACTIVE}
  GROUP BY 2, 3`, [cutoff]);
}

interface StatRow { stage: Stage; originChainId: unknown; destChainId: unknown; count: unknown; oldest: unknown }

export async function runStats(db: IndexerDb, ctx: QueryContext): Promise<StatsSnapshot> {
  const result = await rows<StatRow>(db, statsStatement(ctx));
  const order = new Map(STAGES.map((s, i) => [s, i]));
  const stages = result.map((r): StageStat => ({
    stage: r.stage,
    originChainId: Number(r.originChainId),
    destChainId: r.destChainId === null ? null : Number(r.destChainId),
    count: Number(r.count),
    oldestAgeSeconds: ctx.now - Number(r.oldest),
  })).sort((a, b) => order.get(a.stage)! - order.get(b.stage)! || a.originChainId - b.originChainId
    || (a.destChainId ?? -1) - (b.destChainId ?? -1));
  return { generatedAt: ctx.now, stages };
}

/**
 * A Ponder checkpoint: block timestamp (10 digits), chain id (16), block number (16), then the
 * position inside the block. Returns null for anything else.
 */
export function parseCheckpoint(checkpoint: unknown): { timestamp: number; chainId: number; blockNumber: string } | null {
  if (typeof checkpoint !== 'string' || !/^\d{42}/.test(checkpoint)) return null;
  return {
    timestamp: Number(checkpoint.slice(0, 10)),
    chainId: Number(checkpoint.slice(10, 26)),
    blockNumber: BigInt(checkpoint.slice(26, 42)).toString(),
  };
}

const chainIdByName = new Map(CHAINS.map((c) => [c.name, c.id]));
const nameOf = (id: number) => chainById(id)?.name ?? String(id);

async function tableExists(db: IndexerDb, name: string): Promise<boolean> {
  const [row] = await rows<{ found: boolean }>(db, statement('SELECT to_regclass($1) IS NOT NULL AS found', [name]));
  return row?.found === true;
}

export async function runStatus(db: IndexerDb, now: number): Promise<StatusSnapshot> {
  const age = (ts: number | null) => (ts === null ? null : now - ts);
  const cp = PONDER_META.checkpoint;
  if (await tableExists(db, cp.table)) {
    const result = await rows<Record<string, unknown>>(db, statement(
      `SELECT "${cp.chainName}" AS name, "${cp.chainId}" AS id, "${cp.latest}" AS latest, "${cp.finalized}" AS finalized FROM "${cp.table}" ORDER BY 2`,
    ));
    return {
      generatedAt: now, source: 'ponder_checkpoint',
      chains: result.map((r) => {
        const latest = parseCheckpoint(r.latest);
        const finalized = parseCheckpoint(r.finalized);
        return {
          chainId: Number(r.id), chain: String(r.name),
          latestBlock: latest?.blockNumber ?? null, latestTimestamp: latest?.timestamp ?? null, ageSeconds: age(latest?.timestamp ?? null),
          finalizedBlock: finalized?.blockNumber ?? null, finalizedTimestamp: finalized?.timestamp ?? null, ready: null,
        };
      }),
    };
  }
  const st = PONDER_META.status;
  if (await tableExists(db, st.table)) {
    const result = await rows<Record<string, unknown>>(db, statement(
      `SELECT "${st.network}" AS name, "${st.blockNumber}" AS block, "${st.blockTimestamp}" AS ts, "${st.ready}" AS ready FROM "${st.table}" ORDER BY 1`,
    ));
    return {
      generatedAt: now, source: 'ponder_status',
      chains: result.map((r) => {
        const ts = r.ts === null ? null : Number(r.ts);
        return {
          chainId: chainIdByName.get(String(r.name)) ?? null, chain: String(r.name),
          latestBlock: r.block === null ? null : String(r.block), latestTimestamp: ts, ageSeconds: age(ts),
          finalizedBlock: null, finalizedTimestamp: null, ready: r.ready === true,
        };
      }),
    };
  }
  // Ponder 0.4–0.6 record no per-chain progress the API can read: the newest event per chain.
  // Relays are emitted on the destination chain, everything else on the origin chain.
  const newest = (table: string, chainColumn: string) => `SELECT DISTINCT ON (${chainColumn}) ${chainColumn} AS chain,
    ${C.blockNumber} AS block, ${C.blockTimestamp} AS ts FROM ${table} ORDER BY ${chainColumn}, ${C.blockNumber} DESC`;
  const parts = [
    newest(T.requests, C.originChainId), newest(T.relays, C.destChainId), newest(T.proofs, C.originChainId),
    newest(T.disputes, C.originChainId), newest(T.claims, C.originChainId), newest(T.refunds, C.originChainId),
  ];
  const result = await rows<{ chain: unknown; block: unknown; ts: unknown }>(db, statement(
    `SELECT DISTINCT ON (chain) chain, block, ts FROM (${parts.map((p) => `(${p})`).join('\nUNION ALL\n')}) e ORDER BY chain, block DESC`,
  ));
  return {
    generatedAt: now, source: 'events',
    chains: result.map((r) => {
      const id = Number(r.chain);
      const ts = Number(r.ts);
      return {
        chainId: id, chain: nameOf(id), latestBlock: String(r.block), latestTimestamp: ts, ageSeconds: age(ts),
        finalizedBlock: null, finalizedTimestamp: null, ready: null,
      };
    }),
  };
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
    status: cached(() => runStatus(db, clock()), maxAgeSeconds, clock),
  };
}
