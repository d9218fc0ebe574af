/**
 * Who may vote on a batch asked as a whole (stages composed without runMembers: one upstream
 * request, one vote per upstream for the whole array), as the agreement loop's policy: the rules
 * eligibility-policy.ts applies to a single call, applied to each member of every answer.
 *
 * Members pinned to a block number: the batch is held to the highest block among them. From an
 * upstream not known to have that block, an answer is a vote only when no member is a range and
 * no member's answer looks missing (else its head is asked for on demand), and, once the chain's
 * heads are polled (probes, the head tracker or a poll on demand), only while no upstream's head
 * is known (eligibility.ts eligible: heads seen only in passing answers are lower bounds, too
 * stale to turn an upstream away).
 *
 * Members pinned to a hash (eth_getTransactionReceipt, eth_getBlockByHash, eth_getLogs by
 * `blockHash`…): a member whose answer looks missing (`null`, `[]`, an unknown-block error) makes
 * the whole answer a vote only from an upstream at the best credible head (never one whose head
 * is unknown), and only while no upstream has answered that member with data. Once one has, the
 * votes whose answer lacks that member are taken back (policy `recheck`, heard for every answer:
 * the answer with the data may not count itself, for another member it lacks). The loop then
 * asks further upstreams, waits once for heads (the waiting ones, and every upstream whose head
 * is unknown, asked for theirs now), asks the waiting ones again, and otherwise ends with -32016
 * naming the member's hash: who had it and who lacked it, or, when none had it, the best head and
 * who was behind it. Never a confirmed "not found" for a member an upstream answered with data.
 *
 * An answer that cannot be read member by member (not a JSON array, a member whose id matches no
 * call or several, a call without a member) counts as one in which every member looks missing.
 */
import type { RpcCall } from '../jsonrpc/types.js';
import { believedHead } from '../health/heads.js';
import { headsPolled, pollHeadsNow } from '../health/tracker.js';
import type { Chain, Upstream } from '../upstream/registry.js';
import { lacksBlock, answersAsMissing } from './answers/missing.js';
import { atBestHead, eligible, hasBlock, hashPinned, highestBlock, holdsRange, type BlockNeed } from './eligibility.js';
import { absenceNotVouched, hashNotAvailable, waitForBlock, waitForHeadsToRise, waitUntil, whilePolling, withUnknownHeads } from './head-waits.js';
import type { AgreementPolicy, Failed, Good } from './question.js';
import { tally } from './quorum.js';

type HashPin = Extract<BlockNeed, { kind: 'hash' }>;

/** The policy of a batch asked as a whole; undefined when no member is pinned to a block number or a hash. */
export function batchPolicy(chain: Chain, calls: readonly RpcCall[], required: number): Partial<AgreementPolicy> | undefined {
  const top = highestBlock(chain, calls);
  const pins = hashPinsOf(chain, calls);
  if (pins === undefined) return top === undefined ? undefined : numberPolicy(chain, calls, required, top);
  return new HashBatch(chain, calls, top, pins).policy();
}

/**
 * Members pinned to a block number only: an answer counts from an upstream known to have the
 * highest block among them, or, when no member is a range and none looks missing, as a real
 * answer of a whole read.
 */
function numberPolicy(chain: Chain, calls: readonly RpcCall[], required: number, top: bigint): Partial<AgreementPolicy> {
  const started = performance.now();
  // A range (eth_getLogs up to toBlock): a node below toBlock answers the blocks it has, a real
  // but partial list. Only an upstream known to have toBlock votes, whatever it answered.
  const whole = !holdsRange(chain, calls);
  return {
    eligible: (upstream, assessed) => {
      if (hasBlock(upstream, top) === true) return true;
      if (!whole || anyMissing(readMembers(calls, assessed.body))) return false;
      return !headsPolled(chain) || eligible(chain, upstream, calls);
    },
    lacking: (failure) => !eligible(chain, failure.upstream, calls) && lacksBlock(failure.reason),
    waitForEligible: (_state, waiting, ended) => waitForBlock(chain, calls, required, waiting, ended, started, null),
  };
}

/** A batch with members pinned to a hash (and maybe others pinned to a block number): one question's state. */
class HashBatch {
  /** For each call, the first upstream that answered it with data (only calls pinned to a hash). */
  private readonly holders: (Upstream | undefined)[];
  private held = false;
  private readonly whole: boolean;
  private readonly read = new WeakMap<Good, readonly boolean[] | null>();

  constructor(
    private readonly chain: Chain,
    private readonly calls: readonly RpcCall[],
    private readonly top: bigint | undefined,
    private readonly pins: readonly (HashPin | undefined)[],
  ) {
    this.holders = calls.map(() => undefined);
    this.whole = !holdsRange(chain, calls);
  }

  policy(): Partial<AgreementPolicy> {
    return {
      eligible: (upstream, assessed) => this.eligible(upstream, assessed),
      recheck: (assessed) => this.recheck(assessed),
      lacking: (failure) => lacksBlock(failure.reason) && (this.held || !atBestHead(this.chain, failure.upstream) || (this.top !== undefined && !eligible(this.chain, failure.upstream, this.calls))),
      waitForEligible: (state, waiting, ended) => this.waitForEligible(state.missing - state.inFlight, waiting, ended),
    };
  }

  /** Each call's answer in this vote (true: looks missing), parsed once per answer; null when it cannot be read member by member. */
  private membersOf(a: Good): readonly boolean[] | null {
    let m = this.read.get(a);
    if (m === undefined) this.read.set(a, (m = readMembers(this.calls, a.body) ?? null));
    return m;
  }

  private eligible(upstream: Upstream, a: Good): boolean {
    const { pins, holders, chain, top } = this;
    const members = this.membersOf(a);
    for (let i = 0; i < pins.length; i++) {
      if (pins[i] === undefined || (members !== null && !members[i])) continue;
      // A member pinned to a hash that looks missing: only from an upstream at the best credible
      // head, while no upstream has answered it with data.
      if (holders[i] !== undefined || !atBestHead(chain, upstream)) return false;
    }
    if (top === undefined || hasBlock(upstream, top) === true) return true;
    if (!this.whole || anyMissing(members)) return false;
    return !headsPolled(chain) || eligible(chain, upstream, this.calls);
  }

  /** Whether this answer is the first with data for a member pinned to a hash: the votes are judged again. */
  private recheck(a: Good): boolean {
    const members = this.membersOf(a);
    if (members === null) return false;
    let found = false;
    for (let i = 0; i < this.pins.length; i++) {
      if (this.pins[i] === undefined || members[i] || this.holders[i] !== undefined) continue;
      this.holders[i] = a.upstream;
      found = this.held = true;
    }
    return found;
  }

  private waitForEligible(missing: number, waiting: readonly Upstream[], ended: AbortSignal): Promise<unknown> | undefined {
    const { chain, top } = this;
    if (this.held) {
      // Some member's data came from one upstream while others lack it: they may be a block
      // behind. Not when every one of them is known to be at or above the heads of those that had
      // it (a fork, or an upstream inventing the data: waiting would not help).
      const heads = this.holders.filter((u) => u !== undefined).map((u) => believedHead(u));
      const head = heads.includes(undefined) ? undefined : (heads as bigint[]).reduce((a, b) => (a > b ? a : b));
      if (head !== undefined && waiting.every((u) => hasBlock(u, head) === true)) return undefined;
      return waitForHeadsToRise(chain, waiting, { signal: whilePolling(chain, pollHeadsNow(chain, waiting), ended) });
    }
    // Every member pinned to a hash looked missing, some from upstreams not (known to be) at the
    // best head: asked again once enough of them are at it (and have the highest block pinned
    // by number). The upstreams whose heads are unknown are asked too: the best head is judged
    // among them all.
    const polled = pollHeadsNow(chain, withUnknownHeads(chain, waiting));
    const needed = Math.max(1, missing);
    const enough = () => new Set(waiting.filter((u) => atBestHead(chain, u) && (top === undefined || hasBlock(u, top) === true)).map((u) => u.provider)).size >= needed;
    return waitUntil(chain, enough, { signal: whilePolling(chain, polled, ended) }).then((ok) => (ok || ended.aborted ? undefined : polled));
  }
}

/**
 * The -32016 of a batch asked as a whole that ended without N votes because of a member pinned to
 * a hash: the first such member that some upstream answered with data and others lacked (unless
 * the votes disagree among themselves: a dispute, the usual 502), else the first that upstreams
 * behind the best credible head answered as missing. Undefined when neither.
 */
export function batchHashError(chain: Chain, calls: readonly RpcCall[], required: number, end: Failed): Error | undefined {
  const pins = hashPinsOf(chain, calls);
  if (pins === undefined) return undefined;
  const answers = [...end.votes.map((v) => v.item), ...end.ineligible];
  const read = answers.map((a) => readMembers(calls, a.body));
  const lackingFailures = end.failures.filter((f) => lacksBlock(f.reason)).map((f) => f.upstream);
  for (let i = 0; i < pins.length; i++) {
    const pin = pins[i];
    if (pin === undefined) continue;
    const had = answers.filter((_, k) => read[k] !== undefined && !read[k]![i]).map((a) => a.upstream);
    if (had.length === 0) continue;
    if (tally(end.votes).size > 1) return undefined;
    const lacked = [...answers.filter((_, k) => read[k] === undefined || read[k]![i]).map((a) => a.upstream), ...lackingFailures];
    if (lacked.length > 0) return hashNotAvailable(chain, pin, required, unique(had), unique(lacked).filter((u) => !had.includes(u)), null);
  }
  const behind = unique([...end.ineligible.map((a) => a.upstream), ...lackingFailures].filter((u) => !atBestHead(chain, u)));
  if (behind.length === 0) return undefined;
  const atBest = unique(end.votes.map((v) => v.item.upstream));
  const pin = pins.find((p) => p !== undefined)!;
  return absenceNotVouched(chain, pin, required, atBest, behind.filter((u) => !atBest.includes(u)), null);
}

/** Each call's hash pin (undefined for a call not pinned to a hash); undefined when none is. */
function hashPinsOf(chain: Chain, calls: readonly RpcCall[]): (HashPin | undefined)[] | undefined {
  const pins = calls.map((c) => hashPinned(chain, c));
  return pins.some((p) => p !== undefined) ? pins : undefined;
}

/**
 * Each call's member in a batch's answer, in the calls' order: true when it looks like the node
 * lacks the data (answers/missing.ts answersAsMissing, or an empty list). Undefined when the answer
 * cannot be read member by member: not a JSON array, a member whose id matches no call or
 * several, a call with no member.
 */
function readMembers(calls: readonly RpcCall[], body: Buffer): boolean[] | undefined {
  let answer: unknown;
  try {
    answer = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  if (!Array.isArray(answer)) return undefined;
  const missing: (boolean | undefined)[] = calls.map(() => undefined);
  for (const member of answer as unknown[]) {
    if (typeof member !== 'object' || member === null) return undefined;
    const m = member as { id?: unknown; result?: unknown; error?: { message?: unknown } };
    let at = -1;
    for (let i = 0; i < calls.length; i++) {
      if (calls[i]!.id !== m.id) continue;
      if (at >= 0) return undefined;
      at = i;
    }
    if (at < 0 || missing[at] !== undefined) return undefined;
    missing[at] = answersAsMissing(calls[at]!, m) || (Array.isArray(m.result) && m.result.length === 0);
  }
  return missing.includes(undefined) ? undefined : (missing as boolean[]);
}

/** Whether some member looks missing, or the answer cannot be read member by member. */
const anyMissing = (members: readonly boolean[] | null | undefined): boolean => !members || members.includes(true);

function unique<T>(list: readonly T[]): T[] {
  return [...new Set(list)];
}
