/**
 * Component A, the bridge-event indexer API.
 *
 * Contract: `indexerApi(db)` is one connect/express handler for the app root serving /api/*,
 * /graphql, /openapi.json and /api-docs, calling `next()` for anything else; it never leaves a
 * request hanging (database failures become 503 problem+json within the pool's timeouts).
 * `openIndexerDb()` yields the database: DATABASE_URL, or an embedded PostgreSQL with migrations
 * applied. Only the CLI reads the environment (`readIndexerEnv(process.env)`).
 */
export { indexerApi, indexerNotFound, type IndexerApiOptions, type IndexerHandler, type IndexerApiHandler } from './api.js';
export { openIndexerDb, type OpenIndexerDb, type OpenIndexerDbOptions } from './open.js';
export { watchDatabase, type DatabaseWatch, type DatabaseWatchOptions } from './db/readiness.js';
export { createIndexerDb, closeIndexerDb, DB_DEFAULTS, type IndexerDb, type DbOptions } from './db/pool.js';
export { migrate, loadMigrations, defaultMigrationsDir } from './db/migrate.js';
export { seedDemo, generateDemo, DEMO_STATES, type DemoState } from './seed.js';
export { registerDbCommands, type DbCommandDeps } from '../cli/db.js';
export { readIndexerEnv, withIndexerConfig, INDEXER_ENV_KEYS, type IndexerConfig, type IndexerEnv } from './env.js';
export { startEmbeddedPostgres, DEFAULT_DATA_DIR, type EmbeddedServer, type EmbeddedOptions } from './postgres/embedded.js';
export { buildOpenApi } from './http/openapi.js';
export { decodeRequest } from './read/request-decode.js';
export type { DecodedRequest } from './read/fields.js';
export { runStats, runStatus, STAGES, PONDER_META, type Stage, type StageStat, type StatsSnapshot, type StatusSnapshot, type StatusSource, type ChainStatus, type OpsSource } from './ops/stats.js';
export { indexerGauges, DEFAULT_STATS_INTERVAL_SECONDS, type IndexerGauges, type IndexerGaugesOptions } from './ops/metrics.js';
export { buildIndexerSchema } from './graphql/schema.js';
export {
  missingRelay, exceedDeadline, missingProof, missingClaim, refundedAndRelayed, conflictingProofs, activeDisputes,
  invalidRelays, findTransaction, WINDOW_DEFAULTS, type QueryContext, type Page,
} from './read/queries.js';
export { DEFAULT_LIMIT, MAX_LIMIT, type ListFilter } from './read/params.js';
// The indexer's errors live in the one catalogue, lib/errors.ts. `MethodNotAllowedError` is kept as
// this module's name for the indexer's 405 (IndexerMethodNotAllowedError); the package's
// `MethodNotAllowedError` (lib/index.ts) is the balancer's.
export {
  IndexerError, InvalidParameterError, NotFoundError, DatabaseUnavailableError, IndexNotReadyError, LayoutMismatchError,
  IndexerMethodNotAllowedError, IndexerMethodNotAllowedError as MethodNotAllowedError,
} from '../errors.js';
export type * from './types.js';
