/**
 * The loop's call built from the fetch stage's plan: the request each upstream is sent (payload,
 * id, limits, Via, budget, the loop's signal), measured in flight; a batch member's call through
 * its batch's coalescer.
 */
import test from 'ava';
import { qualityOf } from '../../../../lib/health/quality.js';
import { ByteBudget } from '../../../../lib/upstream/budget.js';
import { BatchCoalescer } from '../../../../lib/upstream/transport/coalesce.js';
import { Cancellation, type UpstreamResponse } from '../../../../lib/upstream/transport/contract.js';
import { callOf, expectedLatency, type CallPlan } from '../../../../lib/verify/calls.js';
import { single, testChain, testUpstream } from '../../../support/stage.js';

function planOf(fields: Partial<CallPlan> = {}): CallPlan {
  return {
    chain: undefined,
    payload: single('eth_getBalance', ['0x1', '0x10'], 4),
    requestId: 'req-1',
    via: '1.1 omnigate-abc',
    cls: 'read',
    timeoutMs: 1234,
    maxBytes: 5678,
    maxDepth: 32,
    deadlineMs: 9000,
    budget: undefined,
    coalescer: undefined,
    ...fields,
  } as CallPlan;
}

test('should send the upstream the plan\'s payload, id, limits, Via, budget and the loop\'s signal', async (t) => {
  const u = testUpstream(0);
  const budget = new ByteBudget(100).open();
  const plan = planOf({ budget });
  const signal = new Cancellation();
  const answer = await callOf(plan)(u, signal);
  t.deepEqual(JSON.parse(answer.body.toString()), { jsonrpc: '2.0', id: 4, result: '0x1' });
  t.is(u.sent.length, 1);
  const sent = u.sent[0]!;
  t.is(sent.payload, plan.payload);
  t.is(sent.signal, signal);
  t.like(sent, { requestId: 'req-1', timeoutMs: 1234, maxBytes: 5678, via: '1.1 omnigate-abc', maxDepth: 32 });
  t.is(sent.budget, budget);
});

test('should count the call in flight until it settles, and its failure reaches the loop', async (t) => {
  let settle: ((r: UpstreamResponse) => void) | undefined;
  const u = testUpstream(0);
  (u.transport as { send: unknown }).send = () => new Promise<UpstreamResponse>((resolve) => (settle = resolve));
  const call = callOf(planOf({ chain: testChain([u]) }))(u, new Cancellation());
  t.is(qualityOf(u.health).inFlight, 1);
  settle!({ body: Buffer.from('{"jsonrpc":"2.0","id":4,"result":"0x1"}') });
  await call;
  t.is(qualityOf(u.health).inFlight, 0);
  const failing = testUpstream(1, { answer: () => new Error('refused') });
  await t.throwsAsync(callOf(planOf())(failing, new Cancellation()), { message: 'refused' });
  t.is(qualityOf(failing.health).inFlight, 0);
});

test('should send a batch member\'s call through its batch\'s coalescer', async (t) => {
  const u = testUpstream(0);
  const coalescer = new BatchCoalescer();
  const seen: unknown[] = [];
  const send = coalescer.send.bind(coalescer);
  coalescer.send = (upstream, request, call) => {
    seen.push([upstream.label, call.id]);
    return send(upstream, request, call);
  };
  const answer = await callOf(planOf({ coalescer }))(u, new Cancellation());
  t.deepEqual(seen, [['http://u0.test/***', 4]]);
  t.is(JSON.parse(answer.body.toString()).id, 4);
});

test('expectedLatency should be the upstream\'s measured latency', (t) => {
  t.is(expectedLatency(testUpstream(0, { health: { latencyMs: 42 } })), 42);
  t.is(expectedLatency(testUpstream(0)), undefined);
});
