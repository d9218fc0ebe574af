/**
 * The cache of confirmed answers (lib/cache), between classify and select: it wraps the stages
 * that ask the upstreams (select → fetch → canonicalize → verify, 3–6): a confirmable request
 * whose question the cache holds, confirmed by at least the request's N, is answered from it
 * (ctx.cached) with no upstream call: from this process's memory, else from Redis when
 * configured (a bounded wait); any other runs them, and its confirmed answer is kept when the
 * block it is about is final. A request with `Cache-Control: no-cache` (or `no-store`) is not
 * answered from the cache, unless its client key may not bypass it (ctx.access, lib/access).
 * Reads: ctx.access, ctx.chain, ctx.payload, ctx.confirmable, ctx.required, ctx.beyondHeads, ctx.verdict (after the inner stages)
 * Writes: ctx.cached
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AnswerCache, Hit } from '../lib/cache/answers.js';
import type { Middleware, Next } from '../lib/pipeline/compose.js';
import { getContext, need, type RpcContext } from '../lib/pipeline/context.js';

export interface CacheOptions {
  /** The cache; absent: the inner stages run for every request. */
  cache?: AnswerCache;
}

/** `Cache-Control: no-cache` or `no-store` from the client: answer from the upstreams. */
function bypasses(req: IncomingMessage): boolean {
  const value = req.headers['cache-control'];
  return value !== undefined && /(?:^|[\s,])no-(?:cache|store)(?:$|[\s,=])/i.test(value);
}

export function cache(options: CacheOptions, inner: Middleware): Middleware {
  const answers = options.cache;
  // An answer known without asking (the finalized route's eth_blockNumber, classify): nothing to look up or run.
  if (!answers) return (req, res, next) => (getContext(req).known ? next() : inner(req, res, next));
  /** No hit: the upstreams are asked, and a final confirmed answer kept. */
  const miss = (req: IncomingMessage, res: ServerResponse, next: Next, ctx: RpcContext, key: string) => {
    const chain = ctx.chain!;
    answers.counted(chain, false);
    ctx.cached = { hit: false };
    inner(req, res, (err?: unknown) => {
      if (!err && ctx.verdict && !ctx.writtenTo) answers.remember(chain, key, ctx.payload!, ctx.verdict, ctx.required!);
      next(err);
    });
  };
  const hit = (next: Next, ctx: RpcContext, found: Hit) => {
    answers.counted(ctx.chain!, true);
    ctx.cached = { hit: true, verdict: found.verdict, at: found.at };
    next();
  };
  return function cache(req, res, next) {
    const ctx = getContext(req);
    if (ctx.known) return next();
    const chain = need(ctx, 'chain', 'cache');
    const payload = need(ctx, 'payload', 'cache');
    const key = ctx.confirmable && !ctx.beyondHeads ? answers.keyOf(chain, payload) : undefined;
    if (key === undefined) return inner(req, res, next);
    const required = need(ctx, 'required', 'cache');
    // A client key without the cacheBypass right (lib/access) is answered from the cache whatever it asks.
    if (bypasses(req) && ctx.access?.rights.cacheBypass !== false) return miss(req, res, next, ctx, key);
    const id = payload.calls[0]!.id;
    const found = answers.lookup(key, required, id);
    if (found) return hit(next, ctx, found);
    if (!answers.shared) return miss(req, res, next, ctx, key);
    answers.lookupShared(chain, key, required, id).then(
      (shared) => (shared ? hit(next, ctx, shared) : miss(req, res, next, ctx, key)),
      () => miss(req, res, next, ctx, key),
    );
  };
}
