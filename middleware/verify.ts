/**
 * Stage 6, verify. Tallies votes as they arrive and stops at the first group of N equal hashes;
 * on a failure or a disagreement it asks one more upstream per missing vote. Hedging: when no
 * outcome arrived for `hedgeMs` while calls are in flight, one more upstream is asked too, and the
 * first usable answers win (the others are aborted). No group of N → 502 (NoQuorum when answers
 * disagreed, UpstreamsFailed when too few answered); deadline → 504.
 * Every outcome feeds the upstream's health record and the metrics.
 * Reads: ctx.assessed, ctx.fanout, ctx.required   Writes: ctx.verdict
 */
import { asyncStage } from '../lib/async-middleware.js';
import type { Middleware } from '../lib/compose.js';
import { getContext, need, type Assessed } from '../lib/context.js';
import { DeadlineExceededError, NoQuorumError, UpstreamsFailedError } from '../lib/errors.js';
import { recordFailure, recordSuccess } from '../lib/upstream/health.js';
import type { Metrics } from '../lib/metrics.js';
import { decide, tally, type Vote } from '../lib/verify/quorum.js';

type Good = Extract<Assessed, { ok: true }>;
type Bad = Extract<Assessed, { ok: false }>;

export interface VerifyOptions {
  /** Ask one more upstream when no answer came for this long (ms); 0 turns hedging off. */
  hedgeMs?: number;
  metrics?: Metrics;
}

const hedgeTick = Symbol('hedge');

export function verify(options: VerifyOptions = {}): Middleware {
  const hedgeMs = options.hedgeMs ?? 0;
  if (!(hedgeMs >= 0)) throw new TypeError('verify: hedgeMs must be 0 (off) or a positive number of ms');
  const metrics = options.metrics;
  return asyncStage(async function verify(req) {
    const ctx = getContext(req);
    const fanout = need(ctx, 'fanout', 'verify');
    const assessed = need(ctx, 'assessed', 'verify')[Symbol.asyncIterator]();
    const required = need(ctx, 'required', 'verify');
    const votes: Vote<Good>[] = [];
    const failures: Bad[] = [];
    let pending = assessed.next();
    for (;;) {
      const step = hedgeMs > 0 && fanout.remaining > 0 ? await raceTimer(pending, hedgeMs) : await pending;
      if (step === hedgeTick) {
        ctx.log.debug({ afterMs: hedgeMs }, 'hedging: asking one more upstream');
        fanout.launch(1);
        continue;
      }
      if (step.done) break;
      const a = step.value;
      const chain = a.upstream.chainId;
      metrics?.upstreamSeconds.observe({ chain, upstream: a.upstream.label, outcome: a.ok ? 'vote' : 'failure' }, a.ms / 1000);
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
          const u = v.item.upstream;
          if (v.hash === d.hash) u.health.agreements += 1;
          else {
            u.health.disagreements += 1;
            metrics?.disagreements.inc({ chain: u.chainId, upstream: u.label });
          }
        }
        ctx.verdict = { hash: d.hash, members: d.members };
        return;
      }
      if (d.kind === 'launch') fanout.launch(d.count);
      if (d.kind === 'failed') break;
      // Only now: asked before the launch above, the stream would see nothing in flight and end.
      pending = assessed.next();
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

/** Resolves to the promise's value, or to `hedgeTick` after `ms` (the promise stays pending). */
function raceTimer<T>(promise: Promise<T>, ms: number): Promise<T | typeof hedgeTick> {
  let timer: NodeJS.Timeout | undefined;
  const tick = new Promise<typeof hedgeTick>((resolve) => {
    timer = setTimeout(() => resolve(hedgeTick), ms);
  });
  return Promise.race([promise, tick]).finally(() => clearTimeout(timer));
}
