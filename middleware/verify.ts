/**
 * Stage 6, verify. Runs the agreement loop (lib/verify/agreement.ts) with the policy the fetch and
 * canonicalize stages handed over, the policies it is given (hedging: lib/verify/hedge-policy.ts,
 * the one place where it is configured; who may vote: eligibility-policy.ts), and this stage's
 * own: what each outcome and each decision records. The loop stops at the first group of N equal
 * hashes; on a failure or a disagreement it asks one more upstream per missing vote. No group of N → 502 (NoQuorum when answers disagreed,
 * UpstreamsFailed when too few answered); deadline → 504.
 * One vote per provider: a second equal answer from the same provider is not a second vote.
 * Every outcome feeds the upstream's health record and the metrics, except a refusal of this
 * request as too large (lib/verify/answers.ts): it moves the request on to another upstream but is
 * not the provider's failure; when no upstream gave a vote and one refused, the client gets the
 * first refusal as the node gave it (a JSON-RPC error, HTTP 200), not a 502.
 * Each vote in a decided quorum is recorded as won or lost (health.ts recordVote): an upstream
 * that loses too many is distrusted (ranked last, select.ts) until it agrees again.
 * Reads: ctx.fetch, ctx.judging, ctx.candidates, ctx.required, ctx.chain   Writes: ctx.agreement, ctx.verdict
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
}

export type { LoopPolicy };

export function verify(options: VerifyOptions = {}): Middleware {
  const metrics = options.metrics;
  const disputes = options.disputes ?? defaults.disputes;
  const disputeFile = options.disputeFile;
  return function verify(req, res, next) {
    const ctx = getContext(req);
    const plan = need(ctx, 'fetch', 'verify');
    const judging = need(ctx, 'judging', 'verify');
    const candidates = need(ctx, 'candidates', 'verify');
    const required = need(ctx, 'required', 'verify');
    // One vote per provider; the check is skipped on chains where every upstream is its own.
    const { providerCount, upstreams } = need(ctx, 'chain', 'verify');
    const log = ctx.log;
    const policy: AgreementPolicy = {
      call: callOf(plan),
      expectedMs: expectedLatency,
      deadlineMs: plan.deadlineMs,
      assess: judgeOf(judging),
      // (set by the hedge policy when there is one; present here so that every policy has one shape)
      hedgeDelayMs: undefined,
      onHedge: (afterMs) => log.debug({ afterMs }, 'hedging: asking one more upstream'),
      onOutcome: (a) => recordOutcome(ctx, a, metrics),
      onDecided: (d) => recordDecision(ctx, d, disputes, metrics),
    };
    if (options.policy) mergeLoopPolicy(policy, options.policy(ctx));
    // The answer written or its client gone (lib/pipeline/answer-done.ts): every call of the run
    // made below still running stops, and the bytes the request held go back to the budget.
    onAnswerDone(req, res, () => {
      ctx.agreement?.abort();
      plan.budget?.close();
    });
    // A write (lib/jsonrpc/writes.ts) takes the write path: never hedged, never sent on once it may have arrived.
    if (isWrite(need(ctx, 'payload', 'verify').calls)) write(ctx, policy, next);
    else ctx.agreement = runAgreement({ candidates, required, perProvider: providerCount < upstreams.length }, policy, (end: AgreementEnd) => {
      if (end.kind === 'agreed' || end.kind === 'refused') {
        // A refusal fewer than N providers gave alike is relayed, not confirmed.
        ctx.verdict = end.kind === 'refused' && !end.confirmed ? { ...end.verdict, unconfirmed: true } : end.verdict;
        return next();
      }
      next(end.kind === 'error' ? end.error : failureError(ctx, end, plan.budget, disputeFile));
    });
  };
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
