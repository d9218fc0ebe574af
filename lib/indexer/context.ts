/**
 * Options of `indexerApi()` resolved once into the context every handler shares: the database,
 * the logger, the limits, and a clock from which each request derives its own QueryContext (time
 * windows are computed per request, never at start-up).
 */
import { silentLogger, type Logger } from '../log.js';
import type { IndexerDb } from './db/pool.js';
import { DEFAULT_LIMIT, MAX_INT4, MAX_LIMIT, type LimitSettings } from './read/params.js';
import { createOpsSource, type OpsSource } from './ops/stats.js';
import { WINDOW_DEFAULTS, type QueryContext } from './read/queries.js';
import { LayoutResolver, type LayoutSource } from './db/layout.js';

export interface IndexerApiOptions {
  /** `development` turns on detailed error bodies (messages, stacks, causes). */
  nodeEnv?: string;
  logger?: Logger;
  /** Optional floor (unix seconds): requests older than it are left out of request-based lists. */
  lookbackFloor?: number;
  /** Clock in unix seconds (tests pin it). Default: the system clock. */
  now?: () => number;
  /** Page size when `limit` is not given (default 100). */
  defaultLimit?: number;
  /** Largest accepted `limit` (default 1000). */
  maxLimit?: number;
  /** Age separating missing-relay from exceed-deadline, seconds (default 7 days). */
  missingRelayWindowSeconds?: number;
  /** Look-back of invalid-relays, seconds (default 14 days). */
  invalidRelayWindowSeconds?: number;
  /** Serve the GraphiQL page on GET /graphql from a browser (default true). */
  graphiql?: boolean;
  /** Deepest selection a GraphQL operation may have, introspection excluded (default 6). */
  graphqlMaxDepth?: number;
  /** Most rows one GraphQL operation may ask for: the sum of its list fields' limits (default 5 × maxLimit). */
  graphqlMaxCost?: number;
  /** Most fields of one GraphQL operation that each run a database query: lists and lookups (default 20). */
  graphqlMaxQueries?: number;
  /** /api/stats and /api/status are recomputed at most this often, seconds (default 10; 0: every request). */
  statsMaxAgeSeconds?: number;
  /** Schema the Ponder tables are in (config `indexer.schema`); default: the search path. */
  schema?: string;
  /** Where the layout comes from (default: detected from the catalog, layout.ts). */
  layouts?: LayoutSource;
}

export interface ApiContext {
  db: IndexerDb;
  dev: boolean;
  logger: Logger;
  limits: LimitSettings;
  graphiql: boolean;
  graphqlMaxDepth: number;
  graphqlMaxCost: number;
  graphqlMaxQueries: number;
  /** The tables' layout, detected from the catalog and cached (layout.ts). */
  layouts: LayoutSource;
  queryContext(): QueryContext;
  /** Stats and status snapshots (lib/indexer/ops/stats.ts), cached and shared with the Prometheus gauges. */
  ops: OpsSource;
}

export function createApiContext(db: IndexerDb, options: IndexerApiOptions = {}): ApiContext {
  const floor = options.lookbackFloor;
  if (floor !== undefined && !(Number.isInteger(floor) && floor >= 0 && floor <= MAX_INT4)) {
    // Bound as a PostgreSQL integer in every request-based list: anything else fails each of them.
    throw new RangeError(`lookbackFloor must be unix seconds, an integer from 0 to ${MAX_INT4} (got ${String(floor)})`);
  }
  const maxLimit = options.maxLimit ?? MAX_LIMIT;
  const defaultLimit = Math.min(options.defaultLimit ?? DEFAULT_LIMIT, maxLimit);
  const now = options.now ?? (() => Math.floor(Date.now() / 1000));
  const windows = {
    missingRelayWindowSeconds: options.missingRelayWindowSeconds ?? WINDOW_DEFAULTS.missingRelayWindowSeconds,
    invalidRelayWindowSeconds: options.invalidRelayWindowSeconds ?? WINDOW_DEFAULTS.invalidRelayWindowSeconds,
  };
  for (const [name, seconds] of Object.entries(windows)) {
    // `now - window` is bound as a PostgreSQL integer too (queries.ts).
    if (!(Number.isInteger(seconds) && seconds > 0 && seconds <= MAX_INT4)) {
      throw new RangeError(`${name} must be seconds, an integer from 1 to ${MAX_INT4} (got ${String(seconds)})`);
    }
  }
  const layouts = options.layouts
    ?? new LayoutResolver(db, { ...(options.schema === undefined ? {} : { schema: options.schema }), ...(options.logger ? { logger: options.logger } : {}) });
  const queryContext = (): QueryContext => ({
    now: now(),
    ...windows,
    layouts,
    ...(options.lookbackFloor === undefined ? {} : { lookbackFloor: options.lookbackFloor }),
  });
  return {
    db,
    layouts,
    ops: createOpsSource(db, queryContext, options.statsMaxAgeSeconds ?? 10),
    dev: options.nodeEnv === 'development',
    logger: options.logger ?? silentLogger,
    limits: { defaultLimit, maxLimit },
    graphiql: options.graphiql ?? true,
    graphqlMaxDepth: options.graphqlMaxDepth ?? 6,
    graphqlMaxCost: options.graphqlMaxCost ?? 5 * maxLimit,
    graphqlMaxQueries: options.graphqlMaxQueries ?? 20,
    queryContext,
  };
}

export { mountPrefix, splitUrl } from '../pipeline/url.js';
