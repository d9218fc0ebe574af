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
import { AUTH_FILE, freePort, onFreePort, startEmbeddedPostgres } from '../../../../../lib/indexer/postgres/embedded.js';
import { tempDir } from '../../../../support/pg.js';

test('freePort should give a port that can be bound on 127.0.0.1', async (t) => {
  const port = await freePort();
  t.true(port > 0 && port < 65536);
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, '127.0.0.1', resolve));
  await new Promise((resolve) => server.close(resolve));
});

/** Listens on `port` of 127.0.0.1 (what a server's bind does): fails with EADDRINUSE when it is taken. */
function bindOn(port: number): Promise<net.Server> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(port, '127.0.0.1', () => resolve(srv));
  });
}

test('onFreePort should try another free port when the one picked was taken before the bind, and only then', async (t) => {
  const squatter = await bindOn(0);
  t.teardown(() => squatter.close());
  const taken = (squatter.address() as net.AddressInfo).port;
  const picked: number[] = [];
  let lastError: NodeJS.ErrnoException | undefined;
  // The first pick is a port another process holds; the next ones are free.
  const pick = async () => {
    const port = picked.length === 0 ? taken : await freePort();
    picked.push(port);
    return port;
  };
  const start = async (port: number) => {
    try {
      return await bindOn(port);
    } catch (err) {
      lastError = err as NodeJS.ErrnoException;
      throw err;
    }
  };
  const { value, port } = await onFreePort(start, () => lastError?.code === 'EADDRINUSE', pick);
  t.teardown(() => value.close());
  t.is(picked.length, 2);
  t.is(picked[0]!, taken);
  t.is(port, picked[1]!);
  t.is((value.address() as net.AddressInfo).port, port);

  // Another failure is not retried; a port taken every time fails after the attempts.
  let calls = 0;
  const broken = new Error('initdb is broken');
  await t.throwsAsync(onFreePort(async () => { calls += 1; throw broken; }, () => false), { is: broken });
  t.is(calls, 1);
  calls = 0;
  await t.throwsAsync(onFreePort(async (p) => { calls += 1; return bindOn(p); }, () => true, async () => taken, 3), { code: 'EADDRINUSE' });
  t.is(calls, 3);
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
