/**
 * "Not found" answers of any length, on the wire: a `null` padded with whitespace, or an
 * unknown-block error with a long message, reads as "this node lacks the data" whatever its size.
 * Two lagging nodes answering so cannot confirm that a transaction or block does not exist while
 * the node at the tip has it.
 */
import test from 'ava';
import { defaultAnswer, startFakeUpstream, type AnswerFn, type RpcCallIn } from '../../support/fake-upstream.js';
import { rpc, startGateway } from '../../support/gateway.js';

const hex = (n: number) => `0x${n.toString(16)}`;
const txHash = `0x${'a1'.repeat(32)}`;
const blockHashOf = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
const txAt = (n: number) => ({ hash: txHash, blockHash: blockHashOf(n), blockNumber: hex(n), from: `0x${'12'.repeat(20)}`, nonce: '0x0', transactionIndex: '0x0', type: '0x2' });
const block = (n: number) => ({ number: hex(n), hash: blockHashOf(n), transactions: [] });
const pad = ' '.repeat(8_000);

/** A node at `head` that has the transaction (in block 100) once its head has it. */
const node = (head: number): AnswerFn => (call: RpcCallIn) => {
  const p = call.params ?? [];
  switch (call.method) {
    case 'eth_chainId':
      return { result: '0x1' };
    case 'eth_blockNumber':
      return { result: hex(head) };
    case 'eth_getTransactionByHash':
      return { result: head >= 100 && p[0] === txHash ? txAt(100) : null };
    case 'eth_getBlockByNumber': {
      const n = typeof p[0] === 'string' && p[0].startsWith('0x') ? Number(p[0]) : head;
      return { result: n <= head ? block(n) : null };
    }
    default:
      return defaultAnswer(call);
  }
};

/** The same node, whose "not found" answers are padded past 4 KiB: the null with whitespace, an error with a long message. */
const padded = (head: number, as: 'null' | 'error') => (call: RpcCallIn): string => {
  const answer = node(head)(call);
  const id = JSON.stringify(call.id);
  if (!('result' in answer) || answer.result !== null) return JSON.stringify({ jsonrpc: '2.0', id: call.id, ...answer });
  if (as === 'null') return `{"jsonrpc":"2.0","id":${id},"result":${pad}null${pad}}`;
  return JSON.stringify({ jsonrpc: '2.0', id: call.id, error: { code: -32001, message: `block not found${pad}` } });
};

async function setup(t: import('ava').ExecutionContext, as: 'null' | 'error') {
  const fakes = await Promise.all([startFakeUpstream({ raw: padded(97, as) }), startFakeUpstream({ raw: padded(97, as) }), startFakeUpstream({ answer: node(100) })]);
  const gw = await startGateway({ heads: { waitMs: 200 }, chains: { 1: { rpcs: fakes.map((f) => f.url), confirmations: 2, strategy: 'priority' } } });
  t.teardown(() => Promise.all([gw.close(), ...fakes.map((f) => f.close())]));
  await gw.rpc.startHealthChecks().firstRound;
  return { fakes, gw };
}

for (const as of ['null', 'error'] as const) {
  test(`a transaction the tip has: two lagging nodes' ${as === 'null' ? 'null padded with 16 KB of whitespace' : 'unknown-block error with a 8 KB message'} is no vote for "not found"`, async (t) => {
    const { fakes, gw } = await setup(t, as);
    const r = await gw.post('/rpc/1', rpc('eth_getTransactionByHash', [txHash], 7));
    t.is(r.status, 503, r.text.slice(0, 300));
    t.is(r.body.result, undefined, 'never the lagging nodes\' null');
    t.is(r.body.error.code, -32016);
    t.is(r.headers['x-json-hash'], undefined, 'nothing was confirmed');
    t.deepEqual(r.body.error.data.had, [fakes[2]!.url]);
  });

  test(`a block above two lagging nodes' heads: their ${as === 'null' ? 'padded null' : 'long unknown-block error'} confirms no absence`, async (t) => {
    const { gw } = await setup(t, as);
    const r = await gw.post('/rpc/1', rpc('eth_getBlockByNumber', [hex(99), false], 8));
    t.is(r.status, 503, r.text.slice(0, 300));
    t.is(r.body.error.code, -32016, 'neither their null nor their error');
    t.is(r.headers['x-json-hash'], undefined, 'nothing was confirmed');
  });
}
