/**
 * Providers running different clients (issue 30, point 6), on the wire: a field outside the
 * execution-apis schema (an L2 client's `l1BlockNumber` on a block, `queueOrigin` on its
 * transactions, `l1Fee` on a receipt) is not compared. The N answers agree on every schema field,
 * so the read is confirmed; the extra reaches the client only when all N sent it alike, and
 * X-Json-Hash (which never covers it) is the one the recipe of lib/verify/README.md recomputes. A schema field
 * that differs is still a disagreement.
 */
import { createHash } from 'node:crypto';
import test from 'ava';
import stringify from 'json-stable-stringify';
import { canonicalJson, comparable, defaultIgnoredFields, schemaFields, sha256Hex } from '../../../lib/index.js';
import { block, defaultAnswer, startFakeUpstream, type AnswerFn, type FakeOptions, type FakeUpstream } from '../../support/fake-upstream.js';
import { rpc, startGateway, type Gateway } from '../../support/gateway.js';

async function setup(t: { teardown(fn: () => Promise<unknown>): void }, options: FakeOptions[], confirmations = 2) {
  const fakes: FakeUpstream[] = [];
  t.teardown(() => Promise.all(fakes.map((f) => f.close())));
  for (const o of options) fakes.push(await startFakeUpstream(o));
  const gw: Gateway = await startGateway({ chains: { 1: { rpcs: fakes.map((f) => f.url), confirmations } } });
  t.teardown(() => gw.close());
  return { fakes, gw };
}

const txHash = `0x${'ef'.repeat(32)}`;

function receipt(): Record<string, unknown> {
  return {
    type: '0x2',
    transactionHash: txHash,
    transactionIndex: '0x0',
    blockHash: `0x${'ab'.repeat(31)}20`,
    blockNumber: '0x20',
    from: '0x1111111111111111111111111111111111111111',
    to: '0x2222222222222222222222222222222222222222',
    cumulativeGasUsed: '0x5208',
    gasUsed: '0x5208',
    contractAddress: null,
    logs: [],
    logsBloom: `0x${'00'.repeat(256)}`,
    status: '0x1',
    effectiveGasPrice: '0x3b9aca00',
  };
}

type Extras = { block?: Record<string, unknown>; tx?: Record<string, unknown>; receipt?: Record<string, unknown> };

/** The fake chain's answers, with the fields a client of its own adds (and schema fields changed, for a liar). */
const chain = (extras: Extras = {}): AnswerFn => (call) => {
  if (call.method === 'eth_getBlockByNumber') {
    const b = block(String(call.params?.[0]), call.params?.[1] === true) as Record<string, unknown> & { transactions: unknown[] };
    const transactions = b.transactions.map((tx) => (typeof tx === 'object' ? { ...tx, ...extras.tx } : tx));
    return { result: { ...b, ...extras.block, transactions } };
  }
  if (call.method === 'eth_getTransactionReceipt') return { result: { ...receipt(), ...extras.receipt } };
  if (call.method === 'eth_getBlockReceipts') return { result: [{ ...receipt(), ...extras.receipt }] };
  return defaultAnswer(call);
};

const l2 = { block: { l1BlockNumber: '0x13a1b2c' }, tx: { queueOrigin: 'sequencer' }, receipt: { l1Fee: '0x1c3b5', l1GasUsed: '0x640' } };
const blockCall = rpc('eth_getBlockByNumber', ['0x20', true]);

/** X-Json-Hash as lib/verify/README.md "Recomputing X-Json-Hash" says a client computes it, with json-stable-stringify. */
function readmeHash(method: string, result: unknown): string {
  const kept = (shape: keyof typeof schemaFields, o: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(o).filter(([k, v]) => v !== null && schemaFields[shape].includes(k) && !defaultIgnoredFields[shape].includes(k)));
  const tx = (o: unknown) => (o !== null && typeof o === 'object' ? kept('transaction', o as Record<string, unknown>) : o);
  const shapedResult =
    method === 'eth_getBlockByNumber'
      ? { ...kept('block', result as Record<string, unknown>), transactions: (result as { transactions: unknown[] }).transactions.map(tx) }
      : kept('receipt', result as Record<string, unknown>); // a receipt without logs
  const lower = (_k: unknown, v: unknown) => (typeof v === 'string' && /^0x[0-9a-f]*$/i.test(v) ? v.toLowerCase() : v);
  return createHash('sha256').update(stringify({ result: shapedResult }, { replacer: lower })!).digest('hex');
}

test('should confirm a block that an L2 client\'s extras sit on, and leave them out of the body', async (t) => {
  // the upstream with the extras answers first, so its bytes are the ones forwarded
  const { fakes, gw } = await setup(t, [{ answer: chain(l2) }, { answer: chain(), delayMs: 100 }]);
  const r = await gw.post('/rpc/1', blockCall);
  t.is(r.status, 200, r.text);
  t.is(r.headers['x-confirmable'], 'true');
  t.is(r.headers['x-required-confirmations'], '2');
  t.is(r.headers['x-forwarded-from'], fakes[0]!.url);
  t.deepEqual(String(r.headers['x-checked-urls']).split(','), fakes.map((f) => f.url));
  t.false('l1BlockNumber' in r.body.result, r.text);
  t.false('queueOrigin' in r.body.result.transactions[0], r.text);
  t.deepEqual(r.body.result, block('0x20', true), 'every schema field as sent');
  const hash = r.headers['x-json-hash'];
  t.is(hash, sha256Hex(canonicalJson(comparable('eth_getBlockByNumber', { result: r.body.result }))), 'the exported functions recompute it');
  t.is(hash, readmeHash('eth_getBlockByNumber', r.body.result), 'the README\'s recipe recomputes it');
  t.deepEqual(fakes.map((f) => f.calls), [1, 1], 'no upstream asked beyond the N');
});

test('should give the same X-Json-Hash whichever upstream\'s bytes are forwarded', async (t) => {
  const a = await setup(t, [{ answer: chain(l2) }, { answer: chain(), delayMs: 100 }]);
  const b = await setup(t, [{ answer: chain() }, { answer: chain(l2), delayMs: 100 }]);
  const ra = await a.gw.post('/rpc/1', blockCall);
  const rb = await b.gw.post('/rpc/1', blockCall);
  t.is(ra.status, 200, ra.text);
  t.is(rb.status, 200, rb.text);
  t.is(ra.headers['x-json-hash'], rb.headers['x-json-hash']);
  t.deepEqual(ra.body, rb.body);
});

test('should keep the extras that all N sent alike: vouched for by N, not covered by X-Json-Hash', async (t) => {
  const { gw } = await setup(t, [{ answer: chain(l2) }, { answer: chain(l2), delayMs: 50 }]);
  const r = await gw.post('/rpc/1', blockCall);
  t.is(r.status, 200, r.text);
  t.is(r.body.result.l1BlockNumber, '0x13a1b2c');
  t.is(r.body.result.transactions[0].queueOrigin, 'sequencer');
  t.is(r.headers['x-json-hash'], sha256Hex(canonicalJson(comparable('eth_getBlockByNumber', { result: block('0x20', true) }))), 'the hash of the block without them');
  t.is(r.headers['x-json-hash'], readmeHash('eth_getBlockByNumber', r.body.result));
});

test('should leave out an extra that all N sent with different values, and confirm the rest', async (t) => {
  const other = { ...l2, block: { l1BlockNumber: '0x13a1b2d' } };
  const { fakes, gw } = await setup(t, [{ answer: chain(l2) }, { answer: chain(other), delayMs: 100 }]);
  const r = await gw.post('/rpc/1', blockCall);
  t.is(r.status, 200, r.text);
  t.is(r.headers['x-confirmable'], 'true');
  t.false('l1BlockNumber' in r.body.result, 'not vouched for: removed');
  t.is(r.body.result.transactions[0].queueOrigin, 'sequencer', 'the extra they sent alike stays');
  t.deepEqual(fakes.map((f) => f.calls), [1, 1], 'not a disagreement: no third upstream sought');
});

test('should confirm a receipt an L2 client adds l1Fee to, without it, in eth_getTransactionReceipt and eth_getBlockReceipts', async (t) => {
  const { gw } = await setup(t, [{ answer: chain(l2) }, { answer: chain(), delayMs: 100 }]);
  const r = await gw.post('/rpc/1', rpc('eth_getTransactionReceipt', [txHash]));
  t.is(r.status, 200, r.text);
  t.is(r.headers['x-confirmable'], 'true');
  t.deepEqual(r.body.result, receipt());
  t.is(r.headers['x-json-hash'], readmeHash('eth_getTransactionReceipt', r.body.result));
  const list = await gw.post('/rpc/1', rpc('eth_getBlockReceipts', ['0x20']));
  t.is(list.status, 200, list.text);
  t.is(list.headers['x-confirmable'], 'true');
  t.deepEqual(list.body.result, [receipt()]);
});

test('should still find no quorum when a schema field differs, naming it and not the extras', async (t) => {
  const liar = { ...l2, block: { ...l2.block, gasUsed: '0x5209' } };
  const { fakes, gw } = await setup(t, [{ answer: chain(l2) }, { answer: chain(liar), delayMs: 20 }]);
  const r = await gw.post('/rpc/1', blockCall);
  t.is(r.status, 502, r.text);
  t.is(r.body.error.code, -32010);
  t.is(r.body.error.data.groups.length, 2);
  t.deepEqual(r.body.error.data.differences.map((d: { path: string }) => d.path), ['result.gasUsed']);
  t.deepEqual(fakes.map((f) => f.calls), [1, 1]);
});

test('should confirm a batch member with extras and remove them from that member only', async (t) => {
  const { gw } = await setup(t, [{ answer: chain(l2) }, { answer: chain(), delayMs: 100 }]);
  const r = await gw.post('/rpc/1', [rpc('eth_getTransactionReceipt', [txHash], 'r'), rpc('eth_getBlockByNumber', ['0x20', false], 'b')]);
  t.is(r.status, 200, r.text);
  t.is(r.headers['x-confirmable'], 'true');
  t.deepEqual(r.body.map((m: { id: unknown }) => m.id), ['r', 'b']);
  t.deepEqual(r.body[0].result, receipt());
  t.deepEqual(r.body[1].result, block('0x20', false));
});
