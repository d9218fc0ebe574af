/**
 * Ranking of a chain's upstreams for one request. Pure: (candidates, now) → ordered list.
 *
 * An upstream that reported another chain id, or is a request loop, is out of rotation (left out).
 * The others are ordered by tiers (rankTiers), each criterion outweighing all the ones after it:
 * not on back-off after a rate limit first (lib/health/rate-limits.ts); then not distrusted; then not failed without ever answering; then not cooling down after
 * repeated failures; then not lagging (more than `maxLagBlocks` behind the chain's robust head,
 * heads.ts) and not suspect (far above it); then not slow (measured, per method class: see
 * `measuredMinSamples` and `abandonedSlowFactor` below; or a latency average, over at least
 * `slowMinSamples` answers, above `slowFactor` × the fastest upstream's plus `slowMarginMs`);
 * then the configured position. The score of quality.ts (scoreOf, shown in /chains and /metrics)
 * is not read here. The tiers are coarse on purpose: ordinary jitter never reorders upstreams.
 * The tie-break is the configured position, never arrival order or a random draw, so the same
 * state always gives the same choice (and so the same headers for the same request).
 *
 * An upstream that failed and never answered (refused connections or a name that does not
 * resolve from the start) ranks after every one that answered at least once (distrusted ones
 * aside). It is still tried when nothing better is left.
 */
import { neverSucceeded, type Health } from '../health/health.js';
import { methodClasses, qualityOf, type MethodClass } from '../health/quality.js';

const inRotation = (h: Health) => h.wrongChainId === undefined && !h.loop;

export interface Rankable {
  /** Position in the chain's `rpcs` list. */
  index: number;
  health: Health;
  /** Share of balanced load (default 1). */
  weight?: number;
  /** Calls in flight at most (a provider's quota): at the cap, skipped. */
  maxConcurrent?: number;
  /** Calls started per second at most: at the cap, skipped. */
  maxRps?: number;
}

/** Blocks an upstream may trail the best head before it is ranked after the ones that do not. */
export const maxLagBlocks = 3;

/** An upstream is slow when its latency average exceeds slowFactor × the fastest one's + slowMarginMs. */
export const slowFactor = 3;
export const slowMarginMs = 100;
/**
 * ...and that average rests on at least this many answers (calls and probes) since it last
 * started (a re-measurement restarts it: lib/health/health.ts restartLatency): one outlier, such
 * as a first call that pays for the connection or a machine that stalled for a moment, is not
 * evidence, and the first sample alone would otherwise set the average.
 */
export const slowMinSamples = 5;

export function rankUpstreams<T extends Rankable>(candidates: readonly T[], now: number, cls?: MethodClass): T[] {
  return rankTiers(candidates, now, cls).ranked;
}

/**
 * Measured slowness (lib/health/quality.ts): an upstream whose recent median latency for the
 * request's class, over at least `measuredMinSamples` samples (abandoned calls included), is
 * above `slowFactor` × the median of the chain's upstreams and above `measuredFloorMs`, is slow.
 * The median of the last 3 samples: one outlier never demotes, two slow calls do.
 */
export const measuredMinSamples = 2;
export const measuredFloorMs = 50;
/**
 * ...or when at least `measuredMinSamples` of its recent samples are calls abandoned unanswered
 * (another upstream, asked later by a hedge, answered first) and its median is above
 * `abandonedSlowFactor` × the chain's median. An abandoned call is only a lower bound: with an
 * adaptive hedge delay near the chain's p90, a 3 s upstream's calls are abandoned after tens of ms,
 * under the floor above; losing two races of its last three is the evidence then.
 */
export const abandonedSlowFactor = 1.5;

function chainMedian<T extends Rankable>(candidates: readonly T[], cls: MethodClass): number | undefined {
  const known: number[] = [];
  for (const u of candidates) {
    if (!inRotation(u.health)) continue;
    const p = qualityOf(u.health).p50(cls, measuredMinSamples);
    if (p !== undefined) known.push(p);
  }
  if (known.length < 2) return undefined;
  // (an insertion sort in place: a chain's few upstreams, per request; sort's comparator and work array are not needed)
  for (let i = 1; i < known.length; i++) {
    const x = known[i]!;
    let j = i;
    while (j > 0 && known[j - 1]! > x) {
      known[j] = known[j - 1]!;
      j -= 1;
    }
    known[j] = x;
  }
  return known[(known.length - 1) >> 1];
}

/** Slow by its probed latency, or by its measured one (measuredSlowAbove finite only with a chain median and a class). */
function isSlow(h: Health, slowAbove: number, measuredSlowAbove: number, median: number | undefined, cls: MethodClass | undefined): boolean {
  if ((h.latencyMs ?? 0) > slowAbove && h.latencySamples >= slowMinSamples) return true;
  if (measuredSlowAbove === Infinity) return false;
  const q = qualityOf(h);
  const p50 = q.p50(cls!, measuredMinSamples) ?? 0;
  return p50 > measuredSlowAbove || (q.abandonedRecently(cls!) >= measuredMinSamples && p50 > median! * abandonedSlowFactor);
}

/**
 * The method classes in which the ranking puts each upstream behind as slow now (the tier's slow
 * bit), for /chains: an upstream that gets no traffic while its state is healthy is most often
 * this. Off the request path: one ranking per class.
 */
export function slowClasses<T extends Rankable>(candidates: readonly T[], now: number): Map<T, MethodClass[]> {
  const out = new Map<T, MethodClass[]>();
  for (const u of candidates) out.set(u, []);
  for (const cls of methodClasses) {
    const { ranked, tiers } = rankTiers(candidates, now, cls);
    ranked.forEach((u, i) => {
      if ((tiers[i]! & 1) === 1) out.get(u)!.push(cls);
    });
  }
  return out;
}

/** The tier bit of an upstream on back-off after a rate limit (lib/health/rate-limits.ts): after every other. */
export const rateLimitedTier = 32;

/** The ranking with each upstream's tier (0 is the best; 1 is slow and nothing worse). */
export function rankTiers<T extends Rankable>(candidates: readonly T[], now: number, cls?: MethodClass): { ranked: T[]; tiers: number[] } {
  let fastest = Infinity;
  for (const u of candidates) {
    const ms = u.health.latencyMs;
    if (ms !== undefined && inRotation(u.health) && ms < fastest) fastest = ms;
  }
  const slowAbove = fastest * slowFactor + slowMarginMs; // Infinity when no latency is known yet
  const median = cls === undefined ? undefined : chainMedian(candidates, cls);
  const measuredSlowAbove = median === undefined ? Infinity : Math.max(median * slowFactor, measuredFloorMs);
  // (a loop over module-level functions: this runs per request, and closures would be made for each)
  const tiers = new Array<number>(candidates.length);
  for (let i = 0; i < candidates.length; i += 1) {
    const h = candidates[i]!.health;
    tiers[i] =
      (h.rateLimitedUntil > now ? rateLimitedTier : 0) + (h.distrusted ? 16 : 0) + (neverSucceeded(h) ? 8 : 0) +
      (h.coolingUntil > now ? 4 : 0) + ((h.lag ?? 0) > maxLagBlocks || h.suspect ? 2 : 0) + (isSlow(h, slowAbove, measuredSlowAbove, median, cls) ? 1 : 0);
  }
  // The usual case, every upstream healthy and listed in order: no sort (this runs per request).
  let plain = true;
  for (let i = 0; i < candidates.length && plain; i += 1) {
    const u = candidates[i]!;
    plain = inRotation(u.health) && tiers[i] === 0 && (i === 0 || candidates[i - 1]!.index < u.index);
  }
  if (plain) return { ranked: candidates.slice(), tiers };
  const order = candidates.map((_, i) => i).filter((i) => inRotation(candidates[i]!.health));
  order.sort((a, b) => tiers[a]! - tiers[b]! || candidates[a]!.index - candidates[b]!.index);
  return { ranked: order.map((i) => candidates[i]!), tiers: order.map((i) => tiers[i]!) };
}

export type Strategy = 'balanced' | 'priority';

export interface ArrangeOptions {
  strategy: Strategy;
  /** Votes the request needs: N ≥ 2 keeps the ranking as it is (tiers, then configured position). */
  required: number;
  cls: MethodClass;
  /** Wall or monotonic ms (for the maxRps second). */
  now: number;
  /** This N=1 request asks a slow (tier 1) upstream first, to re-measure it (select-upstreams: at most one per chain in exploreEveryMs). */
  explore?: boolean;
}

/** At its cap (maxConcurrent calls in flight, or maxRps calls started this second). */
export function atCap(u: Rankable, now: number): boolean {
  const q = qualityOf(u.health);
  return (u.maxConcurrent !== undefined && q.inFlight >= u.maxConcurrent) || (u.maxRps !== undefined && q.startedThisSecond(now) >= u.maxRps);
}

/**
 * Who is asked first, from the ranking (rankTiers):
 * - an upstream at its cap (maxConcurrent / maxRps) moves to the end: skipped, asked only when
 *   nothing else is left;
 * - N ≥ 2: the ranking as it is: the N best tiers (measured-slow ones behind), configured order;
 * - N = 1, `balanced`: one upstream of the best tier goes first, the least loaded (calls in flight
 *   per unit of weight), ties shared by a smooth weighted round-robin (exact shares, weights
 *   3:1 give 3:1; deterministic, no random draw); an `explore` request puts a slow (tier 1)
 *   upstream first instead, so that it is re-measured by traffic too;
 * - N = 1, `priority`: the ranking as it is (the first healthy upstream in list order).
 * The returned array is new; the others keep their rank order.
 */
export function arrange<T extends Rankable>(ranked: readonly T[], tiers: readonly number[], options: ArrangeOptions): T[] {
  let out = ranked.slice();
  let outTiers = tiers.slice();
  if (out.some((u) => u.maxConcurrent !== undefined || u.maxRps !== undefined)) {
    const free: number[] = [];
    const capped: number[] = [];
    out.forEach((u, i) => (atCap(u, options.now) ? capped : free).push(i));
    if (capped.length > 0) {
      const idx = free.concat(capped);
      out = idx.map((i) => ranked[i]!);
      outTiers = idx.map((i) => tiers[i]!);
      // Capped ones count as worse than every free one.
      for (let k = free.length; k < idx.length; k += 1) outTiers[k] = 1 << 10;
    }
  }
  if (out.length < 2) return out;
  let best = 1;
  while (best < out.length && outTiers[best] === outTiers[0]) best += 1;
  // N ≥ 2: the ranking as it is (the tiers already put the measured-slow ones behind): a finer
  // order by latency reordered voters on every stall of a loaded machine, and lost votes are the
  // disputes policy's to judge, so a loser must stay among the voters to be caught again.
  if (options.required >= 2) return out;
  if (options.strategy === 'priority') return out;
  if (options.explore && outTiers[0] === 0) {
    const slow = outTiers.indexOf(1);
    if (slow > 0) return [out[slow]!, ...out.slice(0, slow), ...out.slice(slow + 1)];
  }
  if (best < 2) return out;
  const load = (u: T) => qualityOf(u.health).inFlight / (u.weight ?? 1);
  let least = Infinity;
  for (let i = 0; i < best; i += 1) least = Math.min(least, load(out[i]!));
  // Smooth weighted round-robin over the least loaded: each gains its weight, the pick pays the total.
  let total = 0;
  let pick = -1;
  for (let i = 0; i < best; i += 1) {
    const u = out[i]!;
    if (load(u) !== least) continue;
    const q = qualityOf(u.health);
    const w = u.weight ?? 1;
    q.wrr += w;
    total += w;
    if (pick < 0 || q.wrr > qualityOf(out[pick]!.health).wrr) pick = i;
  }
  qualityOf(out[pick]!.health).wrr -= total;
  if (pick === 0) return out;
  const [chosen] = out.splice(pick, 1);
  out.unshift(chosen!);
  return out;
}

/**
 * One vote per provider: the ranked list reordered so that the best-ranked upstream of each
 * provider comes first (in rank order), then the other upstreams of already-seen providers (in
 * rank order). The first N calls then go to N different providers; a provider's second upstream
 * is asked only when the first failed or when no other provider is left. `distinct` is the
 * number of providers (the list is returned as it is when every upstream is its own provider).
 */
export function spreadProviders<T extends { provider: string }>(ranked: T[]): { ordered: T[]; distinct: number } {
  const seen = new Set<string>();
  const first: T[] = [];
  const rest: T[] = [];
  for (const u of ranked) {
    if (seen.has(u.provider)) rest.push(u);
    else {
      seen.add(u.provider);
      first.push(u);
    }
  }
  return { ordered: rest.length === 0 ? ranked : first.concat(rest), distinct: seen.size };
}
