import path from 'node:path';
import { rm, writeFile } from 'node:fs/promises';
import test from 'ava';
import { Command, CommanderError } from 'commander';
import { registerDbCommands } from '../../../lib/cli/db.js';
import { bound, statement } from '../../../lib/indexer/db/pool.js';
import { freePort } from '../../../lib/indexer/postgres/embedded.js';
import { startTestDatabase, tempDir, type TestDatabase } from '../../support/pg.js';

let pg: TestDatabase;
test.before(async () => {
  pg = await startTestDatabase({ migrate: false });
});
test.after.always(async () => {
  await pg?.close();
});

interface Outcome { out: string[]; err: string; exitCode: number }

async function omnigate(args: string[], env: Record<string, string | undefined>): Promise<Outcome> {
  const out: string[] = [];
  let err = '';
  const program = new Command('omnigate').exitOverride().configureOutput({ writeErr: (s) => { err += s; }, writeOut: () => {} });
  registerDbCommands(program, { env, print: (line) => out.push(line) });
  try {
    await program.parseAsync(['node', 'omnigate', ...args]);
    return { out, err, exitCode: 0 };
  } catch (e) {
    if (e instanceof CommanderError) return { out, err, exitCode: e.exitCode };
    throw e;
  }
}

const requests = async () => (await pg.db.one<{ n: number }>(bound(statement('SELECT count(*)::int AS n FROM "BridgeRequestEvents"')))).n;

const regclass = async (name: string) =>
  (await pg.db.one<{ r: string | null }>(bound(statement('SELECT to_regclass($1)::text AS r', [name])))).r;
const omnigateIndexes = async () => (await pg.db.any<{ indexname: string }>(
  "SELECT indexname FROM pg_indexes WHERE indexname LIKE 'omnigate%' AND indexname NOT LIKE '%_pkey' ORDER BY indexname")).map((r) => r.indexname);

test.serial('against DATABASE_URL, db migrate never creates the tables; it adds the indexes once they exist, again after a redeploy', async (t) => {
  // Before the indexer's first start: nothing is created (Ponder would exit on existing tables).
  const early = await omnigate(['db', 'migrate'], { DATABASE_URL: pg.url });
  t.is(early.exitCode, 0, early.err);
  t.regex(early.out.join('\n'), /do not exist yet in the search path: looked for BridgeRequestEvents \(or bridge_request_events\).*Nothing to index yet: start the Ponder indexer first/s);
  t.is(await regclass('"BridgeRequestEvents"'), null);

  // Demos: --create-tables applies the migrations (tables and indexes), once.
  const first = await omnigate(['db', 'migrate', '--create-tables'], { DATABASE_URL: pg.url });
  t.is(first.exitCode, 0, first.err);
  t.regex(first.out[0]!, /^Applied 5 migration\(s\) to postgres:\/\/omnigate:\*\*\*@127\.0\.0\.1:\d+\/omnigate: 0001_ponder_tables, 0002_query_indexes, 0003_transaction_id_hash_indexes, 0004_stats_indexes, 0005_status_indexes$/);
  t.is(first.out.length, 1, first.out.join('\n'));
  const indexes = await omnigateIndexes();
  t.is(indexes.length, 24);
  const second = await omnigate(['db', 'migrate'], { DATABASE_URL: pg.url });
  t.deepEqual(second.out, [`Indexes are up to date on the ponder-0.4 tables in the search path (${second.out[0]!.match(/\((postgres:[^)]*)\)/)![1]}).`]);
  t.false([...first.out, ...second.out].join().includes(new URL(pg.url).password));

  // A Ponder 0.4 redeploy drops and re-creates its tables (without our indexes): migrate puts them back.
  await pg.db.none('ALTER TABLE "BridgeRelayedEvents" RENAME TO "old_relays"');
  await pg.db.none('CREATE TABLE "BridgeRelayedEvents" (LIKE "old_relays" INCLUDING DEFAULTS)');
  await pg.db.none('DROP TABLE "old_relays"');
  t.deepEqual((await omnigateIndexes()).filter((n) => n.includes('relay')), []);
  const third = await omnigate(['db', 'migrate'], { DATABASE_URL: pg.url });
  t.is(third.exitCode, 0, third.err);
  t.deepEqual(third.out, ['Created 4 index(es) on the ponder-0.4 tables in the search path: omnigate_hash_relay_tx_id, omnigate_relay_time, omnigate_relay_stats, omnigate_relay_chain_block']);
  t.deepEqual(await omnigateIndexes(), indexes);
});

test.serial('db seed-demo --count N inserts N bridges, refuses to mix into existing data without --force', async (t) => {
  const seeded = await omnigate(['db', 'seed-demo', '--count', '60'], { DATABASE_URL: pg.url });
  t.is(seeded.exitCode, 0, seeded.err);
  t.regex(seeded.out[0]!, /^Seeded 60 demo bridge transactions into postgres:\/\/omnigate:\*\*\*@/);
  const after = await requests();
  t.true(after > 40 && after <= 60, `${after} requests (relays without requests make up the rest)`);
  const again = await omnigate(['db', 'seed-demo', '--count', '5'], { DATABASE_URL: pg.url });
  t.is(again.exitCode, 1);
  t.regex(again.err, /already holds \d+ bridge requests.*--force/);
  const forced = await omnigate(['db', 'seed-demo', '--count', '11', '--force'], { DATABASE_URL: pg.url });
  t.is(forced.exitCode, 0, forced.err);
  t.true((await requests()) > after);
});

test('bad arguments and environment exit non-zero with a clear message', async (t) => {
  const count = await omnigate(['db', 'seed-demo', '--count', 'many'], { DATABASE_URL: pg.url });
  t.is(count.exitCode, 2);
  t.regex(count.err, /--count must be an integer/);
  const url = await omnigate(['db', 'migrate'], { DATABASE_URL: 'mysql://x' });
  t.is(url.exitCode, 2);
  t.regex(url.err, /DATABASE_URL must be a postgres/);
  const timeout = await omnigate(['db', 'migrate'], { DATABASE_URL: pg.url, OMNIGATE_DB_STATEMENT_TIMEOUT_MS: 'soon' });
  t.is(timeout.exitCode, 2);
  t.regex(timeout.err, /OMNIGATE_DB_STATEMENT_TIMEOUT_MS/);
});

test('an unreachable DATABASE_URL fails quickly with exit 1 and never prints the password', async (t) => {
  const port = await freePort();
  // A connect timeout far beyond any wait here: failed before it, it failed on the refusal.
  const started = Date.now();
  const res = await omnigate(['db', 'migrate'], { DATABASE_URL: `postgres://admin:hunter2-secret@127.0.0.1:${port}/index`, OMNIGATE_DB_CONNECT_TIMEOUT_MS: '60000' });
  t.is(res.exitCode, 1);
  t.true(Date.now() - started < 60_000, 'on the refusal, not at the connect timeout');
  t.regex(res.err, /omnigate db migrate failed \(postgres:\/\/admin:\*\*\*@127\.0\.0\.1:\d+\/index\): .*ECONNREFUSED/);
  t.false(res.err.includes('hunter2'));
});

test('without DATABASE_URL the commands use the embedded PostgreSQL in OMNIGATE_PGDATA or --data-dir', async (t) => {
  const base = await tempDir('omnigate-cli-');
  try {
    const dataDir = path.join(base, 'pgdata');
    const migrated = await omnigate(['db', 'migrate'], { OMNIGATE_PGDATA: dataDir });
    t.is(migrated.exitCode, 0, migrated.err);
    t.is(migrated.out[0], `Applied 5 migration(s) to embedded PostgreSQL in ${dataDir}: 0001_ponder_tables, 0002_query_indexes, 0003_transaction_id_hash_indexes, 0004_stats_indexes, 0005_status_indexes`);
    const seeded = await omnigate(['db', 'seed-demo', '--count', '20', '--data-dir', dataDir], {});
    t.is(seeded.exitCode, 0, seeded.err);
    t.is(seeded.out[0], `Seeded 20 demo bridge transactions into embedded PostgreSQL in ${dataDir}.`);
  } finally {
    await rm(base, { recursive: true, force: true });
  }
});

test('--config applies the file\'s indexer: section (a set variable overrides it); a bad section exits 2 naming the key and its line', async (t) => {
  const base = await tempDir('omnigate-cli-config-');
  try {
    const file = path.join(base, 'omnigate.yaml');
    await writeFile(file, 'chains:\n  1:\n    rpcs: ["http://127.0.0.1:1"]\nindexer:\n  schema: from_the_file\n');
    const fromFile = await omnigate(['db', 'migrate', '--config', file], { DATABASE_URL: pg.url });
    t.is(fromFile.exitCode, 0, fromFile.err);
    t.regex(fromFile.out.join('\n'), /do not exist yet in schema "from_the_file"/);
    const overridden = await omnigate(['db', 'migrate', '--config', file], { DATABASE_URL: pg.url, OMNIGATE_INDEXER_SCHEMA: 'from_the_env' });
    t.regex(overridden.out.join('\n'), /do not exist yet in schema "from_the_env"/);
    const flag = await omnigate(['db', 'migrate', '--config', file, '--schema', 'from_the_flag'], { DATABASE_URL: pg.url });
    t.regex(flag.out.join('\n'), /do not exist yet in schema "from_the_flag"/);

    await writeFile(file, 'chains:\n  1:\n    rpcs: ["http://127.0.0.1:1"]\nindexer:\n  statementTimeoutMs: soon\n');
    const bad = await omnigate(['db', 'seed-demo', '--config', file], { DATABASE_URL: pg.url });
    t.is(bad.exitCode, 2);
    t.regex(bad.err, /indexer\.statementTimeoutMs \(line 5\): "soon" is not an integer/);
    const missing = await omnigate(['db', 'migrate', '--config', path.join(base, 'absent.yaml')], { DATABASE_URL: pg.url });
    t.is(missing.exitCode, 2);
    t.regex(missing.err, /cannot read the config file/);
  } finally {
    await rm(base, { recursive: true, force: true });
  }
});
