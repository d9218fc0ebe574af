/**
 * Stage 5, canonicalize and hash. Says what each upstream's answer will be judged by: the
 * request's payload (ids, single call or batch), the chain's ignored fields, and whether an
 * unknown-block error is the nodes' honest answer (a block above every head, classify). The
 * judgement itself (a vote with the canonical form's SHA-256, lib/verify/answers/canonical.ts, or a
 * failure with its reason, scrubbed of provider keys) is lib/verify/assess.ts, which the verify
 * stage builds from this.
 * Reads: ctx.payload, ctx.chain, ctx.beyondHeads   Writes: ctx.judging
 */
import type { Middleware } from '../lib/pipeline/compose.js';
import { getContext, need } from '../lib/pipeline/context.js';

export function canonicalize(): Middleware {
  return function canonicalize(req, _res, next) {
    const ctx = getContext(req);
    need(ctx, 'fetch', 'canonicalize');
    const payload = need(ctx, 'payload', 'canonicalize');
    ctx.judging = { payload, ignored: ctx.chain?.ignoredFields, beyondHeads: ctx.beyondHeads === true };
    next();
  };
}
