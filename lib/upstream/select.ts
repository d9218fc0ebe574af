/**
 * Ranking of a chain's upstreams for one request. Pure: (candidates, now) → ordered list.
 *
 * Upstreams cooling down after repeated failures go last; otherwise the configured order
 * stands. The tie-break is the configured position, never arrival order or a random draw, so the
 * same state always gives the same choice (and so the same headers for the same request).
 */
import type { Health } from './health.js';

export interface Rankable {
  /** Position in the chain's `rpcs` list. */
  index: number;
  health: Health;
}

export function rankUpstreams<T extends Rankable>(candidates: readonly T[], now: number): T[] {
  const cooling = (u: T) => (u.health.coolingUntil > now ? 1 : 0);
  return [...candidates].sort((a, b) => cooling(a) - cooling(b) || a.index - b.index);
}
