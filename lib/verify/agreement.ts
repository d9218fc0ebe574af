/**
 * The agreement loop: one question (today: a request's payload) asked of ranked upstreams until
 * N of them agree. It owns what used to be spread over the fetch, canonicalize and verify stages:
 * the fan-out of calls, the request deadline, hedging, escalation (one more upstream per missing
 * vote when an answer fails or disagrees), one vote per provider, refusals (a provider refusing
 * the request as too large: not its failure, relayed when every answer is a refusal), eligibility
 * (an answer that may not count yet: neither a vote nor a failure; a failure that only says the
 * upstream lacks the data yet) and the single abort: every
 * call still running is aborted once, when the answer is decided, the deadline passes or the
 * client leaves (`abort()`).
 *
 * Everything else is policy handed in as data by the stages (middleware/fetch-parallel.ts gives
 * the call and the deadline, canonicalize.ts the assessment, verify.ts the hedge delay and the
 * hooks that record health and metrics), each with today's behaviour as its default. Time comes
 * from `timers` (performance.now and the global timers by default), so tests need no sleeps.
 *
 * Driven by callbacks (no promise per outcome: this is the hot path of every request) and one
 * hedge timer per run, which re-arms itself for the rest of the quiet period when an outcome came
 * meanwhile. The loop ends exactly once, through `done`.
 */
import { FanOut, type Outcome } from '../upstream/fanout.js';
import type { Upstream } from '../upstream/registry.js';
import type { UpstreamResponse } from '../upstream/transport/contract.js';
import { decide, leadingCount, type Vote } from './quorum.js';
import { realTimers, type AgreementEnd, type AgreementPolicy, type AgreementRun, type Bad, type Good, type LoopState, type Question } from './question.js';

/** hedgeCount policy: one call per vote the leading group lacks, less the calls already running. */
export const hedgeMissingVotes = (s: LoopState): number => Math.max(1, s.missing - s.inFlight);

/** Starts the loop at once: the first N calls go out before this returns. */
export function runAgreement(question: Question, policy: AgreementPolicy, done: (end: AgreementEnd) => void): AgreementRun {
  const timers = policy.timers ?? realTimers;
  const { required, perProvider } = question;
  const fanout = new FanOut<Upstream, UpstreamResponse>(question.candidates, policy.call, policy.expectedMs, timers.now);
  const votes: Vote<Good>[] = [];
  const failures: Bad[] = [];
  const ineligible: Good[] = [];
  /** ineligible[requeueFrom..] and the `lacking` ones of failures[failuresFrom..] are the ones to ask again after a wait. */
  let requeueFrom = 0;
  let failuresFrom = 0;
  /** Whether some failure was `lacking` (the end's cause is then 'ineligible'). */
  let lacked = false;
  let finished = false;
  let waited = false;
  /** Ends the wait of waitForEligible when the question ends before it. */
  let waitEnded: AbortController | undefined;
  let waiting = false;
  let hedged = 0;
  let hedgeTimer: unknown;
  const startedAt = timers.now();
  let quietSince = startedAt;

  const state = (): LoopState => ({
    required,
    votes: votes.length,
    missing: required - leadingCount(votes),
    inFlight: fanout.inFlight,
    remaining: fanout.remaining,
    called: fanout.called.length,
    hedged,
    elapsedMs: timers.now() - startedAt,
  });

  const finish = (end: AgreementEnd) => {
    if (finished) return;
    finished = true;
    waitEnded?.abort();
    timers.clearTimeout(deadline);
    if (hedgeTimer !== undefined) timers.clearTimeout(hedgeTimer);
    fanout.abort(undefined, policy.onAbandoned);
    done(end);
  };

  /** The end of a question with no group of N: a relayed refusal, or the failure. */
  const failed = (cause: 'deadline' | 'aborted' | 'exhausted'): AgreementEnd => {
    if (cause !== 'deadline' && votes.length === 0) {
      const refusals = failures.filter((f) => f.refused?.hash !== undefined);
      if (refusals.length > 0) {
        const hash = refusals[0]!.refused!.hash!;
        const alike = refusals.filter((f) => f.refused!.hash === hash).map((f) => (perProvider ? f.upstream.provider : f.upstream));
        return {
          kind: 'refused',
          verdict: {
            hash,
            members: refusals.map((f) => ({ upstream: f.upstream, ok: true, body: f.refused!.body, hash: f.refused!.hash!, ms: f.ms })),
          },
          confirmed: new Set(alike).size >= required,
        };
      }
    }
    return {
      kind: 'failed',
      cause:
        cause === 'deadline' ? cause
        : failures.some((f) => f.kind === 'budget') ? 'budget'
        : cause === 'exhausted' && (ineligible.length > 0 || lacked || lackingSince(0).length > 0) ? 'ineligible'
        : cause,
      required,
      votes,
      failures,
      ineligible,
      called: fanout.called,
    };
  };

  const step = () => {
    const d = decide(votes, required, { inFlight: fanout.inFlight, remaining: fanout.remaining });
    if (d.kind === 'agreed') {
      policy.onDecided?.({ hash: d.hash, required, members: d.members, votes });
      return finish({ kind: 'agreed', verdict: { hash: d.hash, members: d.members } });
    }
    if (d.kind === 'failed') {
      // No vote yet and a refusal in: the calls still running decide between relaying the
      // refusal (none of them votes) and a failure (one does), whatever the arrival order.
      if (votes.length === 0 && fanout.inFlight > 0 && failures.some((f) => f.refused)) return;
      if (waiting) return;
      const canWait = !waited && policy.waitForEligible !== undefined;
      const lackingNow = canWait ? lackingSince(failuresFrom) : [];
      const again = canWait ? [...ineligible.slice(requeueFrom).map((a) => a.upstream), ...lackingNow] : [];
      if (again.length > 0) {
        waited = true;
        if (lackingNow.length > 0) lacked = true;
        waitEnded = new AbortController();
        const wait = policy.waitForEligible!(state(), again, waitEnded.signal);
        if (wait) {
          waiting = true;
          wait.then(
            () => guard(() => {
              waiting = false;
              fanout.requeue(again);
              requeueFrom = ineligible.length;
              failuresFrom = failures.length;
              step();
              armHedge();
            }),
            (error: unknown) => finish({ kind: 'error', error }),
          );
          return;
        }
      }
      return finish(failed('exhausted'));
    }
    if (d.kind === 'launch') fanout.launch(d.count);
  };

  const onOutcome = (o: Outcome<Upstream, UpstreamResponse>) => {
    const a = policy.assess(o);
    quietSince = timers.now();
    if (a.ok) {
      const counted = policy.eligible === undefined || policy.eligible(a.upstream, a);
      policy.onOutcome?.(a, counted);
      if (!counted) ineligible.push(a);
      else {
        votes.push(perProvider ? { hash: a.hash, item: a, voter: a.upstream.provider } : { hash: a.hash, item: a });
        if (policy.recheck?.(a)) recheckVotes();
      }
    } else {
      policy.onOutcome?.(a, false);
      failures.push(a);
    }
    step();
  };

  /** The upstreams of failures[from..] that only lack the data yet (policy `lacking`), once each. */
  const lackingSince = (from: number): Upstream[] => {
    if (!policy.lacking || failures.length <= from) return [];
    const found: Upstream[] = [];
    for (let i = from; i < failures.length; i++) {
      const f = failures[i]!;
      if (!found.includes(f.upstream) && policy.lacking(f)) found.push(f.upstream);
    }
    return found;
  };

  /** Votes that may no longer count (policy `recheck`) become ineligible answers, in arrival order. */
  const recheckVotes = () => {
    let kept = 0;
    for (const v of votes) {
      if (policy.eligible === undefined || policy.eligible(v.item.upstream, v.item)) votes[kept++] = v;
      else ineligible.push(v.item);
    }
    votes.length = kept;
  };

  /** Runs a step of the loop: a throw ends the question with that error (outcomes come from promise callbacks and timers). */
  const guard = (fn: () => void) => {
    if (finished) return;
    try {
      fn();
    } catch (error) {
      finish({ kind: 'error', error });
    }
  };

  const onHedgeTimer = () => {
    hedgeTimer = undefined;
    guard(() => {
      if (fanout.remaining === 0 || fanout.inFlight === 0) return;
      const s = state();
      const delay = policy.hedgeDelayMs!(s);
      if (!(delay > 0)) return;
      const quietMs = timers.now() - quietSince;
      if (quietMs >= delay) {
        if (policy.mayHedge?.(s) !== false) {
          const count = policy.hedgeCount?.(s) ?? 1;
          policy.onHedge?.(delay, count);
          hedged += fanout.launch(count);
        }
        quietSince = timers.now();
        // Read again: the delay may follow what was asked meanwhile (adaptive hedging).
        const nextDelay = policy.hedgeDelayMs!(state());
        if (nextDelay > 0) hedgeTimer = timers.setTimeout(onHedgeTimer, nextDelay);
      } else {
        hedgeTimer = timers.setTimeout(onHedgeTimer, delay - quietMs);
      }
    });
  };
  const armHedge = () => {
    if (finished || hedgeTimer !== undefined || !policy.hedgeDelayMs) return;
    const delay = policy.hedgeDelayMs(state());
    if (delay > 0) hedgeTimer = timers.setTimeout(onHedgeTimer, delay);
  };

  const deadline = timers.setTimeout(() => finish(failed('deadline')), policy.deadlineMs);
  fanout.onOutcome((o) => {
    // (guard inlined: this runs once per call)
    if (!o || finished) return;
    try {
      onOutcome(o);
    } catch (error) {
      finish({ kind: 'error', error });
    }
  });
  guard(() => {
    fanout.launch(required);
    armHedge();
  });

  // A data property, not a getter: an object literal with its own accessor gets a hidden class
  // of its own each time, and a run per request made that most of the request's CPU (GC).
  return {
    called: fanout.called,
    abort() {
      if (!finished) finish(failed('aborted'));
    },
  };
}
