/**
 * The cache of confirmed answers (lib/cache), between classify and select: it wraps the stages
 * that ask the upstreams (select → fetch → canonicalize → verify, 3–6): a confirmable request whose question the cache holds,
 * confirmed by at least the request's N, is answered from it (ctx.cached) with no upstream call;
 * any other runs them, and its confirmed answer is kept when the block it is about is final.
 * A request with `Cache-Control: no-cache` (or `no-store`) is not answered from the cache.
 * Reads: ctx.chain, ctx.payload, ctx.confirmable, ctx.required, ctx.beyondHeads, ctx.verdict (after the inner stages)
 * Writes: ctx.cached
 */
import type { IncomingMessage } from 'node:http';
import type { AnswerCache } from '../lib/cache/answers.js';
import type { Middleware } from '../lib/pipeline/compose.js';
import { getContext, need } from '../lib/pipeline/context.js';

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
  if (!answers) return inner;
  return function cache(req, res, next) {
    const ctx = getContext(req);
    const chain = need(ctx, 'chain', 'cache');
    const payload = need(ctx, 'payload', 'cache');
    const key = ctx.confirmable && !ctx.beyondHeads ? answers.keyOf(chain, payload) : undefined;
    if (key === undefined) return inner(req, res, next);
    const required = need(ctx, 'required', 'cache');
    if (bypasses(req)) answers.bypassed(chain);
    else {
      const hit = answers.lookup(chain, key, required, payload.calls[0]!.id);
      if (hit) {
        ctx.cached = { hit: true, verdict: hit.verdict, at: hit.at };
        return next();
      }
    }
    ctx.cached = { hit: false };
    inner(req, res, (err?: unknown) => {
      if (!err && ctx.verdict && !ctx.writtenTo) answers.remember(chain, key, payload, ctx.verdict, required);
      next(err);
    });
  };
}
