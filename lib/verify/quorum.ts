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

const wait: Decision<never> = Object.freeze({ kind: 'wait' });
const failed: Decision<never> = Object.freeze({ kind: 'failed' });

/**
 * Up to this many votes, the groups are counted in place (no Map, Set or array per decision:
 * this runs at every answer of every request); beyond, through tally().
 */
const countedInPlace = 8;

export function decide<T>(votes: readonly Vote<T>[], required: number, state: TallyState): Decision<T> {
  let best = 0;
  if (votes.length <= countedInPlace) {
    for (let i = 0; i < votes.length; i++) {
      if (!firstOfGroup(votes, i)) continue;
      const count = groupCount(votes, i);
      // Groups are visited in the order they first appeared, so the first group to reach N wins.
      if (count >= required) return { kind: 'agreed', hash: votes[i]!.hash, members: firstMembers(votes, i, required) };
      if (count > best) best = count;
    }
  } else {
    const anyVoter = votes.some((v) => v.voter !== undefined);
    for (const [hash, grouped] of tally(votes)) {
      const members = anyVoter ? independent(votes, hash) : grouped;
      if (members.length >= required) return { kind: 'agreed', hash, members: members.slice(0, required) };
      best = Math.max(best, members.length);
    }
  }
  const missing = required - best;
  if (missing > state.inFlight + state.remaining) return failed;
  const launch = Math.min(missing - state.inFlight, state.remaining);
  if (launch > 0) return { kind: 'launch', count: launch };
  return state.inFlight > 0 ? wait : failed;
}

/** Whether votes[i] is the first vote of its hash (its group's place in arrival order). */
function firstOfGroup<T>(votes: readonly Vote<T>[], i: number): boolean {
  const hash = votes[i]!.hash;
  for (let k = 0; k < i; k++) if (votes[k]!.hash === hash) return false;
  return true;
}

/** The votes of votes[from]'s hash that count (one per voter), from its first vote on. */
function groupCount<T>(votes: readonly Vote<T>[], from: number): number {
  const hash = votes[from]!.hash;
  let count = 0;
  for (let j = from; j < votes.length; j++) {
    const v = votes[j]!;
    if (v.hash !== hash) continue;
    if (v.voter !== undefined && votedBefore(votes, from, j, hash, v.voter)) continue;
    count += 1;
  }
  return count;
}

/**
 * The first `required` votes of votes[from]'s hash that count (one per voter), in arrival order:
 * independent()'s first ones. The group has at least that many (groupCount).
 */
function firstMembers<T>(votes: readonly Vote<T>[], from: number, required: number): T[] {
  const hash = votes[from]!.hash;
  const out = new Array<T>(required);
  let n = 0;
  for (let j = from; j < votes.length && n < required; j++) {
    const v = votes[j]!;
    if (v.hash !== hash) continue;
    if (v.voter !== undefined && votedBefore(votes, from, j, hash, v.voter)) continue;
    out[n++] = v.item;
  }
  return out;
}

/** Whether `voter` cast a vote for `hash` among votes[from..j). */
function votedBefore<T>(votes: readonly Vote<T>[], from: number, j: number, hash: string, voter: string): boolean {
  for (let k = from; k < j; k++) {
    const v = votes[k]!;
    if (v.hash === hash && v.voter === voter) return true;
  }
  return false;
}

/** How many votes the leading group has (one per voter): what the loop's policy hooks see. */
export function leadingCount<T>(votes: readonly Vote<T>[]): number {
  if (votes.length === 0) return 0;
  let best = 0;
  if (votes.length <= countedInPlace) {
    for (let i = 0; i < votes.length; i++) if (firstOfGroup(votes, i)) best = Math.max(best, groupCount(votes, i));
    return best;
  }
  const anyVoter = votes.some((v) => v.voter !== undefined);
  for (const [hash, grouped] of tally(votes)) best = Math.max(best, anyVoter ? independent(votes, hash).length : grouped.length);
  return best;
}
