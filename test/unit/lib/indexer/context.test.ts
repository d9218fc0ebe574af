import type { IncomingMessage } from 'node:http';
import test from 'ava';
import { createApiContext, mountPrefix, splitUrl } from '../../../../lib/indexer/context.js';
import type { IndexerDb } from '../../../../lib/indexer/db/pool.js';

const req = (url: string, originalUrl?: string) => ({ url, ...(originalUrl === undefined ? {} : { originalUrl }) }) as unknown as IncomingMessage;

test('mount prefix from connect/express originalUrl', (t) => {
  t.is(mountPrefix(req('/api/disputes?limit=1')), '');
  t.is(mountPrefix(req('/api/disputes', '/api/disputes')), '');
  t.is(mountPrefix(req('/api/disputes?x=1', '/indexer/api/disputes?x=1')), '/indexer');
  t.is(mountPrefix(req('/', '/indexer')), '/indexer');
  t.is(mountPrefix(req('/api-docs', '/a"b/api-docs')), '', 'unsafe characters are never echoed');
  t.is(mountPrefix(req('/x', '/unrelated')), '');
});

test('splitUrl separates path and query', (t) => {
  t.deepEqual(splitUrl(req('/api/x?a=1&b=2')), { path: '/api/x', search: 'a=1&b=2' });
  t.deepEqual(splitUrl(req('/api/x')), { path: '/api/x', search: '' });
});

test('defaults and per-request clock', (t) => {
  let now = 100;
  const ctx = createApiContext({} as IndexerDb, { now: () => now, nodeEnv: 'development', maxLimit: 50 });
  t.true(ctx.dev);
  t.deepEqual(ctx.limits, { defaultLimit: 50, maxLimit: 50 });
  t.is(ctx.graphqlMaxCost, 250);
  t.is(ctx.graphqlMaxQueries, 20);
  t.like(ctx.queryContext(), { now: 100, missingRelayWindowSeconds: 604800, invalidRelayWindowSeconds: 1209600 });
  now = 200;
  t.is(ctx.queryContext().now, 200);
  t.false('lookbackFloor' in ctx.queryContext());
  t.false(createApiContext({} as IndexerDb, { nodeEnv: 'production' }).dev);
  t.is(createApiContext({} as IndexerDb, { lookbackFloor: 5 }).queryContext().lookbackFloor, 5);
  t.is(createApiContext({} as IndexerDb).limits.defaultLimit, 100);
});

test('a lookback floor that is not unix seconds (e.g. milliseconds) is refused when the API is created', (t) => {
  for (const lookbackFloor of [1722729600000, -1, 1.5, Number.NaN]) {
    t.throws(() => createApiContext({} as IndexerDb, { lookbackFloor }), { instanceOf: RangeError, message: /lookbackFloor/ }, String(lookbackFloor));
  }
  t.is(createApiContext({} as IndexerDb, { lookbackFloor: 2147483647 }).queryContext().lookbackFloor, 2147483647);
});

test('a relay window that is not whole seconds within a PostgreSQL integer is refused when the API is created', (t) => {
  for (const name of ['missingRelayWindowSeconds', 'invalidRelayWindowSeconds'] as const) {
    for (const seconds of [604800000000, 0, -1, 1.5, Number.NaN]) {
      t.throws(() => createApiContext({} as IndexerDb, { [name]: seconds }), { instanceOf: RangeError, message: new RegExp(name) }, `${name} ${seconds}`);
    }
    t.is(createApiContext({} as IndexerDb, { [name]: 3600 }).queryContext()[name], 3600);
  }
});
