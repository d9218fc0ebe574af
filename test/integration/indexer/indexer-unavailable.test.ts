import { once } from 'node:events';
import net from 'node:net';
import test from 'ava';
import { indexerApi } from '../../../lib/indexer/api.js';
import { closeIndexerDb, createIndexerDb, DB_DEFAULTS, type IndexerDb } from '../../../lib/indexer/db/pool.js';
import { freePort } from '../../../lib/indexer/postgres/embedded.js';
import { startTestDatabase, type TestDatabase } from '../../support/pg.js';
import { migrate } from '../../../lib/indexer/db/migrate.js';
import { NOW, loadFixtures } from '../../fixtures/indexer/bridges.js';
import { get, graphql, serve, type Running } from '../../fixtures/indexer/server.js';

const SECRET = 's3cr3t-Pa55';
const cleanups: (() => Promise<unknown>)[] = [];
test.after.always(async () => {
  for (const fn of cleanups.reverse()) await fn().catch(() => {});
});

async function served(db: IndexerDb, nodeEnv?: string): Promise<Running> {
  const logs: string[] = [];
  const logger = {
    debug: () => {}, info: () => {}, warn: (o: unknown) => logs.push(JSON.stringify(o)), error: (o: unknown) => logs.push(JSON.stringify(o)),
    child: () => logger,
  };
  const running = await serve(indexerApi(db, { now: () => NOW, logger, ...(nodeEnv ? { nodeEnv } : {}) }));
  cleanups.push(() => running.close());
  (running as Running & { logs: string[] }).logs = logs;
  return running;
}

/**
 * Slack on top of a configured timeout when a test checks that an answer comes by it rather than
 * hangs: wide, for a shared machine under load. Not a speed bound.
 */
const slackMs = 5_000;

test('a database that refuses connections gives 503 problem+json at once, without leaking the password', async (t) => {
  const port = await freePort();
  // A connect timeout far beyond any wait here: answered before it, the refusal was the answer.
  const connectTimeoutMs = 60_000;
  const db = createIndexerDb(`postgres://reader:${SECRET}@127.0.0.1:${port}/index`, { connectTimeoutMs });
  cleanups.push(() => closeIndexerDb(db));
  for (const nodeEnv of [undefined, 'development']) {
    const app = await served(db, nodeEnv);
    const started = Date.now();
    const res = await get<Record<string, unknown>>(`${app.base}/api/pending-transactions/missing-relay`);
    t.true(Date.now() - started < connectTimeoutMs, 'on the refusal, not at the connect timeout');
    t.is(res.status, 503);
    t.is(res.headers.get('content-type'), 'application/problem+json');
    t.is(res.headers.get('retry-after'), '5');
    t.like(res.body, { status: 503, code: 'DATABASE_UNAVAILABLE', title: 'Database unavailable', type: 'urn:omnigate:problem:database-unavailable' });
    t.false(res.text.includes(SECRET));
    t.false((app as Running & { logs: string[] }).logs.join('\n').includes(SECRET));
    if (nodeEnv === 'development') t.regex(String((res.body.debug as { message?: string })?.message), /ECONNREFUSED/);
    else t.is(res.body.debug, undefined);
  }
});

test('a server that accepts but never answers gives 503 within the connect timeout', async (t) => {
  const sockets: net.Socket[] = [];
  const blackhole = net.createServer((s) => sockets.push(s));
  blackhole.listen(0, '127.0.0.1');
  await once(blackhole, 'listening');
  cleanups.push(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => blackhole.close(r));
  });
  const { port } = blackhole.address() as net.AddressInfo;
  const connectTimeoutMs = 500;
  const db = createIndexerDb(`postgres://reader:${SECRET}@127.0.0.1:${port}/index`, { connectTimeoutMs });
  cleanups.push(() => closeIndexerDb(db));
  const app = await served(db);
  const started = Date.now();
  const res = await get<Record<string, unknown>>(`${app.base}/api/disputes`);
  const elapsed = Date.now() - started;
  t.is(res.status, 503);
  t.true(elapsed >= connectTimeoutMs - 100, `not before the connect timeout: ${elapsed} ms`);
  t.true(elapsed < connectTimeoutMs + slackMs, `answered at the connect timeout, not left hanging: ${elapsed} ms`);
  const gql = await graphql<{ errors: { extensions: { code: string } }[] }>(app.base, '{ disputes { Bridge { transactionId } } }');
  t.is(gql.status, 503);
  t.is(gql.headers.get('retry-after'), '5');
  t.is(gql.body.errors[0]?.extensions.code, 'DATABASE_UNAVAILABLE');
});

let pg: TestDatabase;
test.before(async () => {
  pg = await startTestDatabase();
  await loadFixtures(pg.db);
  cleanups.push(() => pg.close());
});

test.serial('a statement that exceeds the statement timeout gives 503', async (t) => {
  const statementTimeoutMs = 300;
  const slow = pg.pool({ statementTimeoutMs });
  const app = await served(slow);
  const locker = pg.pool();
  let release!: () => void;
  const released = new Promise<void>((r) => { release = r; });
  let locked!: () => void;
  const isLocked = new Promise<void>((r) => { locked = r; });
  const holding = locker.tx(async (tx) => {
    await tx.none('LOCK TABLE "BridgeRequestEvents" IN ACCESS EXCLUSIVE MODE');
    locked();
    await released;
  });
  await isLocked;
  try {
    const started = Date.now();
    const res = await get<Record<string, unknown>>(`${app.base}/api/pending-transactions/missing-relay`);
    const elapsed = Date.now() - started;
    t.is(res.status, 503);
    t.like(res.body, { code: 'DATABASE_UNAVAILABLE' });
    // The lock is held until this answer comes: without the statement timeout it never would.
    t.true(elapsed < statementTimeoutMs + slackMs, `answered at the statement timeout: ${elapsed} ms`);
  } finally {
    release();
    await holding;
  }
  const ok = await get(`${app.base}/api/pending-transactions/missing-relay`);
  t.is(ok.status, 200);
});

test.serial('before the indexer has created its tables the lists answer 503 INDEX_NOT_READY with Retry-After, naming what was looked for', async (t) => {
  await pg.db.none('CREATE DATABASE empty_index');
  const empty = createIndexerDb(pg.url.replace(/\/omnigate$/, '/empty_index'));
  cleanups.push(() => closeIndexerDb(empty));
  const prod = await served(empty);
  for (const path of ['/api/disputes', '/api/transaction-id/0x' + 'ab'.repeat(32)]) {
    const res = await get<Record<string, unknown>>(`${prod.base}${path}`);
    t.is(res.status, 503, path);
    t.is(res.headers.get('content-type'), 'application/problem+json');
    t.is(res.headers.get('retry-after'), '10');
    t.like(res.body, { status: 503, code: 'INDEX_NOT_READY' });
    t.regex(String(res.body.detail), /do not exist yet in the search path: looked for BridgeRequestEvents \(or bridge_request_events\)/);
    t.is(res.body.debug, undefined);
  }
  const gql = await graphql<{ errors: { message: string; extensions: { code: string } }[] }>(prod.base, '{ disputes { __typename } }');
  t.is(gql.status, 503);
  t.is(gql.headers.get('retry-after'), '5');
  t.is(gql.body.errors[0]!.extensions.code, 'INDEX_NOT_READY');
  t.regex(gql.body.errors[0]!.message, /do not exist yet in the search path/);
  // Once Ponder creates them, the same server answers (no restart).
  await empty.none(`CREATE TABLE "BridgeProofDisputedEvents" (id text)`);
  const partial = await get<Record<string, unknown>>(`${prod.base}/api/disputes`);
  t.is(partial.status, 500);
  t.like(partial.body, { code: 'SCHEMA_MISMATCH' });
  t.regex(String(partial.body.detail), /not BridgeRequestEvents \(or bridge_request_events\), BridgeRelayedEvents/);
  await empty.none('DROP TABLE "BridgeProofDisputedEvents"');
  await migrate(empty);
  const ok = await get<unknown[]>(`${prod.base}/api/disputes`);
  t.is(ok.status, 200);
  t.deepEqual(ok.body, []);
});

test.serial('stopping the database turns answers into 503 within the timeout', async (t) => {
  const app = await served(pg.db);
  const ok = await get(`${app.base}/api/pending-transactions/missing-claim`);
  t.is(ok.status, 200);
  await pg.server.stop();
  for (const path of ['/api/pending-transactions/missing-claim', '/api/transaction-id/0x' + 'ab'.repeat(32)]) {
    const started = Date.now();
    const res = await get<Record<string, unknown>>(`${app.base}${path}`);
    t.is(res.status, 503, path);
    t.like(res.body, { code: 'DATABASE_UNAVAILABLE' });
    const elapsed = Date.now() - started;
    t.true(elapsed < DB_DEFAULTS.connectTimeoutMs + slackMs, `within the connect timeout, not left hanging: ${elapsed} ms`);
  }
  const gql = await graphql<{ errors: { message: string }[] }>(app.base, '{ transaction(id: "0x' + 'ab'.repeat(32) + '") { Bridge { transactionId } } }');
  t.is(gql.status, 503);
  t.is(gql.body.errors[0]?.message, 'The database is unavailable or did not answer in time');
});
