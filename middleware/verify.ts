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
import type { Middleware } from '../lib/pipeline/compose.js';
import { getContext, need, type RpcContext } from '../lib/pipeline/context.js';
import { DeadlineExceededError, NoQuorumError, UpstreamBudgetError, UpstreamsFailedError, type GatewayError } from '../lib/errors.js';
import { observe } from '../lib/health/heads.js';
import { recordFailure, recordSuccess, recordVote, type DisputePolicy } from '../lib/health/health.js';
import type { Metrics } from '../lib/ops/metrics.js';
import { runAgreement } from '../lib/verify/agreement.js';
import { judgeOf } from '../lib/verify/assess.js';
import { callOf, expectedLatency } from '../lib/verify/calls.js';
import type { AgreementEnd, AgreementPolicy, Assessed, Decided, Failed } from '../lib/verify/question.js';
import { tally } from '../lib/verify/quorum.js';
import { isWrite } from '../lib/jsonrpc/writes.js';
import { broadcastCount, knownHashOf, runWrite, writeFailure } from '../lib/verify/write.js';
import { describeDispute, type DisputeFile } from '../lib/verify/dispute-log.js';
import { ineligibleError } from '../lib/verify/eligibility-policy.js';
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
  return function verify(req, _res, next) {
    const ctx = getContext(req);
    const plan = need(ctx, 'fetch', 'verify');
    const judging = need(ctx, 'judging', 'verify');
    const candidates = need(ctx, 'candidates', 'verify');
    const required = need(ctx, 'required', 'verify');
    // One vote per provider; the check is skipped on chains where every upstream is its own.
    const { providerCount, upstreams } = need(ctx, 'chain', 'verify');
    const log = ctx.log;
    const policy: AgreementPolicy = {
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
    if (options.policy) mergeLoopPolicy(policy, options.policy(ctx));
    // A write (lib/jsonrpc/writes.ts) takes the write path: never hedged, never sent on once it may have arrived.
    if (isWrite(need(ctx, 'payload', 'verify').calls)) return write(ctx, policy, next);
    ctx.agreement = runAgreement({ candidates, required, perProvider: providerCount < upstreams.length }, policy, (end: AgreementEnd) => {
      if (end.kind === 'agreed' || end.kind === 'refused') {
        // A refusal fewer than N providers gave alike is relayed, not confirmed.
        ctx.verdict = end.kind === 'refused' && !end.confirmed ? { ...end.verdict, unconfirmed: true } : end.verdict;
        return next();
      }
      next(end.kind === 'error' ? end.error : failureError(ctx, end, disputeFile));
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

/** One call's outcome → the upstream's health record, the metrics and the log. */
function recordOutcome(ctx: RpcContext, a: Assessed, metrics: Metrics | undefined): void {
  metrics?.upstreamSeconds.observe({ chain: a.upstream.chainId, upstream: a.upstream.label, outcome: a.ok ? 'vote' : a.refused ? 'refusal' : 'failure' }, a.ms / 1000);
  if (a.ok) {
    recordSuccess(a.upstream.health, a.ms);
    // Heads seen in answers passing through (an eth_blockNumber result, a block's number): a
    // bounded byte search, no parse (lib/health/heads.ts observe). Single calls only.
    const payload = ctx.payload;
    if (payload && !payload.batch) observe(a.upstream, payload.calls[0], a.body);
  } else if (a.refused) {
    // debug, not warn: a client can send such requests at will (the metrics count them).
    ctx.log.debug({ upstream: a.upstream.label, reason: a.reason, ms: Math.round(a.ms) }, 'upstream refused the request as too large: asking another');
  } else {
    // Our own byte budget refusing an answer, or our thread failing to check it, is not the upstream's failure.
    if (a.kind !== 'budget' && a.kind !== 'unchecked') recordFailure(a.upstream.health, a.reason, Date.now());
    ctx.log.warn({ upstream: a.upstream.label, reason: a.reason, ms: Math.round(a.ms) }, 'upstream call failed');
  }
}

/** A decided quorum: each vote recorded as won or lost (distrust), disagreements counted. */
function recordDecision(ctx: RpcContext, d: Decided, disputes: DisputePolicy, metrics: Metrics | undefined): void {
  for (const v of d.votes) {
    const u = v.item.upstream;
    const won = v.hash === d.hash;
    if (!won) metrics?.disagreements.inc({ chain: u.chainId, upstream: u.label });
    // Only a comparison (N ≥ 2) measures trust: N=1 answers, right or wrong, must not
    // dilute an upstream's window of lost votes.
    if (d.required < 2) {
      u.health.agreements += 1;
      continue;
    }
    const change = recordVote(u.health, won, disputes);
    if (change === 'distrusted') {
      ctx.log.warn({ upstream: u.label, lost: u.health.recentLost, window: disputes.window }, 'upstream lost too many agreements: distrusted, no longer asked for unverified reads');
    } else if (change === 'trusted') {
      ctx.log.info({ upstream: u.label, lost: u.health.recentLost, window: disputes.window }, 'upstream agrees again: trusted');
    }
  }
}

/**
 * The error of a request that got no group of N: 504 past the deadline, 503 when our own byte
 * budget refused answers, else 502 with the tally. (An end for want of eligible answers,
 * `end.cause === 'ineligible'`, is a 502 like any other until the heads' error takes it over.)
 */
function failureError(ctx: RpcContext, end: Failed, disputeFile?: DisputeFile): GatewayError {
  const { required, votes, failures, called, ineligible } = end;
  const groups = [...tally(votes)];
  const data = {
    required,
    groups: groups.map(([hash, members]) => ({ hash, upstreams: members.map((m) => m.upstream.label) })),
    // Answers that differ (a dispute): where they differ, one warn log line, disputes.file (lib/verify/dispute-log.ts).
    ...describeDispute(ctx, required, groups, disputeFile, end.cause === 'deadline'),
    failures: failures.map((f) => ({ upstream: f.upstream.label, reason: f.reason })),
    // called, but given up on before they answered (the decision could no longer change)
    unanswered: called
      .filter((u) => !votes.some((v) => v.item.upstream === u) && !failures.some((f) => f.upstream === u) && !ineligible.some((a) => a.upstream === u))
      .map((u) => u.label),
    // answers that could not count as votes (policy `eligible`)
    ...(ineligible.length > 0 && { ineligible: ineligible.map((a) => a.upstream.label) }),
  };
  // Fewer than N providers have the pinned block (lib/verify/eligibility-policy.ts): -32016.
  if (end.cause !== 'deadline' && end.cause !== 'budget' && end.cause !== 'aborted') {
    const err = ineligibleError(ctx, required, end.cause === 'ineligible', end);
    if (err) return err as GatewayError;
  }
  if (end.cause === 'deadline') {
    return new DeadlineExceededError(`Deadline exceeded: no ${required} agreeing answers in time`, { data });
  }
  const budget = ctx.fetch?.budget;
  if (budget && end.cause === 'budget') {
    return new UpstreamBudgetError('Upstream byte budget exhausted: answers were refused for want of limits.bufferedBytes; try again shortly', {
      data: { ...data, bufferedBytes: budget.limit },
      headers: { 'Retry-After': '1' },
    });
  }
  if (votes.length > 0 && data.groups.length > 1) {
    return new NoQuorumError(`No quorum: ${required} agreeing answers needed, the upstreams disagreed`, { data });
  }
  return new UpstreamsFailedError(
    `Upstreams failed: ${required} agreeing answer${required > 1 ? 's' : ''} needed, ${votes.length} usable answer${votes.length === 1 ? '' : 's'} received`,
    { data },
  );
}
