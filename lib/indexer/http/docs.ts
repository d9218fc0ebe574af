/**
 * /openapi.json and the Redoc page at /api-docs. The page comes from redoc-express's template,
 * which points at unpkg.com and Google Fonts; both references are rewritten so the page loads
 * the Redoc bundle of the installed `redoc` package from /api-docs/redoc.standalone.js and
 * nothing from the internet. The bundle itself fetches one thing at run time, the Redocly logo
 * of its sidebar footer from cdn.redoc.ly; that URL is blanked when serving it (the image hides
 * itself on error, the "API docs by Redocly" link stays).
 */
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';
import redocExpress from 'redoc-express';
import { mountPrefix, splitUrl, type ApiContext } from '../context.js';
import { IndexerMethodNotAllowedError, NotFoundError } from '../../errors.js';
import { sendText } from './write.js';
import { buildOpenApi } from './openapi.js';

export const REDOC_BUNDLE_PATH = '/api-docs/redoc.standalone.js';

/** Absolute path of the installed Redoc standalone bundle. */
export function redocBundleFile(): string {
  const require = createRequire(import.meta.url);
  // redoc has no "exports" map, so its package.json resolves and the bundle sits next to it.
  return path.join(path.dirname(require.resolve('redoc/package.json')), 'bundles', 'redoc.standalone.js');
}

const REDOC_CDN_LOGO = '"https://cdn.redoc.ly/redoc/logo-mini.svg"';

/** The Redoc bundle with its only run-time internet reference removed. */
export function localizeRedocBundle(source: string): string {
  return source.split(REDOC_CDN_LOGO).join('""');
}

/** redoc-express renders with res.type()/res.send(); capture that into a string. */
function redocTemplate(specUrl: string): string {
  let html = '';
  const capture = {
    type: () => capture,
    send: (body: string) => { html = body; return capture; },
  };
  const render = redocExpress.default({
    title: 'omnigate indexer API',
    specUrl,
    redocOptions: { expandResponses: '200', hideDownloadButton: false, jsonSampleExpandLevel: 3 },
  });
  render({} as never, capture as never);
  return html;
}

/** The Redoc page with every internet reference replaced by a local one. */
export function redocPage(prefix: string): string {
  const html = redocTemplate(`${prefix}/openapi.json`)
    .replace(/<link[^>]*fonts\.googleapis\.com[^>]*>\s*/g, '')
    .replace(/src="https?:\/\/[^"]*redoc\.standalone\.js"/, `src="${prefix}${REDOC_BUNDLE_PATH}"`);
  if (/(?:src|href)="https?:/i.test(html)) throw new Error('redoc-express template still references the internet');
  return html;
}

export function docsHandler(ctx: ApiContext): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const pages = new Map<string, string>();
  const specs = new Map<string, string>();
  let bundle: Promise<Buffer> | undefined;

  return async function indexerDocs(req, res) {
    if (req.method !== 'GET' && req.method !== 'HEAD') throw new IndexerMethodNotAllowedError(req.method ?? '?', 'GET, HEAD');
    const { path: p } = splitUrl(req);
    const prefix = mountPrefix(req);
    if (p === '/openapi.json') {
      let spec = specs.get(prefix);
      if (!spec) {
        spec = JSON.stringify(buildOpenApi({ serverUrl: prefix || '/', limits: ctx.limits }));
        specs.set(prefix, spec);
      }
      return sendText(res, 200, 'application/json; charset=utf-8', spec, { 'Cache-Control': 'no-cache' });
    }
    if (p === '/api-docs' || p === '/api-docs/') {
      let page = pages.get(prefix);
      if (!page) {
        page = redocPage(prefix);
        pages.set(prefix, page);
      }
      return sendText(res, 200, 'text/html; charset=utf-8', page, { 'Cache-Control': 'no-cache' });
    }
    if (p === REDOC_BUNDLE_PATH) {
      bundle ??= readFile(redocBundleFile(), 'utf8').then((source) => Buffer.from(localizeRedocBundle(source)));
      const body = await bundle.catch((err: unknown) => {
        bundle = undefined;
        throw err;
      });
      return sendText(res, 200, 'application/javascript; charset=utf-8', body, { 'Cache-Control': 'public, max-age=86400' });
    }
    throw new NotFoundError(`No documentation resource at ${p}`);
  };
}
