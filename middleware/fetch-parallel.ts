/**
 * Stage 4, fetch in parallel. Says how the request's upstream calls are made, as data (a CallPlan:
 * the payload, the per-attempt timeout, the answer limits, the request's share of the byte budget,
 * its batch's coalescer, the request deadline); the verify stage builds the calls from it
 * (lib/verify/calls.ts) and runs the agreement loop (lib/verify/agreement.ts). The loop starts the first N calls at once and asks for more when answers fail or
 * disagree; every call stops when the answer is decided, when the client goes away or when the
 * deadline passes. The request's account of the byte budget opened here holds nothing until a call
 * reads an answer; verify closes it when the answer is done.
 * Reads: ctx.payload, ctx.candidates, ctx.required, ctx.via, ctx.coalescer   Writes: ctx.fetch
 */
import { clientGone } from '../lib/pipeline/answer-done.js';
import type { Middleware } from '../lib/pipeline/compose.js';
import { getContext, need } from '../lib/pipeline/context.js';
import { InvalidRequestError, UpstreamBudgetError } from '../lib/errors.js';
import { isWrite } from '../lib/jsonrpc/writes.js';
import { ByteBudget } from '../lib/upstream/budget.js';
import { methodClassOf } from '../lib/health/quality.js';

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

export function fetchParallel(options: FetchParallelOptions): Middleware {
  for (const key of ['upstreamTimeoutMs', 'requestTimeoutMs', 'maxResponseBytes'] as const) {
    if (!(options[key] > 0)) throw new TypeError(`fetchParallel: ${key} must be a positive number`);
  }
  const budget = options.bufferedBytes === undefined ? undefined : new ByteBudget(options.bufferedBytes);
  return function fetchParallel(req, _res, next) {
    const ctx = getContext(req);
    const payload = need(ctx, 'payload', 'fetchParallel');
    // Checked here, where the stages' order is wrong if they are missing.
    need(ctx, 'candidates', 'fetchParallel');
    need(ctx, 'required', 'fetchParallel');
    // The client left while an earlier stage (or a host app's middleware) waited: nobody reads the answer.
    if (clientGone(req)) return next(new InvalidRequestError('Invalid request: the client closed the connection before its answer', { id: null }));
    if (budget?.exhausted) {
      return next(
        new UpstreamBudgetError('Upstream byte budget exhausted: the answers in flight hold limits.bufferedBytes; try again shortly', {
          data: { bufferedBytes: budget.limit, inUse: budget.used },
          headers: { 'Retry-After': '1' },
        }),
      );
    }
    const account = budget?.open();
    // A batch member's reads go through its batch's coalescer (lib/upstream/transport/coalesce.ts): one
    // upstream batch per upstream and turn. Writes never do.
    ctx.fetch = {
      chain: ctx.chain,
      payload,
      requestId: ctx.requestId,
      via: ctx.via,
      cls: methodClassOf(payload.calls),
      timeoutMs: options.upstreamTimeoutMs,
      maxBytes: options.maxResponseBytes,
      maxDepth: options.maxDepth,
      deadlineMs: options.requestTimeoutMs,
      budget: account,
      coalescer: ctx.coalescer && !isWrite(payload.calls) ? ctx.coalescer : undefined,
    };
    next();
  };
}
