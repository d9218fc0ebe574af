/**
 * The pipeline and the indexer as a host app mounts them: after rpc.close(), behind
 * express.json() and its errors, under a mount prefix (/collection.json), and `omnigate serve`'s
 * 404 for /api paths the indexer passes on.
 */
import test from 'ava';
import { readFileSync } from 'node:fs';
import connect from 'connect';
import express from 'express';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createApp } from '../../../lib/server/app.js';
import { indexerApi } from '../../../lib/indexer/api.js';
import { closeIndexerDb, createIndexerDb } from '../../../lib/indexer/db/pool.js';
import { rpcErrorHandler, rpcPipeline } from '../../../middleware/index.js';
import { startFakeUpstream } from '../../support/fake-upstream.js';
import { makeConfig, rpc, send, startGateway } from '../../support/gateway.js';
import { fromRoot } from '../../support/paths.js';

const json = { 'content-type': 'application/json' };

/** Whether the error table of lib/pipeline/README.md lists this HTTP status for this JSON-RPC code. */
function documentedStatus(code: number, status: number): boolean {
  const readme = readFileSync(fromRoot('lib/pipeline/README.md'), 'utf8');
  const cells = [...readme.matchAll(/^\| (-32\d{3}) \| ([\d, ]+) \|/gm)].filter((m) => Number(m[1]) === code).map((m) => m[2]!);
  return cells.some((cell) => cell.split(/[ ,]+/).includes(String(status)));
}

async function listen(handler: http.RequestListener): Promise<{ base: string; close(): Promise<void> }> {
  const server = http.createServer(handler);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

test('after rpc.close() an RPC request is answered -32015 (503, Connection: close) with its id, and no upstream is called', async (t) => {
  const fake = await startFakeUpstream();
  t.teardown(() => fake.close());
  const gw = await startGateway({ chains: { 1: { rpcs: [fake.url] } } }, { framework: 'express', mountPath: '/gateway' });
  t.teardown(() => gw.close());
  t.is((await gw.post('/gateway/rpc/1', rpc('eth_blockNumber', [], 1))).status, 200);
  const before = fake.calls;
  await gw.rpc.close();
  await gw.rpc.close(); // twice is fine
  const r = await gw.post('/gateway/rpc/1', rpc('eth_blockNumber', [], 7));
  t.is(r.status, 503, r.text);
  t.is(r.headers['content-type'], 'application/json');
  t.is(r.headers.connection, 'close');
  t.deepEqual(r.body.id, 7);
  t.is(r.body.error.code, -32015);
  t.regex(r.body.error.message, /shutting down/);
  t.is(fake.calls, before);
});

test('a request in flight when rpc.close() runs is answered -32015, not 502 transport closed', async (t) => {
  let arrived!: () => void;
  const reached = new Promise<void>((resolve) => (arrived = resolve));
  const silent = await listen(() => arrived()); // never answers
  t.teardown(() => silent.close());
  const gw = await startGateway({ chains: { 1: { rpcs: [`${silent.base}/`] } }, timeouts: { upstreamMs: 60_000, requestMs: 60_000 } });
  t.teardown(() => gw.close());
  const pending = gw.post('/rpc/1', rpc('eth_blockNumber', [], 3));
  await reached;
  await gw.rpc.close();
  const r = await pending;
  t.is(r.status, 503, r.text);
  t.is(r.body.error.code, -32015);
  t.is(r.body.id, 3);
});

test('behind express.json(), rpcErrorHandler() on the mount path answers the parser errors as JSON-RPC errors', async (t) => {
  const fake = await startFakeUpstream();
  t.teardown(() => fake.close());
  const pipeline = rpcPipeline(makeConfig({ chains: { 1: { rpcs: [fake.url] } }, limits: { bodyBytes: 2048 } }));
  t.teardown(() => pipeline.close());
  const app = express();
  app.use(express.json({ limit: 1024 }));
  app.use('/gateway', pipeline);
  app.post('/host', (_req, res) => {
    res.json({ host: true });
  });
  app.use('/gateway', rpcErrorHandler());
  const server = await listen(app);
  t.teardown(() => server.close());

  const malformed = await send(server.base, 'POST', '/gateway/rpc/1', '{"jsonrpc":"2.0",', { ...json, origin: 'https://app.example' });
  t.is(malformed.status, 400);
  t.is(malformed.headers['content-type'], 'application/json');
  t.is(malformed.headers['access-control-allow-origin'], '*');
  t.truthy(malformed.headers['x-request-id']);
  t.is(malformed.body.jsonrpc, '2.0');
  t.is(malformed.body.id, null);
  t.is(malformed.body.error.code, -32700);
  t.true(documentedStatus(malformed.body.error.code, malformed.status));
  t.notRegex(malformed.text, /<html|at \w+ \(/i, 'no HTML page, no stack');

  const big = JSON.stringify(rpc('eth_getBalance', ['0x' + 'ab'.repeat(700), '0x1'], 1));
  const tooLarge = await send(server.base, 'POST', '/gateway/rpc/1', big, json);
  t.is(tooLarge.status, 413);
  t.is(tooLarge.body.error.code, -32006);
  t.true(documentedStatus(tooLarge.body.error.code, tooLarge.status));
  t.regex(tooLarge.body.error.message, /1024 bytes/);

  const charset = await send(server.base, 'POST', '/gateway/rpc/1', '{}', { 'content-type': 'application/json; charset=klingon' });
  t.is(charset.status, 415);
  t.is(charset.body.error.code, -32600);
  t.true(documentedStatus(charset.body.error.code, charset.status), 'the error table lists the parser\'s 415 for -32600');

  // The parsed body is re-serialized, and the pipeline's own limit applies to it.
  const ok = await send(server.base, 'POST', '/gateway/rpc/1', JSON.stringify(rpc('eth_blockNumber', [], 'a')), json);
  t.is(ok.status, 200, ok.text);
  t.is(ok.body.id, 'a');
  t.is((await send(server.base, 'POST', '/host', '{}', json)).body.host, true);
  t.is(fake.calls, 1, 'no refused request reached the upstream');
});

test('a body express.json() parsed is held to limits.bodyBytes once re-serialized', async (t) => {
  const fake = await startFakeUpstream();
  t.teardown(() => fake.close());
  const pipeline = rpcPipeline(makeConfig({ chains: { 1: { rpcs: [fake.url] } }, limits: { bodyBytes: 1024 } }));
  t.teardown(() => pipeline.close());
  const app = express().use(express.json({ limit: '1mb' })).use(pipeline).use(rpcErrorHandler());
  const server = await listen(app);
  t.teardown(() => server.close());
  const r = await send(server.base, 'POST', '/rpc/1', JSON.stringify(rpc('eth_getBalance', ['0x' + 'ab'.repeat(700), '0x1'], 1)), json);
  t.is(r.status, 413);
  t.is(r.body.error.code, -32006);
  t.regex(r.body.error.message, /limits\.bodyBytes/);
  t.is(fake.calls, 0);
});

for (const framework of ['express', 'connect'] as const) {
  test(`${framework}: /collection.json under /gateway has request URLs under /gateway`, async (t) => {
    const fake = await startFakeUpstream();
    t.teardown(() => fake.close());
    const gw = await startGateway({ chains: { 1: { rpcs: [fake.url] } } }, { framework, mountPath: '/gateway' });
    t.teardown(() => gw.close());
    const r = await gw.request('GET', '/gateway/collection.json');
    t.is(r.status, 200);
    const host = new URL(gw.url).host;
    t.is(r.body.variable.find((v: { key: string }) => v.key === 'baseUrl').value, `http://${host}`);
    const [eth, confirmations] = r.body.item;
    t.is(eth.item[0].request.url.raw, '{{baseUrl}}/gateway/rpc/{{chainId}}');
    t.deepEqual(eth.item[0].request.url.path, ['gateway', 'rpc', '{{chainId}}']);
    t.is(confirmations.item[0].request.url.raw, '{{baseUrl}}/gateway/confirmations/{{n}}/rpc/{{chainId}}');
    const raws = new Set([...eth.item, ...confirmations.item].map((i: { request: { url: { raw: string } } }) => i.request.url.raw));
    t.deepEqual([...raws].sort(), ['{{baseUrl}}/gateway/confirmations/{{n}}/rpc/{{chainId}}', '{{baseUrl}}/gateway/rpc/{{chainId}}']);
  });
}

test('at the root, /collection.json request URLs have no prefix', async (t) => {
  const fake = await startFakeUpstream();
  t.teardown(() => fake.close());
  const gw = await startGateway({ chains: { 1: { rpcs: [fake.url] } } }, { framework: 'express' });
  t.teardown(() => gw.close());
  const r = await gw.request('GET', '/collection.json');
  t.is(r.body.item[0].item[0].request.url.raw, '{{baseUrl}}/rpc/{{chainId}}');
});

test('omnigate serve (createApp with the indexer) still answers unknown /api paths 404 problem+json; other paths stay JSON-RPC 404s', async (t) => {
  const fake = await startFakeUpstream();
  t.teardown(() => fake.close());
  // The database is never reached: no path below is one of the indexer's routes.
  const db = createIndexerDb('postgres://omnigate@127.0.0.1:1/none');
  t.teardown(() => closeIndexerDb(db));
  const { app, rpc: pipeline } = createApp(makeConfig({ chains: { 1: { rpcs: [fake.url] } } }), { extraHandlers: [indexerApi(db)] });
  t.teardown(() => pipeline.close());
  const server = await listen(app);
  t.teardown(() => server.close());
  for (const path of ['/api', '/api/nope', '/api/transaction-id/']) {
    const r = await send(server.base, 'GET', path);
    t.is(r.status, 404, path);
    t.is(r.headers['content-type'], 'application/problem+json');
    t.like(r.body, { status: 404, code: 'NOT_FOUND', instance: path });
  }
  const other = await send(server.base, 'GET', '/nope');
  t.is(other.status, 404);
  t.is(other.body.error.code, -32008);
  const bare = createApp(makeConfig({ chains: { 1: { rpcs: [fake.url] } } }));
  t.teardown(() => bare.rpc.close());
  const noIndexer = await listen(bare.app);
  t.teardown(() => noIndexer.close());
  t.is((await send(noIndexer.base, 'GET', '/api/nope')).body.error.code, -32008, 'without the indexer, /api is not special');
});

test('connect: rpc.close() then a request is -32015 too', async (t) => {
  const fake = await startFakeUpstream();
  t.teardown(() => fake.close());
  const pipeline = rpcPipeline(makeConfig({ chains: { 1: { rpcs: [fake.url] } } }));
  const server = await listen(connect().use(pipeline as connect.NextHandleFunction));
  t.teardown(() => server.close());
  await pipeline.close();
  const r = await send(server.base, 'POST', '/rpc/1', JSON.stringify(rpc('eth_chainId', [], 9)), json);
  t.is(r.status, 503);
  t.is(r.body.error.code, -32015);
  t.is(fake.calls, 0);
});
