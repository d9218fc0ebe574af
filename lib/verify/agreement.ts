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
import type { CancelSignal, UpstreamResponse } from '../upstream/transport/contract.js';
import type { IgnoredValue } from './canonical.js';
import { decide, leadingCount, type Vote } from './quorum.js';

/** An upstream's answer after canonicalization: a vote, or why it is not one. */
export type Assessed =
  | { upstream: Upstream; ok: true; body: Buffer; hash: string; ms: number; ignored?: readonly IgnoredValue[] }
  /**
   * kind: the transport's failure kind (e.g. 'budget'). refused: the provider refused this request
   * as too large (not its failure); the body and, for a single call, its hash.
   */
  | { upstream: Upstream; ok: false; reason: string; ms: number; kind?: string; refused?: { hash?: string; body: Buffer } };

export interface Verdict {
  hash: string;
  /** The N agreeing upstreams, in arrival order; the first is the one whose bytes are returned. */
  members: Extract<Assessed, { ok: true }>[];
}

export type Good = Extract<Assessed, { ok: true }>;
export type Bad = Extract<Assessed, { ok: false }>;

/** The clock (ms, monotonic) and timers the loop uses. */
export interface Timers {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const realTimers: Timers = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** One question: asked of the candidates in rank order until `required` answers agree. */
export interface Question {
  candidates: readonly Upstream[];
  required: number;
  /** Count one vote per provider (false when every upstream is its own provider: the check is skipped). */
  perProvider: boolean;
}

/** Where a run stands, as the policy hooks see it. */
export interface LoopState {
  required: number;
  /** Answers counted as votes so far. */
  votes: number;
  /** Votes the leading group still lacks. */
  missing: number;
  inFlight: number;
  /** Candidates not yet called. */
  remaining: number;
  /** Calls started so far. */
  called: number;
  /** Extra calls started by hedging so far. */
  hedged: number;
  /** Since the run started (ms). */
  elapsedMs: number;
}

/** A decided question: the winning hash, its N members and every vote cast (for who won, who lost). */
export interface Decided {
  hash: string;
  required: number;
  members: readonly Good[];
  votes: readonly Vote<Good>[];
}

/** The fetch stage's part of the policy. */
export interface CallPolicy {
  call(upstream: Upstream, signal: CancelSignal): Promise<UpstreamResponse>;
  /** The latency expected of an upstream: orders the calls of one launch, slowest first. */
  expectedMs?(upstream: Upstream): number | undefined;
  /** Whole-question deadline (ms). */
  deadlineMs: number;
}

export interface AgreementPolicy extends CallPolicy {
  /** An outcome → a vote with its hash, or a failure with its reason (the canonicalize stage). */
  assess(outcome: Outcome<Upstream, UpstreamResponse>): Assessed;
  /** Ask more upstreams when no outcome came for this long (ms); 0 or absent: no hedging. Read at the start and at each hedge timer. */
  hedgeDelayMs?(state: LoopState): number;
  /** The hedging budget: may this hedge go out (default yes). A refused hedge waits another delay. */
  mayHedge?(state: LoopState): boolean;
  /** How many calls one hedge starts (default 1; `hedgeMissingVotes` asks one per missing vote). */
  hedgeCount?(state: LoopState): number;
  /**
   * May this answer count as a vote (default: every answer may)? One that may not is neither a
   * vote nor the upstream's failure: another upstream is asked in its place.
   */
  eligible?(upstream: Upstream, assessed: Good): boolean;
  /**
   * After a counted answer: true when the votes counted so far must be judged by `eligible` again
   * (this answer changed who may vote: a hash that one upstream has makes earlier "not found"
   * answers not votes). A vote that may no longer count moves to the ineligible answers.
   */
  recheck?(assessed: Good): boolean;
  /**
   * Whether a failed call only says that its upstream lacks the data yet (a lagging node's
   * "header not found" for a block above its head): still a failure (the 502's data lists it, the
   * health record counts it), but its upstream is asked again after `waitForEligible`, like an
   * ineligible answer. Read when the loop runs out of upstreams (not when the failure comes in:
   * a hash pin learns only later that another upstream has the data).
   */
  lacking?(failure: Bad): boolean;
  /**
   * Called once, when no group can reach N and some answers were not eligible (or some failures
   * were `lacking`): a promise to wait for (e.g. heads catching up), after which `waiting`, the
   * upstreams that answered so, are asked again; undefined to fail at once (cause 'ineligible').
   * The deadline still applies. `ended` fires when the question ends first (deadline, client
   * gone): the wait should stop listening then.
   */
  waitForEligible?(state: LoopState, waiting: readonly Upstream[], ended: AbortSignal): Promise<unknown> | undefined;
  /** Each call's outcome, as it is assessed (`counted`: a vote that counts). */
  onOutcome?(assessed: Assessed, counted: boolean): void;
  /** A call still running when the question ended, with how long it had run (ms): a sample of at least that. */
  onAbandoned?(upstream: Upstream, ms: number): void;
  /** A hedge went out. */
  onHedge?(afterMs: number, count: number): void;
  /** The question was decided by N agreeing votes (before `done`). */
  onDecided?(decided: Decided): void;
  timers?: Timers;
}

/**
 * Why no group of N: 'deadline'; 'budget' (an answer was refused by our own byte budget);
 * 'ineligible' (answers that could not count yet, or failures of upstreams that lack the data
 * yet: policy `lacking`); 'aborted' (the client left); 'exhausted'.
 */
export type FailureCause = 'deadline' | 'budget' | 'ineligible' | 'aborted' | 'exhausted';

export interface Failed {
  kind: 'failed';
  cause: FailureCause;
  required: number;
  votes: readonly Vote<Good>[];
  failures: readonly Bad[];
  /** Answers that did not count as votes (policy `eligible`). */
  ineligible: readonly Good[];
  called: readonly Upstream[];
}

export type AgreementEnd =
  | { kind: 'agreed'; verdict: Verdict }
  /**
   * No vote, and upstreams refused the request as too large: the first refusal is the answer.
   * `confirmed` when N providers refused alike (the first refusal's hash); otherwise the answer
   * is one provider's word, not a confirmation (X-Confirmable: false).
   */
  | { kind: 'refused'; verdict: Verdict; confirmed: boolean }
  | Failed
  /** A policy hook or a call threw. */
  | { kind: 'error'; error: unknown };

export interface AgreementRun {
  /** Upstreams called so far, in the order they were started. */
  readonly called: readonly Upstream[];
  /** The client left: abort every call and end (a no-op once ended). */
  abort(): void;
}

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
