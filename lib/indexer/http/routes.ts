/**
 * The REST API under /api. Lists answer a plain JSON array (empty → `[]`), so clients of the
 * reference API keep working; the next page is announced in headers: `X-Next-Cursor` (the cursor
 * alone) and `Link: <…?cursor=…>; rel="next"` (RFC 8288), both absent on the last page. The
 * transaction lookup answers one object or 404. Every error is problem+json (problem.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LIST_ROUTES, TRANSACTION_PATH_PREFIX, type ListRoute } from '../catalog.js';
import { mountPrefix, splitUrl, type ApiContext } from '../context.js';
import { IndexerMethodNotAllowedError, InvalidParameterError, NotFoundError } from '../../errors.js';
import { sendJson } from './write.js';
import { listParamsFromQuery, noQueryParams, parseListParams, parseTransactionKey } from '../read/params.js';
import { findTransaction, runList } from '../read/queries.js';

export const NEXT_CURSOR_HEADER = 'X-Next-Cursor';
const READ_METHODS = 'GET, HEAD';

const routeByPath = new Map<string, ListRoute>(LIST_ROUTES.flatMap((r) => r.paths.map((p) => [p, r] as const)));

function assertReadMethod(req: IncomingMessage): void {
  if (req.method !== 'GET' && req.method !== 'HEAD') throw new IndexerMethodNotAllowedError(req.method ?? '?', READ_METHODS);
}

async function serveList(ctx: ApiContext, route: ListRoute, req: IncomingMessage, res: ServerResponse, path: string, search: string) {
  assertReadMethod(req);
  const filter = parseListParams(listParamsFromQuery(search), ctx.limits);
  const page = await runList(ctx.db, route.query, filter, ctx.queryContext());
  const headers: Record<string, string> = { 'Cache-Control': 'no-cache' };
  if (page.nextCursor) {
    const next = new URLSearchParams(search);
    next.set('cursor', page.nextCursor);
    headers[NEXT_CURSOR_HEADER] = page.nextCursor;
    headers.Link = `<${mountPrefix(req)}${path}?${next.toString()}>; rel="next"`;
  }
  sendJson(res, 200, page.items, headers);
}

async function serveTransaction(ctx: ApiContext, req: IncomingMessage, res: ServerResponse, segment: string, search: string) {
  assertReadMethod(req);
  noQueryParams(search);
  let raw: string;
  try {
    raw = decodeURIComponent(segment);
  } catch {
    throw new InvalidParameterError('transactionIdOrOriginTxHash', 'is not valid percent-encoding');
  }
  const key = parseTransactionKey('transactionIdOrOriginTxHash', raw);
  const detail = await findTransaction(ctx.db, key, ctx.layouts);
  if (!detail) throw new NotFoundError(`No bridge transaction has transactionId or origin transaction hash ${key}`);
  sendJson(res, 200, detail, { 'Cache-Control': 'no-cache' });
}

/** One trailing slash is tolerated, as express's non-strict routing does. */
const trimSlash = (path: string) => (path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path);

/** The transaction id segment of /api/transaction-id/<id>, or undefined for any other path. */
function transactionSegment(path: string): string | undefined {
  if (!path.startsWith(TRANSACTION_PATH_PREFIX)) return undefined;
  const segment = path.slice(TRANSACTION_PATH_PREFIX.length);
  return segment.length > 0 && !segment.includes('/') ? segment : undefined;
}

/**
 * Whether a path (relative to the mount point, without the query) is one of the REST routes.
 * Other /api paths are not the indexer's: they go to the host app's next handler.
 */
export function isRestRoute(rawPath: string): boolean {
  const path = trimSlash(rawPath);
  return routeByPath.has(path) || transactionSegment(path) !== undefined;
}

/** Handles a request for one of the REST routes (isRestRoute); throws errors for the caller to render. */
export function restHandler(ctx: ApiContext): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return async function indexerRest(req, res) {
    const { path: rawPath, search } = splitUrl(req);
    const path = trimSlash(rawPath);
    const route = routeByPath.get(path);
    if (route) return serveList(ctx, route, req, res, path, search);
    const segment = transactionSegment(path);
    if (segment !== undefined) return serveTransaction(ctx, req, res, segment, search);
    throw new NotFoundError(`No route ${req.method ?? 'GET'} ${path}; the routes are listed in /openapi.json`);
  };
}
