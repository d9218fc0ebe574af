/**
 * The database password through the real `omnigate serve` on a real PostgreSQL: every route a
 * client reaches (the route index, health, readiness, topology, metrics, docs, GraphQL and REST
 * errors, the indexer's status and stats) and every log line, in development mode (the detailed
 * error bodies), with the password in the URL's user-info or query, and with a wrong password.
 */
import test from 'ava';
import { startTestDatabase, type TestDatabase } from '../../support/pg.js';
import { runCli, configFile, type Run } from '../../support/cli.js';
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream.js';
import { send } from '../../support/gateway.js';

let pg: TestDatabase;
let fake: FakeUpstream;

test.before(async () => {
  pg = await startTestDatabase();
  fake = await startFakeUpstream();
});

test.after.always(async () => {
  await fake?.close();
  await pg?.close();
});

/** The port of the pretty (development) log line `omnigate listening  port=N`. */
async function prettyPort(run: Run): Promise<number> {
  for (let i = 0; i < 900; i++) {
    const match = /omnigate listening\s+port=(\d+)/.exec(run.out.join(''));
    if (match) return Number(match[1]);
    if (run.child.exitCode !== null) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`never listened: ${run.out.join('')}${run.err.join('')}`);
}

const ROUTES: [string, string, string?, Record<string, string>?][] = [
  ['GET', '/'], ['GET', '/', undefined, { accept: 'text/html' }], ['GET', '/health'], ['GET', '/ready'], ['GET', '/chains'], ['GET', '/metrics'],
  ['GET', '/openapi.json'], ['GET', '/api-docs'], ['GET', '/graphql', undefined, { accept: 'text/html' }],
  ['GET', '/api/status'], ['GET', '/api/stats'], ['GET', '/api/pending-transactions/missing-relay?limit=x'],
  ['GET', '/api/nope'], ['DELETE', '/api/disputes'], ['GET', `/api/transaction-id/0x${'ab'.repeat(32)}`],
  ['POST', '/graphql', '{"query":"{ nope }"}', { 'content-type': 'application/json' }],
  ['POST', '/graphql', '{"query":"{ status { source chains { chainId } } stats { generatedAt } }"}', { 'content-type': 'application/json' }],
  ['POST', '/graphql', '{"query": ', { 'content-type': 'application/json' }],
  ['POST', '/graphql', `{"query":"{ disputes(limit: ${'['.repeat(20000)}1${']'.repeat(20000)}) { cursor } }"}`, { 'content-type': 'application/json' }],
];

for (const where of ['userinfo', 'query', 'userinfo, refused'] as const) {
  test.serial(`no route, error or log line shows the database password (password in the ${where})`, async (t) => {
    const url = new URL(pg.url);
    const refused = where === 'userinfo, refused';
    // A wrong password: PostgreSQL refuses it, and its error must not carry it either.
    const password = refused ? `wrong-${decodeURIComponent(url.password)}` : decodeURIComponent(url.password);
    t.true(password.length >= 8, 'the embedded database has a real password');
    if (refused) url.password = encodeURIComponent(password);
    if (where === 'query') {
      url.password = '';
      url.searchParams.set('password', password);
    }
    const file = await configFile(t, `refreshInterval: 60\nchains:\n  1337:\n    rpcs: [${fake.url}]\n`, 'omnigate-leaks-');
    const run = runCli(['serve', '--config', file, '--port', '0'], { DATABASE_URL: url.toString(), LOG_LEVEL: 'debug', NODE_ENV: 'development' }, { t });
    const base = `http://127.0.0.1:${await prettyPort(run)}`;
    const secrets = [password, encodeURIComponent(password)];
    for (const [method, path, body, headers] of ROUTES) {
      const reply = await send(base, method, path, body, headers ?? {});
      t.true(reply.status < 500 || path === '/ready' || (refused && reply.status === 503), `${method} ${path.slice(0, 60)}: ${reply.status} ${reply.text.slice(0, 200)}`);
      for (const secret of secrets) t.false(reply.text.includes(secret), `${method} ${path.slice(0, 60)} shows the password`);
      for (const secret of secrets) t.false(JSON.stringify(reply.headers).includes(secret), `${method} ${path.slice(0, 60)} headers`);
    }
    const ready = await send(base, 'GET', '/ready');
    t.is(ready.body?.checks?.database?.ready, !refused, ready.text.slice(0, 300));
    if (refused) t.regex(ready.text, /password authentication failed/);
    await run.stop();
    const printed = run.out.join('') + run.err.join('');
    t.true(printed.includes('omnigate listening'));
    for (const secret of secrets) t.false(printed.includes(secret), 'the logs show the password');
  });
}
