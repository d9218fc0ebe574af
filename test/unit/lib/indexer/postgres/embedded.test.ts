/**
 * The embedded PostgreSQL: one server per data directory shared by every handle (it stops with the
 * last one; an ephemeral directory is then deleted), a directory holding something else refused,
 * and a free port on 127.0.0.1.
 */
import { existsSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import test from 'ava';
import { closeIndexerDb, createIndexerDb } from '../../../../../lib/indexer/db/pool.js';
import { AUTH_FILE, freePort, startEmbeddedPostgres } from '../../../../../lib/indexer/postgres/embedded.js';
import { tempDir } from '../../../../support/pg.js';

test('freePort should give a port that can be bound on 127.0.0.1', async (t) => {
  const port = await freePort();
  t.true(port > 0 && port < 65536);
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', resolve));
  await new Promise((resolve) => server.close(resolve));
});

test('should refuse a data directory that holds something other than a PostgreSQL cluster', async (t) => {
  const dir = await tempDir();
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await writeFile(path.join(dir, 'notes.txt'), 'mine');
  await t.throwsAsync(startEmbeddedPostgres({ dataDir: dir, ephemeral: true }), { message: /is not empty and is not a PostgreSQL data directory/ });
  t.true(existsSync(path.join(dir, 'notes.txt')), 'nothing was deleted');
});

test('should share one server among the handles of a directory, and stop it with the last', async (t) => {
  const base = await tempDir();
  t.teardown(() => rm(base, { recursive: true, force: true }));
  const dataDir = path.join(base, 'pgdata');
  const first = await startEmbeddedPostgres({ dataDir, ephemeral: true });
  let second: Awaited<ReturnType<typeof startEmbeddedPostgres>> | undefined;
  try {
    t.true(first.owned);
    t.true(existsSync(path.join(first.dataDir, AUTH_FILE)));
    second = await startEmbeddedPostgres({ dataDir, ephemeral: true });
    t.is(second.url, first.url);
    t.is(second.port, first.port);
    await first.stop();
    const db = createIndexerDb(second.url, { connectTimeoutMs: 5000 });
    try {
      t.deepEqual(await db.any('SELECT 1 AS one'), [{ one: 1 }], 'still serving while a handle holds it');
    } finally {
      await closeIndexerDb(db);
    }
  } finally {
    await first.stop();
    await second?.stop();
  }
  t.false(existsSync(first.dataDir), 'the ephemeral directory is deleted');
});
