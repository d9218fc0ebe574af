/**
 * Issue 17, point 1: lagging nodes cannot confirm "nothing there". Three upstreams, two at head
 * 100 and one at head 110, confirmations 2, after a probe round has recorded every head. A read
 * pinned to a block above 100 never gets the lagging nodes' `null`, `[]` or "header not found"
 * as a confirmed answer: only upstreams at or above the block vote, and when fewer than N have it
 * after heads.waitMs, the answer is -32016 naming the block and the heads seen. A block all three
 * have is confirmed as before.
 */
import test from 'ava';
import { defaultAnswer, startFakeUpstream, type AnswerFn } from '../support/fake-upstream.js';
import { rpc, startGateway } from '../support/gateway.js';

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
    const to = Number((p[0] as { toBlock: string }).toBlock);
    return { result: to <= head ? [{ address: '0x' + '11'.repeat(20), blockNumber: '0x65', data: '0x', topics: [], logIndex: '0x0', transactionIndex: '0x0', blockHash: '0x' + '22'.repeat(32), transactionHash: '0x' + '33'.repeat(32), removed: false }] : [] };
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
