/**
 * `openIndexerDb`: the one place that decides where the index lives. With `databaseUrl` it
 * opens a pool on that PostgreSQL (migrations only when asked: an existing Ponder index may be
 * read-only for us; run `omnigate db migrate`). Opening does not connect: a database that does
 * not answer yet is not an error here (the server keeps serving the balancer; `watchDatabase`
 * logs it and /ready reports it), only a migration asked for fails. Without it, it starts (or reuses) the embedded
 * PostgreSQL in `dataDir` and applies the migrations, so a fresh checkout works with no setup.
 */
import { silentLogger, type Logger } from '../log.js';
import { closeIndexerDb, createIndexerDb, type DbOptions, type IndexerDb } from './db/pool.js';
import { redactCredentials } from '../upstream/redact.js';
import { DEFAULT_DATA_DIR, startEmbeddedPostgres } from './postgres/embedded.js';
import { migrate } from './db/migrate.js';

export interface OpenIndexerDbOptions extends DbOptions {
  /** PostgreSQL URL; when absent the embedded server is used. */
  databaseUrl?: string;
  /** Embedded server's data directory (default `.omnigate/pgdata` under the current directory). */
  dataDir?: string;
  /** Embedded server's port (default: a free port). */
  port?: number;
  logger?: Logger;
  /** Apply migrations on open. Default: true for the embedded server, false for DATABASE_URL. */
  migrate?: boolean;
  /** Tests only: embedded server without fsync, its directory deleted on close. */
  ephemeral?: boolean;
}

export interface OpenIndexerDb {
  db: IndexerDb;
  /** Ends the pool and stops the embedded server (if we started it). Safe to call twice. */
  close(): Promise<void>;
  embedded: boolean;
  /** Migrations applied while opening. */
  applied: string[];
  /** The embedded server's connection URL (with its password), for other processes of the same server (`omnigate serve --workers N`). */
  url?: string;
}

export async function openIndexerDb(options: OpenIndexerDbOptions = {}): Promise<OpenIndexerDb> {
  const logger = options.logger ?? silentLogger;
  const dbOptions: DbOptions = {
    ...(options.statementTimeoutMs === undefined ? {} : { statementTimeoutMs: options.statementTimeoutMs }),
    ...(options.connectTimeoutMs === undefined ? {} : { connectTimeoutMs: options.connectTimeoutMs }),
    ...(options.poolSize === undefined ? {} : { poolSize: options.poolSize }),
    onIdleError: (err) => logger.warn({ reason: err.message }, 'indexer database dropped an idle connection'),
  };

  if (options.databaseUrl) {
    logger.info({ database: redactCredentials(options.databaseUrl) }, 'indexer database: DATABASE_URL');
    const db = createIndexerDb(options.databaseUrl, dbOptions);
    let applied: string[] = [];
    if (options.migrate === true) {
      try {
        applied = await migrate(db, { logger });
      } catch (err) {
        await closeIndexerDb(db);
        throw err;
      }
    }
    return { db, embedded: false, applied, close: () => closeIndexerDb(db) };
  }

  const server = await startEmbeddedPostgres({
    dataDir: options.dataDir ?? DEFAULT_DATA_DIR,
    logger,
    ...(options.port === undefined ? {} : { port: options.port }),
    ...(options.ephemeral ? { ephemeral: true } : {}),
  });
  const db = createIndexerDb(server.url, dbOptions);
  let applied: string[] = [];
  try {
    if (options.migrate !== false) applied = await migrate(db, { logger });
  } catch (err) {
    await closeIndexerDb(db);
    await server.stop();
    throw err;
  }
  let closing: Promise<void> | undefined;
  return {
    db,
    embedded: true,
    applied,
    url: server.url,
    close: () => {
      closing ??= closeIndexerDb(db).finally(() => server.stop());
      return closing;
    },
  };
}
