/** GET /api/stats and /api/status: the snapshots as JSON, GET/HEAD only, no query parameters. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import test from 'ava';
import type { ApiContext } from '../../../../../lib/indexer/context.js';
import { isOpsRoute, opsHandler, STATS_PATH, STATUS_PATH } from '../../../../../lib/indexer/ops/routes.js';
import { send } from '../../../../support/gateway.js';
import { serveHandler } from '../../../../support/stage.js';

test('isOpsRoute should match the two paths, with or without a trailing slash', (t) => {
  t.true(isOpsRoute(STATS_PATH));
  t.true(isOpsRoute(`${STATUS_PATH}/`));
  t.false(isOpsRoute('/api/stats/x'));
  t.false(isOpsRoute('/api'));
  t.false(isOpsRoute('/'));
});

async function get(method: string, path: string) {
  const ctx = { ops: { stats: { get: async () => ({ bridges: 3 }) }, status: { get: async () => ({ ready: true }) } } } as unknown as ApiContext;
  const handler = opsHandler(ctx);
  const server = await serveHandler((req: IncomingMessage, res: ServerResponse) => {
    handler(req, res).catch((err: { status?: number; headers?: Record<string, string>; message: string }) => {
      res.writeHead(err.status ?? 500, err.headers ?? {}).end(JSON.stringify({ error: err.message }));
    });
  });
  try {
    return await send(server.url, method, path);
  } finally {
    await server.close();
  }
}

test('should answer each path with its snapshot, not cached by the client', async (t) => {
  const stats = await get('GET', '/api/stats');
  t.is(stats.status, 200);
  t.deepEqual(stats.body, { bridges: 3 });
  t.is(stats.headers['cache-control'], 'no-cache');
  t.deepEqual((await get('GET', '/api/status/')).body, { ready: true });
});

test('should refuse another method with 405 and Allow, and any query parameter', async (t) => {
  const post = await get('POST', '/api/stats');
  t.is(post.status, 405);
  t.is(post.headers.allow, 'GET, HEAD');
  const query = await get('GET', '/api/stats?limit=1');
  t.is(query.status, 400);
  t.regex(query.body.error, /limit/);
});
