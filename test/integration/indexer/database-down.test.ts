/**
 * `omnigate serve` with a DATABASE_URL that does not answer (issue 15), through the real CLI:
 * the balancer serves, the cause is logged once at error level (URL redacted), /health stays
 * 200, /ready and /api answer 503 naming the database, and everything recovers by itself when
 * a PostgreSQL appears on that port. Also GET / (the route index) of `omnigate serve`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { closeIndexerDb, createIndexerDb } from '../../../lib/indexer/db/pool.js';
import { freePort, startEmbeddedPostgres } from '../../../lib/indexer/postgres/embedded.js';
import { migrate } from '../../../lib/indexer/db/migrate.js';
import { listeningPort, logLines, runCli, type Run, configFile } from '../../support/cli.js';
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream.js';
import { rpc, send, type Reply } from '../../support/gateway.js';
import { tempDir } from '../../support/pg.js';

/** Serves one chain on `fake` with the given DATABASE_URL; the child is stopped in teardown. */
async function serve(t: ExecutionContext, fake: FakeUpstream, databaseUrl: string): Promise<{ run: Run; base: string }> {
  const file = await configFile(t, `refreshInterval: 60\nchains:\n  1337:\n    rpcs: [${fake.url}]\n`, 'omnigate-dbdown-');
  const run = runCli(['serve', '--config', file, '--port', '0'], { DATABASE_URL: databaseUrl, LOG_LEVEL: 'info' });
  t.teardown(async () => {
    if (run.child.exitCode === null && run.child.signalCode === null) {
      run.child.kill('SIGKILL');
      await run.exited;
    }
  });
  return { run, base: `http://127.0.0.1:${await listeningPort(run)}` };
}

/** Asks /ready until `done` holds (the probe round and the database check run on their own). */
async function readyUntil(base: string, done: (r: Reply) => boolean): Promise<Reply> {
  let r = await send(base, 'GET', '/ready');
  for (let i = 0; i < 150 && !done(r); i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    r = await send(base, 'GET', '/ready');
  }
  return r;
}

const errorLines = (run: Run) => logLines(run).filter((l) => l.level === 'error');

test('should keep serving the balancer with an unreachable DATABASE_URL, log the cause once and answer /ready 503', async (t) => {
  const fake = await startFakeUpstream();
  t.teardown(() => fake.close());
  const port = await freePort();
  const { run, base } = await serve(t, fake, `postgres://u:hunter2-secret@127.0.0.1:${port}/x`);

  const health = await send(base, 'GET', '/health');
  t.is(health.status, 200, 'liveness is not readiness');
  const call = await send(base, 'POST', '/rpc/1337', JSON.stringify(rpc('eth_blockNumber')), { 'content-type': 'application/json' });
  t.is(call.status, 200);
  t.is(call.body.result, '0x10');

  // Once the probe round is done, the chain is ready: only the database is missing.
  const ready = await readyUntil(base, (r) => r.body?.chains?.[0]?.ready === true);
  t.is(ready.status, 503);
  t.is(ready.body.status, 'not ready');
  t.is(ready.body.reasons.length, 1);
  t.regex(ready.body.reasons[0], /^database: unreachable \(.*ECONNREFUSED/);
  t.like(ready.body.checks.database, { ready: false, status: 'unreachable', database: `postgres://u:***@127.0.0.1:${port}/x` });
  t.like(ready.body.chains[0], { chainId: '1337', ready: true, usable: 1, required: 1 });

  const api = await send(base, 'GET', '/api/pending-transactions/missing-relay');
  t.is(api.status, 503);
  t.regex(api.headers['content-type'] as string, /^application\/problem\+json/);

  const errors = errorLines(run);
  t.is(errors.length, 1, JSON.stringify(errors));
  t.like(errors[0], { msg: 'indexer database unreachable', database: `postgres://u:***@127.0.0.1:${port}/x` });
  t.regex(errors[0]!.cause as string, /ECONNREFUSED/);
  t.regex(errors[0]!.fix as string, /DATABASE_URL/);
  const listening = logLines(run).find((l) => l.msg === 'omnigate listening');
  t.is(listening?.indexer, 'DATABASE_URL');

  run.child.kill('SIGTERM');
  t.is(await run.exited, 0);
  t.false((run.out.join('') + run.err.join('')).includes('hunter2-secret'), 'the password is never printed');
});

test('should recover by itself when PostgreSQL appears on the DATABASE_URL port', async (t) => {
  const fake = await startFakeUpstream();
  t.teardown(() => fake.close());
  // A real database, migrated, then stopped: its URL (and password) stay valid for a restart.
  const dir = await tempDir();
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const dataDir = join(dir, 'pgdata');
  const port = await freePort();
  const first = await startEmbeddedPostgres({ dataDir, port });
  const url = first.url;
  try {
    const db = createIndexerDb(url);
    await migrate(db).finally(() => closeIndexerDb(db));
  } finally {
    await first.stop();
  }

  const { run, base } = await serve(t, fake, url);
  const down = await readyUntil(base, (r) => r.body?.chains?.[0]?.ready === true);
  t.is(down.status, 503);
  t.regex(down.body.reasons.join(), /database: unreachable/);
  t.is((await send(base, 'GET', '/api/pending-transactions/missing-relay')).status, 503);

  const again = await startEmbeddedPostgres({ dataDir, port });
  t.teardown(() => again.stop());
  const up = await readyUntil(base, (r) => r.status === 200);
  t.is(up.status, 200);
  t.is(up.body.status, 'ready');
  t.like(up.body.checks.database, { ready: true, status: 'ok' });
  const api = await send(base, 'GET', '/api/pending-transactions/missing-relay');
  t.is(api.status, 200);
  t.deepEqual(api.body, []);
  t.is(errorLines(run).length, 1, 'the outage was logged once');
  t.is(logLines(run).filter((l) => l.msg === 'indexer database answers again: /api and /ready recovered').length, 1);

  run.child.kill('SIGTERM');
  t.is(await run.exited, 0);
  t.false((run.out.join('') + run.err.join('')).includes(new URL(url).password));
});

test('should answer GET / with the routes of omnigate serve: JSON, or HTML for a browser', async (t) => {
  const fake = await startFakeUpstream();
  t.teardown(() => fake.close());
  const { run, base } = await serve(t, fake, `postgres://u:p@127.0.0.1:${await freePort()}/x`);

  const json = await send(base, 'GET', '/');
  t.is(json.status, 200);
  t.is(json.headers['content-type'], 'application/json');
  t.is(json.headers.vary, 'Accept');
  t.deepEqual(json.body.chains, ['1337']);
  const paths = json.body.routes.map((r: { path: string }) => r.path);
  for (const p of ['/rpc/{chainId}', '/confirmations/{n}/rpc/{chainId}', '/chains', '/health', '/ready', '/metrics', '/collection.json', '/api-docs', '/openapi.json', '/graphql', '/api/pending-transactions/missing-relay']) {
    t.true(paths.includes(p), p);
  }
  t.deepEqual(json.body.routes[0].links, ['/rpc/1337']);
  // Every GET link without a parameter answers something other than 404 on this server.
  for (const p of paths.filter((x: string) => !x.includes('{') && !x.startsWith('/rpc'))) {
    t.not((await send(base, 'GET', p)).status, 404, p);
  }

  const html = await send(base, 'GET', '/', undefined, { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' });
  t.is(html.status, 200);
  t.is(html.headers['content-type'], 'text/html; charset=utf-8');
  t.regex(html.text, /<a href="\/ready">\/ready<\/a>/);
  t.regex(html.text, /<a href="\/api-docs">\/api-docs<\/a>/);

  const head = await send(base, 'HEAD', '/');
  t.is(head.status, 200);
  t.is(head.text, '');
  const post = await send(base, 'POST', '/', '{}');
  t.is(post.status, 405);
  t.is(post.headers.allow, 'GET, HEAD');
  run.child.kill('SIGTERM');
  t.is(await run.exited, 0);
});

test('a DATABASE_URL that is not a URL exits 2 naming the variable and the fix, never the password', async (t) => {
  const fake = await startFakeUpstream();
  t.teardown(() => fake.close());
  const file = await configFile(t, `chains:\n  1337:\n    rpcs: [${fake.url}]\n`, 'omnigate-dburl-');
  const run = runCli(['serve', '--config', file, '--port', '0'], { DATABASE_URL: 'postgres://u:hunter2-secret@db.internal:65536/x', LOG_LEVEL: 'info' });
  t.teardown(() => void run.child.kill('SIGKILL'));
  t.is(await run.exited, 2);
  const err = run.err.join('');
  t.regex(err, /^omnigate: environment: invalid config:\n {2}- DATABASE_URL is not a URL node-postgres can read .*percent-encoded/);
  t.false((err + run.out.join('')).includes('hunter2'));
});

test('should serve with a DATABASE_URL naming a socket directory in ?host= (an empty host, as node-postgres reads it)', async (t) => {
  const fake = await startFakeUpstream();
  t.teardown(() => fake.close());
  const socketDir = await mkdtemp(join(tmpdir(), 'omnigate-nosocket-'));
  t.teardown(() => rm(socketDir, { recursive: true, force: true }));
  const { run, base } = await serve(t, fake, `postgres://u:hunter2-secret@/x?host=${socketDir}`);
  const call = await send(base, 'POST', '/rpc/1337', JSON.stringify(rpc('eth_blockNumber')), { 'content-type': 'application/json' });
  t.is(call.status, 200);
  const ready = await readyUntil(base, (r) => r.body?.checks?.database?.status === 'unreachable');
  t.is(ready.status, 503);
  t.regex(ready.body.reasons.join(), /database: unreachable \(.*ENOENT/);
  t.false(JSON.stringify(ready.body).includes('hunter2'));
  run.child.kill('SIGTERM');
  await run.exited;
  t.false((run.out.join('') + run.err.join('')).includes('hunter2'));
});
