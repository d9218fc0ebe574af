/**
 * How the agreement loop calls an upstream for one request: what the fetch stage contributes is
 * plain data (a CallPlan: the payload, the limits, the deadline, the request's share of the byte
 * budget, its batch's coalescer); verify builds the call from it here. Every call is measured
 * (lib/health/quality.ts trackCall): in flight, answered after t ms, failed, or abandoned after
 * t ms when the loop aborted it.
 */
import { recordCallAnswered, recordCallFailed, recordError, recordStart, trackCall, type MethodClass } from '../health/quality.js';
import type { RpcPayload } from '../jsonrpc/types.js';
import type { BudgetAccount } from '../upstream/budget.js';
import type { Chain, Upstream } from '../upstream/registry.js';
import type { BatchCoalescer } from '../upstream/transport/coalesce.js';
import type { CallSink, CancelSignal, UpstreamRequest, UpstreamResponse } from '../upstream/transport/contract.js';
import type { Judging } from './assess.js';
import { judgedOffThread, judgeOffThread } from './answers/off-thread.js';
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
 * expectedLatency). Given to the loop as fields of the verify stage's object of one class per
 * request (middleware/verify.ts), not spread from an object: the policy of every request then
 * has one shape, and the loop's reads of it stay fast.
 * With the request's `judging` (the verify stage's), an answer large enough is judged in a
 * worker thread before the call resolves (off-thread.ts): the loop then finds its verdict with
 * the body, and the event loop is not held up while it is computed. The upstream's measured
 * latency (trackCall) ends when its answer is in, before that.
 */
export function callOf(plan: CallPlan, judging?: Judging): CallPolicy['call'] {
  if (!judging) return (upstream, signal) => send(plan, upstream, signal);
  return (upstream, signal) => judged(plan, judging, upstream, signal);
}

/**
 * A call whose answer, when large, is judged off the event loop. Measured as send's calls are,
 * in the one reaction that also hands the answer on (no async function and no second reaction
 * on the transport's promise per call).
 */
function judged(plan: CallPlan, judging: Judging, upstream: Upstream, signal: CancelSignal): Promise<UpstreamResponse> {
  const { chain, cls } = plan;
  const health = upstream.health;
  const began = performance.now();
  recordStart(health, began);
  let promise: Promise<UpstreamResponse>;
  try {
    promise = transportCall(plan, upstream, signal);
  } catch (err) {
    recordError(health);
    throw err;
  }
  return promise.then(
    (response) => {
      recordCallAnswered(chain, health, cls, began, performance.now());
      const texts = upstream.secrets.texts;
      if (!judgedOffThread(response.body.length) || !texts) return response;
      return judgeOffThread(response.body, judging.payload, judging.ignored, judging.beyondHeads, texts, signal, plan.timeoutMs);
    },
    (err: unknown) => {
      recordCallFailed(health, cls, signal, began, err, performance.now());
      throw err;
    },
  );
}

/**
 * The call of `judged`, its outcome told to `sink` (the loop's `callInto`): on a transport that
 * has `call`, no promise and no closure per call, one object that measures the call and hands
 * its answer on. Through a batch's coalescer, or a transport with `send` only, its promise.
 */
export function callInto(plan: CallPlan, judging: Judging, upstream: Upstream, signal: CancelSignal, sink: CallSink): void {
  const health = upstream.health;
  const began = performance.now();
  recordStart(health, began);
  const measured = new MeasuredCall(plan, judging, upstream, signal, sink, began);
  const transport = upstream.transport;
  try {
    if (plan.coalescer === undefined && transport.call !== undefined) transport.call(requestOf(plan, signal), measured);
    else transportCall(plan, upstream, signal).then((response) => measured.answered(response), (err: unknown) => measured.failed(err as Error));
  } catch (err) {
    recordError(health);
    throw err;
  }
}

/** One call of `callInto` under way: measured when it ends, its answer judged off the event loop when large, then told to the loop. */
class MeasuredCall implements CallSink {
  constructor(
    private readonly plan: CallPlan,
    private readonly judging: Judging,
    private readonly upstream: Upstream,
    private readonly signal: CancelSignal,
    private readonly sink: CallSink,
    private readonly began: number,
  ) {}

  answered(response: UpstreamResponse): void {
    const { plan, upstream, sink } = this;
    recordCallAnswered(plan.chain, upstream.health, plan.cls, this.began, performance.now());
    const texts = upstream.secrets.texts;
    if (!judgedOffThread(response.body.length) || !texts) return sink.answered(response);
    const { judging } = this;
    judgeOffThread(response.body, judging.payload, judging.ignored, judging.beyondHeads, texts, this.signal, plan.timeoutMs).then(
      (judged) => sink.answered(judged),
      (err: unknown) => sink.failed(err as Error),
    );
  }

  failed(err: Error): void {
    recordCallFailed(this.upstream.health, this.plan.cls, this.signal, this.began, err, performance.now());
    this.sink.failed(err);
  }
}

/** One upstream call, measured. */
function send(plan: CallPlan, upstream: Upstream, signal: CancelSignal): Promise<UpstreamResponse> {
  return trackCall(plan.chain, upstream.health, plan.cls, signal, () => transportCall(plan, upstream, signal));
}

/** The call itself: through the batch's coalescer, or the upstream's transport. */
function transportCall(plan: CallPlan, upstream: Upstream, signal: CancelSignal): Promise<UpstreamResponse> {
  const { payload, coalescer } = plan;
  const request = requestOf(plan, signal);
  return coalescer ? coalescer.send(upstream, request, payload.calls[0]!) : upstream.transport.send(request);
}

/** The transport's request of one call (one literal of one shape). */
function requestOf(plan: CallPlan, signal: CancelSignal): UpstreamRequest {
  return {
    payload: plan.payload,
    requestId: plan.requestId,
    signal,
    timeoutMs: plan.timeoutMs,
    maxBytes: plan.maxBytes,
    via: plan.via,
    maxDepth: plan.maxDepth,
    budget: plan.budget,
  };
}
