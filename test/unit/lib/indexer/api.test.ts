/**
 * indexerApi and indexerNotFound routing, without a database (one that would throw if reached):
 * every other path to next(), /api paths it does not serve too, its docs served, refusals made
 * before any query rendered as problem+json; the 404 for /api paths no handler answered.
 * (GraphQL's refusals: graphql/endpoint.test.ts.)
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import test from 'ava';
import { indexerApi, indexerNotFound } from '../../../../lib/indexer/api.js';
import type { IndexerDb } from '../../../../lib/indexer/db/pool.js';
import { send } from '../../../support/gateway.js';
import { serveHandler } from '../../../support/stage.js';

let reached = 0;
const db = new Proxy({}, { get: () => { reached += 1; throw new Error('the database was reached'); } }) as unknown as IndexerDb;

async function get(method: string, path: string, headers: Record<string, string> = {}, body?: string) {
  const api = indexerApi(db);
  const notFound = indexerNotFound();
  const server = await serveHandler((req: IncomingMessage, res: ServerResponse) => {
    api(req, res, (err) => {
      if (err) return void res.writeHead(500).end();
      notFound(req, res, () => res.writeHead(299, { 'content-type': 'application/json' }).end('{"next":true}'));
    });
  });
  try {
    return await send(server.url, method, path, body, headers);
  } finally {
    await server.close();
  }
}

test.serial('should pass every path it does not serve to next(), /api paths included until indexerNotFound', async (t) => {
  for (const path of ['/', '/rpc/1', '/health', '/apiary', '/graphqlx']) t.deepEqual((await get('GET', path)).body, { next: true }, path);
  const api = await get('GET', '/api/unknown');
  t.is(api.status, 404);
  t.regex(String(api.headers['content-type']), /^application\/problem\+json/);
  t.like(api.body, { status: 404, code: 'NOT_FOUND', instance: '/api/unknown' });
  t.is(reached, 0);
});

test.serial('should serve its docs without the database', async (t) => {
  const spec = await get('GET', '/openapi.json');
  t.is(spec.status, 200);
  t.truthy(spec.body.paths);
  t.is((await get('GET', '/api-docs')).status, 200);
  t.is(reached, 0);
});

test.serial('should render a refusal made before any query as problem+json', async (t) => {
  const method = await get('PUT', '/api/disputes');
  t.is(method.status, 405);
  t.is(method.headers.allow, 'GET, HEAD');
  t.like(method.body, { status: 405, code: 'METHOD_NOT_ALLOWED' });
  const param = await get('GET', '/api/disputes?limit=abc');
  t.is(param.status, 400);
  t.regex(String(param.headers['content-type']), /^application\/problem\+json/);
  t.like(param.body, { status: 400 });
  t.is(reached, 0);
});
