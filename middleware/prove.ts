/**
 * Proof mode, around stage 6 (verify): a confirmable call on a chain whose verify mode is proof
 * (lib/prove/mode.ts), of a method lib/prove proves and pinned by block number or hash (a
 * receipt by its transaction hash), is answered from one provider and proven against a header N
 * providers agreed on (lib/prove/run.ts), instead of N agreeing answers. A method whose scope a
 * quirk or the self-check keeps on agreement at every block skips the proof here; one whose quirk
 * ends at a cut-off is decided on the agreed header (run.ts). The answer is the proven
 * value in the node's JSON form; ctx.proof says what vouches for it (X-Verified-By, X-Block-Hash).
 * Every other call, and one no provider gave material for, runs the inner stage (agreement).
 * A batch member is proven on its own (runMembers runs this once per member). Identical requests
 * in flight share one proof run (lib/prove/merge.ts), each answered under its own id.
 * Reads: ctx.chain, ctx.payload, ctx.confirmable, ctx.required, ctx.candidates, ctx.fetch, ctx.cached
 * Writes: ctx.verdict, ctx.proof (or what the inner stage writes)
 */
import type { Middleware } from '../lib/pipeline/compose.js';
import { onAnswerDone } from '../lib/pipeline/answer-done.js';
import { getContext, need } from '../lib/pipeline/context.js';
import type { DisputePolicy } from '../lib/health/health.js';
import { assessBody } from '../lib/verify/answers/answers.js';
import type { LoopPolicyOf } from '../lib/verify/loop-policy.js';
import type { Good } from '../lib/verify/question.js';
import { HeaderBook } from '../lib/prove/book.js';
import type { ProofJob } from '../lib/prove/job.js';
import type { ProofMetrics } from '../lib/prove/metrics.js';
import { proofModeOf, provesSomewhere } from '../lib/prove/mode.js';
import { proofRoute } from '../lib/prove/provers.js';
import { ProofRuns } from '../lib/prove/merge.js';
import { runProof } from '../lib/prove/run.js';
import { mergeKey } from '../lib/verify/merge.js';
import { DeadlineExceededError, InternalError, InvalidRequestError } from '../lib/errors.js';

export interface ProveOptions {
  disputes: DisputePolicy;
  /** The loop policies of the header's agreement (hedging, eligibility), as verify's. */
  policy?: LoopPolicyOf;
  metrics?: ProofMetrics;
  /** The agreed headers kept (default: a book of this stage's own, with no cache level). */
  headers?: HeaderBook;
  /** The proof runs identical requests in flight join (default: a set of this stage's own). */
  runs?: ProofRuns;
  /** false: each request proves alone (config `mergeRequests: false`). */
  merge?: boolean;
}

export function prove(options: ProveOptions, inner: Middleware): Middleware {
  const headers = options.headers ?? new HeaderBook();
  const runs = options.runs ?? new ProofRuns();
  return function prove(req, res, next) {
    const ctx = getContext(req);
    const chain = need(ctx, 'chain', 'prove');
    const payload = need(ctx, 'payload', 'prove');
    const call = payload.calls[0]!;
    // A top-up counts the cached votes by agreement; a batch is proven member by member.
    if (!ctx.confirmable || ctx.beyondHeads || payload.batch || call.alias !== undefined || (ctx.cached !== undefined && !ctx.cached.hit && ctx.cached.prior !== undefined)) return inner(req, res, next);
    // (the mode first: on a chain on agreement no route is built)
    if (proofModeOf(chain).mode !== 'proof') return inner(req, res, next);
    const route = proofRoute(call);
    if (route === undefined || !route.scopes.every((s) => provesSomewhere(chain, s))) return inner(req, res, next);
    const plan = need(ctx, 'fetch', 'prove');
    const required = need(ctx, 'required', 'prove');
    // An identical question in flight is joined, not proven again (lib/prove/merge.ts).
    const key = options.merge !== false && !ctx.coalescer ? mergeKey(chain, required, payload) : undefined;
    let settled = false;
    // The request deadline covers the header's agreement and every provider asked (a request that
    // joined a run waits for it no longer than its own deadline).
    const deadline = setTimeout(() => {
      if (settled) return;
      settled = true;
      seat.leave();
      next(new DeadlineExceededError('Deadline exceeded: the answer was not proven in time', { data: { required, proof: true } }));
    }, plan.deadlineMs);
    const seat = runs.join(
      key,
      chain.id,
      (signal) => {
        const job: ProofJob = {
          requestId: ctx.requestId,
          log: ctx.log,
          chain,
          call,
          plan,
          candidates: need(ctx, 'candidates', 'prove'),
          required,
          disputes: options.disputes,
          policy: options.policy,
          metrics: options.metrics,
          headers,
          signal,
          bytes: 0,
        };
        return runProof(job, route).then((proven) => {
          if (proven !== undefined) options.metrics?.bytes(chain.id, job.bytes);
          return proven;
        });
      },
      (end) => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        if (!end.ok) return next(end.error);
        const proven = end.proven;
        if (proven === undefined) return inner(req, res, next);
        // (each request writes the proven value under its own id)
        const body = Buffer.from(`{"jsonrpc":"2.0","id":${JSON.stringify(call.id)},"result":${JSON.stringify(proven.result)}}`);
        const judged = assessBody(body, payload, chain.ignoredFields);
        if (!judged.ok) return next(new InternalError(`prove: the proven answer does not read back: ${judged.reason}`));
        const first: Good = { upstream: proven.upstream, ok: true, body, hash: judged.hash, ms: 0 };
        // X-Checked-URLS: the provider proven, then the header's quorum (each once).
        const members = [first, ...proven.agreed.members.filter((m) => m.upstream !== proven.upstream)];
        ctx.verdict = { hash: judged.hash, members };
        ctx.proof = { verifiedBy: 'proof', headerHash: proven.agreed.header.hash, blockNumber: proven.agreed.header.number };
        next();
      },
    );
    // The answer written, or the client gone before it: this request leaves the run.
    onAnswerDone(req, res, () => {
      clearTimeout(deadline);
      seat.leave();
      if (settled) return;
      settled = true;
      next(new InvalidRequestError('Invalid request: the client closed the connection before its answer', { id: null }));
    });
  };
}
