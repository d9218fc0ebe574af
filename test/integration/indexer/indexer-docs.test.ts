import { readFile } from 'node:fs/promises';
import test from 'ava';
import express from 'express';
import http from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { createConfig, lintFromString } from '@redocly/openapi-core';
import { indexerApi, indexerNotFound } from '../../../lib/indexer/api.js';
import { LIST_ROUTES } from '../../../lib/indexer/catalog.js';
import { localizeRedocBundle, redocBundleFile } from '../../../lib/indexer/http/docs.js';
import { startTestDatabase, type TestDatabase } from '../../support/pg.js';
import { NOW, loadFixtures, txid } from '../../fixtures/indexer/bridges.js';
import { checkAgainst } from '../../fixtures/indexer/schema-check.js';
import { chain, get, graphql, serve, type Running } from '../../fixtures/indexer/server.js';

let pg: TestDatabase;
let app: Running;
let mounted: { base: string; close(): Promise<void> };
let doc: Record<string, any>;

test.before(async () => {
  pg = await startTestDatabase();
  await loadFixtures(pg.db);
  app = await serve(chain(indexerApi(pg.db, { now: () => NOW }), indexerNotFound()), 'connect');
  doc = (await get<Record<string, any>>(`${app.base}/openapi.json`)).body;
  // A host app that mounts the handler under a prefix.
  const host = express();
  host.use('/indexer', indexerApi(pg.db, { now: () => NOW }));
  const server = http.createServer(host).listen(0, '127.0.0.1');
  await once(server, 'listening');
  mounted = {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
});

test.after.always(async () => {
  await Promise.all([app?.close(), mounted?.close()]);
  await pg?.close();
});

test('/openapi.json is an OpenAPI 3.1 document that lints without errors', async (t) => {
  const res = await get(`${app.base}/openapi.json`);
  t.is(res.status, 200);
  t.is(res.headers.get('content-type'), 'application/json; charset=utf-8');
  t.is(doc.openapi, '3.1.0');
  const config = await createConfig({ extends: ['recommended'], rules: { 'operation-4xx-response': 'off' } });
  const problems = await lintFromString({ source: res.text, absoluteRef: 'openapi.json', config });
  const describe = (p: (typeof problems)[number]) => `${p.ruleId}: ${p.message} @ ${p.location[0]?.pointer}`;
  t.deepEqual(problems.filter((p) => p.severity === 'error').map(describe), []);
  t.deepEqual(problems.map(describe), [], 'no warnings either');
});

test('every route, both path forms, with every parameter and response, is documented', (t) => {
  const paths = Object.keys(doc.paths);
  for (const route of LIST_ROUTES) {
    for (const path of route.paths) {
      t.true(paths.includes(path), path);
      const op = doc.paths[path].get;
      t.deepEqual(op.parameters.map((p: { $ref: string }) => p.$ref.split('/').pop()), ['limit', 'cursor', 'originChainId', 'destChainId', 'since', 'until']);
      t.deepEqual(Object.keys(op.responses).sort(), ['200', '400', '405', '500', '503']);
      t.is(op.responses['200'].content['application/json'].schema.items.$ref, `#/components/schemas/${route.itemType}`);
      t.truthy(op.responses['200'].headers['X-Next-Cursor']);
    }
  }
  for (const p of ['/api/transaction-id/{transactionIdOrOriginTxHash}', '/graphql', '/openapi.json', '/api-docs']) t.true(paths.includes(p), p);
  t.true(paths.includes('/api/pending-transactions-missing-relay') && paths.includes('/api/pending-transactions/missing-relay'));
  const ids = Object.values(doc.paths).flatMap((item: any) => Object.values(item).map((op: any) => op.operationId));
  t.is(new Set(ids).size, ids.length, 'operationIds are unique');
  t.is(doc.components.parameters.limit.schema.maximum, 1000);
  t.is(doc.components.parameters.limit.schema.default, 100);
});

test('real responses match the documented schemas (no undocumented key)', async (t) => {
  for (const route of LIST_ROUTES) {
    const path = route.paths[0]!;
    const res = await get(`${app.base}${path}`);
    const schema = doc.paths[path].get.responses['200'].content['application/json'].schema;
    t.deepEqual(checkAgainst(res.body, schema, doc), [], path);
    t.true((res.body as unknown[]).length > 0, `${path} has data to check`);
  }
  for (const label of ['claimed', 'proven-disputed', 'refunded-relayed']) {
    const res = await get(`${app.base}/api/transaction-id/${txid(label)}`);
    const schema = doc.paths['/api/transaction-id/{transactionIdOrOriginTxHash}'].get.responses['200'].content['application/json'].schema;
    t.deepEqual(checkAgainst(res.body, schema, doc), [], label);
  }
  const problems = [
    await get(`${app.base}/api/disputes?limit=0`),
    await get(`${app.base}/api/nope`),
    await get(`${app.base}/api/transaction-id/0x${'ef'.repeat(32)}`),
  ];
  for (const p of problems) t.deepEqual(checkAgainst(p.body, { $ref: '#/components/schemas/Problem' }, doc), []);
});

test('each status /graphql answers a POST with is a documented response of the POST operation', async (t) => {
  const post = (body: string, type: string) => fetch(`${app.base}/graphql`, { method: 'POST', headers: { 'content-type': type }, body });
  const answers = [
    await post('{"query":"{ status { source } }"}', 'application/json'),
    await post('{"query":"{ status { sourc } }"}', 'application/json'),
    await post('{"query":"{ status { source } }"}', 'application/json; charset=latin1'),
  ];
  t.deepEqual(answers.map((a) => a.status), [200, 400, 415]);
  const documented = Object.keys(doc.paths['/graphql'].post.responses);
  for (const a of answers) t.true(documented.includes(String(a.status)), `${a.status} is not in ${documented.join(', ')}`);
});

test('/api-docs is the Redoc page loading the bundle from this server only', async (t) => {
  const page = await get(`${app.base}/api-docs`);
  t.is(page.status, 200);
  t.is(page.headers.get('content-type'), 'text/html; charset=utf-8');
  t.true(page.text.includes('src="/api-docs/redoc.standalone.js"'));
  t.true(page.text.includes('Redoc.init'));
  t.true(page.text.includes('"/openapi.json"'));
  t.notRegex(page.text, /(?:src|href)=["']?(?:https?:)?\/\//i);
  const bundle = await fetch(`${app.base}/api-docs/redoc.standalone.js`);
  t.is(bundle.status, 200);
  t.regex(bundle.headers.get('content-type') ?? '', /^application\/javascript/);
  const served = Buffer.from(await bundle.arrayBuffer()).toString('utf8');
  const original = await readFile(redocBundleFile(), 'utf8');
  t.is(served, localizeRedocBundle(original));
  t.true(original.includes('cdn.redoc.ly'), 'the installed bundle does reference the CDN logo');
  t.false(served.includes('cdn.redoc.ly'), 'the served bundle does not');
  t.is(served.length, original.length - '"https://cdn.redoc.ly/redoc/logo-mini.svg"'.length + 2);
  const missing = await get(`${app.base}/api-docs/other.js`);
  t.is(missing.status, 299, 'not a docs resource: left to the host app');
  const post = await get(`${app.base}/openapi.json`, { method: 'POST' });
  t.is(post.status, 405);
});

test('mounted under a prefix, links, docs and the spec server follow the prefix', async (t) => {
  const spec = await get<Record<string, any>>(`${mounted.base}/indexer/openapi.json`);
  t.deepEqual(spec.body.servers, [{ url: '/indexer' }]);
  const page = await get(`${mounted.base}/indexer/api-docs`);
  t.true(page.text.includes('src="/indexer/api-docs/redoc.standalone.js"'));
  t.true(page.text.includes('"/indexer/openapi.json"'));
  const bundle = await fetch(`${mounted.base}/indexer/api-docs/redoc.standalone.js`);
  t.is(bundle.status, 200);
  await bundle.arrayBuffer();
  const list = await get(`${mounted.base}/indexer/api/pending-transactions/missing-claim?limit=1`);
  t.regex(list.headers.get('link') ?? '', /^<\/indexer\/api\/pending-transactions\/missing-claim\?limit=1&cursor=[\w-]+>; rel="next"$/);
  const gql = await graphql<{ data: unknown }>(`${mounted.base}/indexer`, '{ __typename }');
  t.is(gql.status, 200);
  t.deepEqual(gql.body.data, { __typename: 'Query' });
  const outside = await get(`${mounted.base}/api/disputes`);
  t.is(outside.status, 404);
});
