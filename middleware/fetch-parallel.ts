/**
 * Stage 4, fetch in parallel. Starts the first N upstream calls at once and arms the request
 * deadline; the verify stage asks for more calls when answers fail or disagree. This is the
 * only stage that does network I/O. Every call stops when the answer is decided, when the
 * client goes away or when the deadline passes.
 * Reads: ctx.payload, ctx.candidates, ctx.required, ctx.via   Writes: ctx.fanout, ctx.deadlinePassed
 */
import type { Middleware } from '../lib/compose.js';
import { getContext, need } from '../lib/context.js';
import { UpstreamBudgetError } from '../lib/errors.js';
import { ByteBudget } from '../lib/upstream/budget.js';
import { FanOut } from '../lib/upstream/fanout.js';
import { methodClassOf, trackCall } from '../lib/upstream/quality.js';
import type { Upstream } from '../lib/upstream/registry.js';
import type { UpstreamResponse } from '../lib/upstream/transport.js';

export interface FetchParallelOptions {
  /** Per-attempt timeout, ms. */
  upstreamTimeoutMs: number;
  /** Whole-request deadline, ms. */
  requestTimeoutMs: number;
  /** Largest upstream answer, bytes. */
  maxResponseBytes: number;
  /** Deepest JSON nesting accepted in an answer (default 256). */
  maxDepth?: number;
  /** Upstream answer bytes held at once by all requests of this stage (default: no limit). */
  bufferedBytes?: number;
}

/** The latency an upstream's calls have been taking (for the order of one launch's writes). */
const expectedLatency = (upstream: Upstream) => upstream.health.latencyMs;

export function fetchParallel(options: FetchParallelOptions): Middleware {
  for (const key of ['upstreamTimeoutMs', 'requestTimeoutMs', 'maxResponseBytes'] as const) {
    if (!(options[key] > 0)) throw new TypeError(`fetchParallel: ${key} must be a positive number`);
  }
  const budget = options.bufferedBytes === undefined ? undefined : new ByteBudget(options.bufferedBytes);
  return function fetchParallel(req, res, next) {
    const ctx = getContext(req);
    const payload = need(ctx, 'payload', 'fetchParallel');
    const candidates = need(ctx, 'candidates', 'fetchParallel');
    const required = need(ctx, 'required', 'fetchParallel');
    if (budget?.exhausted) {
      return next(
        new UpstreamBudgetError('Upstream byte budget exhausted: the answers in flight hold limits.bufferedBytes; try again shortly', {
          data: { bufferedBytes: budget.limit, inUse: budget.used },
          headers: { 'Retry-After': '1' },
        }),
      );
    }
    const account = budget?.open();
    ctx.budget = account;
    // Quality hook (issue 24, helper `quality`): every call is measured: in flight, answered after
    // t ms, failed, or abandoned after t ms when the fan-out aborted it (a sample of at least t).
    // The integrator moves this into the agreement loop's per-call outcome hook.
    const cls = methodClassOf(payload.calls);
    const fanout = new FanOut<Upstream, UpstreamResponse>(candidates, (upstream, signal) => trackCall(ctx.chain, upstream.health, cls, signal, () =>
      upstream.transport.send({
        payload,
        requestId: ctx.requestId,
        signal,
        timeoutMs: options.upstreamTimeoutMs,
        maxBytes: options.maxResponseBytes,
        via: ctx.via,
        maxDepth: options.maxDepth,
        budget: account,
      })),
      expectedLatency,
    );
    ctx.fanout = fanout;
    const deadline = setTimeout(() => {
      ctx.deadlinePassed = true;
      fanout.abort();
    }, options.requestTimeoutMs);
    // 'close' fires when the response is done or the client went away: either way, stop.
    res.once('close', () => {
      clearTimeout(deadline);
      fanout.abort();
      account?.close();
    });
    fanout.launch(required);
    next();
  };
}
