/**
 * Ranking of a chain's upstreams for one request. Pure: (candidates, now) → ordered list.
 *
 * An upstream that reported another chain id is out of rotation (left out). The others are
 * ordered by: not cooling down after repeated failures first; then not lagging (more than
 * `maxLagBlocks` behind the best head at the last probe) first; then the configured position.
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

export function rankUpstreams<T extends Rankable>(candidates: readonly T[], now: number): T[] {
  const cooling = (u: T) => (u.health.coolingUntil > now ? 1 : 0);
  const lagging = (u: T) => ((u.health.lag ?? 0) > maxLagBlocks ? 1 : 0);
  return candidates
    .filter((u) => u.health.wrongChainId === undefined)
    .sort((a, b) => cooling(a) - cooling(b) || lagging(a) - lagging(b) || a.index - b.index);
}
