/**
 * Who may vote on a pinned read (lib/verify/README.md "How agreement works", 11), as the agreement loop's policy. Works on
 * one question: a single call, or a batch as a whole (stages composed without runMembers:
 * batch-eligibility.ts; a batch split per member, as rpcPipeline does, asks one question per
 * member, each with its own policy).
 *
 * Pinned to a block number (a block parameter, EIP-1898 `blockNumber`, eth_getLogs `toBlock`, a
 * method the config declares with its pin, a `safe`/`finalized` that classify resolved to a
 * number): only an upstream whose head is known to be at or above the block
 * (lib/verify/eligibility.ts). An answer from an upstream below it (a lagging node's `null`,
 * `[]` or "header not found") is neither a vote nor the provider's failure: the agreement loop
 * asks others, waits once (at most the chain's `heads.waitMs`) for heads to catch up, asks the
 * waiting ones again, and otherwise ends with -32016 naming the block and the heads seen. Never
 * a confirmed empty answer from upstreams below the block.
 * For a single call, only an answer that looks like the block is missing counts as the node's
 * lag: a `null` block, receipt or transaction, an empty list, or an unknown-block error (a
 * failure, `lacking`: asked again after the wait). A real answer from an upstream whose known
 * head is older is a vote (it had the data: heads are polled, so a head may be seconds old),
 * except for a range, eth_getLogs up to `toBlock`: a node below `toBlock` answers the logs of the
 * blocks it has, a real but partial list, so only upstreams known to have `toBlock` vote on it.
 * Before waiting, the upstreams to be asked again are asked for their heads at once (tracker.ts
 * pollHeadsNow); the wait starts once the calls still running are in (agreement.ts).
 * An answer that looks missing, and a range's answer whatever it holds, count only from an
 * upstream known to have the block (eligibility.ts knownToHave): one whose head is unknown (an
 * embedded pipeline before `startHealthChecks()`, the first moments after start, an upstream
 * whose head polls fail) is not a vote; its head is asked for on demand and the question asked
 * of it again once known. A real answer of a whole read is a vote whatever the head.
 * A batch asked as a whole is judged by these rules member by member of its answer
 * (batch-eligibility.ts): held to the highest block of its members pinned by number, and each
 * member pinned by hash held to the hash rule below.
 *
 * Pinned to a hash (a block hash, EIP-1898 `blockHash`, eth_getLogs `blockHash`, a transaction
 * hash), a single call: whether an upstream has the data shows only in its answer. Answers that
 * look missing (`null`, `[]`, an unknown-block error) are votes from upstreams at the best
 * credible head (never from one whose head is unknown: its head, and those of the others not
 * known, are polled on demand) as long as no upstream answered with the data: N of them confirm
 * "not found" as before. Once one upstream answers with the
 * data, they are not votes (those already counted are taken back, policy `recheck`): the loop
 * asks further upstreams, waits once for heads to rise (at most `heads.waitMs`; not when the
 * lacking ones are known to be at or above the head of the one with the data), asks the lacking
 * ones again, and when N still cannot agree on the data ends with -32016 naming the hash, who had
 * it and who lacked it. Never a confirmed "not found" once an upstream answered with the data.
 * A liar inventing the data turns the honest "not found" into that -32016 (a refusal, never a
 * wrong confirmation): its invention alone is never N votes.
 * Applies with or without tracked heads, at any N.
 */
import type { RpcCall } from '../jsonrpc/types.js';
import { atBestHead, eligible, hasBlock, hashPinned, highestBlock, holdsRange, type BlockNeed } from './eligibility.js';
import { answerBodyAsMissing, lacksBlock } from './answers/missing.js';
import { batchHashError, batchPolicy } from './batch-eligibility.js';
import {
  absenceNotVouched,
  blockNotAvailable,
  eligibleProviders,
  hashNotAvailable,
  providersWithBlock,
  waitForBlock,
  waitForHeadsToRise,
  waitUntil,
  whilePolling,
  withUnknownHeads,
} from './head-waits.js';
import { believedHead } from '../health/heads.js';
import { headsPolled, pollHeadsNow } from '../health/tracker.js';
import type { Chain, Upstream } from '../upstream/registry.js';
import type { AgreementPolicy, Bad, Failed, Good, RequestQuestion } from './question.js';
import { tally } from './quorum.js';

export function eligibilityPolicy(q: RequestQuestion): Partial<AgreementPolicy> | undefined {
  const { chain, payload } = q;
  if (!q.confirmable || !chain || !payload) return undefined;
  const calls = payload.calls;
  // A batch asked as a whole (stages composed without runMembers): the same rules, member by member of its answer.
  if (payload.batch) return batchPolicy(chain, calls, q.required ?? 1);
  const call = calls[0]!;
  if (hashPinned(chain, call)) return hashPolicy(chain, call);
  const top = highestBlock(chain, calls);
  if (top === undefined) return undefined;
  const required = q.required ?? 1;
  const started = performance.now();
  // A range (eth_getLogs up to toBlock): a node below toBlock answers the blocks it has, a real
  // but partial list. Only an upstream known to have toBlock votes, whatever it answered.
  const whole = !holdsRange(chain, calls);
  return {
    eligible: (upstream, assessed) => {
      // An absence, or a range's list (complete or partial alike), only from an upstream known
      // to have the block (an unknown head is not: knownToHave).
      if (hasBlock(upstream, top) === true) return true;
      // A real answer of a whole read (a block, a balance) is a vote: its node had the data.
      return whole && !answerBodyAsMissing(call, assessed);
    },
    // A lagging node's "header not found": asked again once its head has the block.
    lacking: (failure) => !eligible(chain, failure.upstream, calls) && lacksBlock(failure.reason),
    waitForEligible: (_state, waiting, ended) => waitForBlock(chain, calls, required, waiting, ended, started, call.id),
  };
}

/**
 * A single call pinned to a hash: an answer that looks missing is a vote only from an upstream at
 * the chain's best credible head (atBestHead; none whose head is unknown), and only
 * until one upstream answers with the data; from then on none is (and those counted are taken
 * back).
 */
function hashPolicy(chain: Chain, call: RpcCall): Partial<AgreementPolicy> {
  let holder: Upstream | undefined;
  const missing = missingOf(call);
  const unknownBlock = (failure: Bad) => lacksBlock(failure.reason);
  return {
    eligible: (upstream, assessed) => !missing(assessed) || (!holder && atBestHead(chain, upstream)),
    // An unknown-block error ("header for hash not found") once another upstream has the data, or
    // from an upstream behind the best head: asked again once heads rise.
    lacking: (failure) => unknownBlock(failure) && (holder !== undefined || !atBestHead(chain, failure.upstream)),
    recheck: (assessed) => {
      if (holder || missing(assessed)) return false;
      holder = assessed.upstream;
      return true;
    },
    waitForEligible: (state, lacking, ended) => {
      if (!holder) {
        // Every answer so far says "not found", some from upstreams behind the best head: asked
        // again once enough of them are at it (heads polled now: a head seconds old is stale). The
        // upstreams whose heads are unknown are asked too: the best head is judged among them all.
        const polled = pollHeadsNow(chain, withUnknownHeads(chain, lacking));
        // (the calls still in flight may bring the other votes)
        const needed = Math.max(1, state.missing - state.inFlight);
        const enough = () => new Set(lacking.filter((u) => atBestHead(chain, u)).map((u) => u.provider)).size >= needed;
        // A wait that ends first still waits for the polls (heads never polled are learned there).
        return waitUntil(chain, enough, { signal: whilePolling(chain, polled, ended) }).then((ok) => (ok || ended.aborted ? undefined : polled));
      }
      // The lacking nodes may be a block behind: asked again once one of them reports a higher
      // head, or after heads.waitMs. Not when every one of them is known to be at or above the
      // head of the upstream that had the data (its answer raised that head to the data's block):
      // they are not behind, waiting would not help (a fork, or an upstream inventing the data).
      const head = believedHead(holder);
      if (head !== undefined && lacking.every((u) => hasBlock(u, head) === true)) return undefined;
      return waitForHeadsToRise(chain, lacking, { signal: whilePolling(chain, pollHeadsNow(chain, lacking), ended) });
    },
  };
}

/** Whether an answer looks missing, parsed at most once per answer. */
function missingOf(call: RpcCall): (a: Good) => boolean {
  const seen = new WeakMap<Good, boolean>();
  return (a) => {
    let m = seen.get(a);
    if (m === undefined) seen.set(a, (m = answerBodyAsMissing(call, a)));
    return m;
  };
}

/**
 * The error of a loop that ended without N agreeing answers because of who may vote, -32016;
 * undefined when that is not the reason (the usual 502 then says what happened).
 * - Pinned to a block number that fewer than N providers have: whatever the lagging ones answered
 *   (ineligible votes, or errors such as "header not found" that count as provider trouble).
 * - Pinned to a hash (`end` given): some upstream answered with the data and others answered as
 *   if they lack it (not votes, or unknown-block errors counted as provider trouble), and the
 *   upstreams with the data do not disagree among themselves (that is a dispute: 502).
 */
export function ineligibleError(q: RequestQuestion, required: number, ranOutOfEligible: boolean, end?: Failed): Error | undefined {
  const { chain, payload } = q;
  if (!q.confirmable || !chain || !payload) return undefined;
  const calls = payload.calls;
  const id = payload.batch ? null : payload.calls[0]!.id;
  if (!payload.batch) {
    const pin = hashPinned(chain, calls[0]!);
    if (pin) return end ? hashError(chain, pin, calls[0]!, required, end, id) : undefined;
  } else if (end) {
    // A batch asked as a whole: a member pinned to a hash first (batch-eligibility.ts), then the highest block.
    const err = batchHashError(chain, calls, required, end);
    if (err) return err;
  }
  if (highestBlock(chain, calls) === undefined) return undefined;
  if (!ranOutOfEligible && (!headsPolled(chain) || eligibleProviders(chain, calls) >= required)) return undefined;
  // N providers known to have the block, and still no N alike: they disagree (the usual 502).
  if (ranOutOfEligible && providersWithBlock(chain, calls) >= required) return undefined;
  return blockNotAvailable(chain, calls, required, 0, id);
}

function hashError(chain: Chain, pin: Extract<BlockNeed, { kind: 'hash' }>, call: RpcCall, required: number, end: Failed, id: string | number | null): Error | undefined {
  const had = end.votes.filter((v) => !answerBodyAsMissing(call, v.item));
  if (had.length === 0) return absenceError(chain, pin, required, end, id);
  if (tally(had).size > 1) return undefined;
  const lacked = [
    ...end.ineligible.map((a) => a.upstream),
    // An unknown-block error is provider trouble (lib/verify/answers/trouble.ts): a failure, not a vote.
    ...end.failures.filter((f) => lacksBlock(f.reason)).map((f) => f.upstream),
  ];
  if (lacked.length === 0) return undefined;
  const holders = [...new Set(had.map((v) => v.item.upstream))];
  return hashNotAvailable(chain, pin, required, holders, [...new Set(lacked)].filter((u) => !holders.includes(u)), id);
}

/**
 * Every answer said "not found" and fewer than N came from upstreams at the best credible head:
 * the others (answers not counted, unknown-block errors) are behind it. Undefined when none is
 * behind (the usual 502 then says what happened).
 */
function absenceError(chain: Chain, pin: Extract<BlockNeed, { kind: 'hash' }>, required: number, end: Failed, id: string | number | null): Error | undefined {
  const behind = [
    ...end.ineligible.map((a) => a.upstream),
    ...end.failures.filter((f) => lacksBlock(f.reason) && !atBestHead(chain, f.upstream)).map((f) => f.upstream),
  ];
  if (behind.length === 0) return undefined;
  const atBest = [...new Set(end.votes.map((v) => v.item.upstream))];
  return absenceNotVouched(chain, pin, required, atBest, [...new Set(behind)].filter((u) => !atBest.includes(u)), id);
}
