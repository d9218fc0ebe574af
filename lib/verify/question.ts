/**
 * One question asked of upstreams, as the agreement loop (agreement.ts) sees it: the answers
 * (votes and failures), the policy the stages hand in, where a run stands, and how it ends.
 * Types only, plus the real timers.
 */
import type { Outcome } from '../upstream/fanout.js';
import type { RpcPayload } from '../jsonrpc/types.js';
import type { Logger } from '../log.js';
import type { Chain, Upstream } from '../upstream/registry.js';
import type { CallSink, CancelSignal, UpstreamResponse } from '../upstream/transport/contract.js';
import type { IgnoredValue } from './answers/canonical.js';
import type { Vote } from './quorum.js';

/** An upstream's answer after canonicalization: a vote, or why it is not one. */
export type Assessed =
  | { upstream: Upstream; ok: true; body: Buffer; hash: string; ms: number; ignored?: readonly IgnoredValue[] }
  /**
   * kind: the transport's failure kind (e.g. 'budget', 'rate-limited'); retryAfterMs: a rate
   * limit's Retry-After. refused: the provider refused this request as too large (not its
   * failure); the body and, for a single call, its hash.
   */
  | { upstream: Upstream; ok: false; reason: string; ms: number; kind?: string; retryAfterMs?: number | undefined; refused?: { hash?: string; body: Buffer } };

export interface Verdict {
  hash: string;
  /** The N agreeing upstreams, in arrival order; the first is the one whose bytes are returned. */
  members: Extract<Assessed, { ok: true }>[];
  /**
   * The answer is relayed, not confirmed: a refusal fewer than N providers gave alike (the
   * headers then say X-Confirmable: false, X-Required-Confirmations: 1).
   */
  unconfirmed?: boolean;
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
  /**
   * Votes already cast for this very question (a cached answer confirmed by fewer than N:
   * lib/cache): counted before any call, in their order, ahead of every answer that comes; their
   * upstreams, and other upstreams of their providers, are not asked again. Only the missing
   * votes are asked for. Absent or undefined: none.
   */
  prior?: Verdict | undefined;
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

/**
 * A decided question: the winning hash, its N members (prior votes included) and every vote cast
 * in this run (for who won, who lost; a prior vote was recorded when it was cast).
 */
export interface Decided {
  hash: string;
  required: number;
  members: readonly Good[];
  votes: readonly Vote<Good>[];
}

/** The fetch stage's part of the policy. */
export interface CallPolicy {
  call(upstream: Upstream, signal: CancelSignal): Promise<UpstreamResponse>;
  /**
   * The same call with its outcome told to `sink` (no promise per call); when present, the
   * agreement loop calls it (as a method of the policy) instead of `call`.
   */
  callInto?(upstream: Upstream, signal: CancelSignal, sink: CallSink): void;
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
   * After each answer, counted or not: true when the votes counted so far must be judged by
   * `eligible` again (this answer changed who may vote: a hash that one upstream has makes earlier
   * "not found" answers not votes, even when the answer with it may not count itself, as a batch
   * answer lacking another member). A vote that may no longer count moves to the ineligible answers.
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
   * were `lacking`), once no call is still running: a promise to wait for (e.g. heads catching
   * up), after which `waiting`, the upstreams that answered so, are asked again; undefined to fail at once (cause 'ineligible').
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

/**
 * What a request's policies (eligibility, hedging, loop-policy.ts) see of it: its chain, its
 * calls, whether it is confirmable and its N. The pipeline hands its context, which has these
 * among its fields; a policy reads nothing else of it.
 */
export interface RequestQuestion {
  readonly chain?: Chain | undefined;
  readonly payload?: RpcPayload | undefined;
  readonly confirmable?: boolean | undefined;
  readonly required?: number | undefined;
}

/** What explaining a dispute reads of a request: the question, its id and its log. */
export interface DisputedRequest extends RequestQuestion {
  readonly requestId: string;
  readonly log: Logger;
}
