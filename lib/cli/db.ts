/**
 * `omnigate db migrate` and `omnigate db seed-demo [--count N]`. Both use DATABASE_URL when set,
 * else the embedded PostgreSQL in OMNIGATE_PGDATA (default .omnigate/pgdata), which is started
 * for the command and stopped afterwards (or shared, if `omnigate serve` already runs it). With
 * `--config <file>`, the file's `indexer:` section applies as it does for `omnigate serve` (a set
 * environment variable overrides its key).
 */
import type { Command } from 'commander';
import type { Logger } from '../log.js';
import { silentLogger } from '../log.js';
import { redactCredentials } from '../upstream/redact.js';
import { loadConfigFile } from '../../config/index.js';
import { readIndexerEnv, withIndexerConfig, type IndexerEnv } from '../indexer/env.js';
import { IndexerError } from '../errors.js';
import type { OpenIndexerDb } from '../indexer/open.js';

/**
 * The database stack (pg-promise, the migrations, the demo seed), loaded when a db command runs:
 * registering the commands is part of every CLI start (`omnigate serve`, each cluster worker).
 */
const databaseStack = async () => {
  const [pool, migrations, indexes, layout, open, seed] = await Promise.all([
    import('../indexer/db/pool.js'), import('../indexer/db/migrate.js'), import('../indexer/db/indexes.js'),
    import('../indexer/db/layout.js'), import('../indexer/open.js'), import('../indexer/seed.js'),
  ]);
  return { bound: pool.bound, statement: pool.statement, migrate: migrations.migrate, ensureIndexes: indexes.ensureIndexes, detectLayout: layout.detectLayout, openIndexerDb: open.openIndexerDb, seedDemo: seed.seedDemo };
};

export interface DbCommandDeps {
  /** Environment to read (default process.env). */
  env?: Record<string, string | undefined>;
  logger?: Logger;
  /** Where results are printed (default stdout). */
  print?: (line: string) => void;
  /** Where progress lines of long commands go (default stderr, so stdout keeps the result). */
  progress?: (line: string) => void;
}

/** Seeds of at least this many bridges report their progress (smaller ones take a second or two). */
const progressFromCount = 2_000;

/** Reports progress at each tenth of the total: at most ten lines, whatever the size. */
function tenths(report: (line: string) => void): (done: number, total: number) => void {
  let shown = 0;
  return (done, total) => {
    const tenth = Math.floor((10 * done) / total);
    if (tenth <= shown) return;
    shown = tenth;
    report(`seed-demo: ${done}/${total} rows inserted (${tenth * 10}%)`);
  };
}

/** Without a logger, warnings (e.g. where the embedded PostgreSQL keeps its data as root) still reach stderr. */
const stderrWarnings: Logger = {
  ...silentLogger,
  warn: ((obj: Record<string, unknown> | string, msg?: string) => {
    process.stderr.write(`omnigate: ${typeof obj === 'string' ? obj : msg ?? ''}\n`);
  }) as Logger['warn'],
  child: () => stderrWarnings,
  isLevelEnabled: (level) => level === 'warn' || level === 'error',
};

async function withDatabase<T>(env: IndexerEnv, deps: DbCommandDeps, fn: (open: OpenIndexerDb) => Promise<T>): Promise<T> {
  const { openIndexerDb } = await databaseStack();
  const open = await openIndexerDb({
    ...(env.databaseUrl ? { databaseUrl: env.databaseUrl } : {}),
    dataDir: env.dataDir,
    ...(env.port === undefined ? {} : { port: env.port }),
    ...(env.statementTimeoutMs === undefined ? {} : { statementTimeoutMs: env.statementTimeoutMs }),
    ...(env.connectTimeoutMs === undefined ? {} : { connectTimeoutMs: env.connectTimeoutMs }),
    logger: deps.logger ?? (deps.print ? silentLogger : stderrWarnings),
  });
  try {
    return await fn(open);
  } finally {
    await open.close();
  }
}

function where(env: IndexerEnv): string {
  return env.databaseUrl ? redactCredentials(env.databaseUrl) : `embedded PostgreSQL in ${env.dataDir}`;
}

function message(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  return redactCredentials(text);
}

export function registerDbCommands(program: Command, deps: DbCommandDeps = {}): void {
  const print = deps.print ?? ((line: string) => process.stdout.write(`${line}\n`));
  const progress = deps.progress ?? ((line: string) => process.stderr.write(`${line}\n`));
  const envOf = async (cmd: Command, opts: { dataDir?: string; config?: string }): Promise<IndexerEnv> => {
    let env: IndexerEnv;
    try {
      env = readIndexerEnv(deps.env ?? process.env);
    } catch (err) {
      return cmd.error(`omnigate db: ${message(err)}`, { exitCode: 2, code: 'omnigate.db.config' });
    }
    if (opts.config !== undefined) {
      try {
        env = withIndexerConfig(env, (await loadConfigFile(opts.config, { env: deps.env ?? process.env })).indexer);
      } catch (err) {
        return cmd.error(`omnigate db: ${message(err)}`, { exitCode: 2, code: 'omnigate.db.config' });
      }
    }
    return opts.dataDir ? { ...env, dataDir: opts.dataDir } : env;
  };
  const configOption = ['-c, --config <file>', "the YAML config whose indexer: section applies (schema, timeouts), as with omnigate serve"] as const;

  const db = program.command('db').description('Manage the indexer database (DATABASE_URL, or the embedded PostgreSQL when unset)');

  db.command('migrate')
    .description('Add the indexes the API needs to the indexer\'s tables (and, on the embedded PostgreSQL or with --create-tables, create the tables)')
    .option('--data-dir <dir>', 'embedded PostgreSQL data directory (env OMNIGATE_PGDATA, default .omnigate/pgdata)')
    .option('--schema <name>', 'schema of the Ponder tables (env OMNIGATE_INDEXER_SCHEMA; default: the search path)')
    .option('--create-tables', 'also create the six tables in the Ponder 0.4 layout (demos; never next to a real Ponder, which creates its own)')
    .option(...configOption)
    .action(async (opts: { dataDir?: string; schema?: string; createTables?: boolean; config?: string }, cmd: Command) => {
      const env = await envOf(cmd, opts);
      const schema = opts.schema ?? env.schema;
      const logger = deps.logger ?? silentLogger;
      try {
        const { migrate, detectLayout, ensureIndexes } = await databaseStack();
        const lines = await withDatabase(env, deps, async (open) => {
          const out: string[] = [];
          // Tables only where omnigate owns the database: against an external one, Ponder creates
          // them (and exits if they already exist), so only indexes are added.
          if (open.embedded || opts.createTables) {
            const applied = [...open.applied, ...(await migrate(open.db, { logger }))];
            out.push(applied.length === 0
              ? `Database is up to date (${where(env)}).`
              : `Applied ${applied.length} migration(s) to ${where(env)}: ${applied.join(', ')}`);
          }
          let layout;
          try {
            layout = await detectLayout(open.db, schema === undefined ? {} : { schema });
          } catch (err) {
            if (err instanceof IndexerError && err.status === 503) {
              out.push(`${err.message.replace(/ Start the Ponder.*$/, '')} Nothing to index yet: start the Ponder indexer first; `
                + '`omnigate serve` adds the indexes when the tables appear (or run `omnigate db migrate` again).');
              return out;
            }
            throw err;
          }
          const result = await ensureIndexes(open.db, layout, { logger });
          const tables = `${layout.kind} tables in ${layout.schema === undefined ? 'the search path' : `schema "${layout.schema}"`}`;
          if (result.created.length > 0) out.push(`Created ${result.created.length} index(es) on the ${tables}: ${result.created.join(', ')}`);
          else if (!open.embedded && !opts.createTables) out.push(`Indexes are up to date on the ${tables} (${where(env)}).`);
          return out;
        });
        for (const line of lines) print(line);
      } catch (err) {
        cmd.error(`omnigate db migrate failed (${where(env)}): ${message(err)}`, { exitCode: 1, code: 'omnigate.db.migrate' });
      }
    });

  db.command('seed-demo')
    .description('Fill the database with a generated demo dataset (every bridge state, 12 chains)')
    .option('--count <n>', 'number of bridge transactions to generate', '500')
    .option('--force', 'seed even if the database already holds bridge events')
    .option('--data-dir <dir>', 'embedded PostgreSQL data directory (env OMNIGATE_PGDATA, default .omnigate/pgdata)')
    .option(...configOption)
    .action(async (opts: { count: string; force?: boolean; dataDir?: string; config?: string }, cmd: Command) => {
      const count = Number(opts.count);
      if (!/^\d+$/.test(opts.count) || count < 1 || count > 1_000_000) {
        cmd.error(`omnigate db seed-demo: --count must be an integer from 1 to 1000000 (got "${opts.count}")`, { exitCode: 2, code: 'omnigate.db.args' });
      }
      const env = await envOf(cmd, opts);
      try {
        const { migrate, bound, statement, seedDemo } = await databaseStack();
        const inserted = await withDatabase(env, deps, async (open) => {
          await migrate(open.db, { logger: deps.logger ?? silentLogger });
          const existing = await open.db.one<{ n: number }>(bound(statement('SELECT count(*)::int AS n FROM "BridgeRequestEvents"')));
          if (existing.n > 0 && !opts.force) {
            throw new Error(`the database already holds ${existing.n} bridge requests; refusing to mix demo data in (pass --force to add anyway)`);
          }
          if (count < progressFromCount) return seedDemo(open.db, { count });
          progress(`seed-demo: generating ${count} demo bridge transactions…`);
          return seedDemo(open.db, { count, onProgress: tenths(progress) });
        });
        print(`Seeded ${inserted} demo bridge transactions into ${where(env)}.`);
      } catch (err) {
        cmd.error(`omnigate db seed-demo failed (${where(env)}): ${message(err)}`, { exitCode: 1, code: 'omnigate.db.seed' });
      }
    });
}
