/**
 * A real PostgreSQL per test file: the embedded server from lib/indexer in a fresh temporary data
 * directory, on a free port, without fsync, deleted on stop. Runs as root too (as CI does): the
 * directory is made traversable for the `postgres` user the server then runs as.
 */
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { closeIndexerDb, createIndexerDb, type DbOptions, type IndexerDb } from '../../lib/indexer/db/pool.js';
import { startEmbeddedPostgres, type EmbeddedServer } from '../../lib/indexer/postgres/embedded.js';
import { migrate } from '../../lib/indexer/db/migrate.js';

export interface TestDatabase {
  /** Connection URL (contains the password). */
  url: string;
  db: IndexerDb;
  server: EmbeddedServer;
  /** Opens another pool on the same database (e.g. with other timeouts). */
  pool(options?: DbOptions): IndexerDb;
  /** Stops the server, pools and deletes the directory. Safe to call twice. */
  close(): Promise<void>;
}

export async function tempDir(prefix = 'omnigate-test-'): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  await chmod(dir, 0o755);
  return dir;
}

export async function startTestDatabase(options: { migrate?: boolean; db?: DbOptions } = {}): Promise<TestDatabase> {
  const base = await tempDir();
  const server = await startEmbeddedPostgres({ dataDir: path.join(base, 'pgdata'), ephemeral: true });
  const pools: IndexerDb[] = [];
  const pool = (o: DbOptions = {}) => {
    const p = createIndexerDb(server.url, { statementTimeoutMs: 5000, ...o });
    pools.push(p);
    return p;
  };
  const db = pool(options.db);
  if (options.migrate !== false) await migrate(db);
  let closing: Promise<void> | undefined;
  return {
    url: server.url,
    db,
    server,
    pool,
    close: () => {
      closing ??= (async () => {
        await Promise.all(pools.map((p) => closeIndexerDb(p)));
        await server.stop();
        await rm(base, { recursive: true, force: true });
      })();
      return closing;
    },
  };
}
