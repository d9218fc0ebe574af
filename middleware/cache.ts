/**
 * The cache of confirmed answers (lib/cache), between classify and select: it wraps the stages
 * that ask the upstreams (select → fetch → canonicalize → verify, 3–6): a confirmable request
 * whose question the cache holds, confirmed by at least the request's N, is answered from it
 * (ctx.cached) with no upstream call: from this process's memory, else from Redis when
 * configured (a bounded wait); any other runs them, and its confirmed answer is kept when the
 * block it is about is final. An entry confirmed by fewer than N is topped up: its votes go to
 * the agreement as cast (ctx.cached.prior, middleware/verify.ts), which asks other providers only
 * for the missing ones; the answer then replaces the entry. An entry an answer of that run
 * differed from (ctx.cached.disputed) is dropped, in memory and Redis. A request with
 * `Cache-Control: no-cache` (or `no-store`) is not answered from the cache, nor topped up, unless its client key may not bypass it (ctx.access, lib/access).
 * A proven answer (ctx.proof, middleware/prove.ts) is kept as proven, and its hit sets ctx.proof
 * again (the header it was proven against); a proven entry of a smaller N is a miss, not a top-up.
 * Reads: ctx.access, ctx.chain, ctx.payload, ctx.confirmable, ctx.required, ctx.beyondHeads, ctx.verdict, ctx.proof (after the inner stages)
 * Writes: ctx.cached, ctx.proof (a proven entry's hit)
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { priorOf, underId, type AnswerCache, type Hit } from '../lib/cache/answers.js';
import type { ProvenBy } from '../lib/cache/redis.js';
import type { Middleware, Next } from '../lib/pipeline/compose.js';
import { getContext, need, toppedUp, type CacheMiss, type RpcContext } from '../lib/pipeline/context.js';
import type { Verdict } from '../lib/verify/question.js';

export interface CacheOptions {
  /** The cache; absent: the inner stages run for every request. */
  cache?: AnswerCache;
  /** The longest the worker thread may take to judge a large entry's bytes for a top-up, ms (default 30 s). */
  judgeTimeoutMs?: number;
}

/** `Cache-Control: no-cache` or `no-store` from the client: answer from the upstreams. */
function bypasses(req: IncomingMessage): boolean {
  const value = req.headers['cache-control'];
  return value !== undefined && /(?:^|[\s,])no-(?:cache|store)(?:$|[\s,=])/i.test(value);
}

export function cache(options: CacheOptions, inner: Middleware): Middleware {
  const answers = options.cache;
  const judgeTimeoutMs = options.judgeTimeoutMs ?? 30_000;
  // An answer known without asking (the finalized route's eth_blockNumber, classify): nothing to look up or run.
  if (!answers) return (req, res, next) => (getContext(req).known ? next() : inner(req, res, next));
  /** No hit: the upstreams are asked (only for the missing votes when `prior`), and a final confirmed answer kept. */
  const miss = (req: IncomingMessage, res: ServerResponse, next: Next, ctx: RpcContext, key: string, prior: Verdict | undefined) => {
    const chain = ctx.chain!;
    answers.counted(chain, false);
    const state: CacheMiss = { hit: false, prior, disputed: false };
    ctx.cached = state;
    inner(req, res, (err?: unknown) => {
      if (state.disputed) {
        ctx.log.warn({ chain: chain.id, quorum: prior!.members.map((m) => m.upstream.label), hash: prior!.hash }, 'cache: an upstream asked to top up a confirmed answer gave another: the entry is dropped');
        answers.forget(chain, key);
      }
      // (A proven answer is kept as proven: its hit says the header it was proven against.)
      if (!err && ctx.verdict && !ctx.writtenTo) {
        if (toppedUp(state, ctx.verdict)) answers.countTopUp(chain);
        answers.remember(chain, key, ctx.payload!, ctx.verdict, ctx.required!, ctx.proof?.verifiedBy === 'proof' ? (ctx.proof as ProvenBy) : undefined);
      }
      next(err);
    });
  };
  const found = (req: IncomingMessage, res: ServerResponse, next: Next, ctx: RpcContext, key: string, hit: Hit | undefined): void => {
    if (hit === undefined) return miss(req, res, next, ctx, key, undefined);
    // A long entry is put under the request's id first, a slice at a time.
    if (hit.pendingId !== undefined) return underId(hit, (under) => found(req, res, next, ctx, key, under));
    // A proven entry of a smaller N is no votes on the answer (its quorum agreed on a header): a plain miss.
    if (hit.topUp && hit.proof !== undefined) return miss(req, res, next, ctx, key, undefined);
    // The entry's votes, with what its bytes hold outside the comparison (vouched for by its quorum only).
    if (hit.topUp) return priorOf(hit, ctx.payload!, ctx.chain!.ignoredFields, judgeTimeoutMs, (prior) => miss(req, res, next, ctx, key, prior));
    answers.counted(ctx.chain!, true);
    ctx.cached = { hit: true, verdict: hit.verdict, at: hit.at };
    // A proven entry's hit says so (X-Verified-By: proof, X-Block-Hash, an attestation's verifiedBy), whatever the chain's mode now.
    ctx.proof = hit.proof;
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
    if (bypasses(req) && ctx.access?.rights.cacheBypass !== false) return miss(req, res, next, ctx, key, undefined);
    const id = payload.calls[0]!.id;
    const local = answers.lookup(key, required, id);
    // An entry in memory confirmed by fewer than N may be confirmed by more in Redis.
    if ((local !== undefined && !local.topUp) || !answers.shared) return found(req, res, next, ctx, key, local);
    answers.lookupShared(chain, key, required, id).then(
      (shared) => found(req, res, next, ctx, key, shared !== undefined && (local === undefined || !shared.topUp || shared.verdict.members.length > local.verdict.members.length) ? shared : local),
      () => found(req, res, next, ctx, key, local),
    );
  };
}
