/**
 * The pipeline mounted in an existing express app: next to other routes, under a mount path,
 * after express.json() has already consumed the body, and with the app's own error handler.
 */
import test from 'ava';
import express from 'express';
import http from 'node:http';
import { gzipSync } from 'node:zlib';
import type { AddressInfo } from 'node:net';
import { rpcErrorHandler, rpcPipeline } from '../../../middleware/index.js';
import { startFakeUpstream } from '../../support/fake-upstream.js';
import { makeConfig, rpc, send, startGateway } from '../../support/gateway.js';

test('should serve /rpc/:chainId from an express app', async (t) => {
  const fakes = await Promise.all([startFakeUpstream(), startFakeUpstream()]);
  const gw = await startGateway({ chains: { 1: { rpcs: fakes.map((f) => f.url), confirmations: 2 } } }, { framework: 'express' });
  t.teardown(() => Promise.all([gw.close(), ...fakes.map((f) => f.close())]));
  const r = await gw.post('/confirmations/2/rpc/1', rpc('eth_getBalance', ['0x1111111111111111111111111111111111111111', '0x1']));
  t.is(r.status, 200);
  t.is(r.headers['x-required-confirmations'], '2');
  const bad = await gw.post('/rpc/1', 'not json');
  t.is(bad.status, 400);
  t.is(bad.body.error.code, -32700);
});

test('should work under a mount path, after express.json(), beside the app routes', async (t) => {
  const fakes = await Promise.all([startFakeUpstream(), startFakeUpstream()]);
  t.teardown(() => Promise.all(fakes.map((f) => f.close())));
  const pipeline = rpcPipeline(makeConfig({ chains: { 1: { rpcs: fakes.map((f) => f.url) } } }));
  t.teardown(() => pipeline.close());
  const app = express();
  app.use(express.json());
  app.get('/hello', (_req, res) => {
    res.json({ hello: 'world' });
  });
  app.use('/gateway', pipeline);
  app.use(rpcErrorHandler());
  const server = http.createServer(app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const headers = { 'content-type': 'application/json' };
  const r = await send(base, 'POST', '/gateway/rpc/1', JSON.stringify(rpc('eth_blockNumber', [], 42)), headers);
  t.is(r.status, 200, r.text);
  t.is(r.body.id, 42);
  t.is(fakes[0]!.requests[0]!.body && (fakes[0]!.requests[0]!.body as { method: string }).method, 'eth_blockNumber');
  t.deepEqual((await send(base, 'GET', '/hello')).body, { hello: 'world' });
  const health = await send(base, 'GET', '/gateway/health');
  t.is(health.body.status, 'ok');
  const unknown = await send(base, 'POST', '/gateway/rpc/99', JSON.stringify(rpc('eth_blockNumber', [], 'x')), headers);
  t.is(unknown.status, 404);
  t.is(unknown.body.id, 'x');
  // express.json() decodes a gzip body itself: the pipeline reads what it parsed, not a refusal of the encoding.
  const gzipped = await send(base, 'POST', '/gateway/rpc/1', gzipSync(JSON.stringify(rpc('eth_blockNumber', [], 43))), { ...headers, 'content-encoding': 'gzip' });
  t.is(gzipped.status, 200, gzipped.text);
  t.is(gzipped.body.id, 43);
});
