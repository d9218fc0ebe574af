/**
 * The indexes the API's queries need (the set config/migrations/0002 to 0005 leave behind),
 * checked against the catalog (pg_index), not against `omnigate_migrations`: Ponder 0.4 drops and
 * re-creates its tables whenever its build changes, which drops our indexes with them.
 *
 * `ensureIndexes()` creates each missing (or invalid, from an interrupted build) index with
 * `CREATE INDEX CONCURRENTLY IF NOT EXISTS`, which does not block the indexer's writes. A view
 * (Ponder publishing its tables as views) is indexed on the table it reads. `watchIndexes()`
 * runs it at start and whenever the tables' OIDs change (a periodic catalog read of six rows).
 */
import type { Logger } from '../../log.js';
import { silentLogger } from '../../log.js';
import { bound, statement, type IndexerDb } from './pool.js';
import { col, TABLE_KEYS, type Layout, type LayoutSource, type TableKey } from './layout.js';
import { IndexerError } from '../../errors.js';

export interface IndexSpec {
  table: TableKey;
  name: string;
  method: 'btree' | 'hash';
  /** Columns in their camelCase names. */
  columns: readonly string[];
  /** Columns carried in the index (btree INCLUDE), so a scan needs no heap access. */
  include?: readonly string[];
}

/** Same names as the migrations create, so an embedded database's indexes count as present. */
export const REQUIRED_INDEXES: readonly IndexSpec[] = [
  { table: 'request', name: 'omnigate_hash_request_tx_id', method: 'hash', columns: ['transactionId'] },
  { table: 'request', name: 'omnigate_request_tx_hash', method: 'btree', columns: ['transactionHash'] },
  { table: 'request', name: 'omnigate_request_time', method: 'btree', columns: ['blockTimestamp', 'transactionId'] },
  { table: 'relay', name: 'omnigate_hash_relay_tx_id', method: 'hash', columns: ['transactionId'] },
  { table: 'relay', name: 'omnigate_relay_time', method: 'btree', columns: ['blockTimestamp', 'transactionId'] },
  { table: 'proof', name: 'omnigate_hash_proof_tx_id', method: 'hash', columns: ['transactionId'] },
  { table: 'proof', name: 'omnigate_proof_tx_block', method: 'btree', columns: ['transactionId', 'blockNumber'] },
  { table: 'proof', name: 'omnigate_proof_time', method: 'btree', columns: ['blockTimestamp', 'transactionId'] },
  { table: 'dispute', name: 'omnigate_hash_dispute_tx_id', method: 'hash', columns: ['transactionId'] },
  { table: 'dispute', name: 'omnigate_dispute_tx_block', method: 'btree', columns: ['transactionId', 'blockNumber'] },
  { table: 'dispute', name: 'omnigate_dispute_time', method: 'btree', columns: ['blockTimestamp', 'transactionId'] },
  { table: 'claim', name: 'omnigate_hash_claim_tx_id', method: 'hash', columns: ['transactionId'] },
  { table: 'refund', name: 'omnigate_hash_refund_tx_id', method: 'hash', columns: ['transactionId'] },
  { table: 'refund', name: 'omnigate_refund_time', method: 'btree', columns: ['blockTimestamp', 'transactionId'] },
  // The stats (lib/indexer/ops/stats.ts) join whole tables on transactionId: these let it merge-join index-only
  // scans of a few narrow columns instead of reading the heaps (the requests' heap is large,
  // mostly the `request` bytes). Migration 0004 creates the same.
  { table: 'request', name: 'omnigate_request_stats', method: 'btree', columns: ['transactionId'], include: ['blockTimestamp', 'originChainId', 'destChainId'] },
  { table: 'relay', name: 'omnigate_relay_stats', method: 'btree', columns: ['transactionId'], include: ['blockTimestamp'] },
  { table: 'proof', name: 'omnigate_proof_stats', method: 'btree', columns: ['transactionId', 'blockNumber'], include: ['blockTimestamp'] },
  { table: 'claim', name: 'omnigate_claim_stats', method: 'btree', columns: ['transactionId'] },
  // /api/status where Ponder keeps no position per chain (before 0.4.42, or before its first
  // status): the newest event per chain of each table, a few probes per chain instead of a scan of the six tables.
  // Migration 0005 creates the same.
  { table: 'request', name: 'omnigate_request_chain_block', method: 'btree', columns: ['originChainId', 'blockNumber'], include: ['blockTimestamp'] },
  { table: 'relay', name: 'omnigate_relay_chain_block', method: 'btree', columns: ['destChainId', 'blockNumber'], include: ['blockTimestamp'] },
  { table: 'proof', name: 'omnigate_proof_chain_block', method: 'btree', columns: ['originChainId', 'blockNumber'], include: ['blockTimestamp'] },
  { table: 'dispute', name: 'omnigate_dispute_chain_block', method: 'btree', columns: ['originChainId', 'blockNumber'], include: ['blockTimestamp'] },
  { table: 'claim', name: 'omnigate_claim_chain_block', method: 'btree', columns: ['originChainId', 'blockNumber'], include: ['blockTimestamp'] },
  { table: 'refund', name: 'omnigate_refund_chain_block', method: 'btree', columns: ['originChainId', 'blockNumber'], include: ['blockTimestamp'] },
];

const quote = (id: string) => `"${id.replace(/"/g, '""')}"`;

interface Target {
  key: TableKey;
  /** OID of the relation the API reads (table or view). */
  oid: number;
  /** The table to index: the relation itself, or the table a view reads. */
  schema: string;
  table: string;
  tableOid: number;
}

/** Resolves each of the layout's relations to the table to index; undefined where a table is absent. */
export async function indexTargets(db: IndexerDb, layout: Layout): Promise<Map<TableKey, Target>> {
  const refs = TABLE_KEYS.map((k) => (layout.schema === undefined ? quote(layout.tables[k]) : `${quote(layout.schema)}.${quote(layout.tables[k])}`));
  const found = await db.any<{ i: number; oid: number; schema: string; table: string; table_oid: number }>(bound(statement(`
  WITH rel AS (SELECT i, to_regclass(ref)::oid AS oid FROM unnest($1::text[]) WITH ORDINALITY AS u(ref, i))
  SELECT rel.i::int AS i, rel.oid::int8 AS oid, n.nspname AS schema, t.relname AS table, t.oid::int8 AS table_oid
  FROM rel
  JOIN pg_class c ON c.oid = rel.oid
  LEFT JOIN LATERAL (
    SELECT d.refobjid AS base FROM pg_rewrite w JOIN pg_depend d ON d.objid = w.oid AND d.classid = 'pg_rewrite'::regclass
      AND d.refclassid = 'pg_class'::regclass AND d.refobjid <> c.oid
    WHERE w.ev_class = c.oid AND c.relkind = 'v' LIMIT 1) v ON true
  JOIN pg_class t ON t.oid = coalesce(v.base, c.oid) AND t.relkind IN ('r', 'p')
  JOIN pg_namespace n ON n.oid = t.relnamespace`, [refs])));
  const out = new Map<TableKey, Target>();
  for (const r of found) {
    const key = TABLE_KEYS[r.i - 1]!;
    out.set(key, { key, oid: Number(r.oid), schema: r.schema, table: r.table, tableOid: Number(r.table_oid) });
  }
  return out;
}

/**
 * Whether every named index of REQUIRED_INDEXES is in the catalog, valid, on the table the layout
 * reads (through its views). For a query whose good plan needs them (the status's per-chain probes).
 */
export async function indexesPresent(db: IndexerDb, layout: Layout, names: readonly string[]): Promise<boolean> {
  const specs = REQUIRED_INDEXES.filter((spec) => names.includes(spec.name));
  const targets = await indexTargets(db, layout);
  if (specs.some((spec) => !targets.has(spec.table))) return false;
  const found = await db.any<{ table_oid: number; name: string }>(bound(statement(`
  SELECT i.indrelid::int8 AS table_oid, c.relname AS name FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
  WHERE i.indisvalid AND i.indrelid = ANY($1::oid[]) AND c.relname = ANY($2::text[])`,
  [[...new Set([...targets.values()].map((t) => t.tableOid))], specs.map((spec) => spec.name)])));
  const have = new Set(found.map((r) => `${Number(r.table_oid)}/${r.name}`));
  return specs.every((spec) => have.has(`${targets.get(spec.table)!.tableOid}/${spec.name}`));
}

/** The statement creating one index (exported for tests and the notes). */
export function createIndexSql(layout: Layout, target: { schema: string; table: string }, spec: IndexSpec): string {
  const list = (names: readonly string[]) => names.map((c) => quote(col(layout, c))).join(', ');
  const include = spec.include && spec.include.length > 0 ? ` INCLUDE (${list(spec.include)})` : '';
  return `CREATE INDEX CONCURRENTLY IF NOT EXISTS ${quote(spec.name)} ON ${quote(target.schema)}.${quote(target.table)} USING ${spec.method} (${list(spec.columns)})${include}`;
}

export interface EnsureResult {
  /** Index names created (or rebuilt because invalid). */
  created: string[];
  /** Tables not found (nothing to index there yet). */
  absent: TableKey[];
}

/**
 * Creates the indexes of REQUIRED_INDEXES that the catalog lacks (or holds invalid), concurrently,
 * one at a time, on one connection with no statement timeout (a build on a large table takes
 * minutes). Never inside a transaction (CONCURRENTLY forbids it).
 */
export async function ensureIndexes(db: IndexerDb, layout: Layout, options: { logger?: Logger } = {}): Promise<EnsureResult> {
  const logger = options.logger ?? silentLogger;
  const targets = await indexTargets(db, layout);
  const absent = TABLE_KEYS.filter((k) => !targets.has(k));
  const oids = [...new Set([...targets.values()].map((t) => t.tableOid))];
  const existing = await db.any<{ table_oid: number; name: string; valid: boolean }>(bound(statement(`
  SELECT i.indrelid::int8 AS table_oid, c.relname AS name, i.indisvalid AS valid
  FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid WHERE i.indrelid = ANY($1::oid[])`, [oids])));
  const state = new Map(existing.map((r) => [`${Number(r.table_oid)}/${r.name}`, r.valid]));
  const todo = REQUIRED_INDEXES.flatMap((spec) => {
    const target = targets.get(spec.table);
    if (!target) return [];
    const valid = state.get(`${target.tableOid}/${spec.name}`);
    return valid === true ? [] : [{ spec, target, invalid: valid === false }];
  });
  const created: string[] = [];
  if (todo.length === 0) return { created, absent };
  await db.task('omnigate-indexes', async (t) => {
    await t.none('SET statement_timeout = 0');
    try {
      for (const { spec, target, invalid } of todo) {
        if (invalid) await t.none(`DROP INDEX CONCURRENTLY IF EXISTS ${quote(target.schema)}.${quote(spec.name)}`);
        await t.none(createIndexSql(layout, target, spec));
        created.push(spec.name);
      }
    } finally {
      await t.none('RESET statement_timeout');
    }
  });
  logger.info({ indexes: created, schema: [...new Set(todo.map((x) => x.target.schema))] }, 'indexer indexes created (they were missing from the catalog)');
  return { created, absent };
}

export interface IndexWatch {
  /** First check (layout + indexes); resolves even when the tables are not there yet. */
  start(): Promise<void>;
  /** One check now (tests; also what the timer runs). */
  check(): Promise<void>;
  stop(): void;
}

/**
 * At start and every `intervalMs`: reads the OIDs of the layout's tables; when they are new
 * (first sight, or dropped and re-created by an indexer redeploy), detects the layout again and
 * re-creates the missing indexes. Failures (no privilege, database down) are logged once each.
 */
export function watchIndexes(db: IndexerDb, layouts: LayoutSource, options: { logger?: Logger; intervalMs?: number } = {}): IndexWatch {
  const logger = options.logger ?? silentLogger;
  const intervalMs = options.intervalMs ?? 30_000;
  let seen = '';
  let lastFailure = '';
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let running: Promise<void> | undefined;

  async function once(): Promise<void> {
    try {
      let layout = await layouts.get();
      let targets = await indexTargets(db, layout);
      let oids = TABLE_KEYS.map((k) => targets.get(k)?.tableOid ?? 0).join(',');
      if (oids === seen) return;
      if (seen !== '') {
        // Tables re-created (or views re-pointed): the layout may have changed with them.
        layouts.invalidate();
        layout = await layouts.get();
        targets = await indexTargets(db, layout);
        oids = TABLE_KEYS.map((k) => targets.get(k)?.tableOid ?? 0).join(',');
        logger.info({ layout: layout.kind }, 'indexer tables re-created; checking the indexes');
      }
      const result = await ensureIndexes(db, layout, { logger });
      if (result.absent.length === 0) seen = oids;
      lastFailure = '';
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (message !== lastFailure) {
        lastFailure = message;
        const notReady = err instanceof IndexerError && err.status === 503;
        if (!notReady) logger.warn({ reason: message }, 'could not check the indexer indexes (will retry)');
      }
    }
  }
  const check = () => (running ??= once().finally(() => { running = undefined; }));
  return {
    start: async () => {
      await check();
      if (stopped) return;
      timer = setInterval(() => void check(), intervalMs);
      timer.unref();
    },
    check,
    stop: () => {
      stopped = true;
      clearInterval(timer);
    },
  };
}
