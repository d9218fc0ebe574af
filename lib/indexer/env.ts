/**
 * The environment variables the indexer understands, read in one pure function so the CLI is
 * the only place that touches `process.env` (it passes it in).
 */
import { DEFAULT_DATA_DIR } from './postgres/data-dir.js';
import { MAX_INT4 as MAX_UNIX_SECONDS } from './read/params.js';

export interface IndexerEnv {
  databaseUrl?: string;
  dataDir: string;
  port?: number;
  statementTimeoutMs?: number;
  connectTimeoutMs?: number;
  lookbackFloor?: number;
  nodeEnv?: string;
  /** Seconds between refreshes of the indexer's Prometheus gauges (lib/indexer/ops/metrics.ts; default 30). */
  statsIntervalSeconds?: number;
  /** Schema the Ponder tables are in (Ponder ≥0.7 `--schema`, or its `--views-schema`); default: the search path. */
  schema?: string;
}

/** Names of the variables, for docs and error messages. */
export const INDEXER_ENV_KEYS = {
  databaseUrl: 'DATABASE_URL',
  dataDir: 'OMNIGATE_PGDATA',
  port: 'OMNIGATE_PG_PORT',
  statementTimeoutMs: 'OMNIGATE_DB_STATEMENT_TIMEOUT_MS',
  connectTimeoutMs: 'OMNIGATE_DB_CONNECT_TIMEOUT_MS',
  lookbackFloor: 'OMNIGATE_LOOKBACK_FLOOR',
  nodeEnv: 'NODE_ENV',
  statsIntervalSeconds: 'OMNIGATE_INDEXER_STATS_INTERVAL_S',
  schema: 'OMNIGATE_INDEXER_SCHEMA',
} as const;

function positiveInt(env: Record<string, string | undefined>, key: string, allowZero = false): number | undefined {
  const raw = env[key];
  if (raw === undefined || raw.trim() === '') return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < (allowZero ? 0 : 1)) throw new Error(`${key} must be a ${allowZero ? 'non-negative' : 'positive'} integer (got "${raw}")`);
  return n;
}

/**
 * DATABASE_URL as node-postgres reads it (pg-connection-string: spaces and stray `%` encoded
 * first, an empty host allowed for a socket named in `?host=`), or undefined when it cannot.
 */
export function parseDatabaseUrl(text: string): URL | undefined {
  const str = / |%[^a-f0-9]|%[a-f0-9][^a-f0-9]/i.test(text) ? encodeURI(text).replace(/%25(\d\d)/g, '%$1') : text;
  for (const candidate of [str, str.replace('@/', '@___DUMMY___/')]) {
    if (URL.canParse(candidate)) return new URL(candidate);
  }
  return undefined;
}

/** Reads and validates the indexer's variables; throws an Error naming the bad variable. */
export function readIndexerEnv(env: Record<string, string | undefined>): IndexerEnv {
  const k = INDEXER_ENV_KEYS;
  const out: IndexerEnv = { dataDir: env[k.dataDir]?.trim() || DEFAULT_DATA_DIR };
  const url = env[k.databaseUrl]?.trim();
  if (url) {
    if (!/^postgres(?:ql)?:\/\//.test(url)) throw new Error(`${k.databaseUrl} must be a postgres:// or postgresql:// URL`);
    if (!parseDatabaseUrl(url)) {
      // Not quoted: the password is in it, and the part that does not parse may be the password.
      throw new Error(
        `${k.databaseUrl} is not a URL node-postgres can read (its value is not shown: it holds the password): write `
        + 'postgres://USER:PASSWORD@HOST:PORT/DATABASE with a port from 1 to 65535, an IPv6 host in [brackets], and the '
        + 'password\'s special characters percent-encoded (@ as %40, / as %2F, # as %23, : as %3A)',
      );
    }
    out.databaseUrl = url;
  }
  const port = positiveInt(env, k.port);
  if (port !== undefined) {
    if (port > 65535) throw new Error(`${k.port} must be a port number (got "${env[k.port]}")`);
    out.port = port;
  }
  const statementTimeoutMs = positiveInt(env, k.statementTimeoutMs);
  if (statementTimeoutMs !== undefined) out.statementTimeoutMs = statementTimeoutMs;
  const connectTimeoutMs = positiveInt(env, k.connectTimeoutMs);
  if (connectTimeoutMs !== undefined) out.connectTimeoutMs = connectTimeoutMs;
  const lookbackFloor = positiveInt(env, k.lookbackFloor, true);
  if (lookbackFloor !== undefined) {
    // Compared with Ponder's integer blockTimestamp column: a larger value (unix milliseconds,
    // say) made every request-based list fail with a 500.
    if (lookbackFloor > MAX_UNIX_SECONDS) {
      throw new Error(`${k.lookbackFloor} must be unix seconds, at most ${MAX_UNIX_SECONDS} (got "${env[k.lookbackFloor]}"; milliseconds?)`);
    }
    out.lookbackFloor = lookbackFloor;
  }
  if (env[k.nodeEnv]) out.nodeEnv = env[k.nodeEnv];
  const statsIntervalSeconds = positiveInt(env, k.statsIntervalSeconds);
  if (statsIntervalSeconds !== undefined) out.statsIntervalSeconds = statsIntervalSeconds;
  const schema = env[k.schema]?.trim();
  if (schema) out.schema = schema;
  return out;
}

/** The indexer's settings the YAML config may give (its `indexer:` section). */
export interface IndexerConfig {
  readonly schema?: string;
  readonly statementTimeoutMs?: number;
  readonly connectTimeoutMs?: number;
  readonly lookbackFloor?: number;
  readonly statsIntervalSeconds?: number;
}

/**
 * The environment's settings with the config's `indexer:` section under them: a variable that is
 * set wins (OMNIGATE_INDEXER_SCHEMA over `indexer.schema`, …), an unset one takes the config's
 * value. DATABASE_URL, NODE_ENV and the embedded database's settings come from the environment only.
 */
export function withIndexerConfig(env: IndexerEnv, config: IndexerConfig): IndexerEnv {
  return {
    ...env,
    ...(env.schema === undefined && config.schema !== undefined && { schema: config.schema }),
    ...(env.statementTimeoutMs === undefined && config.statementTimeoutMs !== undefined && { statementTimeoutMs: config.statementTimeoutMs }),
    ...(env.connectTimeoutMs === undefined && config.connectTimeoutMs !== undefined && { connectTimeoutMs: config.connectTimeoutMs }),
    ...(env.lookbackFloor === undefined && config.lookbackFloor !== undefined && { lookbackFloor: config.lookbackFloor }),
    ...(env.statsIntervalSeconds === undefined && config.statsIntervalSeconds !== undefined && { statsIntervalSeconds: config.statsIntervalSeconds }),
  };
}
