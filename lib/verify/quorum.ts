/**
 * Tally and decision: which group of agreeing answers wins, and when to ask more upstreams. Pure.
 *
 * Rule: answer as soon as N answers share a hash. Otherwise make sure enough calls are
 * in flight to still reach N — one more per missing vote of the leading group — and fail only
 * when no group can reach N with the upstreams left. A liar is never returned: only a group of N.
 * One vote per voter (provider): a second equal answer from the same voter does not count.
 */

/** Vote of one upstream: its hash, in arrival order. */
export interface Vote<T = unknown> {
  hash: string;
  item: T;
  /** Who cast it (the upstream's provider); votes without one are each independent. */
  voter?: string;
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

/** The members of a group that count: the first of each voter, in arrival order. */
function independent<T>(votes: readonly Vote<T>[], hash: string): T[] {
  const voters = new Set<string>();
  const out: T[] = [];
  for (const v of votes) {
    if (v.hash !== hash) continue;
    if (v.voter !== undefined) {
      if (voters.has(v.voter)) continue;
      voters.add(v.voter);
    }
    out.push(v.item);
  }
  return out;
}

export function decide<T>(votes: readonly Vote<T>[], required: number, state: TallyState): Decision<T> {
  let best = 0;
  const anyVoter = votes.some((v) => v.voter !== undefined);
  for (const [hash, grouped] of tally(votes)) {
    const members = anyVoter ? independent(votes, hash) : grouped;
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

/** How many votes the leading group has (one per voter): what the loop's policy hooks see. */
export function leadingCount<T>(votes: readonly Vote<T>[]): number {
  if (votes.length === 0) return 0;
  const anyVoter = votes.some((v) => v.voter !== undefined);
  let best = 0;
  for (const [hash, grouped] of tally(votes)) best = Math.max(best, anyVoter ? independent(votes, hash).length : grouped.length);
  return best;
}
