/**
 * Tally and decision: which group of agreeing answers wins, and when to ask more upstreams. Pure.
 *
 * Rule (spec B4): answer as soon as N answers share a hash. Otherwise make sure enough calls are
 * in flight to still reach N — one more per missing vote of the leading group — and fail only
 * when no group can reach N with the upstreams left. A liar is never returned: only a group of N.
 */

/** Vote of one upstream: its hash, in arrival order. */
export interface Vote<T = unknown> {
  hash: string;
  item: T;
}

export type Decision<T> =
  | { kind: 'agreed'; hash: string; members: T[] }
  | { kind: 'wait' }
  | { kind: 'launch'; count: number }
  | { kind: 'failed' };

export interface TallyState {
  /** Calls started and not yet settled. */
  inFlight: number;
  /** Candidates not yet called. */
  remaining: number;
}

/** Groups votes by hash, keeping arrival order within a group and of the groups themselves. */
export function tally<T>(votes: readonly Vote<T>[]): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const vote of votes) {
    const group = groups.get(vote.hash);
    if (group) group.push(vote.item);
    else groups.set(vote.hash, [vote.item]);
  }
  return groups;
}

export function decide<T>(votes: readonly Vote<T>[], required: number, state: TallyState): Decision<T> {
  let best = 0;
  for (const [hash, members] of tally(votes)) {
    // Groups are visited in the order they first appeared, so the first group to reach N wins.
    if (members.length >= required) return { kind: 'agreed', hash, members: members.slice(0, required) };
    best = Math.max(best, members.length);
  }
  const missing = required - best;
  if (missing > state.inFlight + state.remaining) return { kind: 'failed' };
  const launch = Math.min(missing - state.inFlight, state.remaining);
  if (launch > 0) return { kind: 'launch', count: launch };
  return state.inFlight > 0 ? { kind: 'wait' } : { kind: 'failed' };
}
