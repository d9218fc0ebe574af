/**
 * What the end of each step of an agreement records and answers: one upstream's outcome (its
 * health record, the metrics, the log), a decided quorum (each vote won or lost: distrust), and
 * the error of a request that got no group of N. The verify stage (middleware/verify.ts) hands
 * these to the agreement loop.
 */
import { DeadlineExceededError, NoQuorumError, UpstreamBudgetError, UpstreamsFailedError, type GatewayError } from '../errors.js';
import { observe } from '../health/heads.js';
import { recordFailure, recordSuccess, recordVote, type DisputePolicy } from '../health/health.js';
import { isRateLimitReason, noteRateLimit } from '../health/rate-limits.js';
import type { Metrics } from '../ops/metrics.js';
import type { BudgetAccount } from '../upstream/budget.js';
import type { Upstream } from '../upstream/registry.js';
import { describeDispute, type DisputeFile } from './dispute-log.js';
import { ineligibleError } from './eligibility-policy.js';
import type { Assessed, Decided, DisputedRequest, Failed } from './question.js';
import { tally } from './quorum.js';

/** One call's outcome → the upstream's health record, the metrics and the log. */
export function recordOutcome(ctx: DisputedRequest, a: Assessed, metrics: Metrics | undefined): void {
  metrics?.upstreamSeconds.observe(a.upstream, a.ok ? 'vote' : a.refused ? 'refusal' : 'failure', a.ms / 1000);
  if (a.ok) {
    recordSuccess(a.upstream.health, a.ms);
    // Heads seen in answers passing through (an eth_blockNumber result, a block's number): a
    // bounded byte search, no parse (lib/health/heads.ts observe). Single calls only.
    const payload = ctx.payload;
    if (payload && !payload.batch) observe(a.upstream, payload.calls[0], a.body);
  } else if (a.refused) {
    // debug, not warn: a client can send such requests at will (the metrics count them).
    ctx.log.debug({ upstream: a.upstream.label, reason: a.reason, ms: Math.round(a.ms) }, 'upstream refused the request as too large: asking another');
  } else if (a.kind === 'rate-limited' || isRateLimitReason(a.reason)) {
    // Not a failure: the upstream is on back-off, not asked until it ends (the request moves on
    // to another upstream); one warning per episode (lib/health/rate-limits.ts).
    noteRateLimit(a.upstream, a.reason, a.retryAfterMs, ctx.log);
    ctx.log.debug({ upstream: a.upstream.label, reason: a.reason, ms: Math.round(a.ms) }, 'upstream rate-limited the call: asking another');
  } else {
    // Our own byte budget refusing an answer, or our thread failing to check it, is not the upstream's failure.
    if (a.kind !== 'budget' && a.kind !== 'unchecked') recordFailure(a.upstream.health, a.reason, Date.now());
    ctx.log.warn({ upstream: a.upstream.label, reason: a.reason, ms: Math.round(a.ms) }, 'upstream call failed');
  }
}

/** A decided quorum: each vote recorded as won or lost (distrust), disagreements counted. */
export function recordDecision(ctx: DisputedRequest, d: Decided, disputes: DisputePolicy, metrics: Metrics | undefined): void {
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
export function failureError(ctx: DisputedRequest, end: Failed, budget: BudgetAccount | undefined, disputeFile?: DisputeFile): GatewayError {
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
    // upstreams left out for a provider's rate limit (select-upstreams): not asked until their back-off ends
    ...backedOff(ctx, called),
  };
  // Fewer than N providers have the pinned block (lib/verify/eligibility-policy.ts): -32016.
  if (end.cause !== 'deadline' && end.cause !== 'budget' && end.cause !== 'aborted') {
    const err = ineligibleError(ctx, required, end.cause === 'ineligible', end);
    if (err) return err as GatewayError;
  }
  if (end.cause === 'deadline') {
    return new DeadlineExceededError(`Deadline exceeded: no ${required} agreeing answers in time`, { data });
  }
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

/**
 * The chain's upstreams on back-off after a rate limit that this request did not call, with the
 * seconds left (rounded up): a failure's data names them, so that "none answered" is not read as
 * "none was there". Nothing when there are none.
 */
function backedOff(ctx: DisputedRequest, called: readonly Upstream[]): { rateLimited?: { upstream: string; retryAfter: number }[] } {
  const now = Date.now();
  const out = (ctx.chain?.upstreams ?? [])
    .filter((u) => u.health.rateLimitedUntil > now && !called.includes(u))
    .map((u) => ({ upstream: u.label, retryAfter: Math.ceil((u.health.rateLimitedUntil - now) / 1000) }));
  return out.length > 0 ? { rateLimited: out } : {};
}
