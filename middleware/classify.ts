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
 * The finalized route (lib/verify/finalized-route.ts): `latest`, `safe`, `finalized` and a left-out
 * block are pinned to the highest block N providers report as finalized (ctx.payload is replaced);
 * `eth_blockNumber` is answered with it (ctx.known); with fewer than N reports, -32016.
 * Reads: ctx.payload, ctx.chain, ctx.confirmationsOverride, ctx.batchConfirmable, ctx.finalizedRoute
 * Writes: ctx.confirmable, ctx.required, ctx.beyondHeads, ctx.known (ctx.payload when a tag is resolved)
 */
import type { Middleware } from '../lib/pipeline/compose.js';
import { getContext, need, type RpcContext } from '../lib/pipeline/context.js';
import { batchNeutral, classifyCalls, type Classification } from '../lib/jsonrpc/classify.js';
import { aboveEveryHead, resolveTags } from '../lib/verify/eligibility.js';
import { pollHeadsNow } from '../lib/health/tracker.js';
import { finalizedBlockNumber, pinnedToFinalized, raiseRouteFinalized, routeFinalized } from '../lib/verify/finalized-route.js';
import { BlockNotAvailableError } from '../lib/errors.js';
import type { RpcPayload } from '../lib/jsonrpc/types.js';
import type { Chain } from '../lib/upstream/registry.js';

export interface ClassifyOptions {
  /**
   * The finalized route's block shared by the replicas (Redis, lib/cache/redis.ts raiseFloor):
   * given this process's block (undefined: none yet), the highest any replica gave for the chain
   * and N, never lower; a rejection or undefined falls back to this process's own.
   */
  sharedFinalized?: (chainId: string, required: number, block: bigint | undefined) => Promise<bigint | undefined>;
}

export function classify(options: ClassifyOptions = {}): Middleware {
  const shared = options.sharedFinalized;
  return function classify(req, _res, next) {
    const ctx = getContext(req);
    need(ctx, 'payload', 'classify');
    const chain = need(ctx, 'chain', 'classify');
    if (!ctx.finalizedRoute) return classified(ctx, chain, next);
    const required = ctx.confirmationsOverride ?? chain.confirmations;
    const local = routeFinalized(chain, required);
    const pin = (block: bigint | undefined) => {
      const refused = pinFinalized(ctx, chain, required, block);
      if (refused) return next(refused);
      classified(ctx, chain, next);
    };
    if (!shared) return pin(local);
    shared(chain.id, required, local).then(
      (block) => pin(block === undefined ? local : raiseRouteFinalized(chain, required, block)),
      () => pin(local),
    );
  };
}

/** Confirmable or not, and N, for the request as it now stands (its tags resolved). */
function classified(ctx: RpcContext, chain: Chain, next: (err?: unknown) => void): void {
  let verdict = classifyCalls(ctx.payload!.calls, chain.extraConfirmable);
  if (!verdict.confirmable) {
    const tags = resolveTags(chain, ctx.payload!);
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
  if (!verdict.confirmable && ctx.batchConfirmable && !ctx.payload!.batch && batchNeutral.has(call.method) && call.alias === undefined) {
    verdict = { confirmable: true, reason: 'a chain constant in a batch with confirmable calls' };
  }
  if (ctx.known) verdict = { confirmable: true, reason: 'the finalized route\'s block, vouched for by the providers\' finalized heads' };
  const calls = ctx.payload!.calls;
  if (!verdict.confirmable || !aboveEveryHead(chain, calls)) return settle(ctx, chain, verdict, verdict.confirmable, next);
  // The heads polled every heads.intervalMs may be seconds old: ask every upstream now.
  const asked = verdict;
  void pollHeadsNow(chain, chain.upstreams).then(() => {
    if (aboveEveryHead(chain, calls)) ctx.beyondHeads = true;
    settle(ctx, chain, asked, !ctx.beyondHeads, next);
  });
}

/** The classification written to the request (a function shared by every request, not a closure per request). */
function settle(ctx: RpcContext, chain: Chain, verdict: Classification, confirmable: boolean, next: (err?: unknown) => void): void {
  ctx.confirmable = confirmable;
  ctx.required = confirmable ? (ctx.confirmationsOverride ?? chain.confirmations) : 1;
  if (ctx.log.isLevelEnabled?.('debug') !== false) ctx.log.debug({ confirmable, required: ctx.required, why: ctx.beyondHeads ? 'above every upstream\'s head' : verdict.reason }, 'classified');
  next();
}

/**
 * The finalized route: the payload pinned to the route's block, and eth_blockNumber answered with
 * it, vouched for by N providers' finalized heads. A -32016 error when the chain has no such block
 * yet, or (eth_blockNumber) fewer than N providers report the route's block as finalized now.
 */
function pinFinalized(ctx: RpcContext, chain: Chain, required: number, block: bigint | undefined): Error | undefined {
  const payload = ctx.payload!;
  if (block === undefined) return notFinalized(chain, required, payload, `No finalized block on chain ${chain.id} yet: fewer than ${required} provider${required === 1 ? '' : 's'} report one`);
  const call = payload.calls[0]!;
  if (!payload.batch && call.method === 'eth_blockNumber') {
    const known = finalizedBlockNumber(chain, call, block, required);
    if (!known) return notFinalized(chain, required, payload, `Block ${block} (0x${block.toString(16)}), the finalized route's, is reported as finalized by fewer than ${required} provider${required === 1 ? '' : 's'} now (the route never goes back)`);
    ctx.known = known;
    return undefined;
  }
  const pinned = pinnedToFinalized(payload, block, chain.extraConfirmable);
  if (pinned) ctx.payload = pinned;
  return undefined;
}

function notFinalized(chain: Chain, required: number, payload: RpcPayload, why: string): Error {
  const id = payload.batch ? null : payload.calls[0]!.id;
  return new BlockNotAvailableError(`${why}: retry shortly`, {
    id,
    headers: { 'Retry-After': '5' },
    data: { required, finalized: chain.upstreams.map((u) => ({ upstream: u.label, finalized: u.health.finalized === undefined ? null : `0x${u.health.finalized.toString(16)}` })) },
  });
}
