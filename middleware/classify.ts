/**
 * Stage 2, classify. Decides whether the request is confirmable (every call pinned to a fixed
 * block) and how many upstreams must agree: the path's `<n>`, else the chain's, else the global
 * default; always 1 for a request that is not confirmable.
 * `safe`/`finalized`: once the chain's heads are tracked, they are resolved to the chain's robust
 * safe/finalized head (lib/verify/eligibility.ts resolveTags) and the request, now pinned to
 * that number, is confirmable; the upstreams are asked for the number (ctx.payload is replaced).
 * A block above every upstream's head (lib/verify/eligibility.ts aboveEveryHead, judged again
 * after asking every upstream for its head now): no provider has it, so nothing about it can be
 * vouched for. The request is relayed unconfirmed to one upstream (N=1, X-Confirmable: false),
 * and the node's own answer, an unknown-block error included, is the answer (ctx.beyondHeads):
 * the client gets what a node says at once, and no upstream is charged for the client's question.
 * A chain constant in a batch that holds a confirmable call (ctx.batchConfirmable, run-members.ts)
 * is confirmable at the batch's N.
 * Reads: ctx.payload, ctx.chain, ctx.confirmationsOverride, ctx.batchConfirmable   Writes: ctx.confirmable, ctx.required, ctx.beyondHeads (ctx.payload when a tag is resolved)
 */
import type { Middleware } from '../lib/pipeline/compose.js';
import { getContext, need } from '../lib/pipeline/context.js';
import { batchNeutral, classifyCalls } from '../lib/jsonrpc/classify.js';
import { aboveEveryHead, resolveTags } from '../lib/verify/eligibility.js';
import { pollHeadsNow } from '../lib/health/tracker.js';

export function classify(): Middleware {
  return function classify(req, _res, next) {
    const ctx = getContext(req);
    const payload = need(ctx, 'payload', 'classify');
    const chain = need(ctx, 'chain', 'classify');
    let verdict = classifyCalls(payload.calls, chain.extraConfirmable);
    if (!verdict.confirmable) {
      const tags = resolveTags(chain, payload);
      const resolved = tags && classifyCalls(tags.payload.calls, chain.extraConfirmable);
      if (resolved?.confirmable) {
        ctx.payload = tags!.payload;
        verdict = { confirmable: true, reason: `${resolved.reason} (${tags!.resolved.map((r) => `${r.tag} resolved to 0x${r.block.toString(16)}`).join(', ')})` };
      }
    }
    // A chain constant (eth_chainId, net_version: every honest node of the chain gives the same
    // answer) in a batch that holds a confirmable call is asked of the same N upstreams, so that
    // the batch can still say X-Confirmable: true (ethers v6 adds eth_chainId to its batches).
    const call = ctx.payload!.calls[0]!;
    if (!verdict.confirmable && ctx.batchConfirmable && !payload.batch && batchNeutral.has(call.method) && call.alias === undefined) {
      verdict = { confirmable: true, reason: 'a chain constant in a batch with confirmable calls' };
    }
    const settle = (confirmable: boolean) => {
      ctx.confirmable = confirmable;
      ctx.required = confirmable ? (ctx.confirmationsOverride ?? chain.confirmations) : 1;
      if (ctx.log.isLevelEnabled?.('debug') !== false) ctx.log.debug({ confirmable, required: ctx.required, why: ctx.beyondHeads ? 'above every upstream\'s head' : verdict.reason }, 'classified');
      next();
    };
    const calls = ctx.payload!.calls;
    if (!verdict.confirmable || !aboveEveryHead(chain, calls)) return settle(verdict.confirmable);
    // The heads polled every heads.intervalMs may be seconds old: ask every upstream now.
    void pollHeadsNow(chain, chain.upstreams).then(() => {
      if (aboveEveryHead(chain, calls)) ctx.beyondHeads = true;
      settle(!ctx.beyondHeads);
    });
  };
}
