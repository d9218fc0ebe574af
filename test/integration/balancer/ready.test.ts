/**
 * GET /ready on the wire: per chain, usable upstreams against its confirmations (probe state
 * only, no upstream call per request); extra checks plugged in by the app (here through
 * startServer, as `omnigate serve` plugs the database); GET / without the indexer.
 */
import test from 'ava';
import { startServer } from '../../../lib/server/app.js';
import type { ReadinessCheck } from '../../../lib/ops/readiness.js';
import { deadUrl, defaultAnswer, startFakeUpstream, type AnswerFn } from '../../support/fake-upstream.js';
import { makeConfig, send, startGateway } from '../../support/gateway.js';

test('should answer 503 while a chain has fewer usable upstreams than its confirmations, without calling upstreams', async (t) => {
  const chain10: AnswerFn = (call) => (call.method === 'eth_chainId' ? { result: '0xa' } : defaultAnswer(call));
  const fakes = await Promise.all([startFakeUpstream(), startFakeUpstream({ answer: chain10 })]);
  t.teardown(() => Promise.all(fakes.map((f) => f.close())));
  const gw = await startGateway({
    chains: { 1337: { rpcs: [fakes[0]!.url, await deadUrl()], confirmations: 2 }, 10: { rpcs: [fakes[1]!.url] } },
  });
  t.teardown(() => gw.close());
  await gw.rpc.startHealthChecks().firstRound;
  const calls = fakes.map((f) => f.calls);
  const r = await gw.request('GET', '/ready');
  t.is(r.status, 503);
  t.deepEqual(r.body.reasons, ['chain 1337: 1 usable provider, 2 required (1 healthy, 1 down)']);
  t.like(r.body.chains.find((c: { chainId: string }) => c.chainId === '10'), { chainId: '10', ready: true, usable: 1, required: 1 });
  t.deepEqual(r.body.checks, {}, 'a mounted pipeline has no database check unless given one');
  t.is(r.headers['cache-control'], 'no-store');
  t.deepEqual(fakes.map((f) => f.calls), calls, '/ready read the probe state, it called no upstream');
});

test('should include the checks the app plugs in, and answer 200 when all pass', async (t) => {
  const fake = await startFakeUpstream();
  t.teardown(() => fake.close());
  let database: Awaited<ReturnType<ReadinessCheck['check']>> = { ready: false, reason: 'database: unreachable (test)', status: 'unreachable' };
  const checks: ReadinessCheck[] = [
    { name: 'database', check: async () => database },
    { name: 'queue', check: async () => ({ ready: true }) },
  ];
  const server = await startServer(makeConfig({ refreshInterval: 60, chains: { 1337: { rpcs: [fake.url] } } }), 0, { readiness: checks });
  t.teardown(() => server.close());
  await server.rpc.startHealthChecks().firstRound; // the same prober startServer started
  const base = `http://127.0.0.1:${server.port}`;
  const down = await send(base, 'GET', '/ready');
  t.is(down.status, 503);
  t.deepEqual(down.body.reasons, ['database: unreachable (test)']);
  t.deepEqual(down.body.checks.queue, { ready: true });
  database = { ready: true, status: 'ok' };
  const up = await send(base, 'GET', '/ready');
  t.is(up.status, 200);
  t.is(up.body.status, 'ready');
  t.deepEqual(up.body.checks, { database: { ready: true, status: 'ok' }, queue: { ready: true } });
  t.is((await send(base, 'HEAD', '/ready')).status, 200);

  checks.push({ name: 'broken', check: async () => { throw new Error('boom'); } });
  const broken = await send(base, 'GET', '/ready');
  t.is(broken.status, 503);
  t.deepEqual(broken.body.reasons, ['broken: boom']);

  const home = await send(base, 'GET', '/');
  t.is(home.status, 200);
  const paths = home.body.routes.map((r: { path: string }) => r.path);
  t.true(paths.includes('/ready'));
  t.false(paths.includes('/api-docs'), 'no indexer routes without the indexer');
});

test('should count providers, and ask a chain under a larger global confirmations for all of its providers', async (t) => {
  const fakes = await Promise.all([startFakeUpstream(), startFakeUpstream(), startFakeUpstream()]);
  t.teardown(() => Promise.all(fakes.map((f) => f.close())));
  const gw = await startGateway({
    confirmations: 3,
    chains: {
      // two upstreams of one provider: one vote; the global 3 is more than this chain can give
      1337: { rpcs: [{ url: fakes[0]!.url, provider: 'same' }, { url: fakes[1]!.url, provider: 'same' }, fakes[2]!.url] },
    },
  });
  t.teardown(() => gw.close());
  await gw.rpc.startHealthChecks().firstRound;
  const r = await gw.request('GET', '/ready');
  t.is(r.status, 200, JSON.stringify(r.body));
  t.like(r.body.chains[0], { chainId: '1337', ready: true, usable: 2, required: 2, upstreams: 3 });
});
