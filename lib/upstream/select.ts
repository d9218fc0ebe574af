/**
 * Ranking of a chain's upstreams for one request. Pure: (candidates, now) → ordered list.
 *
 * An upstream that reported another chain id is out of rotation (left out). The others are
 * ordered by: not cooling down after repeated failures first; then not lagging (more than
 * `maxLagBlocks` behind the best head at the last probe) first; then not slow (a latency average
 * above `slowFactor` × the fastest upstream's plus `slowMarginMs`) first; then the configured
 * position. The tiers are coarse on purpose: ordinary jitter never reorders upstreams.
 * The tie-break is the configured position, never arrival order or a random draw, so the same
 * state always gives the same choice (and so the same headers for the same request).
 */
import type { Health } from './health.js';

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

export function rankUpstreams<T extends Rankable>(candidates: readonly T[], now: number): T[] {
  const usable = candidates.filter((u) => u.health.wrongChainId === undefined);
  const latencies = usable.flatMap((u) => (u.health.latencyMs === undefined ? [] : [u.health.latencyMs]));
  const fastest = latencies.length > 0 ? Math.min(...latencies) : undefined;
  const cooling = (u: T) => (u.health.coolingUntil > now ? 1 : 0);
  const lagging = (u: T) => ((u.health.lag ?? 0) > maxLagBlocks ? 1 : 0);
  const slow = (u: T) => (fastest !== undefined && (u.health.latencyMs ?? 0) > fastest * slowFactor + slowMarginMs ? 1 : 0);
  return usable.sort((a, b) => cooling(a) - cooling(b) || lagging(a) - lagging(b) || slow(a) - slow(b) || a.index - b.index);
}
