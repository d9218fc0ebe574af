/**
 * Schema migrations: the SQL files in `config/migrations/` (named `NNNN_description.sql`), applied
 * in name order, each in its own transaction, each recorded in `omnigate_migrations` with a
 * checksum. A session advisory lock serialises concurrent migrators (two processes starting at
 * once), and the statement timeout is lifted inside migrations because building an index on a
 * large existing index can legitimately take minutes.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { silentLogger, type Logger } from '../../log.js';
import { bound, statement, type IndexerDb } from './pool.js';

export const MIGRATIONS_TABLE = 'omnigate_migrations';
/** Arbitrary constant key for pg_advisory_lock ("omnigate" as ASCII, truncated to int8 range). */
const LOCK_KEY = '7957888151216449889';

export interface Migration {
  name: string;
  sql: string;
  checksum: string;
}

/**
 * Finds `config/migrations` from this module, whether it runs from `lib/indexer/db/` (tsx) or
 * from `dist/lib/indexer/db/` (compiled): the folder is looked up in the ancestors.
 */
export function defaultMigrationsDir(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i += 1) {
    const candidate = path.join(dir, 'config', 'migrations');
    if (existsSync(candidate)) return candidate;
    dir = path.dirname(dir);
  }
  throw new Error('config/migrations not found next to the omnigate package; is the package complete?');
}

export async function loadMigrations(dir: string = defaultMigrationsDir()): Promise<Migration[]> {
  const files = (await readdir(dir)).filter((f) => /^\d{4}_[\w-]+\.sql$/.test(f)).sort();
  return Promise.all(
    files.map(async (file) => {
      const sql = await readFile(path.join(dir, file), 'utf8');
      return { name: file.replace(/\.sql$/, ''), sql, checksum: createHash('sha256').update(sql).digest('hex') };
    }),
  );
}

/** Applies the migrations not applied yet; returns their names in order (empty when up to date). */
export async function migrate(db: IndexerDb, options: { dir?: string; logger?: Logger } = {}): Promise<string[]> {
  const logger = options.logger ?? silentLogger;
  const migrations = await loadMigrations(options.dir);
  const applied: string[] = [];
  await db.task('omnigate-migrate', async (t) => {
    await t.any(bound(statement('SELECT pg_advisory_lock($1::bigint)', [LOCK_KEY])));
    try {
      await t.none(`CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (
        name text PRIMARY KEY,
        checksum text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now())`);
      const done = new Map(
        (await t.any<{ name: string; checksum: string }>(`SELECT name, checksum FROM ${MIGRATIONS_TABLE}`)).map((r) => [r.name, r.checksum]),
      );
      for (const m of migrations) {
        const previous = done.get(m.name);
        if (previous !== undefined) {
          if (previous !== m.checksum) logger.warn({ migration: m.name }, 'migration file changed after it was applied; not re-applied');
          continue;
        }
        await t.tx(async (tx) => {
          await tx.none('SET LOCAL statement_timeout = 0');
          // A migration file is run as one simple-protocol query (several statements, no values).
          await tx.multi(m.sql);
          await tx.none(bound(statement(`INSERT INTO ${MIGRATIONS_TABLE} (name, checksum) VALUES ($1, $2)`, [m.name, m.checksum])));
        });
        logger.info({ migration: m.name }, 'migration applied');
        applied.push(m.name);
      }
    } finally {
      await t.any(bound(statement('SELECT pg_advisory_unlock($1::bigint)', [LOCK_KEY])));
    }
  });
  return applied;
}
