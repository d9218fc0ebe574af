/**
 * Stage 3, select upstreams. Ranks the chain's upstreams (healthy first, configured order as
 * the tie-break), puts one upstream of each provider first (one vote per provider) and refuses a
 * request that asks more confirmations than the chain has usable providers.
 * A distrusted upstream (it lost too many agreements) is ranked last, so it no longer answers
 * unverified reads; to give it a chance to show it agrees again, one verified request (N ≥ 2) in
 * `sampleEvery` of the chain takes it as one of its N voters (a wrong answer then costs that
 * request one more call; it can never make a wrong quorum, which needs N independent answers).
 * Measured quality (lib/health/quality.ts) ranks a far slower upstream behind its peers, and the
 * chain's `strategy` spreads N=1 requests over the best tier (`balanced`) or keeps list order
 * (`priority`); an upstream at its `maxConcurrent`/`maxRps` cap is skipped (select.ts arrange).
 * An upstream on back-off after its provider rate-limited us is left out while the others hold
 * N providers (else asked last).
 * Reads: ctx.chain, ctx.required, ctx.payload   Writes: ctx.candidates
 */
import { defaults } from '../config/defaults.js';
import type { Middleware } from '../lib/pipeline/compose.js';
import { getContext, need } from '../lib/pipeline/context.js';
import { NotEnoughUpstreamsError } from '../lib/errors.js';
import type { Chain, Upstream } from '../lib/upstream/registry.js';
import { methodClassOf } from '../lib/health/quality.js';
import { isWrite } from '../lib/jsonrpc/writes.js';
import { arrange, rankTiers, rateLimitedTier, spreadProviders } from '../lib/upstream/select.js';

export interface SelectUpstreamsOptions {
  /** One verified request in this many per chain takes a distrusted upstream as a voter (default 10). */
  sampleEvery?: number;
  /**
   * At most one balanced N=1 request per chain in this many ms asks a slow upstream first, to
   * re-measure it (default 5000; 0 never). Time-based, not a share of requests: each such request
   * waits for a hedge, which must stay rare at any request rate. A single call only: the members
   * of a coalesced batch never explore (that would split the batch's one upstream request).
   */
  exploreEveryMs?: number;
  /** The clock of exploreEveryMs (default performance.now; tests inject one). */
  clock?: () => number;
}

export function selectUpstreams(options: SelectUpstreamsOptions = {}): Middleware {
  const sampleEvery = options.sampleEvery ?? defaults.disputes.sampleEvery;
  if (!(Number.isInteger(sampleEvery) && sampleEvery >= 1)) throw new TypeError('selectUpstreams: sampleEvery must be a positive integer');
  const verifiedRequests = new WeakMap<Chain, number>();
  const exploreEveryMs = options.exploreEveryMs ?? 5000;
  const clock = options.clock ?? (() => performance.now());
  const lastExplored = new WeakMap<Chain, number>();
  return function selectUpstreams(req, _res, next) {
    const ctx = getContext(req);
    const chain = need(ctx, 'chain', 'selectUpstreams');
    const required = need(ctx, 'required', 'selectUpstreams');
    const cls = methodClassOf(ctx.payload?.calls);
    const tiered = withoutRateLimited(rankTiers(chain.upstreams, Date.now(), cls), required);
    let explore = false;
    // Never a write (lib/jsonrpc/writes.ts): it is not hedged, so it would wait on the slow upstream.
    // Never a member of a coalesced batch: its reads go to one upstream as one upstream batch
    // (sameFirst below), which an exploring member would split; the turn stays for the next
    // single N=1 request.
    if (required === 1 && exploreEveryMs > 0 && chain.strategy === 'balanced' && !ctx.coalescer && !(ctx.payload && isWrite(ctx.payload.calls))) {
      const now = clock();
      const last = lastExplored.get(chain);
      if (last === undefined) lastExplored.set(chain, now);
      else if (now - last >= exploreEveryMs) {
        explore = true; // (arrange explores only when a slow upstream is there to re-measure)
        lastExplored.set(chain, now);
      }
    }
    const ranked = arrange(tiered.ranked, tiered.tiers, {
      strategy: chain.strategy ?? 'priority',
      required,
      cls,
      now: performance.now(), // quality.ts's clock (maxRps seconds)
      explore,
    });
    const { ordered, distinct } = chain.providerCount === chain.upstreams.length ? { ordered: ranked, distinct: ranked.length } : spreadProviders(ranked);
    if (required > distinct) {
      return next(
        new NotEnoughUpstreamsError(
          `Not enough upstreams: ${required} confirmations asked, chain ${chain.id} has ${distinct} usable provider${distinct === 1 ? '' : 's'} (${ranked.length} usable upstream${ranked.length === 1 ? '' : 's'}; upstreams of one provider vote once)`,
          { data: { required, usable: distinct, usableUpstreams: ranked.length } },
        ),
      );
    }
    if (required >= 2 && ordered.some((u) => u.health.distrusted)) {
      const count = (verifiedRequests.get(chain) ?? 0) + 1;
      verifiedRequests.set(chain, count);
      if (count % sampleEvery === 0) sampleDistrusted(ordered, required, count / sampleEvery);
    }
    // A batch's N=1 reads ask one upstream first, to go there as one batch (lib/upstream/transport/coalesce.ts).
    if (required === 1 && ctx.coalescer && !(ctx.payload && isWrite(ctx.payload.calls))) ctx.coalescer.sameFirst(ordered, performance.now());
    ctx.candidates = ordered;
    next();
  };
}

/**
 * The ranking less the upstreams on back-off after a rate limit (ranked last: rateLimitedTier),
 * when the others still hold `required` providers: they are not asked at all, not even for a
 * missing vote, until their back-off ends. When too few providers would be left, they stay, last.
 */
function withoutRateLimited(tiered: { ranked: Upstream[]; tiers: number[] }, required: number): { ranked: Upstream[]; tiers: number[] } {
  const { ranked, tiers } = tiered;
  if (tiers.length === 0 || tiers[tiers.length - 1]! < rateLimitedTier) return tiered;
  const first = tiers.findIndex((t) => t >= rateLimitedTier);
  const kept = ranked.slice(0, first);
  if (new Set(kept.map((u) => u.provider)).size < required) return tiered;
  return { ranked: kept, tiers: tiers.slice(0, first) };
}

/**
 * Moves one distrusted upstream (rotating over them by `turn`) to position N-1, the last of the
 * first N calls, unless its provider already votes among the N-1 before it.
 */
function sampleDistrusted(ordered: Upstream[], required: number, turn: number): void {
  const voters = new Set(ordered.slice(0, required - 1).map((u) => u.provider));
  const eligible: number[] = [];
  ordered.forEach((u, i) => {
    if (i >= required - 1 && u.health.distrusted && !voters.has(u.provider)) eligible.push(i);
  });
  if (eligible.length === 0) return;
  const from = eligible[turn % eligible.length]!;
  if (from === required - 1) return;
  const [picked] = ordered.splice(from, 1);
  ordered.splice(required - 1, 0, picked!);
}
