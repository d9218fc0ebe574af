/**
 * The service routes on the wire (node:http on port 0): /health, /ready (200 or 503 with the
 * reasons), /chains (URLs redacted), /metrics, /collection.json under a mount path; GET/HEAD only;
 * every other path left to next().
 */
import type { IncomingMessage } from 'node:http';
import test from 'ava';
import { GatewayError } from '../../../lib/errors.js';
import { createMetrics } from '../../../lib/ops/metrics.js';
import type { ReadinessCheck } from '../../../lib/ops/readiness.js';
import type { Registry } from '../../../lib/upstream/registry.js';
import { serviceRoutes } from '../../../middleware/service-routes.js';
import { send } from '../../support/gateway.js';
import { serveHandler, testChain, testUpstream } from '../../support/stage.js';

function registryOf(upUpstreams: boolean[]): Registry {
  const upstreams = upUpstreams.map((up, i) => testUpstream(i, { health: up ? { successes: 3, lastProbeAt: Date.now() } : { failures: 2, consecutiveFailures: 2, lastProbeAt: Date.now() } }));
  return { chains: new Map([['1', testChain(upstreams, { confirmations: 2 })]]), loopThrough: () => undefined, close: async () => {} };
}

async function get(registry: Registry, path: string, options: { method?: string; readiness?: ReadinessCheck[]; metrics?: boolean; originalUrl?: string } = {}) {
  const server = await serveHandler((req: IncomingMessage, res) => {
    if (options.originalUrl) Object.assign(req, { originalUrl: `${options.originalUrl}${req.url}` });
    const metrics = options.metrics ? createMetrics(registry) : undefined;
    serviceRoutes({ registry, metrics, startedAt: Date.now(), readiness: options.readiness })(req, res, (err) => {
      res.writeHead(299, { 'content-type': 'application/json' }).end(JSON.stringify(err instanceof GatewayError ? { rpcCode: err.rpcCode, allow: err.headers?.Allow } : { next: true }));
    });
  });
  try {
    return await send(server.url, options.method ?? 'GET', path);
  } finally {
    await server.close();
  }
}

test('should answer /health with the chain count', async (t) => {
  const reply = await get(registryOf([true, true]), '/health');
  t.is(reply.status, 200);
  t.like(reply.body, { status: 'ok', chains: 1 });
  t.is(reply.headers['cache-control'], 'no-store');
});

test('should answer /ready 200 when each chain has N usable providers, 503 with the reason otherwise', async (t) => {
  const ready = await get(registryOf([true, true, false]), '/ready');
  t.is(ready.status, 200);
  t.like(ready.body, { status: 'ready', reasons: [] });
  const notReady = await get(registryOf([true, false, false]), '/ready');
  t.is(notReady.status, 503);
  t.is(notReady.body.status, 'not ready');
  t.deepEqual(notReady.body.reasons, ['chain 1: 1 usable provider, 2 required (1 healthy, 2 down)']);
});

test('should fail /ready on an extra check that is not ready, naming it', async (t) => {
  const reply = await get(registryOf([true, true]), '/ready', { readiness: [{ name: 'db', check: async () => ({ ready: false, reason: 'db: down' }) }] });
  t.is(reply.status, 503);
  t.deepEqual(reply.body.reasons, ['db: down']);
});

test('should describe /chains with redacted URLs and each upstream\'s state', async (t) => {
  const reply = await get(registryOf([true, false]), '/chains/');
  t.is(reply.status, 200);
  t.like(reply.body[0], { chainId: '1', confirmations: 2, providers: 2, strategy: 'priority' });
  t.deepEqual(reply.body[0].upstreams.map((u: { url: string; state: string }) => [u.url, u.state]), [['http://u0.test/***', 'healthy'], ['http://u1.test/***', 'down']]);
  t.false(reply.text.includes('KEY'), 'no provider key in /chains');
});

test('should serve /metrics only when given metrics, in Prometheus text', async (t) => {
  const reply = await get(registryOf([true, false]), '/metrics', { metrics: true });
  t.is(reply.status, 200);
  t.regex(String(reply.headers['content-type']), /^text\/plain/);
  t.regex(reply.text, /omnigate_upstream_up\{chain="1",upstream="http:\/\/u0\.test\/\*\*\*"\} 1/);
  t.regex(reply.text, /omnigate_upstream_up\{chain="1",upstream="http:\/\/u1\.test\/\*\*\*"\} 0/);
  t.like((await get(registryOf([true]), '/metrics')).body, { next: true });
});

test('should build /collection.json for the host and mount path it was reached at', async (t) => {
  const reply = await get(registryOf([true]), '/collection.json', { originalUrl: '/gw' });
  t.is(reply.status, 200);
  t.regex(reply.body.variable.find((v: { key: string }) => v.key === 'baseUrl').value, /^http:\/\/127\.0\.0\.1:\d+$/);
  t.is(reply.body.item[0].item[0].request.url.raw, '{{baseUrl}}/gw/rpc/{{chainId}}');
});

test('should answer HEAD without a body and refuse other methods with -32004', async (t) => {
  const head = await get(registryOf([true]), '/health', { method: 'HEAD' });
  t.is(head.status, 200);
  t.is(head.text, '');
  t.deepEqual((await get(registryOf([true]), '/health', { method: 'POST' })).body, { rpcCode: -32004, allow: 'GET, HEAD' });
});

test('should leave every other path to next()', async (t) => {
  for (const path of ['/rpc/1', '/healthz', '/', '/toString', '/__proto__']) t.deepEqual((await get(registryOf([true]), path)).body, { next: true }, path);
});
