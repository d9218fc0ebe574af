/**
 * Stage 3, select upstreams. Ranks the chain's upstreams (healthy first, configured order as
 * the tie-break) and refuses a request that asks more confirmations than there are upstreams.
 * Reads: ctx.chain, ctx.required   Writes: ctx.candidates
 */
import type { Middleware } from '../lib/compose.js';
import { getContext, need } from '../lib/context.js';
import { NotEnoughUpstreamsError } from '../lib/errors.js';
import { rankUpstreams } from '../lib/upstream/select.js';

export function selectUpstreams(): Middleware {
  return function selectUpstreams(req, _res, next) {
    const ctx = getContext(req);
    const chain = need(ctx, 'chain', 'selectUpstreams');
    const required = need(ctx, 'required', 'selectUpstreams');
    const candidates = rankUpstreams(chain.upstreams, Date.now());
    if (required > candidates.length) {
      return next(
        new NotEnoughUpstreamsError(
          `Not enough upstreams: ${required} confirmations asked, chain ${chain.id} has ${candidates.length} usable upstream${candidates.length === 1 ? '' : 's'}`,
          { data: { required, usable: candidates.length } },
        ),
      );
    }
    ctx.candidates = candidates;
    next();
  };
}
