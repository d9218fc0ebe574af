/**
 * The budgets in credits (lib/access/budget.ts), as two thin stages; rpcPipeline adds them only
 * when a key or the anonymous tier of `access:` has a budget field, and a request of a grant
 * without one passes through both untouched.
 *
 * `reserveBudget`, after authorize and before any upstream call: the request's estimate (each
 * call's weight × the N the route is served with, an upper bound: a call that is not confirmable
 * asks one upstream; a write the chain broadcasts, × the upstreams it goes to) reserved from the
 * grant's buckets and one slot of its concurrency taken; over the budget, a 429 (-32020) with
 * Retry-After and the credit headers.
 * Reads: ctx.access, ctx.payload, ctx.chain, ctx.confirmationsOverride   Writes: ctx.budget
 *
 * `settleBudget`, just before emit: the real cost settled (per call: its weight × the upstream
 * calls its agreement or write made, or the cache hit's price; a batch: the sum over its members)
 * and the slot freed; emitHeaders then writes X-Credits and what is left.
 * Reads: ctx.budget, ctx.agreement, ctx.cached (a batch: each member's)   Writes: ctx.budget
 *
 * An error answer settles in the pipeline's error path (`settleFailed`, which also sets the
 * headers), and a response closed before either (a client gone, a socket destroyed) settles at
 * its 'close': no path keeps a slot.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Budgets, Charge, Plan } from '../lib/access/budget.js';
import { creditsHeader, remainingDayHeader, remainingSecondHeader } from '../lib/access/budget.js';
import type { GatewayError } from '../lib/errors.js';
import { writeRuleOf } from '../lib/jsonrpc/writes.js';
import type { Middleware, Next } from '../lib/pipeline/compose.js';
import { findContext, getContext, need, type RpcContext } from '../lib/pipeline/context.js';

export function reserveBudget(budgets: Budgets): Middleware {
  // One listener for every request (the response names its request): the backstop settle.
  function settleOnClose(this: ServerResponse): void {
    const ctx = findContext(this.req);
    const charge = ctx?.budget;
    if (ctx === undefined || charge === undefined || charge.settled) return;
    void budgets.settle(charge, spentOf(budgets, charge.plan, ctx));
  }
  function admitted(req: IncomingMessage, res: ServerResponse, next: Next, got: Charge | GatewayError): void {
    if (got instanceof Error) return next(got);
    getContext(req).budget = got;
    // (A client gone while Redis answered the take: its response closed already.)
    if (res.closed) settleOnClose.call(res);
    else res.once('close', settleOnClose);
    next();
  }
  async function admitLater(req: IncomingMessage, res: ServerResponse, next: Next, pending: Promise<Charge | GatewayError>): Promise<void> {
    let got: Charge | GatewayError;
    try {
      got = await pending;
    } catch (err) {
      return next(err);
    }
    admitted(req, res, next, got);
  }
  return function reserveBudget(req, res, next) {
    const ctx = getContext(req);
    const grant = ctx.access;
    const plan = grant === undefined ? undefined : budgets.plan(grant);
    if (plan === undefined) return next();
    const payload = need(ctx, 'payload', 'reserveBudget');
    const chain = need(ctx, 'chain', 'reserveBudget');
    const n = ctx.confirmationsOverride ?? chain.confirmations;
    const broadcast = chain.writes?.broadcast;
    let estimate = 0;
    for (const call of payload.calls) estimate += budgets.estimateOf(plan, call.method, broadcast === undefined || broadcast <= 1 ? n : callsAtMost(call.method, n, broadcast, chain.upstreams.length));
    const got = budgets.reserve(plan, estimate, payload.batch ? null : payload.calls[0]!.id);
    if (got instanceof Promise) return void admitLater(req, res, next, got);
    admitted(req, res, next, got);
  };
}

/**
 * The upstream calls a call of the estimate stands for on a chain that broadcasts writes: a write
 * that may be broadcast goes to that many upstreams at once (each charged), a read to N at most.
 */
function callsAtMost(method: string, n: number, broadcast: number, upstreams: number): number {
  const rule = writeRuleOf(method);
  return rule === undefined || rule.broadcast === false ? n : Math.max(n, Math.min(broadcast, upstreams));
}

export function settleBudget(budgets: Budgets): Middleware {
  async function settledThen(pending: Promise<void>, next: Next): Promise<void> {
    try {
      await pending;
    } catch (err) {
      return next(err);
    }
    next();
  }
  return function settleBudget(req, _res, next) {
    const ctx = getContext(req);
    const charge = ctx.budget;
    if (charge === undefined || charge.settled) return next();
    const pending = budgets.settle(charge, spentOf(budgets, charge.plan, ctx));
    if (pending === undefined) return next();
    void settledThen(pending, next);
  };
}

/**
 * The error path: the request's charge settled (when it has one not yet settled) and its credit
 * headers set on the response the error handler then writes. A promise only when the store is Redis.
 */
export function settleFailed(budgets: Budgets, req: IncomingMessage, res: ServerResponse): void | Promise<void> {
  const ctx = findContext(req);
  const charge = ctx?.budget;
  if (ctx === undefined || charge === undefined) return;
  const pending = charge.settled ? undefined : budgets.settle(charge, spentOf(budgets, charge.plan, ctx));
  if (pending === undefined) return setCreditHeaders(res, charge);
  return pending.then(() => setCreditHeaders(res, charge));
}

function setCreditHeaders(res: ServerResponse, charge: Charge): void {
  if (res.headersSent) return;
  res.setHeader(creditsHeader, String(charge.credits));
  if (Number.isFinite(charge.remainingSecond)) res.setHeader(remainingSecondHeader, String(Math.max(0, Math.floor(charge.remainingSecond))));
  if (Number.isFinite(charge.remainingDay)) res.setHeader(remainingDayHeader, String(Math.max(0, Math.floor(charge.remainingDay))));
}

/**
 * What a request cost: each call's price (a batch: the sum over its members; members still
 * running, a client gone: the calls they made so far; members not run: the least each).
 */
function spentOf(budgets: Budgets, plan: Plan, ctx: RpcContext): number {
  const members = ctx.members;
  const payload = ctx.payload;
  if (members === undefined) {
    if (payload === undefined || !payload.batch) return callCost(budgets, plan, ctx);
    let sum = 0;
    const running = ctx.running;
    if (running !== undefined) {
      for (const m of running) sum += callCost(budgets, plan, m);
      return sum;
    }
    for (const call of payload.calls) sum += budgets.costOf(plan, call.method, 0, false);
    return sum;
  }
  let sum = 0;
  for (const m of members) {
    if (m.kind === 'notification') continue;
    sum += m.ctx !== undefined ? callCost(budgets, plan, m.ctx) : budgets.costOf(plan, '', 0, false);
  }
  return sum;
}

/** One call's price: the cache hit's, or its weight × the upstream calls its agreement or write made. */
function callCost(budgets: Budgets, plan: Plan, ctx: RpcContext): number {
  const method = ctx.payload?.calls[0]?.method ?? '';
  return budgets.costOf(plan, method, ctx.agreement?.called.length ?? 0, ctx.cached?.hit === true);
}
