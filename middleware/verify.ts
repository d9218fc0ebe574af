/**
 * Stage 6, verify. Tallies votes as they arrive and stops at the first group of N equal hashes;
 * on a failure or a disagreement it asks one more upstream per missing vote. Hedging: when no
 * outcome arrived for `hedgeMs` while calls are in flight, one more upstream is asked too, and the
 * first usable answers win (the others are aborted). No group of N → 502 (NoQuorum when answers
 * disagreed, UpstreamsFailed when too few answered); deadline → 504.
 * One vote per provider: a second equal answer from the same provider is not a second vote.
 * Every outcome feeds the upstream's health record and the metrics, except a refusal of this
 * request as too large (lib/verify/answers.ts): it moves the request on to another upstream but is
 * not the provider's failure; when no upstream gave a vote and one refused, the client gets the
 * first refusal as the node gave it (a JSON-RPC error, HTTP 200), not a 502.
 * Each vote in a decided quorum is recorded as won or lost (health.ts recordVote): an upstream
 * that loses too many is distrusted (ranked last, select.ts) until it agrees again.
 * Driven by callbacks (no promise per outcome) and one hedge timer per request, which re-arms
 * itself for the rest of the quiet period when an outcome came meanwhile.
 * Reads: ctx.assessed, ctx.fanout, ctx.required, ctx.chain   Writes: ctx.verdict
 */
import { defaults } from '../config/defaults.js';
import type { Middleware } from '../lib/compose.js';
import { getContext, need, type Assessed, type RpcContext } from '../lib/context.js';
import { DeadlineExceededError, NoQuorumError, UpstreamBudgetError, UpstreamsFailedError, type GatewayError } from '../lib/errors.js';
import { recordFailure, recordSuccess, recordVote, type DisputePolicy } from '../lib/upstream/health.js';
import type { Metrics } from '../lib/metrics.js';
import { describeDispute, type DisputeFile } from '../lib/verify/dispute-log.js';
import { decide, tally, type Vote } from '../lib/verify/quorum.js';

type Good = Extract<Assessed, { ok: true }>;
type Bad = Extract<Assessed, { ok: false }>;

export interface VerifyOptions {
  /** Ask one more upstream when no answer came for this long (ms); 0 turns hedging off. */
  hedgeMs?: number;
  metrics?: Metrics;
  /** When an upstream that loses agreements is distrusted (default: 5 lost of its last 20). */
  disputes?: DisputePolicy;
  /** Where disputes are appended (disputes.file), if anywhere. */
  disputeFile?: DisputeFile;
}

export function verify(options: VerifyOptions = {}): Middleware {
  const hedgeMs = options.hedgeMs ?? 0;
  if (!(hedgeMs >= 0)) throw new TypeError('verify: hedgeMs must be 0 (off) or a positive number of ms');
  const metrics = options.metrics;
  const disputes = options.disputes ?? defaults.disputes;
  const disputeFile = options.disputeFile;
  return function verify(req, _res, next) {
    const ctx = getContext(req);
    const fanout = need(ctx, 'fanout', 'verify');
    const assessed = need(ctx, 'assessed', 'verify');
    const required = need(ctx, 'required', 'verify');
    // One vote per provider; the check is skipped on chains where every upstream is its own.
    const { providerCount, upstreams } = need(ctx, 'chain', 'verify');
    const sharedProviders = providerCount < upstreams.length;
    const votes: Vote<Good>[] = [];
    const failures: Bad[] = [];
    let done = false;
    let hedgeTimer: NodeJS.Timeout | undefined;
    let quietSince = performance.now();

    const finish = (err?: unknown) => {
      done = true;
      if (hedgeTimer) clearTimeout(hedgeTimer);
      fanout.abort();
      next(err);
    };
    const onHedgeTimer = () => {
      hedgeTimer = undefined;
      if (done || fanout.remaining === 0 || fanout.inFlight === 0) return;
      const quietMs = performance.now() - quietSince;
      if (quietMs >= hedgeMs) {
        ctx.log.debug({ afterMs: hedgeMs }, 'hedging: asking one more upstream');
        fanout.launch(1);
        quietSince = performance.now();
        hedgeTimer = setTimeout(onHedgeTimer, hedgeMs);
      } else {
        hedgeTimer = setTimeout(onHedgeTimer, hedgeMs - quietMs);
      }
    };

    const onAssessed = (a: Assessed | undefined) => {
      if (!a) return finish(refusalOrError(ctx, required, votes, failures, fanout.called, disputeFile));
      quietSince = performance.now();
      const chain = a.upstream.chainId;
      metrics?.upstreamSeconds.observe({ chain, upstream: a.upstream.label, outcome: a.ok ? 'vote' : a.refused ? 'refusal' : 'failure' }, a.ms / 1000);
      if (a.ok) {
        votes.push(sharedProviders ? { hash: a.hash, item: a, voter: a.upstream.provider } : { hash: a.hash, item: a });
        recordSuccess(a.upstream.health, a.ms);
      } else if (a.refused) {
        failures.push(a);
        // debug, not warn: a client can send such requests at will (the metrics count them).
        ctx.log.debug({ upstream: a.upstream.label, reason: a.reason, ms: Math.round(a.ms) }, 'upstream refused the request as too large: asking another');
      } else {
        failures.push(a);
        // Our own byte budget refusing an answer is not the upstream's failure.
        if (a.kind !== 'budget') recordFailure(a.upstream.health, a.reason, Date.now());
        ctx.log.warn({ upstream: a.upstream.label, reason: a.reason, ms: Math.round(a.ms) }, 'upstream call failed');
      }
      const d = decide(votes, required, { inFlight: fanout.inFlight, remaining: fanout.remaining });
      if (d.kind === 'agreed') {
        for (const v of votes) {
          const u = v.item.upstream;
          const won = v.hash === d.hash;
          if (!won) metrics?.disagreements.inc({ chain: u.chainId, upstream: u.label });
          // Only a comparison (N ≥ 2) measures trust: N=1 answers, right or wrong, must not
          // dilute an upstream's window of lost votes.
          if (required < 2) {
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
        ctx.verdict = { hash: d.hash, members: d.members };
        return finish();
      }
      if (d.kind === 'failed') {
        // No vote yet and a refusal in: the calls still running decide between relaying the
        // refusal (none of them votes) and a 502 (one does), whatever the arrival order.
        if (votes.length === 0 && fanout.inFlight > 0 && failures.some((f) => f.refused)) return;
        return finish(refusalOrError(ctx, required, votes, failures, fanout.called, disputeFile));
      }
      if (d.kind === 'launch') fanout.launch(d.count);
    };
    // Outcomes arrive from promise callbacks: a throw here must become the request's error, not
    // an unhandled rejection.
    assessed.subscribe((a) => {
      if (done) return;
      try {
        onAssessed(a);
      } catch (err) {
        if (!done) finish(err);
      }
    });
    if (!done && hedgeMs > 0) hedgeTimer = setTimeout(onHedgeTimer, hedgeMs);
  };
}

/**
 * No group of N: when no upstream gave a vote and at least one refused the request as too large,
 * the first refusal becomes the answer (ctx.verdict: its bytes as the node sent them, the refusing
 * upstreams as the checked ones); otherwise the error.
 */
function refusalOrError(ctx: RpcContext, required: number, votes: Vote<Good>[], failures: Bad[], called: readonly Good['upstream'][], disputeFile?: DisputeFile): GatewayError | undefined {
  const refusals = failures.filter((f) => f.refused?.hash !== undefined);
  if (ctx.deadlinePassed || votes.length > 0 || refusals.length === 0) return failureError(ctx, required, votes, failures, called, disputeFile);
  ctx.verdict = {
    hash: refusals[0]!.refused!.hash!,
    members: refusals.map((f) => ({ upstream: f.upstream, ok: true, body: f.refused!.body, hash: f.refused!.hash!, ms: f.ms })),
  };
  return undefined;
}

/** The error of a request that got no group of N: 504 past the deadline, else 502 with the tally. */
function failureError(ctx: RpcContext, required: number, votes: Vote<Good>[], failures: Bad[], called: readonly Good['upstream'][], disputeFile?: DisputeFile): GatewayError {
  const groups = [...tally(votes)];
  const data = {
    required,
    groups: groups.map(([hash, members]) => ({ hash, upstreams: members.map((m) => m.upstream.label) })),
    // Answers that differ (a dispute): where they differ, one warn log line, disputes.file (lib/verify/dispute-log.ts).
    ...describeDispute(ctx, required, groups, disputeFile),
    failures: failures.map((f) => ({ upstream: f.upstream.label, reason: f.reason })),
    // called, but given up on before they answered (the decision could no longer change)
    unanswered: called.filter((u) => !votes.some((v) => v.item.upstream === u) && !failures.some((f) => f.upstream === u)).map((u) => u.label),
  };
  if (ctx.deadlinePassed) {
    return new DeadlineExceededError(`Deadline exceeded: no ${required} agreeing answers in time`, { data });
  }
  if (ctx.budget && failures.some((f) => f.kind === 'budget')) {
    return new UpstreamBudgetError('Upstream byte budget exhausted: answers were refused for want of limits.bufferedBytes; try again shortly', {
      data: { ...data, bufferedBytes: ctx.budget.limit },
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
