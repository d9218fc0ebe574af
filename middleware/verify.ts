/**
 * Stage 6, verify. Tallies votes as they arrive and stops at the first group of N equal hashes;
 * on a failure or a disagreement it asks one more upstream per missing vote. No group of N →
 * 502 (NoQuorum when answers disagreed, UpstreamsFailed when too few answered); deadline → 504.
 * Every outcome feeds the upstream's health record.
 * Reads: ctx.assessed, ctx.fanout, ctx.required   Writes: ctx.verdict
 */
import { asyncStage } from '../lib/async-middleware.js';
import type { Middleware } from '../lib/compose.js';
import { getContext, need, type Assessed } from '../lib/context.js';
import { DeadlineExceededError, NoQuorumError, UpstreamsFailedError } from '../lib/errors.js';
import { recordFailure, recordSuccess } from '../lib/upstream/health.js';
import { decide, tally, type Vote } from '../lib/verify/quorum.js';

type Good = Extract<Assessed, { ok: true }>;
type Bad = Extract<Assessed, { ok: false }>;

export function verify(): Middleware {
  return asyncStage(async function verify(req) {
    const ctx = getContext(req);
    const fanout = need(ctx, 'fanout', 'verify');
    const assessed = need(ctx, 'assessed', 'verify');
    const required = need(ctx, 'required', 'verify');
    const votes: Vote<Good>[] = [];
    const failures: Bad[] = [];
    for await (const a of assessed) {
      if (a.ok) {
        votes.push({ hash: a.hash, item: a });
        recordSuccess(a.upstream.health, a.ms);
      } else {
        failures.push(a);
        recordFailure(a.upstream.health, a.reason, Date.now());
        ctx.log.warn({ upstream: a.upstream.label, reason: a.reason, ms: Math.round(a.ms) }, 'upstream call failed');
      }
      const d = decide(votes, required, { inFlight: fanout.inFlight, remaining: fanout.remaining });
      if (d.kind === 'agreed') {
        fanout.abort();
        for (const v of votes) {
          if (v.hash === d.hash) v.item.upstream.health.agreements += 1;
          else v.item.upstream.health.disagreements += 1;
        }
        ctx.verdict = { hash: d.hash, members: d.members };
        return;
      }
      if (d.kind === 'launch') fanout.launch(d.count);
      if (d.kind === 'failed') break;
    }
    fanout.abort();
    const data = {
      required,
      groups: [...tally(votes)].map(([hash, members]) => ({ hash, upstreams: members.map((m) => m.upstream.label) })),
      failures: failures.map((f) => ({ upstream: f.upstream.label, reason: f.reason })),
      // called, but given up on before they answered (the decision could no longer change)
      unanswered: fanout.called.filter((u) => !votes.some((v) => v.item.upstream === u) && !failures.some((f) => f.upstream === u)).map((u) => u.label),
    };
    if (ctx.deadlinePassed) {
      throw new DeadlineExceededError(`Deadline exceeded: no ${required} agreeing answers in time`, { data });
    }
    if (votes.length > 0 && data.groups.length > 1) {
      throw new NoQuorumError(`No quorum: ${required} agreeing answers needed, the upstreams disagreed`, { data });
    }
    throw new UpstreamsFailedError(
      `Upstreams failed: ${required} agreeing answer${required > 1 ? 's' : ''} needed, ${votes.length} usable answer${votes.length === 1 ? '' : 's'} received`,
      { data },
    );
  });
}
