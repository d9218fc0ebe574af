/**
 * Where the embedded PostgreSQL keeps its data unless told (OMNIGATE_PGDATA, `indexer.dataDir`):
 * a module of its own so that reading the indexer's environment (../env.ts, read by every
 * `omnigate serve`) does not load the database stack (pg-promise) with ./embedded.ts.
 */
import path from 'node:path';

export const DEFAULT_DATA_DIR = path.join('.omnigate', 'pgdata');
