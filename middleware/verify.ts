/**
 * Stage 6, verify. Runs the agreement loop (lib/verify/agreement.ts) with the policy the fetch and
 * canonicalize stages handed over, the policies it is given (hedging: lib/verify/hedge-policy.ts,
 * the one place where it is configured; who may vote: eligibility-policy.ts), and this stage's
 * own: what each outcome and each decision records. The loop stops at the first group of N equal
 * hashes; on a failure or a disagreement it asks one more upstream per missing vote. No group of N → 502 (NoQuorum when answers disagreed,
 * UpstreamsFailed when too few answered); deadline → 504.
 * One vote per provider: a second equal answer from the same provider is not a second vote.
 * Every outcome feeds the upstream's health record and the metrics, except a refusal of this
 * request as too large (lib/verify/answers/answers.ts): it moves the request on to another upstream but is
 * not the provider's failure; when no upstream gave a vote and one refused, the client gets the
 * first refusal as the node gave it (a JSON-RPC error, HTTP 200), not a 502.
 * Each vote in a decided quorum is recorded as won or lost (health.ts recordVote): an upstream
 * that loses too many is distrusted (ranked last, select.ts) until it agrees again.
 * A cache miss that brought an entry confirmed by fewer than N (ctx.cached.prior, middleware/cache.ts)
 * runs a top-up: the entry's votes count as cast, and only the missing ones are asked of other
 * providers (lib/verify/agreement.ts); an answer of the run that differs from the entry marks it
 * disputed (ctx.cached.disputed), and the 502 of a failed run lists the entry's quorum as a group.
 * Reads: ctx.fetch, ctx.judging, ctx.candidates, ctx.required, ctx.chain, ctx.cached   Writes: ctx.agreement, ctx.verdict, ctx.cached.disputed
 */
import { defaults } from '../config/defaults.js';
import { onAnswerDone } from '../lib/pipeline/answer-done.js';
import type { Middleware, Next } from '../lib/pipeline/compose.js';
import { getContext, need, type CacheMiss, type RpcContext } from '../lib/pipeline/context.js';
import type { DisputePolicy } from '../lib/health/health.js';
import type { Metrics } from '../lib/ops/metrics.js';
import { runAgreement } from '../lib/verify/agreement.js';
import { assessOutcome, type Judging } from '../lib/verify/assess.js';
import { callInto, callOf, expectedLatency, type CallPlan } from '../lib/verify/calls.js';
import type { AgreementEnd, AgreementPolicy, AgreementRun, Assessed, Decided, Question, Verdict } from '../lib/verify/question.js';
import { lacksBlock } from '../lib/verify/answers/missing.js';
import type { Outcome } from '../lib/upstream/fanout.js';
import type { Upstream } from '../lib/upstream/registry.js';
import type { CallSink, CancelSignal, UpstreamResponse } from '../lib/upstream/transport/contract.js';
import { isWrite } from '../lib/jsonrpc/writes.js';
import { broadcastCount, knownHashOf, runWrite, writeFailure, type WritePolicy } from '../lib/verify/write.js';
import { type DisputeFile } from '../lib/verify/dispute-log.js';
import { failureError, recordDecision, recordOutcome } from '../lib/verify/outcome.js';
import { answerForSliced, InFlight, mergeKey } from '../lib/verify/merge.js';
import type { LoopPolicy, LoopPolicyOf } from '../lib/verify/loop-policy.js';

export interface VerifyOptions {
  metrics?: Metrics;
  /** When an upstream that loses agreements is distrusted (default: 5 lost of its last 20). */
  disputes?: DisputePolicy;
  /**
   * More policy for one request's agreement loop (lib/verify/agreement.ts), e.g. who may vote
   * for its pinned block, the adaptive hedge delay and budget (lib/verify/hedge-policy.ts). What
   * it returns is merged over this stage's own (lib/verify/loop-policy.ts: `mayHedge` hooks must
   * all agree, `on*` hooks all run, the others override); absent (the default): no hedging, every
   * answer a vote. Several policies: composePolicies().
   */
  policy?: LoopPolicyOf;
  /** Where disputes are appended (disputes.file), if anywhere. */
  disputeFile?: DisputeFile;
  /**
   * The runs in flight that identical confirmable requests join (lib/verify/merge.ts); absent:
   * every request runs its own agreement. rpcPipeline gives one per pipeline.
   */
  inFlight?: InFlight;
}

export type { LoopPolicy };

export function verify(options: VerifyOptions = {}): Middleware {
  const stage: StageSettings = {
    metrics: options.metrics,
    disputes: options.disputes ?? defaults.disputes,
    disputeFile: options.disputeFile,
    policy: options.policy,
  };
  const inFlight = options.inFlight;
  return function verify(req, res, next) {
    const ctx = getContext(req);
    const plan = need(ctx, 'fetch', 'verify');
    const judging = need(ctx, 'judging', 'verify');
    const candidates = need(ctx, 'candidates', 'verify');
    const required = need(ctx, 'required', 'verify');
    // One vote per provider; the check is skipped on chains where every upstream is its own.
    const { providerCount, upstreams } = need(ctx, 'chain', 'verify');
    const payload = need(ctx, 'payload', 'verify');
    // An identical confirmable question in flight is joined, not asked again (lib/verify/merge.ts).
    const miss = ctx.cached !== undefined && !ctx.cached.hit ? ctx.cached : undefined;
    const prior = miss?.prior;
    const key = inFlight && ctx.confirmable && !ctx.coalescer ? mergeKey(ctx.chain!, required, payload, prior !== undefined) : undefined;
    const run = new VerifyRun(stage, ctx, plan, judging, candidates, required, providerCount < upstreams.length, miss, next, key === undefined ? 1 : 2);
    // The answer written or its client gone (lib/pipeline/answer-done.ts): every call of the run
    // made below still running stops (a shared run: once no request waits for it).
    onAnswerDone(req, res, answerDone, run);
    // A write (lib/jsonrpc/writes.ts) takes the write path: never hedged, never sent on once it may have arrived.
    if (isWrite(payload.calls)) return write(ctx, run.withPolicy(), next);
    if (key === undefined) {
      ctx.agreement = runAgreement(run, run.withPolicy(), run.ownEnd);
      return;
    }
    const entry = inFlight!.join(key, run.start!, run.sharedEnd!);
    run.joined = entry.joined;
    ctx.agreement = entry.run;
  };
}

/** What the stage was built with, shared by its requests. */
interface StageSettings {
  metrics: Metrics | undefined;
  disputes: DisputePolicy;
  disputeFile: DisputeFile | undefined;
  policy: LoopPolicyOf | undefined;
}

/** (`onAnswerDone`'s callback, one function for every request) */
function answerDone(run: VerifyRun): void {
  run.ctx.agreement?.abort();
  run.release();
}

/**
 * One request's agreement: its question, the loop's policy (this stage's hooks, which record
 * each outcome and decision, with the request policy's merged in as mergeLoopPolicy does:
 * lib/verify/loop-policy.ts) and what the request holds. One object of one shape per request,
 * its hooks methods shared by all: the loop calls them on it. Only what the loop or the merged
 * runs call unbound is a closure (the call, and the ends).
 */
class VerifyRun implements AgreementPolicy, Question {
  // The question (lib/verify/question.ts Question).
  readonly prior: Verdict | undefined;
  // The policy (AgreementPolicy): this stage's part (`call` and `callInto` are methods below).
  readonly expectedMs = expectedLatency;
  readonly deadlineMs: number;
  // The request policy's part (options.policy), set by withPolicy: absent until then, and where it sets none.
  hedgeDelayMs: AgreementPolicy['hedgeDelayMs'] = undefined;
  mayHedge: AgreementPolicy['mayHedge'] = undefined;
  hedgeCount: AgreementPolicy['hedgeCount'] = undefined;
  eligible: AgreementPolicy['eligible'] = undefined;
  recheck: AgreementPolicy['recheck'] = undefined;
  lacking: AgreementPolicy['lacking'] = undefined;
  waitForEligible: AgreementPolicy['waitForEligible'] = undefined;
  onAbandoned: AgreementPolicy['onAbandoned'] = undefined;
  timers: AgreementPolicy['timers'] = undefined;
  /** The request policy's hooks that run after this stage's own. */
  private thenOutcome: AgreementPolicy['onOutcome'] = undefined;
  private thenHedge: AgreementPolicy['onHedge'] = undefined;
  private thenDecided: AgreementPolicy['onDecided'] = undefined;
  /** Whether this request joined a run another one started (lib/verify/merge.ts). */
  joined = false;
  private readonly ignored: Judging['ignored'];
  private readonly asAnswer: ((message: string) => boolean) | undefined;
  /** The loop's end for a run of this request's own, and for a run others may join (given unbound). */
  readonly ownEnd: (end: AgreementEnd) => void;
  readonly start: ((end: (end: AgreementEnd) => void) => AgreementRun) | undefined;
  readonly sharedEnd: ((end: AgreementEnd) => void) | undefined;

  constructor(
    private readonly stage: StageSettings,
    readonly ctx: RpcContext,
    private readonly plan: CallPlan,
    private readonly judging: Judging,
    readonly candidates: readonly Upstream[],
    readonly required: number,
    readonly perProvider: boolean,
    /** The cache's miss, when it brought an entry to top up (its votes count first). */
    private readonly miss: CacheMiss | undefined,
    private readonly next: Next,
    /**
     * The request's bytes go back to the budget once its answer is done and (a run others may
     * join) once the run has ended: a run outlives the request that started it while others wait.
     */
    private holds: number,
  ) {
    this.prior = miss?.prior;
    this.deadlineMs = plan.deadlineMs;
    this.ignored = judging.ignored;
    this.asAnswer = judging.beyondHeads ? lacksBlock : undefined;
    this.ownEnd = (end) => this.finish(end);
    if (holds === 1) {
      this.start = this.sharedEnd = undefined;
    } else {
      this.start = (end) => runAgreement(this, this.withPolicy(), end);
      this.sharedEnd = (end) => {
        this.release();
        // A request that joined gets the answer under its own id: a long one rewritten a slice
        // at a time, the event loop serving others between slices (ownEnd then finishes it), its
        // copy charged to the request's byte budget.
        if (this.joined) answerForSliced(end, this.judging.payload.calls[0]!.id, this, this.ownEnd, this.plan.budget);
        else this.finish(end);
      };
    }
  }

  /** This run with the request policy's hooks merged in (asked once, when the run starts). */
  withPolicy(): this {
    const extra = this.stage.policy?.(this.ctx);
    if (extra === undefined) return this;
    if (extra.hedgeDelayMs !== undefined) this.hedgeDelayMs = extra.hedgeDelayMs;
    if (extra.mayHedge !== undefined) this.mayHedge = extra.mayHedge;
    if (extra.hedgeCount !== undefined) this.hedgeCount = extra.hedgeCount;
    if (extra.eligible !== undefined) this.eligible = extra.eligible;
    if (extra.recheck !== undefined) this.recheck = extra.recheck;
    if (extra.lacking !== undefined) this.lacking = extra.lacking;
    if (extra.waitForEligible !== undefined) this.waitForEligible = extra.waitForEligible;
    if (extra.onAbandoned !== undefined) this.onAbandoned = extra.onAbandoned;
    if (extra.timers !== undefined) this.timers = extra.timers;
    this.thenOutcome = extra.onOutcome;
    this.thenHedge = extra.onHedge;
    this.thenDecided = extra.onDecided;
    return this;
  }

  /** The call as a function of its own (the write path's; the loop calls `callInto`). */
  get call(): AgreementPolicy['call'] {
    return callOf(this.plan, this.judging);
  }

  callInto(upstream: Upstream, signal: CancelSignal, sink: CallSink): void {
    callInto(this.plan, this.judging, upstream, signal, sink);
  }

  assess(o: Outcome<Upstream, UpstreamResponse>): Assessed {
    return assessOutcome(o, this.judging.payload, this.ignored, this.asAnswer);
  }

  onOutcome(a: Assessed, counted: boolean): void {
    recordOutcome(this.ctx, a, this.stage.metrics);
    this.thenOutcome?.(a, counted);
  }

  onHedge(afterMs: number, count: number): void {
    this.ctx.log.debug({ afterMs }, 'hedging: asking one more upstream');
    this.thenHedge?.(afterMs, count);
  }

  onDecided(d: Decided): void {
    recordDecision(this.ctx, d, this.stage.disputes, this.stage.metrics);
    this.thenDecided?.(d);
  }

  release(): void {
    if (--this.holds === 0) this.plan.budget?.close();
  }

  /**
   * Whether the client left while its answer was being rewritten under its id (answerForSliced):
   * both holds were given back, the run's end and the answer's (it cannot have been written yet).
   */
  get gone(): boolean {
    return this.holds <= 0;
  }

  finish(end: AgreementEnd): void {
    const { ctx, prior, next } = this;
    if (prior !== undefined && differsFrom(end, prior.hash)) this.miss!.disputed = true;
    if (end.kind === 'agreed' || end.kind === 'refused') {
      // A refusal fewer than N providers gave alike is relayed, not confirmed.
      ctx.verdict = end.kind === 'refused' && !end.confirmed ? { ...end.verdict, unconfirmed: true } : end.verdict;
      return next();
    }
    // (A dispute is written to the file once, by the request whose run it was.)
    next(end.kind === 'error' ? end.error : failureError(ctx, end, this.plan.budget, this.joined ? undefined : this.stage.disputeFile));
  }
}

/** Whether a vote of the run differs from the hash of the prior votes it counted (a top-up). */
function differsFrom(end: AgreementEnd, hash: string): boolean {
  if (end.kind === 'agreed') return end.verdict.hash !== hash;
  return end.kind === 'failed' && end.votes.some((v) => v.hash !== hash);
}

/** The write path (lib/verify/write.ts): one upstream, or K at once in the chain's broadcast mode. */
function write(ctx: RpcContext, run: VerifyRun, next: (err?: unknown) => void): void {
  const payload = need(ctx, 'payload', 'verify');
  const candidates = need(ctx, 'candidates', 'verify');
  const broadcast = broadcastCount(payload, ctx.chain?.writes?.broadcast, candidates.length);
  const knownHash = knownHashOf(payload);
  const policy: WritePolicy = {
    call: run.call,
    expectedMs: run.expectedMs,
    deadlineMs: run.deadlineMs,
    assess: (o) => run.assess(o),
    onOutcome: (a, counted) => run.onOutcome(a, counted),
    broadcast,
    timers: run.timers,
    ...(knownHash && { knownHash }),
  };
  ctx.agreement = runWrite(candidates, payload, policy, (end) => {
    if (end.kind === 'answered') {
      ctx.verdict = end.verdict;
      ctx.writtenTo = end.sentTo;
      if (end.known) ctx.log.info({ upstream: end.verdict.members[0]!.upstream.label, txHash: knownHash }, 'write: the upstream already knows the transaction: answered with its hash');
      return next();
    }
    next(end.kind === 'error' ? end.error : writeFailure(end, payload));
  });
}
