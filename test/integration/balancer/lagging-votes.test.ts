/**
 * Issue 17, point 1: lagging nodes cannot confirm "nothing there". Three upstreams, two at head
 * 100 and one at head 110, confirmations 2, after a probe round has recorded every head. A read
 * pinned to a block above 100 never gets the lagging nodes' `null`, `[]` or "header not found"
 * as a confirmed answer: only upstreams at or above the block vote, and when fewer than N have it
 * after heads.waitMs, the answer is -32016 naming the block and the heads seen. A block all three
 * have is confirmed as before.
 */
import test from 'ava';
import { defaultAnswer, startFakeUpstream, type AnswerFn } from '../../support/fake-upstream.js';
import { rpc, startGateway } from '../../support/gateway.js';

const logAt = (n: number) => ({
  address: '0x' + '11'.repeat(20),
  blockNumber: `0x${n.toString(16)}`,
  data: '0x',
  topics: [],
  logIndex: '0x0',
  transactionIndex: '0x0',
  blockHash: `0x${n.toString(16).padStart(64, '0')}`,
  transactionHash: '0x' + '33'.repeat(32),
  removed: false,
});
const block = (n: number) => ({ number: `0x${n.toString(16)}`, hash: `0x${n.toString(16).padStart(64, '0')}`, transactions: [] });

/** A node at `head`: it knows blocks up to its head and answers as a lagging node above it. */
const node = (head: number): AnswerFn => (call) => {
  if (call.method === 'eth_chainId') return { result: '0x1' };
  if (call.method === 'eth_blockNumber') return { result: `0x${head.toString(16)}` };
  const p = call.params ?? [];
  if (call.method === 'eth_getBlockByNumber' && typeof p[0] === 'string' && p[0].startsWith('0x')) {
    const n = Number(p[0]);
    return { result: n <= head ? block(n) : null };
  }
  if (call.method === 'eth_getLogs') {
    // One log per block of the range, up to the node's head: a range above it is cut there (a
    // real, partial list), as go-ethereum's filter does when it runs out of headers.
    const { fromBlock, toBlock } = p[0] as { fromBlock: string; toBlock: string };
    const logs = [];
    for (let n = Number(fromBlock); n <= Math.min(Number(toBlock), head); n++) logs.push(logAt(n));
    return { result: logs };
  }
  if (call.method === 'eth_getBalance') {
    return Number(p[1]) <= head ? { result: '0x1' } : { error: { code: -32000, message: 'header not found' } };
  }
  return defaultAnswer(call);
};

async function setup(t: import('ava').ExecutionContext) {
  const fakes = await Promise.all([startFakeUpstream({ answer: node(100) }), startFakeUpstream({ answer: node(100) }), startFakeUpstream({ answer: node(110) })]);
  const gw = await startGateway({ heads: { waitMs: 300 }, chains: { 1: { rpcs: fakes.map((f) => f.url), confirmations: 2 } } });
  t.teardown(() => Promise.all([gw.close(), ...fakes.map((f) => f.close())]));
  await gw.rpc.startHealthChecks().firstRound;
  return { fakes, gw };
}

const pinnedCases: [string, ReturnType<typeof rpc>][] = [
  ['eth_getBlockByNumber(0x69)', rpc('eth_getBlockByNumber', ['0x69', false], 7)],
  ['eth_getLogs over 101–105', rpc('eth_getLogs', [{ fromBlock: '0x65', toBlock: '0x69' }], 7)],
  // The lagging nodes answer the logs of 96–100, a real list: two of them must not confirm it.
  ['eth_getLogs over 96–105 (cut at the lagging heads)', rpc('eth_getLogs', [{ fromBlock: '0x60', toBlock: '0x69' }], 7)],
  ['eth_getBalance at 105', rpc('eth_getBalance', ['0x' + '44'.repeat(20), '0x69'], 7)],
];

for (const [name, body] of pinnedCases) {
  test(`${name} above two nodes' head: -32016 naming the block, never the lagging nodes' answer confirmed`, async (t) => {
    const { gw } = await setup(t);
    const r = await gw.post('/rpc/1', body);
    t.is(r.status, 503, r.text);
    t.is(r.body.id, 7);
    t.is(r.body.error.code, -32016);
    t.is(r.body.error.data.block, '0x69');
    t.is(r.body.error.data.required, 2);
    t.is(r.body.error.data.eligible, 1);
    t.truthy(r.headers['retry-after']);
    t.is(r.headers['x-json-hash'], undefined, 'nothing was confirmed');
  });
}

test('a block every node has is confirmed by two as before', async (t) => {
  const { gw } = await setup(t);
  const r = await gw.post('/rpc/1', rpc('eth_getBlockByNumber', ['0x60', false], 8));
  t.is(r.status, 200, r.text);
  t.is(r.headers['x-confirmable'], 'true');
  t.is(r.body.result.number, '0x60');
});

test('a block only reached by the lagging nodes later is confirmed once their heads catch up', async (t) => {
  let lagging = 100;
  const catchingUp: AnswerFn = (call) => node(lagging)(call);
  const fakes = await Promise.all([startFakeUpstream({ answer: catchingUp }), startFakeUpstream({ answer: node(100) }), startFakeUpstream({ answer: node(110) })]);
  const gw = await startGateway({ heads: { waitMs: 5_000 }, chains: { 1: { rpcs: fakes.map((f) => f.url), confirmations: 2 } } });
  t.teardown(() => Promise.all([gw.close(), ...fakes.map((f) => f.close())]));
  const prober = gw.rpc.startHealthChecks();
  await prober.firstRound;
  const pending = gw.post('/rpc/1', rpc('eth_getBlockByNumber', ['0x69', false], 9));
  lagging = 110; // the first node catches up; the next probe round sees its head
  await prober.runOnce();
  const r = await pending;
  t.is(r.status, 200, r.text);
  t.is(r.headers['x-confirmable'], 'true');
  t.is(r.body.result.number, '0x69', 'never the null of a node below the block');
});

test('a lagging node\'s "header not found" is asked again once its head has the block, and it is confirmed', async (t) => {
  // The first node refuses the balance at 105 with "header not found" and reaches 110 right
  // after: the gateway waits for heads instead of ending at once, and asks it again.
  let lagging = 100;
  const catchingUp: AnswerFn = (call) => {
    const answer = node(lagging)(call);
    if (call.method === 'eth_getBalance' && 'error' in answer) lagging = 110;
    return answer;
  };
  const fakes = await Promise.all([startFakeUpstream({ answer: catchingUp }), startFakeUpstream({ answer: node(100) }), startFakeUpstream({ answer: node(110) })]);
  const gw = await startGateway({ heads: { waitMs: 5_000 }, chains: { 1: { rpcs: fakes.map((f) => f.url), confirmations: 2 } } });
  t.teardown(() => Promise.all([gw.close(), ...fakes.map((f) => f.close())]));
  await gw.rpc.startHealthChecks().firstRound;
  const r = await gw.post('/rpc/1', rpc('eth_getBalance', ['0x' + '44'.repeat(20), '0x69'], 10));
  t.is(r.status, 200, r.text);
  t.is(r.headers['x-confirmable'], 'true');
  t.is(r.body.result, '0x1', 'never the lagging nodes\' error');
  const balances = fakes[0]!.requests.filter((q) => (q.body as { method?: string }).method === 'eth_getBalance').length;
  t.is(balances, 2, 'asked once, and again after its head caught up');
});

test('heads seconds old are polled at once when a pinned read waits for them (no probe round needed)', async (t) => {
  // The first node reaches 110 after the probe round recorded 100. No probe or tracker round
  // follows within heads.waitMs (5 s): only the gateway asking the waiting upstreams for their
  // heads at once can confirm the block before the wait ends with -32016.
  let lagging = 100;
  const fakes = await Promise.all([startFakeUpstream({ answer: (call) => node(lagging)(call) }), startFakeUpstream({ answer: node(100) }), startFakeUpstream({ answer: node(110) })]);
  const gw = await startGateway({ heads: { waitMs: 5_000 }, chains: { 1: { rpcs: fakes.map((f) => f.url), confirmations: 2 } } });
  t.teardown(() => Promise.all([gw.close(), ...fakes.map((f) => f.close())]));
  await gw.rpc.startHealthChecks().firstRound;
  lagging = 110;
  const before = fakes[0]!.requests.filter((q) => (q.body as { method?: string }).method === 'eth_blockNumber').length;
  for (const body of [rpc('eth_getLogs', [{ fromBlock: '0x60', toBlock: '0x69' }], 11), rpc('eth_getBlockByNumber', ['0x69', false], 12)]) {
    const r = await gw.post('/rpc/1', body);
    t.is(r.status, 200, r.text);
    t.is(r.headers['x-confirmable'], 'true');
  }
  const r = await gw.post('/rpc/1', rpc('eth_getLogs', [{ fromBlock: '0x60', toBlock: '0x69' }], 13));
  t.is(r.body.result.length, 10, 'the whole range, 96–105');
  t.true(fakes[0]!.requests.filter((q) => (q.body as { method?: string }).method === 'eth_blockNumber').length > before, 'the caught-up node was asked for its head');
});

test('a block above every upstream\'s head is never a confirmed null: the nodes\' own answer, unconfirmed, at once', async (t) => {
  const fakes = await Promise.all([startFakeUpstream({ answer: node(100) }), startFakeUpstream({ answer: node(100) }), startFakeUpstream({ answer: node(99) })]);
  const gw = await startGateway({ heads: { waitMs: 300 }, chains: { 1: { rpcs: fakes.map((f) => f.url), confirmations: 2 } } });
  t.teardown(() => Promise.all([gw.close(), ...fakes.map((f) => f.close())]));
  await gw.rpc.startHealthChecks().firstRound;
  for (const body of [rpc('eth_getBlockByNumber', ['0x69', false], 14), rpc('eth_getLogs', [{ fromBlock: '0x60', toBlock: '0x69' }], 15)]) {
    const r = await gw.post('/rpc/1', body);
    t.is(r.status, 200, r.text);
    t.is(r.headers['x-confirmable'], 'false', 'nothing about a block no provider has is vouched for');
    t.is(r.headers['x-required-confirmations'], '1');
    t.false(r.headers['x-checked-urls']!.includes(','), 'one upstream, relayed');
  }
  t.true(gw.rpc.registry.chains.get('1')!.upstreams.every((u) => u.health.failures === 0), 'no upstream charged');
});

// Lagging nodes whose "I lack that block" is not a null block nor an error: reth answers
// debug_getRawHeader / debug_getRawBlock of a block above its head with empty bytes ("0x"),
// go-ethereum's simulated backend and older clients answer the debug_getRaw* reads (and some a
// state read above the head, as older Besu did) with null. None of these is a value of the block.
const oddlyLagging = (head: number): AnswerFn => (call) => {
  const p = call.params ?? [];
  const above = (at: number) => typeof p[at] === 'string' && Number(p[at]) > head;
  if ((call.method === 'debug_getRawHeader' || call.method === 'debug_getRawBlock') && typeof p[0] === 'string') {
    return { result: above(0) ? '0x' : `0xf9${'ab'.repeat(20)}` };
  }
  if (call.method === 'debug_getRawReceipts' && typeof p[0] === 'string') return { result: above(0) ? null : [`0x02${'cd'.repeat(20)}`] };
  if (call.method === 'eth_getTransactionCount' && typeof p[1] === 'string') return { result: above(1) ? null : '0x7' };
  return node(head)(call);
};

const oddCases: [string, ReturnType<typeof rpc>][] = [
  ['debug_getRawHeader(0x69) answered "0x" by the lagging nodes', rpc('debug_getRawHeader', ['0x69'], 21)],
  ['debug_getRawBlock(0x69) answered "0x" by the lagging nodes', rpc('debug_getRawBlock', ['0x69'], 21)],
  ['debug_getRawReceipts(0x69) answered null by the lagging nodes', rpc('debug_getRawReceipts', ['0x69'], 21)],
  ['eth_getTransactionCount at 0x69 answered null by the lagging nodes', rpc('eth_getTransactionCount', ['0x' + '44'.repeat(20), '0x69'], 21)],
];

for (const [name, body] of oddCases) {
  test(`${name}: -32016, never their empty answer confirmed`, async (t) => {
    const fakes = await Promise.all([startFakeUpstream({ answer: oddlyLagging(100) }), startFakeUpstream({ answer: oddlyLagging(100) }), startFakeUpstream({ answer: oddlyLagging(110) })]);
    const gw = await startGateway({ heads: { waitMs: 300 }, chains: { 1: { rpcs: fakes.map((f) => f.url), confirmations: 2 } } });
    t.teardown(() => Promise.all([gw.close(), ...fakes.map((f) => f.close())]));
    await gw.rpc.startHealthChecks().firstRound;
    const r = await gw.post('/rpc/1', body);
    t.is(r.status, 503, r.text);
    t.is(r.headers['x-json-hash'], undefined, 'nothing was confirmed');
    t.is(r.body.id, 21);
    t.is(r.body.error.code, -32016);
    t.is(r.body.error.data.block, '0x69');
    t.is(r.body.error.data.eligible, 1);
    const method = (body as { method: string }).method;
    const asked = fakes.map((f) => f.requests.filter((q) => (q.body as { method?: string }).method === method).length);
    t.true(asked[2]! >= 1, 'the upstream that has the block was asked');
    // A block all three have is confirmed by two as before.
    const params = [...(body as { params: unknown[] }).params].map((v) => (v === '0x69' ? '0x60' : v));
    const ok = await gw.post('/rpc/1', { ...(body as object), params });
    t.is(ok.status, 200, ok.text);
    t.is(ok.headers['x-confirmable'], 'true');
    t.not(ok.body.result, null);
    t.not(ok.body.result, '0x');
  });
}
