/**
 * How the agreement loop calls an upstream for one request: what the fetch stage contributes is
 * plain data (a CallPlan: the payload, the limits, the deadline, the request's share of the byte
 * budget, its batch's coalescer); verify builds the call from it here. Every call is measured
 * (lib/health/quality.ts trackCall): in flight, answered after t ms, failed, or abandoned after
 * t ms when the loop aborted it.
 */
import { recordCallAnswered, recordCallFailed, recordError, recordStart, trackCall, type MethodClass } from '../health/quality.js';
import { nestsDeeperThan } from '../jsonrpc/scan.js';
import type { RpcPayload } from '../jsonrpc/types.js';
import type { BudgetAccount } from '../upstream/budget.js';
import type { Chain, Upstream } from '../upstream/registry.js';
import type { BatchCoalescer } from '../upstream/transport/coalesce.js';
import { defaultMaxDepth, tooDeep, type CallSink, type CancelSignal, type UpstreamRequest, type UpstreamResponse } from '../upstream/transport/contract.js';
import type { Judging } from './assess.js';
import { judgedOffThread, judgeOffThread, nestedTooDeep, offThreadFrom, type JudgedResponse } from './answers/off-thread.js';
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
    promise = transportCall(plan, upstream, signal, undefined);
  } catch (err) {
    recordError(health);
    throw err;
  }
  return promise.then(
    (response) => {
      recordCallAnswered(chain, health, cls, began, performance.now());
      const texts = upstream.secrets.texts;
      if (!texts || !judgedOffThread(response.body)) return response;
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
 * On a transport that has `call`, an answer long enough to be judged in the thread is not
 * scanned for its nesting by the transport (`depthFrom`): the thread checks it first, and an
 * answer whose bytes equal those of one already judged is not scanned again; too deep, the call
 * fails as the transport would have failed it (`too-deep`), measured as at its answer's arrival.
 */
export function callInto(plan: CallPlan, judging: Judging, upstream: Upstream, signal: CancelSignal, sink: CallSink): void {
  const health = upstream.health;
  const began = performance.now();
  recordStart(health, began);
  const transport = upstream.transport;
  const direct = plan.coalescer === undefined && transport.call !== undefined;
  // (Only when the thread may judge the answer: an upstream whose secrets are known.)
  const depthFrom = direct && upstream.secrets.texts !== undefined ? offThreadFrom : Infinity;
  const measured = new MeasuredCall(plan, judging, upstream, signal, sink, began, depthFrom);
  try {
    if (direct) transport.call!(requestOf(plan, signal, depthFrom), measured);
    else transportCall(plan, upstream, signal, undefined).then((response) => measured.answered(response), (err: unknown) => measured.failed(err as Error));
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
    /** Answers of this many bytes or more were not scanned for their nesting by the transport (its `depthFrom`). */
    private readonly depthFrom: number,
  ) {}

  answered(response: UpstreamResponse): void {
    const { plan, upstream, sink } = this;
    const now = performance.now();
    const body = response.body;
    const unscanned = body.length >= this.depthFrom;
    const texts = upstream.secrets.texts;
    if (!texts || !judgedOffThread(body)) {
      // (No thread to judge it: its nesting is checked here, as the transport would have.)
      if (unscanned && nestsDeeperThan(body, this.maxDepth)) return this.failedAt(tooDeep(this.maxDepth), now);
      recordCallAnswered(plan.chain, upstream.health, plan.cls, this.began, now);
      return sink.answered(response);
    }
    if (!unscanned) recordCallAnswered(plan.chain, upstream.health, plan.cls, this.began, now);
    const { judging } = this;
    judgeOffThread(body, judging.payload, judging.ignored, judging.beyondHeads, texts, this.signal, plan.timeoutMs, unscanned ? this.maxDepth : undefined).then(
      (judged) => (unscanned ? this.checked(judged, now) : sink.answered(judged)),
      (err: unknown) => (unscanned ? this.failedAt(err as Error, now) : sink.failed(err as Error)),
    );
  }

  /** The answer of a call whose nesting the thread checked (or, when the thread could not start, is checked here), arrived at `at`. */
  private checked(response: JudgedResponse | UpstreamResponse, at: number): void {
    const { plan, upstream } = this;
    const judged = (response as Partial<JudgedResponse>).judged;
    if (judged === undefined ? nestsDeeperThan(response.body, this.maxDepth) : judged.unchecked === nestedTooDeep) {
      return this.failedAt(tooDeep(this.maxDepth), at);
    }
    recordCallAnswered(plan.chain, upstream.health, plan.cls, this.began, at);
    this.sink.answered(response);
  }

  private get maxDepth(): number {
    return this.plan.maxDepth ?? defaultMaxDepth;
  }

  failed(err: Error): void {
    this.failedAt(err, performance.now());
  }

  private failedAt(err: Error, at: number): void {
    recordCallFailed(this.upstream.health, this.plan.cls, this.signal, this.began, err, at);
    this.sink.failed(err);
  }
}

/** One upstream call, measured. */
function send(plan: CallPlan, upstream: Upstream, signal: CancelSignal): Promise<UpstreamResponse> {
  return trackCall(plan.chain, upstream.health, plan.cls, signal, () => transportCall(plan, upstream, signal, undefined));
}

/** The call itself: through the batch's coalescer, or the upstream's transport. */
function transportCall(plan: CallPlan, upstream: Upstream, signal: CancelSignal, depthFrom: number | undefined): Promise<UpstreamResponse> {
  const { payload, coalescer } = plan;
  const request = requestOf(plan, signal, depthFrom);
  return coalescer ? coalescer.send(upstream, request, payload.calls[0]!) : upstream.transport.send(request);
}

/** The transport's request of one call (one literal of one shape). */
function requestOf(plan: CallPlan, signal: CancelSignal, depthFrom: number | undefined): UpstreamRequest {
  return {
    payload: plan.payload,
    requestId: plan.requestId,
    signal,
    timeoutMs: plan.timeoutMs,
    maxBytes: plan.maxBytes,
    via: plan.via,
    maxDepth: plan.maxDepth,
    depthFrom,
    budget: plan.budget,
  };
}
