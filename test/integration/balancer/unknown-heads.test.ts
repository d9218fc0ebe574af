/**
 * Absences from upstreams whose heads are unknown, on the wire: a pipeline mounted without
 * startHealthChecks() (no probe, no head tracker), so that no head is known when the request
 * comes. A `null` from such an upstream cannot be told from a lagging node's: it is no vote. The
 * heads are learned on demand (`eth_blockNumber`, only when an absence needs them): two lagging
 * nodes asked first never confirm `null` for a block or transaction a third one has, and a real
 * absence is still confirmed once the heads show the nodes could have seen the data. A request
 * whose answers are the data sends no head poll.
 */
import test from 'ava';
import { defaultAnswer, startFakeUpstream, type AnswerFn, type FakeUpstream, type RpcCallIn } from '../../support/fake-upstream.js';
import { rpc, startGateway } from '../../support/gateway.js';

const hex = (n: number) => `0x${n.toString(16)}`;
const txHash = `0x${'b2'.repeat(32)}`;
const blockHashOf = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
const receiptAt = (n: number) => ({ transactionHash: txHash, blockHash: blockHashOf(n), blockNumber: hex(n), status: '0x1', logs: [], gasUsed: '0x5208', transactionIndex: '0x0' });

/** A node at head `head`; the transaction `txHash` is in block `txBlock`, known once the head has it. `heads: false`: its head poll fails. */
const node = (head: number, txBlock?: number, heads = true): AnswerFn => (call: RpcCallIn) => {
  const p = call.params ?? [];
  const has = txBlock !== undefined && txBlock <= head;
  switch (call.method) {
    case 'eth_chainId':
      return { result: '0x1' };
    case 'eth_blockNumber':
      return heads ? { result: hex(head) } : { error: { code: -32603, message: 'Internal error' } };
    case 'eth_getTransactionReceipt':
      return { result: has && p[0] === txHash ? receiptAt(txBlock!) : null };
    case 'eth_getBlockByNumber': {
      const n = typeof p[0] === 'string' && p[0].startsWith('0x') ? Number(p[0]) : undefined;
      if (n === undefined) return { error: { code: -32602, message: 'invalid block tag' } };
      return { result: n <= head ? { number: hex(n), hash: blockHashOf(n), transactions: [] } : null };
    }
    default:
      return defaultAnswer(call);
  }
};

/** Fakes in list order (priority), N=2, heads never polled by the gateway itself. */
async function setup(t: import('ava').ExecutionContext, answers: AnswerFn[]) {
  const fakes = await Promise.all(answers.map((answer) => startFakeUpstream({ answer })));
  const gw = await startGateway({ heads: { waitMs: 300 }, chains: { 1: { rpcs: fakes.map((f) => f.url), confirmations: 2, strategy: 'priority' } } });
  t.teardown(() => Promise.all([gw.close(), ...fakes.map((f) => f.close())]));
  return { fakes, gw };
}

const asked = (f: FakeUpstream, method: string) => f.requests.filter((r) => (r.body as { method?: string }).method === method).length;

test('two lagging nodes asked first do not confirm a null receipt a third node has, with no head polled before', async (t) => {
  const { fakes, gw } = await setup(t, [node(10), node(10), node(13, 12)]);
  const r = await gw.post('/rpc/1', rpc('eth_getTransactionReceipt', [txHash]));
  t.is(r.status, 503, r.text);
  t.is(r.body.result, undefined, 'never a confirmed null');
  t.is(r.body.error.code, -32016);
  t.like(r.body.error.data, { hash: txHash, pin: 'transaction', required: 2, eligible: 1, had: [fakes[2]!.url] });
  t.true(fakes.slice(0, 2).every((f) => asked(f, 'eth_blockNumber') === 1), 'the lagging nodes were asked their heads once');
});

test('two lagging nodes asked first do not confirm a null block a third node has, with no head polled before', async (t) => {
  const { fakes, gw } = await setup(t, [node(10), node(10), node(13)]);
  const r = await gw.post('/rpc/1', rpc('eth_getBlockByNumber', [hex(12), false]));
  t.is(r.status, 503, r.text);
  t.is(r.body.result, undefined, 'never a confirmed null');
  t.is(r.body.error.code, -32016);
  t.like(r.body.error.data, { block: hex(12), required: 2, eligible: 1 });
  t.deepEqual(fakes.map((f) => asked(f, 'eth_getBlockByNumber') > 0), [true, true, true]);
});

test('a real absence is confirmed once the heads learned on demand show the nodes at the best head; the next one needs no head poll', async (t) => {
  const { fakes, gw } = await setup(t, [node(13), node(13), node(13)]);
  const r = await gw.post('/rpc/1', rpc('eth_getTransactionReceipt', [txHash]));
  t.is(r.status, 200, r.text);
  t.is(r.body.result, null);
  t.is(r.headers['x-confirmable'], 'true');
  t.is(r.headers['x-required-confirmations'], '2');
  t.deepEqual(fakes.map((f) => asked(f, 'eth_blockNumber')), [1, 1, 1], 'each head asked once');
  t.deepEqual(fakes.slice(0, 2).map((f) => asked(f, 'eth_getTransactionReceipt')), [2, 2], 'the two asked first, asked again once their heads were known');

  const before = fakes.map((f) => f.requests.length);
  const again = await gw.post('/rpc/1', rpc('eth_getTransactionReceipt', [txHash], 2));
  t.is(again.status, 200, again.text);
  t.is(again.headers['x-confirmable'], 'true');
  t.is(fakes.reduce((sum, f, i) => sum + f.requests.length - before[i]!, 0), 2, 'two receipt calls, no head poll');
});

test('an answer with the data needs no head: two calls, no head poll', async (t) => {
  const { fakes, gw } = await setup(t, [node(13), node(13), node(13)]);
  const r = await gw.post('/rpc/1', rpc('eth_getBlockByNumber', [hex(12), false]));
  t.is(r.status, 200, r.text);
  t.is(r.headers['x-confirmable'], 'true');
  t.is(r.body.result.number, hex(12));
  t.deepEqual(fakes.map((f) => f.requests.length), [1, 1, 0]);
});

test('upstreams whose head polls keep failing cannot confirm null: -32016, never X-Confirmable true', async (t) => {
  const { gw } = await setup(t, [node(13, undefined, false), node(13, undefined, false)]);
  const block = await gw.post('/rpc/1', rpc('eth_getBlockByNumber', [hex(14), false]));
  t.is(block.status, 503, block.text);
  t.is(block.body.error.code, -32016);
  const receipt = await gw.post('/rpc/1', rpc('eth_getTransactionReceipt', [txHash]));
  t.is(receipt.status, 503, receipt.text);
  t.is(receipt.body.error.code, -32016);
});
