/**
 * The pg-promise connection pool the indexer reads through. Every connection carries a server
 * `statement_timeout`, a client-side `query_timeout` a little above it (for a server that stops
 * answering), and a `connectionTimeoutMillis`, so a dead database gives an error in seconds and a
 * request never hangs. All SQL is a `Statement` (`statement()`, `SqlBuilder` below): text with
 * $n placeholders plus a values array, bound by the server (no string interpolation of values anywhere; the one
 * exception, a LIMIT written as a checked integer, is explained at `SqlBuilder.integer`).
 * The API's lists run as named prepared statements when they have no parameters (`prepared()`),
 * so PostgreSQL plans them once per connection instead of once per request.
 */
import pgPromise from 'pg-promise';

/** A pg-promise database object; pass your own if you already use pg-promise. */
export type IndexerDb = pgPromise.IDatabase<object>;

export interface DbOptions {
  /** Server-side limit for one statement, ms (default 5000). */
  statementTimeoutMs?: number;
  /** Limit for opening a connection, ms (default 2000). */
  connectTimeoutMs?: number;
  /** Called when an idle pooled connection fails (the pool has already dropped it). */
  onIdleError?: (err: Error) => void;
  /** Maximum connections in the pool (default 10). */
  poolSize?: number;
  applicationName?: string;
}

export const DB_DEFAULTS = {
  statementTimeoutMs: 5000,
  connectTimeoutMs: 2000,
  poolSize: 10,
  applicationName: 'omnigate',
} as const;

// One library instance per process, as pg-promise recommends. `noWarnings` silences its
// "duplicate database object" warning, which fires legitimately when tests open the same URL twice.
const pgp = pgPromise({ noWarnings: true });

export function createIndexerDb(databaseUrl: string, options: DbOptions = {}): IndexerDb {
  const statementTimeout = options.statementTimeoutMs ?? DB_DEFAULTS.statementTimeoutMs;
  const db = pgp({
    connectionString: databaseUrl,
    max: options.poolSize ?? DB_DEFAULTS.poolSize,
    connectionTimeoutMillis: options.connectTimeoutMs ?? DB_DEFAULTS.connectTimeoutMs,
    statement_timeout: statementTimeout,
    query_timeout: statementTimeout + 1000,
    idleTimeoutMillis: 10_000,
    keepAlive: true,
    application_name: options.applicationName ?? DB_DEFAULTS.applicationName,
  });
  // An idle connection that the server drops (restart, failover, shutdown) makes the pool emit
  // 'error'; without a listener that would crash the process. The pool discards the connection
  // and the next query opens a new one (or answers 503), so noting it is all there is to do.
  (db.$pool as unknown as { on(event: 'error', fn: (err: Error) => void): void }).on('error', (err) => {
    options.onIdleError?.(err);
  });
  return db;
}

interface PoolState {
  ended?: boolean;
  ending?: boolean;
  totalCount: number;
  end(): Promise<void>;
  on(event: 'remove', listener: () => void): unknown;
  off(event: 'remove', listener: () => void): unknown;
}

/**
 * Ends the pool and waits until every connection has really closed (pg's `end()` resolves as
 * soon as it has *asked* them to), so stopping the server next cannot surprise a closing socket
 * with a "terminating connection" error. Safe to call twice.
 */
export async function closeIndexerDb(db: IndexerDb): Promise<void> {
  const pool = db.$pool as unknown as PoolState;
  if (pool.ended || pool.ending) return;
  let remaining = pool.totalCount;
  let onRemove: () => void = () => {};
  const allClosed = new Promise<void>((resolve) => {
    if (remaining === 0) resolve();
    onRemove = () => {
      remaining -= 1;
      if (remaining <= 0) resolve();
    };
    pool.on('remove', onRemove);
  });
  let timer: NodeJS.Timeout | undefined;
  try {
    await pool.end();
    await Promise.race([allClosed, new Promise<void>((resolve) => { timer = setTimeout(resolve, 2000); })]);
  } finally {
    clearTimeout(timer);
    pool.off('remove', onRemove);
  }
}

/** A parameterised statement: `text` uses $1…$n, `values` are bound by the server. */
export interface Statement {
  text: string;
  values: unknown[];
}

/**
 * Builds a statement by pushing values and getting their placeholders back, with an optional
 * cast so Postgres knows each parameter's type without guessing.
 */
export class SqlBuilder {
  readonly values: unknown[] = [];
  param(value: unknown, cast?: 'integer' | 'text' | 'numeric'): string {
    this.values.push(value);
    return `$${this.values.length}${cast ? `::${cast}` : ''}`;
  }
  /**
   * An integer written into the text instead of bound, for LIMIT only, so that an unfiltered list
   * has no parameters and its plan can be made once (see `prepared()`): a plan made without the
   * value of a bound LIMIT assumes "a tenth of the rows" and turns the 101-row index walk into a
   * parallel scan of the table. Only a safe integer passes, so nothing but digits reach the SQL.
   */
  integer(value: number): string {
    if (!Number.isSafeInteger(value)) throw new TypeError(`expected an integer, got ${String(value)}`);
    return String(value);
  }
  statement(text: string): Statement {
    return { text, values: this.values };
  }
}

export function statement(text: string, values: unknown[] = []): Statement {
  return { text, values };
}

/** The pg-promise form of a statement: sent with the extended protocol, values bound server-side. */
export function bound(st: Statement): pgPromise.ParameterizedQuery {
  return new pgp.ParameterizedQuery({ text: st.text, values: st.values });
}

/**
 * At most this many statement texts get a prepared-statement name (per process). PostgreSQL keeps
 * each one, with its plan (about 100 kB for a list query), in every pooled connection that ran it
 * until the connection closes, so the set must stay bounded even if a client walks through every
 * page size; the lists a dashboard polls take a handful. Later texts simply run unnamed.
 */
export const MAX_PREPARED_STATEMENTS = 64;
const preparedNames = new Map<string, string>();

/**
 * The pg-promise form of a statement, as a named prepared statement when it has no parameters:
 * pg then parses it once per connection, and PostgreSQL plans it once and reuses the plan (with
 * no parameters a custom plan could not be better). This takes the planning out of every request:
 * for the pending lists on a large index, planning cost about as much as executing them.
 *
 * A statement with parameters runs unnamed and is planned for its values each time, as before:
 * PostgreSQL would switch a named one to a generic plan after five runs whenever that plan's
 * *estimated* cost is no higher, and for lists filtered by chain id such generic plans were
 * several times slower than the custom ones (figures in test/bench/README.md).
 *
 * The name is derived from the text and stable for the process, so one name never stands for
 * two texts.
 */
export function prepared(st: Statement): pgPromise.PreparedStatement | pgPromise.ParameterizedQuery {
  if (st.values.length > 0) return bound(st);
  let name = preparedNames.get(st.text);
  if (name === undefined) {
    if (preparedNames.size >= MAX_PREPARED_STATEMENTS) return bound(st);
    name = `omnigate_q${preparedNames.size + 1}`;
    preparedNames.set(st.text, name);
  }
  return new pgp.PreparedStatement({ name, text: st.text });
}

/** Runs a statement and returns its rows; `prepare` lets it run as a named prepared statement (`prepared()`). */
export async function rows<T>(db: pgPromise.IBaseProtocol<object>, st: Statement, options: { prepare?: boolean } = {}): Promise<T[]> {
  return db.any<T>(options.prepare ? prepared(st) : bound(st));
}
