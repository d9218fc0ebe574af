/**
 * GET /api/stats and GET /api/status: the snapshots of lib/indexer/ops/stats.ts as JSON (no query parameters).
 * While the indexer's tables are missing they fail as the lists do (problem+json).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { splitUrl, type ApiContext } from '../context.js';
import { IndexerMethodNotAllowedError } from '../../errors.js';
import { sendJson } from '../http/write.js';
import { noQueryParams } from '../read/params.js';

export const STATS_PATH = '/api/stats';
export const STATUS_PATH = '/api/status';

const trimSlash = (path: string) => (path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path);

export function isOpsRoute(path: string): boolean {
  const p = trimSlash(path);
  return p === STATS_PATH || p === STATUS_PATH;
}

export function opsHandler(ctx: ApiContext): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return async function indexerOps(req, res) {
    if (req.method !== 'GET' && req.method !== 'HEAD') throw new IndexerMethodNotAllowedError(req.method ?? '?', 'GET, HEAD');
    const { path, search } = splitUrl(req);
    noQueryParams(search);
    const body = trimSlash(path) === STATS_PATH ? await ctx.ops.stats.get() : await ctx.ops.status.get();
    sendJson(res, 200, body, { 'Cache-Control': 'no-cache' });
  };
}
