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
import type { Middleware } from '../lib/pipeline/compose.js';
import { getContext, need, type RpcContext } from '../lib/pipeline/context.js';
import type { DisputePolicy } from '../lib/health/health.js';
import type { Metrics } from '../lib/ops/metrics.js';
import { runAgreement } from '../lib/verify/agreement.js';
import { judgeOf } from '../lib/verify/assess.js';
import { callOf, expectedLatency } from '../lib/verify/calls.js';
import type { AgreementEnd, AgreementPolicy } from '../lib/verify/question.js';
import { isWrite } from '../lib/jsonrpc/writes.js';
import { broadcastCount, knownHashOf, runWrite, writeFailure } from '../lib/verify/write.js';
import { type DisputeFile } from '../lib/verify/dispute-log.js';
import { failureError, recordDecision, recordOutcome } from '../lib/verify/outcome.js';
import { answerFor, InFlight, mergeKey } from '../lib/verify/merge.js';
import { mergeLoopPolicy, type LoopPolicy, type LoopPolicyOf } from '../lib/verify/loop-policy.js';

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
  const metrics = options.metrics;
  const disputes = options.disputes ?? defaults.disputes;
  const disputeFile = options.disputeFile;
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
    const log = ctx.log;
    const policy = (): AgreementPolicy => {
      const own: AgreementPolicy = {
        call: callOf(plan, judging),
        expectedMs: expectedLatency,
        deadlineMs: plan.deadlineMs,
        assess: judgeOf(judging),
        // (set by the hedge policy when there is one; present here so that every policy has one shape)
        hedgeDelayMs: undefined,
        onHedge: (afterMs) => log.debug({ afterMs }, 'hedging: asking one more upstream'),
        onOutcome: (a) => recordOutcome(ctx, a, metrics),
        onDecided: (d) => recordDecision(ctx, d, disputes, metrics),
      };
      return options.policy ? mergeLoopPolicy(own, options.policy(ctx)) : own;
    };
    // An identical confirmable question in flight is joined, not asked again (lib/verify/merge.ts).
    const miss = ctx.cached !== undefined && !ctx.cached.hit ? ctx.cached : undefined;
    const prior = miss?.prior;
    const key = inFlight && ctx.confirmable && !ctx.coalescer ? mergeKey(ctx.chain!, required, payload, prior !== undefined) : undefined;
    // The request's bytes go back to the budget once its answer is done and (a run others may
    // join) once the run has ended: a run outlives the request that started it while others wait.
    let holds = key === undefined ? 1 : 2;
    const release = () => {
      if (--holds === 0) plan.budget?.close();
    };
    // The answer written or its client gone (lib/pipeline/answer-done.ts): every call of the run
    // made below still running stops (a shared run: once no request waits for it).
    onAnswerDone(req, res, () => {
      ctx.agreement?.abort();
      release();
    });
    // A write (lib/jsonrpc/writes.ts) takes the write path: never hedged, never sent on once it may have arrived.
    if (isWrite(payload.calls)) return write(ctx, policy(), next);
    const question = { candidates, required, perProvider: providerCount < upstreams.length, prior };
    const finish = (end: AgreementEnd, joined: boolean) => {
      if (prior !== undefined && differsFrom(end, prior.hash)) miss!.disputed = true;
      if (end.kind === 'agreed' || end.kind === 'refused') {
        // A refusal fewer than N providers gave alike is relayed, not confirmed.
        ctx.verdict = end.kind === 'refused' && !end.confirmed ? { ...end.verdict, unconfirmed: true } : end.verdict;
        return next();
      }
      // (A dispute is written to the file once, by the request whose run it was.)
      next(end.kind === 'error' ? end.error : failureError(ctx, end, plan.budget, joined ? undefined : disputeFile));
    };
    if (key === undefined) {
      ctx.agreement = runAgreement(question, policy(), (end) => finish(end, false));
      return;
    }
    let joined = false;
    const entry = inFlight!.join(
      key,
      (end) => runAgreement(question, policy(), end),
      (end) => {
        release();
        finish(joined ? answerFor(end, payload.calls[0]!.id) : end, joined);
      },
    );
    joined = entry.joined;
    ctx.agreement = entry.run;
  };
}

/** Whether a vote of the run differs from the hash of the prior votes it counted (a top-up). */
function differsFrom(end: AgreementEnd, hash: string): boolean {
  if (end.kind === 'agreed') return end.verdict.hash !== hash;
  return end.kind === 'failed' && end.votes.some((v) => v.hash !== hash);
}

/** The write path (lib/verify/write.ts): one upstream, or K at once in the chain's broadcast mode. */
function write(ctx: RpcContext, policy: AgreementPolicy, next: (err?: unknown) => void): void {
  const payload = need(ctx, 'payload', 'verify');
  const candidates = need(ctx, 'candidates', 'verify');
  const broadcast = broadcastCount(payload, ctx.chain?.writes?.broadcast, candidates.length);
  const knownHash = knownHashOf(payload);
  ctx.agreement = runWrite(candidates, payload, { ...policy, broadcast, ...(knownHash && { knownHash }) }, (end) => {
    if (end.kind === 'answered') {
      ctx.verdict = end.verdict;
      ctx.writtenTo = end.sentTo;
      if (end.known) ctx.log.info({ upstream: end.verdict.members[0]!.upstream.label, txHash: knownHash }, 'write: the upstream already knows the transaction: answered with its hash');
      return next();
    }
    next(end.kind === 'error' ? end.error : writeFailure(end, payload));
  });
}
