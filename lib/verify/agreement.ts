/**
 * The agreement loop: one question (today: a request's payload) asked of ranked upstreams until
 * N of them agree. It owns what used to be spread over the fetch, canonicalize and verify stages:
 * the fan-out of calls, the request deadline, hedging, escalation (one more upstream per missing
 * vote when an answer fails or disagrees), one vote per provider, refusals (a provider refusing
 * the request as too large: not its failure, relayed when every answer is a refusal), eligibility
 * (an answer that may not count yet: neither a vote nor a failure; a failure that only says the
 * upstream lacks the data yet) and the single abort: every
 * call still running is aborted once, when the answer is decided, the deadline passes or the
 * client leaves (`abort()`). A question may come with votes already cast (`prior`: a cached
 * answer confirmed by fewer than N); they count first, and only the missing votes are asked for,
 * of other providers.
 *
 * Everything else is policy handed in as data by the stages (middleware/fetch-parallel.ts gives
 * the call and the deadline, canonicalize.ts the assessment, verify.ts the hedge delay and the
 * hooks that record health and metrics), each with today's behaviour as its default. Time comes
 * from `timers` (performance.now and the global timers by default), so tests need no sleeps.
 *
 * Driven by callbacks (no promise per outcome: this is the hot path of every request) and one
 * hedge timer per run, which re-arms itself for the rest of the quiet period when an outcome came
 * meanwhile. The loop ends exactly once, through `done`. A run is one object whose steps are
 * methods shared by every run (no closures made per request but the fan-out's listener).
 */
import { onBackOff } from '../health/rate-limits.js';
import { DeadlineList, deadlineList, type Due } from '../upstream/deadlines.js';
import { FanOut, type Outcome } from '../upstream/fanout.js';
import type { Upstream } from '../upstream/registry.js';
import type { UpstreamResponse } from '../upstream/transport/contract.js';
import { decide, leadingCount, type Vote } from './quorum.js';
import {
  realTimers,
  type AgreementEnd,
  type AgreementPolicy,
  type AgreementRun,
  type Bad,
  type Good,
  type LoopState,
  type Question,
  type Timers,
} from './question.js';

/** hedgeCount policy: one call per vote the leading group lacks, less the calls already running. */
export const hedgeMissingVotes = (s: LoopState): number => Math.max(1, s.missing - s.inFlight);

/** Starts the loop at once: the first N calls go out before this returns. */
export function runAgreement(question: Question, policy: AgreementPolicy, done: (end: AgreementEnd) => void): AgreementRun {
  return new AgreementLoop(question, policy, done);
}

/** Why a question ended without a group of N (before `failed` looks closer). */
type FailCause = 'deadline' | 'aborted' | 'exhausted';

class AgreementLoop implements AgreementRun, Due {
  /** Upstreams called so far, in the order they were started (a data property: see runAgreement's callers). */
  readonly called: readonly Upstream[];
  private readonly timers: Timers;
  private readonly required: number;
  private readonly perProvider: boolean;
  private readonly fanout: FanOut<Upstream, UpstreamResponse>;
  private readonly votes: Vote<Good>[] = [];
  /** votes[0..priorVotes) were cast before this run (question.prior): never rechecked, never recorded again. */
  private priorVotes = 0;
  private readonly failures: Bad[] = [];
  private readonly ineligible: Good[] = [];
  /** ineligible[requeueFrom..] and the `lacking` ones of failures[failuresFrom..] are the ones to ask again after a wait. */
  private requeueFrom = 0;
  private failuresFrom = 0;
  /** Whether some failure was `lacking` (the end's cause is then 'ineligible'). */
  private lacked = false;
  private finished = false;
  private waited = false;
  /** Ends the wait of waitForEligible when the question ends before it. */
  private waitEnded: AbortController | undefined = undefined;
  private waiting = false;
  private hedged = 0;
  private hedgeTimer: unknown = undefined;
  private readonly startedAt: number;
  private quietSince: number;
  /** The deadline's timer, with injected timers (policy.timers); else the deadline is in the process's list (below). */
  private readonly deadline: unknown;
  /** The deadline in the process's list of deadlines of its duration (lib/upstream/deadlines.ts), on the real clock. */
  dueAt = 0;
  duePrev: Due | undefined = undefined;
  dueNext: Due | undefined = undefined;
  dueList: DeadlineList | undefined = undefined;

  constructor(
    question: Question,
    private readonly policy: AgreementPolicy,
    private readonly done: (end: AgreementEnd) => void,
  ) {
    const timers = (this.timers = policy.timers ?? realTimers);
    this.required = question.required;
    this.perProvider = question.perProvider;
    const prior = question.prior;
    const candidates = prior === undefined ? question.candidates : othersThan(question.candidates, prior.members, question.perProvider);
    const call = policy.callInto === undefined ? policy.call : (policy as Required<Pick<AgreementPolicy, 'callInto'>>);
    this.fanout = new FanOut<Upstream, UpstreamResponse>(candidates, call, policy.expectedMs, timers.now, onBackOff);
    this.called = this.fanout.called;
    this.startedAt = this.quietSince = timers.now();
    if (timers === realTimers) {
      this.deadline = undefined;
      deadlineList(policy.deadlineMs).add(this);
    } else {
      this.deadline = timers.setTimeout(() => this.expire(), policy.deadlineMs);
    }
    this.fanout.onOutcome((o) => {
      // (guard inlined: this runs once per call)
      if (!o || this.finished) return;
      try {
        this.onOutcome(o);
      } catch (error) {
        this.finish({ kind: 'error', error });
      }
    });
    try {
      if (prior === undefined) this.fanout.launch(this.required);
      else this.castPrior(prior.members);
      this.armHedge();
    } catch (error) {
      this.finish({ kind: 'error', error });
    }
  }

  abort(): void {
    if (!this.finished) this.finish(this.failed('aborted'));
  }

  /** The deadline passed. */
  expire(): void {
    this.finish(this.failed('deadline'));
  }

  /**
   * The prior votes counted, as answers that came first (the policy's `recheck` hears them: an
   * answer with the data changes who may vote for "not found"), then the missing ones asked for.
   */
  private castPrior(members: readonly Good[]): void {
    const { votes, policy } = this;
    for (const a of members) {
      votes.push(this.perProvider ? { hash: a.hash, item: a, voter: a.upstream.provider } : { hash: a.hash, item: a });
      this.priorVotes += 1;
      if (policy.recheck?.(a)) this.recheckVotes();
    }
    this.step();
  }

  private state(): LoopState {
    const { fanout } = this;
    return {
      required: this.required,
      votes: this.votes.length,
      missing: this.required - leadingCount(this.votes),
      inFlight: fanout.inFlight,
      remaining: fanout.remaining,
      called: fanout.called.length,
      hedged: this.hedged,
      elapsedMs: this.timers.now() - this.startedAt,
    };
  }

  private finish(end: AgreementEnd): void {
    if (this.finished) return;
    this.finished = true;
    this.waitEnded?.abort();
    if (this.deadline !== undefined) this.timers.clearTimeout(this.deadline);
    else DeadlineList.remove(this);
    if (this.hedgeTimer !== undefined) this.timers.clearTimeout(this.hedgeTimer);
    this.fanout.abort(undefined, this.policy.onAbandoned);
    this.done(end);
  }

  /** The end of a question with no group of N: a relayed refusal, or the failure. */
  private failed(cause: FailCause): AgreementEnd {
    const { votes, failures, ineligible, required } = this;
    if (cause !== 'deadline' && votes.length === 0) {
      const refused = this.refusalEnd();
      if (refused) return refused;
    }
    return {
      kind: 'failed',
      cause:
        cause === 'deadline' ? cause
        : failures.some((f) => f.kind === 'budget') ? 'budget'
        : cause === 'exhausted' && (ineligible.length > 0 || this.lacked || this.lackingSince(0).length > 0) ? 'ineligible'
        : cause,
      required,
      votes,
      failures,
      ineligible,
      called: this.fanout.called,
    };
  }

  /** No vote came and upstreams refused the request as too large: the first refusal, relayed (confirmed when N providers gave it alike). */
  private refusalEnd(): AgreementEnd | undefined {
    const refusals = this.failures.filter((f) => f.refused?.hash !== undefined);
    if (refusals.length === 0) return undefined;
    const hash = refusals[0]!.refused!.hash!;
    const alike = refusals.filter((f) => f.refused!.hash === hash).map((f) => (this.perProvider ? f.upstream.provider : f.upstream));
    return {
      kind: 'refused',
      verdict: {
        hash,
        members: refusals.map((f) => ({ upstream: f.upstream, ok: true, body: f.refused!.body, hash: f.refused!.hash!, ms: f.ms })),
      },
      confirmed: new Set(alike).size >= this.required,
    };
  }

  private step(): void {
    const { votes, required, fanout } = this;
    // (the fan-out is the tally's state: its inFlight and remaining, read as decide reads them)
    const d = decide(votes, required, fanout);
    if (d.kind === 'agreed') {
      this.policy.onDecided?.({ hash: d.hash, required, members: d.members, votes: this.priorVotes === 0 ? votes : votes.slice(this.priorVotes) });
      return this.finish({ kind: 'agreed', verdict: { hash: d.hash, members: d.members } });
    }
    if (d.kind === 'failed') {
      // No vote yet and a refusal in: the calls still running decide between relaying the
      // refusal (none of them votes) and a failure (one does), whatever the arrival order.
      if (votes.length === 0 && fanout.inFlight > 0 && this.failures.some((f) => f.refused)) return;
      // A wait for eligibility comes once: it starts when the calls still running are in, so that
      // those of them that cannot count yet are asked again after it too.
      if (fanout.inFlight > 0 && this.mayWait()) return;
      if (this.waiting || this.waitToAskAgain()) return;
      return this.finish(this.failed('exhausted'));
    }
    if (d.kind === 'launch') fanout.launch(d.count);
  }

  /**
   * Upstreams whose answers could not count yet, or that lacked the data (policy `lacking`), are
   * asked again once the policy's wait ends (once per question). Whether a wait began.
   */
  private waitToAskAgain(): boolean {
    const { policy } = this;
    if (this.waited || policy.waitForEligible === undefined) return false;
    const lackingNow = this.lackingSince(this.failuresFrom);
    const again = [...this.ineligible.slice(this.requeueFrom).map((a) => a.upstream), ...lackingNow];
    if (again.length === 0) return false;
    this.waited = true;
    if (lackingNow.length > 0) this.lacked = true;
    const waitEnded = (this.waitEnded = new AbortController());
    const wait = policy.waitForEligible(this.state(), again, waitEnded.signal);
    if (!wait) return false;
    this.waiting = true;
    wait.then(
      () => {
        if (this.finished) return;
        try {
          this.waiting = false;
          this.fanout.requeue(again);
          this.requeueFrom = this.ineligible.length;
          this.failuresFrom = this.failures.length;
          this.step();
          this.armHedge();
        } catch (error) {
          this.finish({ kind: 'error', error });
        }
      },
      (error: unknown) => this.finish({ kind: 'error', error }),
    );
    return true;
  }

  private onOutcome(o: Outcome<Upstream, UpstreamResponse>): void {
    const { policy } = this;
    const a = policy.assess(o);
    this.quietSince = this.timers.now();
    if (a.ok) {
      const counted = policy.eligible === undefined || policy.eligible(a.upstream, a);
      policy.onOutcome?.(a, counted);
      if (!counted) this.ineligible.push(a);
      else this.votes.push(this.perProvider ? { hash: a.hash, item: a, voter: a.upstream.provider } : { hash: a.hash, item: a });
      // Heard for an answer that does not count too: its data may change who else may vote.
      if (policy.recheck?.(a)) this.recheckVotes();
    } else {
      policy.onOutcome?.(a, false);
      this.failures.push(a);
    }
    this.step();
  }

  /** Whether a wait for eligibility may still begin: none yet, and answers or failures to ask again after it. */
  private mayWait(): boolean {
    if (this.waited || this.waiting || this.policy.waitForEligible === undefined) return false;
    return this.ineligible.length > this.requeueFrom || this.lackingSince(this.failuresFrom).length > 0;
  }

  /** The upstreams of failures[from..] that only lack the data yet (policy `lacking`), once each. */
  private lackingSince(from: number): Upstream[] {
    const { policy, failures } = this;
    if (!policy.lacking || failures.length <= from) return [];
    const found: Upstream[] = [];
    for (let i = from; i < failures.length; i++) {
      const f = failures[i]!;
      if (!found.includes(f.upstream) && policy.lacking(f)) found.push(f.upstream);
    }
    return found;
  }

  /** Votes that may no longer count (policy `recheck`) become ineligible answers, in arrival order (prior votes stay). */
  private recheckVotes(): void {
    const { votes, policy } = this;
    let kept = this.priorVotes;
    for (let i = kept; i < votes.length; i++) {
      const v = votes[i]!;
      if (policy.eligible === undefined || policy.eligible(v.item.upstream, v.item)) votes[kept++] = v;
      else this.ineligible.push(v.item);
    }
    votes.length = kept;
  }

  private onHedgeTimer(): void {
    this.hedgeTimer = undefined;
    if (this.finished) return;
    try {
      this.hedgeIfQuiet();
    } catch (error) {
      this.finish({ kind: 'error', error });
    }
  }

  /** The hedge timer fired: one more call when no outcome came for the policy's delay, else wait out the rest of it. */
  private hedgeIfQuiet(): void {
    const { fanout, policy, timers } = this;
    if (fanout.remaining === 0 || fanout.inFlight === 0) return;
    const s = this.state();
    const delay = policy.hedgeDelayMs!(s);
    if (!(delay > 0)) return;
    const quietMs = timers.now() - this.quietSince;
    if (quietMs < delay) return this.setHedgeTimer(delay - quietMs);
    if (policy.mayHedge?.(s) !== false) {
      const count = policy.hedgeCount?.(s) ?? 1;
      policy.onHedge?.(delay, count);
      this.hedged += fanout.launch(count);
    }
    this.quietSince = timers.now();
    // Read again: the delay may follow what was asked meanwhile (adaptive hedging).
    const nextDelay = policy.hedgeDelayMs!(this.state());
    if (nextDelay > 0) this.setHedgeTimer(nextDelay);
  }

  private armHedge(): void {
    if (this.finished || this.hedgeTimer !== undefined || !this.policy.hedgeDelayMs) return;
    const delay = this.policy.hedgeDelayMs(this.state());
    if (delay > 0) this.setHedgeTimer(delay);
  }

  private setHedgeTimer(ms: number): void {
    this.hedgeTimer = this.timers.setTimeout(() => this.onHedgeTimer(), ms);
  }
}

/** The candidates that may still vote: not the prior voters, nor (one vote per provider) other upstreams of their providers. */
function othersThan(candidates: readonly Upstream[], prior: readonly Good[], perProvider: boolean): Upstream[] {
  return candidates.filter((u) => !prior.some((p) => p.upstream === u || (perProvider && p.upstream.provider === u.provider)));
}
