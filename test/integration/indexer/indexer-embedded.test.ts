import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import test from 'ava';
import { bound, statement, type IndexerDb } from '../../../lib/indexer/db/pool.js';
import { AUTH_FILE } from '../../../lib/indexer/postgres/embedded.js';
import { migrate } from '../../../lib/indexer/db/migrate.js';
import { openIndexerDb } from '../../../lib/indexer/open.js';
import { seedDemo } from '../../../lib/indexer/seed.js';
import type { Logger } from '../../../lib/log.js';
import { tempDir } from '../../support/pg.js';
import { fromRoot } from '../../support/paths.js';

const run = promisify(execFile);
let base: string;
test.before(async () => {
  base = await tempDir('omnigate-embedded-');
});
test.after.always(async () => {
  if (base) await rm(base, { recursive: true, force: true });
});

function recordingLogger(lines: string[]): Logger {
  const log = (level: string) => (a: unknown, b?: unknown) => lines.push(`${level} ${JSON.stringify(a)} ${b === undefined ? '' : JSON.stringify(b)}`);
  const logger: Logger = { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error'), child: () => logger };
  return logger;
}

const count = async (db: IndexerDb) =>
  (await db.one<{ n: number }>(bound(statement('SELECT count(*)::int AS n FROM "BridgeRequestEvents"')))).n;
const serverPort = async (db: IndexerDb) => (await db.one<{ p: number }>(bound(statement('SELECT inet_server_port() AS p')))).p;

function portOpen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host: '127.0.0.1', port });
    s.once('connect', () => { s.destroy(); resolve(true); });
    s.once('error', () => resolve(false));
  });
}

test.serial('without DATABASE_URL an embedded PostgreSQL starts, migrates, persists and is shared', async (t) => {
  const dataDir = path.join(base, 'pgdata');
  const lines: string[] = [];
  const first = await openIndexerDb({ dataDir, logger: recordingLogger(lines) });
  t.true(first.embedded);
  t.deepEqual(first.applied, ['0001_ponder_tables', '0002_query_indexes', '0003_transaction_id_hash_indexes', '0004_stats_indexes', '0005_status_indexes']);
  t.true(existsSync(path.join(dataDir, 'PG_VERSION')));
  const auth = path.join(dataDir, AUTH_FILE);
  t.is((await stat(auth)).mode & 0o777, 0o600);
  const { password } = JSON.parse(await readFile(auth, 'utf8')) as { password: string };
  t.true(password.length >= 20);
  t.is(await seedDemo(first.db, { count: 40, seed: 7 }), 40);
  const stored = await count(first.db);
  t.true(stored > 30);
  // A second open in the same process shares the running server.
  const second = await openIndexerDb({ dataDir });
  t.deepEqual(second.applied, []);
  const port = await serverPort(first.db);
  t.is(await serverPort(second.db), port);
  await first.close();
  t.is(await count(second.db), stored, 'still served while another handle is open');
  await second.close();
  await second.close();
  t.false(await portOpen(port), 'stopped with the last handle');
  t.false(lines.join('\n').includes(password), 'the password is never logged');
  t.true(lines.some((l) => l.includes('embedded PostgreSQL started')));

  // Reopened later: same data, nothing to migrate.
  const again = await openIndexerDb({ dataDir });
  t.deepEqual(again.applied, []);
  t.is(await count(again.db), stored);
  t.deepEqual(await migrate(again.db), []);
  const recorded = await again.db.any<{ name: string; checksum: string }>(bound(statement('SELECT name, checksum FROM omnigate_migrations ORDER BY name')));
  t.deepEqual(recorded.map((r) => r.name), ['0001_ponder_tables', '0002_query_indexes', '0003_transaction_id_hash_indexes', '0004_stats_indexes', '0005_status_indexes']);
  t.true(recorded.every((r) => /^[0-9a-f]{64}$/.test(r.checksum)));

  // Another process opening the same directory attaches to the running server instead of failing.
  const child = fromRoot('test/fixtures/indexer/open-child.ts');
  const { stdout } = await run(process.execPath, ['--import', 'tsx', child, dataDir], { timeout: 30_000 });
  const report = JSON.parse(stdout) as { embedded: boolean; applied: string[]; port: number; requests: number };
  t.deepEqual(report, { embedded: true, applied: [], port: await serverPort(again.db), requests: stored });
  t.is(await count(again.db), stored, 'the child did not stop our server');
  await again.close();
});

test.serial('a non-empty directory that is not a data directory is refused with a clear message', async (t) => {
  const dataDir = path.join(base, 'not-pg');
  await mkdir(dataDir, { recursive: true });
  await writeFile(path.join(dataDir, 'notes.txt'), 'hello');
  const err = await t.throwsAsync(openIndexerDb({ dataDir }));
  t.regex(err!.message, /not empty and is not a PostgreSQL data directory/);
});

test.serial('a port already in use gives an error that says what PostgreSQL reported', async (t) => {
  const blocker = net.createServer().listen(0, '127.0.0.1');
  await new Promise((r) => blocker.once('listening', r));
  const { port } = blocker.address() as net.AddressInfo;
  try {
    const err = await t.throwsAsync(openIndexerDb({ dataDir: path.join(base, 'busy'), port }));
    t.regex(err!.message, /embedded PostgreSQL did not start/);
    t.regex(err!.message, /could not (?:bind|create listen socket)|Address already in use/i);
  } finally {
    await new Promise((r) => blocker.close(r));
  }
});

test.serial('DATABASE_URL is used as given and migrations run only when asked', async (t) => {
  const dataDir = path.join(base, 'pgdata');
  const host = await openIndexerDb({ dataDir });
  const url = (host.db.$cn as { connectionString: string }).connectionString;
  const external = await openIndexerDb({ databaseUrl: url });
  t.false(external.embedded);
  t.deepEqual(external.applied, []);
  t.true((await count(external.db)) > 0);
  await external.close();
  const migrating = await openIndexerDb({ databaseUrl: url, migrate: true });
  t.deepEqual(migrating.applied, []);
  await migrating.close();
  await host.close();
});
