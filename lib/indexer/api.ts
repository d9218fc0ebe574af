/**
 * `indexerApi(db)`: one connect/express handler, mounted at the app root, that serves the indexer
 * paths and passes every other request on with `next()`:
 *   /api/*          REST (routes.ts)
 *   /graphql        GraphQL + GraphiQL (lib/indexer/graphql/endpoint.ts)
 *   /openapi.json   OpenAPI 3.1 (openapi.ts)
 *   /api-docs       Redoc page and its locally served bundle (docs.ts)
 * Any other path, /api/… ones included, goes to the host app's next handler: routes mounted after
 * the indexer stay reachable. `indexerNotFound()` answers the indexer's 404 for the rest of /api
 * (`omnigate serve` mounts it after the indexer).
 * Async failures are caught here and rendered as problem+json, so a rejected promise never
 * leaves a request hanging in connect (which does not handle promises).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createApiContext, splitUrl, type ApiContext, type IndexerApiOptions } from './context.js';
import type { IndexerDb } from './db/pool.js';
import { redactCredentials } from '../upstream/redact.js';
import { graphqlHandler } from './graphql/endpoint.js';
import { sendProblem, toProblem } from './http/problem.js';
import { docsHandler, REDOC_BUNDLE_PATH } from './http/docs.js';
import { isRestRoute, restHandler } from './http/routes.js';
import { isOpsRoute, opsHandler } from './ops/routes.js';
import type { OpsSource } from './ops/stats.js';

export type { IndexerApiOptions } from './context.js';

export type IndexerHandler = (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void;

/** The handler of indexerApi(), with the stats/status snapshots its routes serve (for the Prometheus gauges: lib/indexer/ops/metrics.ts). */
export type IndexerApiHandler = IndexerHandler & { readonly ops: OpsSource };

function fail(ctx: ApiContext, req: IncomingMessage, res: ServerResponse, err: unknown): void {
  const { path } = splitUrl(req);
  const problem = toProblem(err, { dev: ctx.dev, instance: path });
  // INDEX_NOT_READY (no tables yet) is logged once by the layout resolver, not on every request.
  if (problem.severity !== 'none' && problem.body.code !== 'INDEX_NOT_READY') {
    const e = err instanceof Error ? err : new Error(String(err));
    const cause = e.cause instanceof Error ? redactCredentials(e.cause.message) : undefined;
    ctx.logger[problem.severity]({
      status: problem.status, code: problem.body.code, method: req.method, path,
      err: { name: e.name, message: redactCredentials(e.message), ...(cause ? { cause } : {}), ...(problem.status === 500 && e.stack ? { stack: redactCredentials(e.stack) } : {}) },
    }, 'indexer request failed');
  }
  if (res.headersSent) {
    res.destroy();
    return;
  }
  sendProblem(res, problem);
}

/**
 * @example
 * // connect
 * const app = connect(); app.use(indexerApi(db, { nodeEnv: process.env.NODE_ENV }));
 * // express
 * const app = express(); app.use(indexerApi(db));
 */
export function indexerApi(db: IndexerDb, options: IndexerApiOptions = {}): IndexerApiHandler {
  const ctx = createApiContext(db, options);
  const rest = restHandler(ctx);
  const graphql = graphqlHandler(ctx);
  const docs = docsHandler(ctx);
  const ops = opsHandler(ctx);
  return Object.assign(function indexerApi(req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) {
    const { path } = splitUrl(req);
    let handler: ((req: IncomingMessage, res: ServerResponse) => Promise<void>) | undefined;
    if (path === '/graphql' || path === '/graphql/') handler = graphql;
    else if (path === '/openapi.json' || path === '/api-docs' || path === '/api-docs/' || path === REDOC_BUNDLE_PATH) handler = docs;
    else if (isRestRoute(path)) handler = rest;
    else if (isOpsRoute(path)) handler = ops;
    if (!handler) {
      next();
      return;
    }
    handler(req, res).catch((err: unknown) => fail(ctx, req, res, err));
  }, { ops: ctx.ops });
}

export { indexerNotFound } from './http/not-found.js';
