/**
 * Where and how the Ponder indexer wrote its six tables: the *layout*. The API's SQL is written
 * once, in the Ponder 0.4–0.6 spelling (quoted camelCase tables and columns, `"BridgeRequestEvents"`,
 * `r."transactionId"`), and `translate()` rewrites it for the layout found in the catalog:
 *
 * - `ponder-0.4` (0.4–0.6): tables `"BridgeRequestEvents"` … with camelCase columns, booleans as
 *   integer 0/1 (config/migrations/0001_ponder_tables.sql), in the search path;
 * - `ponder-0.7` (0.7 … current): columns in snake_case (`transaction_id`; Ponder builds its
 *   Drizzle tables with `casing: "snake_case"`), real booleans, hex as lower-case text, bigint as
 *   numeric(78,0), in the schema named at start (`--schema` / DATABASE_SCHEMA) or, from 0.11, read
 *   through views in `--views-schema`. The table name is the one given to `onchainTable(name, …)`:
 *   both `BridgeRequestEvents` and `bridge_request_events` are looked for.
 *
 * `detectLayout()` reads the catalog once; `LayoutResolver` caches it for the API, re-detects when
 * a query finds a table or column missing (an indexer redeploy), and turns "no tables yet" into a
 * 503 and a partial or unknown layout into a 500 naming exactly what is missing.
 */
import type { Logger } from '../../log.js';
import { bound, statement, type IndexerDb } from './pool.js';
import { IndexerError, IndexNotReadyError, LayoutMismatchError } from '../../errors.js';

export type TableKey = 'request' | 'relay' | 'proof' | 'dispute' | 'claim' | 'refund';
export type LayoutKind = 'ponder-0.4' | 'ponder-0.7';

/** The tables by key, in their Ponder 0.4 names (the spelling the API's SQL is written in). */
export const TABLES: Readonly<Record<TableKey, string>> = {
  request: 'BridgeRequestEvents',
  relay: 'BridgeRelayedEvents',
  proof: 'BridgeProofProvidedEvents',
  dispute: 'BridgeProofDisputedEvents',
  claim: 'BridgeDepositClaimedEvents',
  refund: 'BridgeDepositRefundedEvents',
};
export const TABLE_KEYS = Object.keys(TABLES) as TableKey[];

const common = ['id', 'transactionId', 'originChainId', 'originChain', 'blockNumber', 'blockTimestamp', 'transactionHash'];
/** The columns the API reads from each table, in their Ponder 0.4 (camelCase) names. */
export const COLUMNS: Readonly<Record<TableKey, readonly string[]>> = {
  request: [...common, 'sender', 'request', 'originToken', 'destToken', 'originAmount', 'originAmountFormatted', 'destAmount',
    'destAmountFormatted', 'destChainId', 'destChain', 'sendChainGas'],
  relay: [...common, 'relayer', 'to', 'originToken', 'destToken', 'originAmount', 'originAmountFormatted', 'destAmount',
    'destAmountFormatted', 'destChainId', 'destChain'],
  proof: [...common, 'relayer'],
  dispute: [...common, 'relayer'],
  claim: [...common, 'relayer', 'to', 'token', 'amount', 'amountFormatted'],
  refund: [...common, 'to', 'token', 'amount', 'amountFormatted'],
};
const ALL_COLUMNS = new Set(Object.values(COLUMNS).flat());
const TABLE_BY_NAME = new Map(TABLE_KEYS.map((k) => [TABLES[k], k] as const));

export interface Layout {
  kind: LayoutKind;
  /** Schema the tables are read from; undefined: unqualified names, resolved by the search path. */
  schema?: string;
  /** Physical table (or view) name per key. */
  tables: Readonly<Record<TableKey, string>>;
  columnCase: 'camel' | 'snake';
  /** How `sendChainGas` is stored. */
  booleans: 'integer' | 'boolean';
}

/** Today's default: the Ponder 0.4 tables in the search path (also what the migrations create). */
export const PONDER_04_LAYOUT: Layout = { kind: 'ponder-0.4', tables: TABLES, columnCase: 'camel', booleans: 'integer' };

/** `transactionId` → `transaction_id`, `BridgeRequestEvents` → `bridge_request_events` (Drizzle's snake_case). */
export function snake(name: string): string {
  return name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').replace(/([A-Z])([A-Z][a-z])/g, '$1_$2').toLowerCase();
}

const quote = (id: string) => `"${id.replace(/"/g, '""')}"`;

/** The physical name of a column (given in its camelCase name) in a layout. */
export function col(layout: Layout, name: string): string {
  return layout.columnCase === 'snake' ? snake(name) : name;
}

/** The quoted, schema-qualified reference to one table in a layout. */
export function tableRef(layout: Layout, key: TableKey): string {
  const table = quote(layout.tables[key]);
  return layout.schema === undefined ? table : `${quote(layout.schema)}.${table}`;
}

/** Every table's reference by key (for code written per layout, e.g. the operators' counts). */
export function tables(layout: Layout): Record<TableKey, string> {
  return Object.fromEntries(TABLE_KEYS.map((k) => [k, tableRef(layout, k)])) as Record<TableKey, string>;
}

/** Whether SQL in the 0.4 spelling runs unchanged on this layout (0.4 tables in the search path). */
export const isIdentity = (layout: Layout) =>
  layout.schema === undefined && layout.columnCase === 'camel' && TABLE_KEYS.every((k) => layout.tables[k] === TABLES[k]);

/**
 * Gives every bare column of a select list (`l."transactionId"`) an alias in its camelCase name,
 * so the rows keep the keys shape.ts reads once the columns are renamed. Only for select lists.
 */
export function aliasSelect(select: string): string {
  return select.replace(/\b([a-z]{1,2})\."(\w+)"(?!\s+AS\b)/g, (whole, alias: string, name: string) =>
    (ALL_COLUMNS.has(name) ? `${alias}."${name}" AS "${name}"` : whole));
}

/**
 * Rewrites SQL written in the Ponder 0.4 spelling for a layout: quoted table names become the
 * layout's (schema-qualified) tables, qualified quoted columns (`x."blockNumber"`) its columns,
 * and a boolean `sendChainGas` is read as 0/1. Output aliases (`AS "request_blockNumber"`) are
 * left alone. The identity layout returns the text unchanged (same prepared statements).
 */
export function translate(sql: string, layout: Layout): string {
  if (isIdentity(layout)) return sql;
  return sql.replace(/(\b[a-z]{1,2}\.)?"(\w+)"/g, (whole, qualifier: string | undefined, name: string) => {
    if (qualifier) {
      if (!ALL_COLUMNS.has(name)) return whole;
      const physical = `${qualifier}${quote(col(layout, name))}`;
      return name === 'sendChainGas' && layout.booleans === 'boolean' ? `${physical}::int` : physical;
    }
    const key = TABLE_BY_NAME.get(name);
    return key ? tableRef(layout, key) : whole;
  });
}

interface CatalogRow {
  schema: string;
  relname: string;
  relkind: string;
  column: string | null;
  type: string | null;
}

function where(schema: string | undefined): string {
  return schema === undefined ? 'the search path' : `schema "${schema}"`;
}

/**
 * Finds the layout in the catalog: in `schema` when given, else in the first schema of the search
 * path that holds any of the tables. Throws IndexNotReadyError when none of the six tables exists
 * and LayoutMismatchError (naming every missing table or column) when they match no layout.
 */
export async function detectLayout(db: IndexerDb, options: { schema?: string } = {}): Promise<Layout> {
  const names = TABLE_KEYS.flatMap((k) => [TABLES[k], snake(TABLES[k])]);
  const found = await db.any<CatalogRow>(bound(statement(`SELECT n.nspname AS schema, c.relname, c.relkind::text AS relkind,
    a.attname AS column, format_type(a.atttypid, a.atttypmod) AS type
  FROM pg_class c
  JOIN pg_namespace n ON n.oid = c.relnamespace
  LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
  WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f') AND c.relname = ANY($1::text[])
    AND (CASE WHEN $2::text IS NULL THEN n.nspname = ANY(current_schemas(false)) ELSE n.nspname = $2::text END)
  ORDER BY array_position(current_schemas(false), n.nspname::text)`, [names, options.schema ?? null])));
  const schemaOrder = [...new Set(found.map((r) => r.schema))];
  const looked = `${TABLES.request} (or ${snake(TABLES.request)}) and the five other Ponder tables`;
  if (schemaOrder.length === 0) {
    throw new IndexNotReadyError(`The indexer's tables do not exist yet in ${where(options.schema)}: looked for ${looked}. `
      + 'Start the Ponder indexer (it creates them), or set indexer.schema to the schema it writes to.');
  }
  const schema = schemaOrder[0]!;
  const rels = new Map<string, Map<string, string>>();
  for (const r of found.filter((x) => x.schema === schema)) {
    const cols = rels.get(r.relname) ?? new Map<string, string>();
    if (r.column !== null) cols.set(r.column, r.type ?? '');
    rels.set(r.relname, cols);
  }
  const physical = {} as Record<TableKey, string>;
  const missingTables: string[] = [];
  for (const k of TABLE_KEYS) {
    const name = [TABLES[k], snake(TABLES[k])].find((n) => rels.has(n));
    if (name === undefined) missingTables.push(`${TABLES[k]} (or ${snake(TABLES[k])})`);
    else physical[k] = name;
  }
  if (missingTables.length > 0) {
    throw new LayoutMismatchError(`Schema "${schema}" holds some of the indexer's tables but not ${missingTables.join(', ')}; `
      + 'is the Ponder indexer still creating them, or is this another application\'s schema?');
  }
  const requestCols = rels.get(physical.request)!;
  const columnCase = requestCols.has('transactionId') ? 'camel' : requestCols.has('transaction_id') ? 'snake' : undefined;
  if (columnCase === undefined) {
    throw new LayoutMismatchError(`Table "${schema}"."${physical.request}" has neither a "transactionId" column (Ponder 0.4–0.6) `
      + 'nor "transaction_id" (Ponder 0.7 and later); it is not a table of the RFQ indexer.');
  }
  const layoutBase = { columnCase, tables: physical } as const;
  const missingColumns: string[] = [];
  for (const k of TABLE_KEYS) {
    const cols = rels.get(physical[k])!;
    const absent = COLUMNS[k].map((c) => (columnCase === 'snake' ? snake(c) : c)).filter((c) => !cols.has(c));
    if (absent.length > 0) missingColumns.push(`"${physical[k]}" lacks ${absent.map((c) => `"${c}"`).join(', ')}`);
  }
  if (missingColumns.length > 0) {
    throw new LayoutMismatchError(`The indexer's tables in schema "${schema}" do not have the columns the API reads `
      + `(${columnCase === 'camel' ? 'camelCase, as Ponder 0.4–0.6 writes them' : 'snake_case, as Ponder 0.7 and later writes them'}): `
      + `${missingColumns.join('; ')}.`);
  }
  const gasType = requestCols.get(columnCase === 'snake' ? 'send_chain_gas' : 'sendChainGas') ?? '';
  return {
    kind: columnCase === 'camel' ? 'ponder-0.4' : 'ponder-0.7',
    // Unqualified (search path) unless a schema was named: the 0.4 SQL stays exactly as before.
    ...(options.schema === undefined ? {} : { schema }),
    tables: layoutBase.tables,
    columnCase,
    booleans: gasType === 'boolean' ? 'boolean' : 'integer',
  };
}

/** undefined_table or undefined_column: the tables changed under us (or are not there yet). */
export function isLayoutError(err: unknown): boolean {
  const code = typeof err === 'object' && err !== null ? (err as { code?: unknown }).code : undefined;
  return code === '42P01' || code === '42703';
}

export interface LayoutSource {
  /** The current layout (detected on first use, then cached). */
  get(): Promise<Layout>;
  /** Forgets the cached layout; the next get() reads the catalog again. */
  invalidate(): void;
}

/**
 * Caches the detected layout for the API. A 503 "not ready" is logged at warn once per episode
 * (until a layout is found again), a mismatch at error once per distinct message.
 */
export class LayoutResolver implements LayoutSource {
  private current: Promise<Layout> | undefined;
  private lastProblem: string | undefined;
  private lastLayout: string | undefined;
  private readonly db: IndexerDb;
  private readonly schema: string | undefined;
  private readonly logger: Logger | undefined;
  /** Called with each newly detected layout (e.g. to re-create indexes). */
  onDetected?: (layout: Layout) => void;

  constructor(db: IndexerDb, options: { schema?: string; logger?: Logger } = {}) {
    this.db = db;
    this.schema = options.schema;
    this.logger = options.logger;
  }

  get(): Promise<Layout> {
    this.current ??= detectLayout(this.db, this.schema === undefined ? {} : { schema: this.schema }).then(
      (layout) => {
        // Logged once per layout seen (at start, and again only if a redeploy changed it).
        const seen = JSON.stringify(layout);
        if (seen !== this.lastLayout) {
          this.logger?.info({ layout: layout.kind, schema: layout.schema ?? '(search path)', tables: Object.values(layout.tables) }, 'indexer tables found');
        }
        this.lastLayout = seen;
        this.lastProblem = undefined;
        this.onDetected?.(layout);
        return layout;
      },
      (err: unknown) => {
        this.current = undefined; // try the catalog again next time
        if (err instanceof IndexerError && err.message !== this.lastProblem) {
          this.lastProblem = err.message;
          const fields = { code: err.code, reason: err.message };
          if (err.status === 503) this.logger?.warn(fields, 'indexer tables not there yet; lists answer 503');
          else this.logger?.error(fields, 'indexer tables do not match a known Ponder layout');
        }
        throw err;
      },
    );
    return this.current;
  }

  invalidate(): void {
    this.current = undefined;
  }
}

/** A fixed layout (library users who know it, tests). */
export function fixedLayout(layout: Layout): LayoutSource {
  return { get: () => Promise.resolve(layout), invalidate: () => {} };
}

/**
 * Runs `fn` with the current layout; when the database says a table or column is missing (the
 * indexer dropped and re-created its tables, or was upgraded), the layout is detected again and
 * `fn` retried once with it, so the error that reaches the client names what is missing.
 */
export async function withLayout<T>(source: LayoutSource | undefined, fn: (layout: Layout) => Promise<T>): Promise<T> {
  if (source === undefined) return fn(PONDER_04_LAYOUT);
  const layout = await source.get();
  try {
    return await fn(layout);
  } catch (err) {
    if (!isLayoutError(err)) throw err;
    source.invalidate();
    const again = await source.get();
    return fn(again);
  }
}
