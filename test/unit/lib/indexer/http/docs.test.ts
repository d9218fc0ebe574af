/**
 * /openapi.json and /api-docs served with nothing from the internet: the spec's server follows
 * the mount path, the Redoc page loads the local bundle, the bundle's one CDN reference blanked;
 * GET/HEAD only; any other path a 404.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import test from 'ava';
import type { ApiContext } from '../../../../../lib/indexer/context.js';
import { docsHandler, localizeRedocBundle, REDOC_BUNDLE_PATH, redocBundleFile, redocPage } from '../../../../../lib/indexer/http/docs.js';
import { send } from '../../../../support/gateway.js';
import { serveHandler } from '../../../../support/stage.js';

test('redocPage should point at the spec and the local bundle under the mount path, and at nothing on the internet', (t) => {
  const page = redocPage('/idx');
  t.true(page.includes('/idx/openapi.json'));
  t.true(page.includes(`src="/idx${REDOC_BUNDLE_PATH}"`));
  t.false(/(?:src|href)="https?:/i.test(page));
  t.false(page.includes('fonts.googleapis.com'));
});

test('localizeRedocBundle should blank the CDN logo, and leave the rest as is', (t) => {
  t.is(localizeRedocBundle('a="https://cdn.redoc.ly/redoc/logo-mini.svg";b="https://cdn.redoc.ly/redoc/logo-mini.svg"'), 'a="";b=""');
  t.is(localizeRedocBundle('nothing here'), 'nothing here');
  t.regex(redocBundleFile(), /redoc[/\\]bundles[/\\]redoc\.standalone\.js$/);
});

async function get(method: string, path: string, mount = '') {
  const handler = docsHandler({ limits: { defaultLimit: 50, maxLimit: 500 } } as unknown as ApiContext);
  const server = await serveHandler((req: IncomingMessage, res: ServerResponse) => {
    if (mount) Object.assign(req, { originalUrl: `${mount}${req.url}` });
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

test('should serve the OpenAPI document with the mount path as its server', async (t) => {
  const r = await get('GET', '/openapi.json', '/idx');
  t.is(r.status, 200);
  t.is(r.headers['content-type'], 'application/json; charset=utf-8');
  t.deepEqual(r.body.servers, [{ url: '/idx' }]);
  t.truthy(r.body.paths['/api/disputes']);
  t.deepEqual((await get('GET', '/openapi.json')).body.servers, [{ url: '/' }]);
});

test('should serve the Redoc page and the local bundle without its CDN logo', async (t) => {
  const page = await get('GET', '/api-docs/');
  t.is(page.status, 200);
  t.is(page.headers['content-type'], 'text/html; charset=utf-8');
  t.true(page.text.includes(`src="${REDOC_BUNDLE_PATH}"`));
  const bundle = await get('GET', REDOC_BUNDLE_PATH);
  t.is(bundle.status, 200);
  t.is(bundle.headers['cache-control'], 'public, max-age=86400');
  t.true(bundle.text.length > 100_000);
  t.false(bundle.text.includes('cdn.redoc.ly/redoc/logo-mini.svg'));
});

test('should refuse another method with 405 and answer another path with 404', async (t) => {
  const post = await get('POST', '/openapi.json');
  t.is(post.status, 405);
  t.is(post.headers.allow, 'GET, HEAD');
  t.is((await get('GET', '/api-docs/other')).status, 404);
});
