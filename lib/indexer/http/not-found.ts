/**
 * The indexer's 404 for /api paths no handler answered. A module of its own, importing neither
 * the database pool nor GraphQL nor Redoc, so that a server mounting it (lib/server/app.ts) loads
 * none of those unless it also mounts the indexer API itself.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { splitUrl } from '../../pipeline/url.js';
import { NotFoundError } from '../../errors.js';
import { sendProblem, toProblem } from './problem.js';

/**
 * The indexer's 404 (problem+json) for /api and every path below it that no handler answered;
 * other paths go to `next()`. Mount it after `indexerApi()` and your own /api routes.
 * @example
 * app.use(indexerApi(db)); app.use(myApiRoutes); app.use(indexerNotFound());
 */
export function indexerNotFound(): (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void {
  return function indexerNotFound(req, res, next) {
    const { path } = splitUrl(req);
    if (path !== '/api' && !path.startsWith('/api/')) {
      next();
      return;
    }
    sendProblem(res, toProblem(new NotFoundError(`No route ${req.method ?? 'GET'} ${path}; the routes are listed in /openapi.json`), { dev: false, instance: path }));
  };
}
