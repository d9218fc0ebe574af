/**
 * Stage 2, classify. Decides whether the request is confirmable (every call pinned to a fixed
 * block) and how many upstreams must agree: the path's `<n>`, else the chain's, else the global
 * default; always 1 for a request that is not confirmable.
 * Reads: ctx.payload, ctx.chain, ctx.confirmationsOverride   Writes: ctx.confirmable, ctx.required
 */
import type { Middleware } from '../lib/compose.js';
import { getContext, need } from '../lib/context.js';
import { classifyCalls } from '../lib/jsonrpc/methods.js';

export function classify(): Middleware {
  return function classify(req, _res, next) {
    const ctx = getContext(req);
    const payload = need(ctx, 'payload', 'classify');
    const chain = need(ctx, 'chain', 'classify');
    const verdict = classifyCalls(payload.calls, chain.extraConfirmable);
    ctx.confirmable = verdict.confirmable;
    ctx.required = verdict.confirmable ? (ctx.confirmationsOverride ?? chain.confirmations) : 1;
    if (ctx.log.isLevelEnabled?.('debug') !== false) ctx.log.debug({ confirmable: verdict.confirmable, required: ctx.required, why: verdict.reason }, 'classified');
    next();
  };
}
