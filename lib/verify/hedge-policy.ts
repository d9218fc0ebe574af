/**
 * Hedging policy of the agreement loop, per request, from `timeouts:`:
 * - the delay: `timeouts.hedgeMs` when the config sets it (a fixed override; 0 turns hedging off),
 *   else adaptive: the chain's recent `hedgeQuantile` (p90) of answered calls of the request's
 *   method class, within [hedgeMinMs, hedgeMaxMs]; no hedging at all until 20 calls of the class
 *   were answered (hedgeDelay below): without latencies to judge by, a slow chain cannot be told
 *   from a stalled upstream. Read when the hedge timer is armed and at each of its rings;
 * - the budget: hedged calls of a chain at most `hedgeBudget` × its first calls (HedgeBudget
 *   below), earned from the first request: under the adaptive delay the budget starts empty, so a
 *   chain whose upstreams are all slow gets at most that share of extra calls from its first
 *   request on; a fixed `hedgeMs` (the operator's word on when a call is stalled) starts with a
 *   burst of 10. Unused tokens add up to a burst of 10.
 *   `mayHedge` asks, `onHedge` pays (so a policy composed after this one may still refuse for free);
 * - the count (`hedgeMissingVotes`): max(1, missing − inFlight), one call per vote the leading
 *   group still lacks less the calls already running, and at least one. N=3 with one vote in and
 *   two calls stalled asks one more (two missing, two running), as does N=3 with two votes in and
 *   one call stalled. The loop's escalation already keeps as many calls running as votes are
 *   missing while candidates remain (quorum.ts decide), so a hedge usually asks one.
 * Composable with other policies (lib/verify/loop-policy.ts composePolicies).
 */
import type { RequestQuestion } from './question.js';
import { chainQuantile, methodClassOf, sketchAccuracy, type MethodClass } from '../health/quality.js';
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
  /** Answered calls the adaptive delay rests on (default 20; before that, no hedging). */
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
  return (q: RequestQuestion) => {
    const chain = q.chain;
    if (!chain) return undefined;
    if (fixedMs === 0) return off;
    const budget = hedgeBudgetOf(chain, share, fixedMs !== undefined ? defaultHedgeBurst : 0);
    // The first calls of this request earn the chain its share of hedges.
    budget.onCalls(q.required ?? 1);
    const cls = methodClassOf(q.payload?.calls);
    return {
      hedgeDelayMs: fixedMs !== undefined ? () => fixedMs : () => hedgeDelay(chain, cls, options, now()),
      mayHedge: () => budget.canHedge(),
      onHedge: (_afterMs, count) => budget.spend(count),
      hedgeCount: hedgeMissingVotes,
    };
  };
}

export interface HedgeOptions {
  /** A fixed delay (timeouts.hedgeMs set in the config): used as it is. */
  fixedMs?: number;
  /** Bounds of the adaptive delay (timeouts.hedgeMinMs / hedgeMaxMs). */
  minMs: number;
  maxMs: number;
  /** The quantile of answered calls the delay follows (timeouts.hedgeQuantile, default 0.9). */
  quantile: number;
  /** Answered calls the quantile must rest on; before that, no hedging (default 20). */
  minSamples?: number;
}

/**
 * When to ask one more upstream for a request of class `cls` on `chain`: the fixed delay when
 * one is configured, else the chain's recent `quantile` of answered calls of that class, within
 * [minMs, maxMs]; 0 (no hedge) while too few calls were answered to say. The quantile is taken
 * at its upper bound (the sketch's relative accuracy added): the sketch may give a value up to
 * 2 % below the true one, and on a chain whose calls all take about the same time that would
 * hedge nearly every call.
 */
export function hedgeDelay(chain: object, cls: MethodClass, options: HedgeOptions, now = performance.now()): number {
  if (options.fixedMs !== undefined) return options.fixedMs;
  const q = chainQuantile(chain, cls, options.quantile, options.minSamples ?? 20, now);
  if (q === undefined) return 0;
  return Math.min(options.maxMs, Math.max(options.minMs, Math.round(q * (1 + sketchAccuracy))));
}

/** Hedges a chain may save up (HedgeBudget's `burst`), and a fixed delay's budget at start. */
export const defaultHedgeBurst = 10;

/**
 * The hedging budget of one chain: extra (hedged) calls may be at most `share` of the first calls,
 * plus what it starts with (`initial`, default none). Each first call earns `share` of a token,
 * saved up to `burst`; a hedge takes one. A chain whose upstreams are all slow is then sent at most
 * `share` more calls than its traffic, from the first request on.
 */
export class HedgeBudget {
  private tokens: number;
  constructor(
    readonly share: number,
    readonly burst = defaultHedgeBurst,
    initial = 0,
  ) {
    if (!(share >= 0 && share <= 1)) throw new TypeError('HedgeBudget: share must be within 0..1');
    this.tokens = Math.min(burst, initial);
  }

  /** A first (not hedged) call was made. */
  onCall(): void {
    this.tokens = Math.min(this.burst, this.tokens + this.share);
  }

  /** `calls` first (not hedged) calls were made. */
  onCalls(calls: number): void {
    this.tokens = Math.min(this.burst, this.tokens + this.share * calls);
  }

  /** May one more (hedged) call be made now? (Takes nothing: spend() does, once the hedge went out.) */
  canHedge(): boolean {
    return this.tokens >= 1 - 1e-9; // (ten shares of 0.1 add up to 0.9999…)
  }

  /** `calls` hedged calls went out. */
  spend(calls: number): void {
    this.tokens = Math.max(0, this.tokens - calls);
  }

  /** May one more (hedged) call be made now? Takes a token when it may. */
  tryHedge(): boolean {
    if (!this.canHedge()) return false;
    this.spend(1);
    return true;
  }
}

const budgets = new WeakMap<object, HedgeBudget>();

/** The hedging budget of a chain (one per chain object, created on first use with `initial` tokens). */
export function hedgeBudgetOf(chain: object, share: number, initial = 0): HedgeBudget {
  let b = budgets.get(chain);
  if (!b) budgets.set(chain, (b = new HedgeBudget(share, defaultHedgeBurst, initial)));
  return b;
}
