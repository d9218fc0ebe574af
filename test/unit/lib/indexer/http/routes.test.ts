/**
 * The REST routes' matching, and what they refuse before any query (no database is reached):
 * another method, a bad list parameter, a transaction key that is no id or hash.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import test from 'ava';
import { LIST_ROUTES, TRANSACTION_PATH_PREFIX } from '../../../../../lib/indexer/catalog.js';
import type { ApiContext } from '../../../../../lib/indexer/context.js';
import { isRestRoute, restHandler } from '../../../../../lib/indexer/http/routes.js';
import { send } from '../../../../support/gateway.js';
import { serveHandler } from '../../../../support/stage.js';

const hash = `0x${'ab'.repeat(32)}`;

test('isRestRoute should match every list path and the transaction lookup, one trailing slash tolerated', (t) => {
  for (const p of LIST_ROUTES.flatMap((r) => r.paths)) {
    t.true(isRestRoute(p), p);
    t.true(isRestRoute(`${p}/`), `${p}/`);
  }
  t.true(isRestRoute(`${TRANSACTION_PATH_PREFIX}${hash}`));
  for (const other of ['/api', '/api/', '/api/other', `${TRANSACTION_PATH_PREFIX}`, `${TRANSACTION_PATH_PREFIX}a/b`, '/api/disputes//', '/API/disputes']) t.false(isRestRoute(other), other);
});

async function get(method: string, path: string) {
  let queried = 0;
  const db = new Proxy({}, { get: () => { queried += 1; throw new Error('the database was reached'); } });
  const handler = restHandler({ db, limits: { defaultLimit: 50, maxLimit: 500 }, queryContext: () => ({}), layouts: {} } as unknown as ApiContext);
  const server = await serveHandler((req: IncomingMessage, res: ServerResponse) => {
    handler(req, res).catch((err: { status?: number; headers?: Record<string, string>; message: string }) => {
      res.writeHead(err.status ?? 500, err.headers ?? {}).end(JSON.stringify({ error: err.message }));
    });
  });
  try {
    const reply = await send(server.url, method, path);
    return { ...reply, queried };
  } finally {
    await server.close();
  }
}

test('should refuse another method with 405 and Allow, before any query', async (t) => {
  for (const path of ['/api/disputes', `${TRANSACTION_PATH_PREFIX}${hash}`]) {
    const r = await get('DELETE', path);
    t.is(r.status, 405, path);
    t.is(r.headers.allow, 'GET, HEAD');
    t.is(r.queried, 0);
  }
});

test('should refuse a bad list parameter or transaction key with 400, naming it, before any query', async (t) => {
  const cases: [string, RegExp][] = [
    ['/api/disputes?limit=0', /limit/],
    ['/api/disputes?limit=501', /limit/],
    ['/api/disputes?cursor=nonsense', /cursor/],
    ['/api/disputes?unknown=1', /unknown/],
    [`${TRANSACTION_PATH_PREFIX}0x12`, /transactionIdOrOriginTxHash/],
    [`${TRANSACTION_PATH_PREFIX}%E0%A4%A`, /percent-encoding/],
    [`${TRANSACTION_PATH_PREFIX}${hash}?x=1`, /x/],
  ];
  for (const [path, message] of cases) {
    const r = await get('GET', path);
    t.is(r.status, 400, path);
    t.regex(r.body.error, message, path);
    t.is(r.queried, 0, path);
  }
});
