/**
 * Hedging policy of the agreement loop, per request, from `timeouts:`:
 * - the delay: `timeouts.hedgeMs` when the config sets it (a fixed override; 0 turns hedging off),
 *   else adaptive: the chain's recent `hedgeQuantile` (p90) of answered calls of the request's
 *   method class, within [hedgeMinMs, hedgeMaxMs]; hedgeMaxMs until 20 calls were answered
 *   (lib/health/quality.ts hedgeDelay). Read at each hedge timer, so a long request follows the chain;
 * - the budget: hedged calls of a chain at most `hedgeBudget` × its first calls, plus a burst of 10
 *   (quality.ts HedgeBudget): a chain whose upstreams are all slow is not sent twice its traffic.
 *   `mayHedge` asks, `onHedge` pays (so a policy composed after this one may still refuse for free);
 * - the count (`hedgeMissingVotes`): max(1, missing − inFlight), one call per vote the leading
 *   group still lacks less the calls already running, and at least one. N=3 with one vote in and
 *   two calls stalled asks one more (two missing, two running), as does N=3 with two votes in and
 *   one call stalled. The loop's escalation already keeps as many calls running as votes are
 *   missing while candidates remain (quorum.ts decide), so a hedge usually asks one.
 * Composable with other policies (lib/verify/loop-policy.ts composePolicies).
 */
import type { RpcContext } from '../pipeline/context.js';
import { hedgeBudgetOf, hedgeDelay, methodClassOf, type HedgeOptions } from '../health/quality.js';
import { hedgeMissingVotes } from './agreement.js';
import type { LoopPolicy, LoopPolicyOf } from './loop-policy.js';

export interface HedgeSettings {
  /** A fixed delay in ms (timeouts.hedgeMs set in the config); 0: no hedging. Absent: adaptive. */
  fixedMs?: number;
  minMs: number;
  maxMs: number;
  quantile: number;
  /** Hedged calls at most, as a share of first calls per chain (0..1). */
  budget: number;
  /** Answered calls the adaptive delay rests on (default 20; before that, maxMs). */
  minSamples?: number;
  /** The clock of the quality sketches (default performance.now: the one fetch-parallel records with). */
  now?: () => number;
}

/** The settings from the parsed config's `timeouts` (hedgeAdaptive: hedgeMs was absent from the file). */
export function hedgeSettings(t: {
  hedgeMs: number;
  hedgeAdaptive: boolean;
  hedgeMinMs: number;
  hedgeMaxMs: number;
  hedgeQuantile: number;
  hedgeBudget: number;
}): HedgeSettings {
  return {
    ...(t.hedgeAdaptive ? {} : { fixedMs: t.hedgeMs }),
    minMs: t.hedgeMinMs,
    maxMs: t.hedgeMaxMs,
    quantile: t.hedgeQuantile,
    budget: t.hedgeBudget,
  };
}

const off: LoopPolicy = { hedgeDelayMs: () => 0 };

export function hedgePolicy(settings: HedgeSettings): LoopPolicyOf {
  const { fixedMs, budget: share } = settings;
  if (fixedMs !== undefined && !(fixedMs >= 0)) throw new TypeError('hedgePolicy: fixedMs must be 0 (off) or a positive number of ms');
  if (!(share >= 0 && share <= 1)) throw new TypeError('hedgePolicy: budget must be within 0..1');
  if (!(settings.minMs >= 0 && settings.maxMs >= settings.minMs)) throw new TypeError('hedgePolicy: needs 0 ≤ minMs ≤ maxMs');
  const now = settings.now ?? (() => performance.now());
  const options: HedgeOptions = {
    ...(fixedMs !== undefined && { fixedMs }),
    minMs: settings.minMs,
    maxMs: settings.maxMs,
    quantile: settings.quantile,
    ...(settings.minSamples !== undefined && { minSamples: settings.minSamples }),
  };
  return (ctx: RpcContext) => {
    const chain = ctx.chain;
    if (!chain) return undefined;
    if (fixedMs === 0) return off;
    const budget = hedgeBudgetOf(chain, share);
    // The first calls of this request earn the chain its share of hedges.
    budget.onCalls(ctx.required ?? 1);
    const cls = methodClassOf(ctx.payload?.calls);
    return {
      hedgeDelayMs: fixedMs !== undefined ? () => fixedMs : () => hedgeDelay(chain, cls, options, now()),
      mayHedge: () => budget.canHedge(),
      onHedge: (_afterMs, count) => budget.spend(count),
      hedgeCount: hedgeMissingVotes,
    };
  };
}
