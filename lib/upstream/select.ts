/**
 * Ranking of a chain's upstreams for one request. Pure: (candidates, now) → ordered list.
 *
 * An upstream that reported another chain id, or is a request loop, is out of rotation (left out). The others are
 * ordered by: not cooling down after repeated failures first; then not lagging (more than
 * `maxLagBlocks` behind the chain's robust head, heads.ts) and not suspect (far above it) first; then not slow (a latency average,
 * over at least `slowMinSamples` answers, above `slowFactor` × the fastest upstream's plus
 * `slowMarginMs`) first; then the configured position. The tiers are coarse on purpose: ordinary
 * jitter never reorders upstreams. The tie-break is the configured position, never arrival order
 * or a random draw, so the same state always gives the same choice (and so the same headers for
 * the same request).
 *
 * Above all tiers: an upstream that failed and never answered (refused connections or a name
 * that does not resolve from the start) ranks after every one that answered at least once. It
 * is still tried when nothing better is left.
 */
import { neverSucceeded, type Health } from './health.js';

const inRotation = (h: Health) => h.wrongChainId === undefined && !h.loop;

export interface Rankable {
  /** Position in the chain's `rpcs` list. */
  index: number;
  health: Health;
}

/** Blocks an upstream may trail the best head before it is ranked after the ones that do not. */
export const maxLagBlocks = 3;

/** An upstream is slow when its latency average exceeds slowFactor × the fastest one's + slowMarginMs. */
export const slowFactor = 3;
export const slowMarginMs = 100;
/**
 * ...and that average rests on at least this many answers (calls and probes): one outlier, such
 * as a first call that pays for the connection or a machine that stalled for a moment, is not
 * evidence, and the first sample alone would otherwise set the average.
 */
export const slowMinSamples = 5;

export function rankUpstreams<T extends Rankable>(candidates: readonly T[], now: number): T[] {
  let fastest = Infinity;
  for (const u of candidates) {
    const ms = u.health.latencyMs;
    if (ms !== undefined && inRotation(u.health) && ms < fastest) fastest = ms;
  }
  const slowAbove = fastest * slowFactor + slowMarginMs; // Infinity when no latency is known yet
  const tier = (u: T) =>
    (u.health.distrusted ? 16 : 0) + (neverSucceeded(u.health) ? 8 : 0) +
    (u.health.coolingUntil > now ? 4 : 0) + ((u.health.lag ?? 0) > maxLagBlocks || u.health.suspect ? 2 : 0) + ((u.health.latencyMs ?? 0) > slowAbove && u.health.successes >= slowMinSamples ? 1 : 0);
  // The usual case, every upstream healthy and listed in order: no sort (this runs per request).
  let plain = true;
  for (let i = 0; i < candidates.length && plain; i += 1) {
    const u = candidates[i]!;
    plain = inRotation(u.health) && tier(u) === 0 && (i === 0 || candidates[i - 1]!.index < u.index);
  }
  if (plain) return candidates.slice();
  return candidates.filter((u) => inRotation(u.health)).sort((a, b) => tier(a) - tier(b) || a.index - b.index);
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
