/**
 * How the agreement loop calls an upstream for one request: what the fetch stage contributes is
 * plain data (a CallPlan: the payload, the limits, the deadline, the request's share of the byte
 * budget, its batch's coalescer); verify builds the call from it here. Every call is measured
 * (lib/health/quality.ts trackCall): in flight, answered after t ms, failed, or abandoned after
 * t ms when the loop aborted it.
 */
import { trackCall, type MethodClass } from '../health/quality.js';
import type { RpcPayload } from '../jsonrpc/types.js';
import type { BudgetAccount } from '../upstream/budget.js';
import type { Chain, Upstream } from '../upstream/registry.js';
import type { BatchCoalescer } from '../upstream/transport/coalesce.js';
import type { CallPolicy } from './question.js';

/** How one request's upstream calls are made (the fetch stage's part). */
export interface CallPlan {
  chain: Chain | undefined;
  payload: RpcPayload;
  requestId: string;
  /** The omnigate Via entries the request came with (lib/upstream/loop.ts). */
  via: string | undefined;
  /** The method class the calls are measured in. */
  cls: MethodClass;
  /** Per-attempt timeout, ms. */
  timeoutMs: number;
  /** Largest upstream answer, bytes. */
  maxBytes: number;
  /** Deepest JSON nesting accepted in an answer. */
  maxDepth: number | undefined;
  /** Whole-question deadline, ms. */
  deadlineMs: number;
  /** The request's share of the upstream byte budget, when one is set. */
  budget: BudgetAccount | undefined;
  /** A batch member's reads: its batch's coalescer (one upstream batch per upstream and turn). */
  coalescer: BatchCoalescer | undefined;
}

/** The latency an upstream's calls have been taking (the loop's `expectedMs`: the order of one launch's writes). */
export const expectedLatency = (upstream: Upstream): number | undefined => upstream.health.latencyMs;

/**
 * The loop's call for one request (its `call`; `deadlineMs` is the plan's, `expectedMs`
 * expectedLatency). Given to the loop as properties of one literal, not spread from an object:
 * the policy object of every request then has one shape, and the loop's reads of it stay fast.
 */
export function callOf(plan: CallPlan): CallPolicy['call'] {
  const { payload, coalescer } = plan;
  return (upstream, signal) =>
    trackCall(plan.chain, upstream.health, plan.cls, signal, () => {
      const request = {
        payload,
        requestId: plan.requestId,
        signal,
        timeoutMs: plan.timeoutMs,
        maxBytes: plan.maxBytes,
        via: plan.via,
        maxDepth: plan.maxDepth,
        budget: plan.budget,
      };
      return coalescer ? coalescer.send(upstream, request, payload.calls[0]!) : upstream.transport.send(request);
    });
}
