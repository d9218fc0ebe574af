/**
 * Absences from upstreams whose heads are unknown, on the wire: a pipeline mounted without
 * startHealthChecks() (no probe, no head tracker), so that no head is known when the request
 * comes. A `null` from such an upstream cannot be told from a lagging node's: it is no vote. The
 * heads are learned on demand (`eth_blockNumber`, only when an absence needs them): two lagging
 * nodes asked first never confirm `null` for a block or transaction a third one has, and a real
 * absence is still confirmed once the heads show the nodes could have seen the data. A request
 * whose answers are the data sends no head poll. An `eth_getLogs` range is held to the same rule
 * whatever its answer (a node below toBlock answers a real but partial list): two lagging nodes
 * never confirm their partial list, before the first head poll of a gateway that tracks heads
 * either. So is a batch asked as a whole (the stages composed without runMembers), member by
 * member: a member pinned by hash is held to the best head, and never confirmed "not found" once
 * an upstream answered it with data.
 */
import test from 'ava';
import connect from 'connect';
import { headSettings, setChainHeadSettings } from '../../../lib/health/heads.js';
import { createMetrics } from '../../../lib/ops/metrics.js';
import { createRegistry } from '../../../lib/upstream/registry.js';
import { eligibilityPolicy } from '../../../lib/verify/eligibility-policy.js';
import { hedgePolicy, hedgeSettings } from '../../../lib/verify/hedge-policy.js';
import { composePolicies } from '../../../lib/verify/loop-policy.js';
import { canonicalize, classify, emitHeaders, fetchParallel, parseJsonRpc, rpcErrorHandler, selectUpstreams, verify } from '../../../middleware/index.js';
import { defaultAnswer, startFakeUpstream, type AnswerFn, type FakeUpstream, type RpcCallIn } from '../../support/fake-upstream.js';
import { makeConfig, rpc, send, startGateway } from '../../support/gateway.js';
import { serveHandler } from '../../support/stage.js';

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

// ---------------------------------------------------------------------------------------------
// Log ranges: a node below toBlock answers the logs of the blocks it has, a real but partial list.

const logAt = (n: number) => ({
  address: '0x5523d3c98809dddb82c686e152f5c58b1b0fb59e',
  topics: [`0x${'12'.repeat(32)}`],
  data: '0x',
  blockNumber: hex(n),
  blockHash: blockHashOf(n),
  transactionHash: `0x${n.toString(16).padStart(64, '5')}`,
  transactionIndex: '0x0',
  logIndex: '0x0',
  removed: false,
});
/** A node at head `head` with one log in every block: eth_getLogs answers the blocks of the range it has. */
const logNode = (head: number, heads = true): AnswerFn => (call: RpcCallIn) => {
  if (call.method !== 'eth_getLogs') return node(head, undefined, heads)(call);
  const f = (call.params?.[0] ?? {}) as { fromBlock?: string; toBlock?: string };
  const list: unknown[] = [];
  for (let n = Number(f.fromBlock); n <= Math.min(Number(f.toBlock), head); n++) list.push(logAt(n));
  return { result: list };
};
const range = (from: number, to: number, id = 1) => rpc('eth_getLogs', [{ fromBlock: hex(from), toBlock: hex(to) }], id);

test('two lagging nodes asked first do not confirm their partial log list for a range a third node has whole: -32016, with no head polled before', async (t) => {
  const { fakes, gw } = await setup(t, [logNode(10), logNode(10), logNode(13)]);
  const r = await gw.post('/rpc/1', range(8, 12));
  t.is(r.status, 503, r.text);
  t.is(r.body.result, undefined, 'never the partial list');
  t.is(r.body.error.code, -32016);
  t.like(r.body.error.data, { block: hex(12), required: 2, eligible: 1 });
  t.is(r.headers['retry-after'], '1');
  t.deepEqual(fakes.map((f) => asked(f, 'eth_getLogs')), [1, 1, 1], 'each asked once: none of the lists counts before its head is known');
  t.deepEqual(fakes.map((f) => asked(f, 'eth_blockNumber')), [1, 1, 1], 'each head asked once, on demand');
});

test('a log range is confirmed once the heads learned on demand show the nodes have its toBlock; the next range needs no head poll', async (t) => {
  const { fakes, gw } = await setup(t, [logNode(13), logNode(13), logNode(13)]);
  const r = await gw.post('/rpc/1', range(8, 12));
  t.is(r.status, 200, r.text);
  t.is(r.headers['x-confirmable'], 'true');
  t.is(r.headers['x-required-confirmations'], '2');
  t.deepEqual(r.body.result.map((l: { blockNumber: string }) => l.blockNumber), [8, 9, 10, 11, 12].map(hex));
  t.deepEqual(fakes.map((f) => asked(f, 'eth_blockNumber')), [1, 1, 1], 'each head asked once');
  t.deepEqual(fakes.slice(0, 2).map((f) => asked(f, 'eth_getLogs')), [2, 2], 'the two asked first, asked again once their heads were known');

  const before = fakes.map((f) => f.requests.length);
  const again = await gw.post('/rpc/1', range(9, 13, 2));
  t.is(again.status, 200, again.text);
  t.is(again.headers['x-confirmable'], 'true');
  t.is(again.body.result.length, 5);
  t.is(fakes.reduce((sum, f, i) => sum + f.requests.length - before[i]!, 0), 2, 'two eth_getLogs calls, no head poll');
});

test('upstreams whose head polls keep failing cannot confirm a log range: -32016, never X-Confirmable true', async (t) => {
  const { fakes, gw } = await setup(t, [logNode(10, false), logNode(10, false)]);
  const r = await gw.post('/rpc/1', range(8, 12));
  t.is(r.status, 503, r.text);
  t.is(r.body.error.code, -32016);
  t.is(r.body.result, undefined);
  t.deepEqual(fakes.map((f) => asked(f, 'eth_getLogs')), [1, 1]);
  t.deepEqual(fakes.map((f) => asked(f, 'eth_blockNumber')), [1, 1]);
});

test('with no upstream beyond the N asked, the wait for heads starts once every answer is in: both asked for their heads and again, the range confirmed', async (t) => {
  // (the faster node's answer comes first; the slower one's must not be left out of the wait)
  const fakes = await Promise.all([startFakeUpstream({ answer: logNode(13) }), startFakeUpstream({ answer: logNode(13), delayMs: 100 })]);
  const gw = await startGateway({ heads: { waitMs: 300 }, chains: { 1: { rpcs: fakes.map((f) => f.url), confirmations: 2, strategy: 'priority' } } });
  t.teardown(() => Promise.all([gw.close(), ...fakes.map((f) => f.close())]));
  const r = await gw.post('/rpc/1', range(8, 12));
  t.is(r.status, 200, r.text);
  t.is(r.headers['x-confirmable'], 'true');
  t.is(r.body.result.length, 5);
  t.deepEqual(fakes.map((f) => asked(f, 'eth_blockNumber')), [1, 1]);
  t.deepEqual(fakes.map((f) => asked(f, 'eth_getLogs')), [2, 2]);
});

// ---------------------------------------------------------------------------------------------
// A batch asked as a whole: the stages composed without runMembers (middleware/README.md,
// "Composing the stages yourself"), so the batch goes upstream as one request and is voted on whole.

async function composed(t: import('ava').ExecutionContext, answers: AnswerFn[]) {
  const fakes = await Promise.all(answers.map((answer) => startFakeUpstream({ answer })));
  t.teardown(() => Promise.all(fakes.map((f) => f.close())));
  const config = makeConfig({ heads: { waitMs: 300 }, timeouts: { hedgeMs: 1000 }, chains: { 1: { rpcs: fakes.map((f) => f.url), confirmations: 2, strategy: 'priority' } } });
  const registry = createRegistry(config);
  const metrics = createMetrics(registry);
  for (const chain of registry.chains.values()) setChainHeadSettings(chain, headSettings(chain.id, config.heads));
  const app = connect()
    .use(parseJsonRpc({ registry, bodyLimit: config.limits.bodyBytes, maxBatchSize: config.limits.batchSize, maxDepth: config.limits.jsonDepth }) as connect.NextHandleFunction)
    .use(classify() as connect.NextHandleFunction)
    .use(selectUpstreams() as connect.NextHandleFunction)
    .use(fetchParallel({ upstreamTimeoutMs: config.timeouts.upstreamMs, requestTimeoutMs: config.timeouts.requestMs, maxResponseBytes: config.limits.responseBytes }) as connect.NextHandleFunction)
    .use(canonicalize() as connect.NextHandleFunction)
    .use(verify({ metrics, disputes: config.disputes, policy: composePolicies(hedgePolicy(hedgeSettings(config.timeouts)), eligibilityPolicy) }) as connect.NextHandleFunction)
    .use(emitHeaders({ redactHeaders: config.redactHeaders, sendMs: config.timeouts.sendMs }) as connect.NextHandleFunction)
    .use(rpcErrorHandler() as connect.ErrorHandleFunction);
  const { url, close } = await serveHandler(app);
  t.teardown(async () => {
    await close();
    await registry.close();
  });
  return { fakes, post: (body: unknown) => send(url, 'POST', '/rpc/1', JSON.stringify(body), { 'content-type': 'application/json' }) };
}

/** Upstream calls of a method, alone or in an upstream batch. */
const askedIn = (f: FakeUpstream, method: string) =>
  f.requests.flatMap((r) => (Array.isArray(r.body) ? r.body : [r.body])).filter((c) => (c as { method?: string }).method === method).length;

test('a batch asked as a whole: two lagging nodes asked first do not confirm a partial log list and a null block a third node has: -32016', async (t) => {
  const { fakes, post } = await composed(t, [logNode(10), logNode(10), logNode(13)]);
  const r = await post([range(8, 12, 1), rpc('eth_getBlockByNumber', [hex(12), false], 2)]);
  t.is(r.status, 503, r.text);
  t.is(r.body.error.code, -32016);
  t.is(r.body.id, null);
  t.like(r.body.error.data, { block: hex(12), required: 2, eligible: 1 });
  t.deepEqual(fakes.map((f) => askedIn(f, 'eth_getLogs')), [1, 1, 1]);
  t.deepEqual(fakes.map((f) => askedIn(f, 'eth_blockNumber')), [1, 1, 1], 'each head asked once, on demand');
});

test('a batch asked as a whole of real answers needs no head: confirmed by the first two, no head poll', async (t) => {
  const { fakes, post } = await composed(t, [logNode(13), logNode(13), logNode(13)]);
  const r = await post([rpc('eth_getBlockByNumber', [hex(12), false], 1), rpc('eth_getBlockByNumber', [hex(11), false], 2)]);
  t.is(r.status, 200, r.text);
  t.is(r.headers['x-confirmable'], 'true');
  t.deepEqual(r.body.map((m: { result: { number: string } }) => m.result.number), [hex(12), hex(11)]);
  t.deepEqual(fakes.map((f) => f.requests.length), [1, 1, 0]);
  t.deepEqual(fakes.map((f) => askedIn(f, 'eth_blockNumber')), [0, 0, 0]);
});

test('a batch asked as a whole holding a log range is confirmed once the heads learned on demand show its toBlock', async (t) => {
  const { fakes, post } = await composed(t, [logNode(13), logNode(13), logNode(13)]);
  const r = await post([range(8, 12, 1), rpc('eth_getBlockByNumber', [hex(12), false], 2)]);
  t.is(r.status, 200, r.text);
  t.is(r.headers['x-confirmable'], 'true');
  t.is(r.body[0].result.length, 5);
  t.deepEqual(fakes.map((f) => askedIn(f, 'eth_blockNumber')), [1, 1, 1]);
});

test('the first moments of a gateway whose probes and head tracker have started, before their first head answer: two lagging nodes do not confirm their partial log list', async (t) => {
  // (as `omnigate serve`, which listens before its first head round has answered: the first round's
  // eth_blockNumber calls are held unanswered; the ones asked later, on demand, are answered)
  let started = false;
  const held = (body: unknown) => !started && (body as { method?: string } | undefined)?.method === 'eth_blockNumber';
  const fakes = await Promise.all([logNode(10), logNode(10), logNode(13)].map((answer) => startFakeUpstream({ answer, hangIf: held })));
  const gw = await startGateway({ heads: { waitMs: 300 }, chains: { 1: { rpcs: fakes.map((f) => f.url), confirmations: 2, strategy: 'priority' } } });
  t.teardown(() => Promise.all([gw.close(), ...fakes.map((f) => f.close())]));
  gw.rpc.startHealthChecks();
  gw.rpc.startHeadTracking();
  // The probe's and the head tracker's eth_blockNumber have reached every fake, unanswered.
  for (const until = Date.now() + 10_000; fakes.some((f) => asked(f, 'eth_blockNumber') < 2) && Date.now() < until; ) await new Promise((r) => setTimeout(r, 5));
  t.deepEqual(fakes.map((f) => asked(f, 'eth_blockNumber')), [2, 2, 2]);
  started = true;
  const r = await gw.post('/rpc/1', range(8, 12));
  t.is(r.status, 503, r.text);
  t.is(r.body.result, undefined, 'never the partial list');
  t.is(r.body.error.code, -32016);
  t.like(r.body.error.data, { block: hex(12), required: 2, eligible: 1 });
  t.deepEqual(fakes.map((f) => asked(f, 'eth_getLogs')), [1, 1, 1]);
  t.deepEqual(fakes.map((f) => asked(f, 'eth_blockNumber')), [3, 3, 3], 'each asked its head once more, on demand');
});

// A batch asked as a whole whose members are pinned by hash: each member held to the hash rule.
const otherTx = `0x${'c3'.repeat(32)}`;
const receipts = (first = txHash, id = 1) => [rpc('eth_getTransactionReceipt', [first], id), rpc('eth_getTransactionReceipt', [otherTx], id + 1)];

test('a batch of receipts asked as a whole: two lagging nodes asked first do not confirm null for a receipt a third node has: -32016, with no head polled before', async (t) => {
  const { fakes, post } = await composed(t, [node(10), node(10), node(13, 12)]);
  const r = await post(receipts());
  t.is(r.status, 503, r.text);
  t.false(Array.isArray(r.body), 'never a confirmed null');
  t.is(r.body.error.code, -32016);
  t.is(r.body.id, null);
  t.like(r.body.error.data, { hash: txHash, pin: 'transaction', required: 2, had: [fakes[2]!.url] });
  t.deepEqual(fakes.map((f) => askedIn(f, 'eth_blockNumber')), [1, 1, 1], 'each head asked once, on demand');
});

test('a batch of receipts asked as a whole, heads known and level: a member one upstream answered with data is never confirmed null by two others', async (t) => {
  const { fakes, post } = await composed(t, [node(13), node(13, 12), node(13)]);
  // Heads learned on demand by a first absence every node vouches for.
  const first = await post(rpc('eth_getTransactionReceipt', [otherTx], 1));
  t.is(first.status, 200, first.text);
  t.deepEqual(fakes.map((f) => askedIn(f, 'eth_blockNumber')), [1, 1, 1]);
  const r = await post(receipts(txHash, 5));
  t.is(r.status, 503, r.text);
  t.false(Array.isArray(r.body), 'never a confirmed null');
  t.is(r.body.error.code, -32016);
  t.like(r.body.error.data, { hash: txHash, pin: 'transaction', had: [fakes[1]!.url] });
});

test('a batch of receipts asked as a whole: a real absence is confirmed once the heads learned on demand show the nodes at the best head', async (t) => {
  const { fakes, post } = await composed(t, [node(13), node(13), node(13)]);
  const r = await post(receipts());
  t.is(r.status, 200, r.text);
  t.is(r.headers['x-confirmable'], 'true');
  t.deepEqual(r.body.map((m: { result: unknown }) => m.result), [null, null]);
  t.deepEqual(fakes.map((f) => askedIn(f, 'eth_blockNumber')), [1, 1, 1]);
});

test('a batch of receipts asked as a whole with the data needs no head: confirmed by the first two, no head poll', async (t) => {
  const { fakes, post } = await composed(t, [node(13, 12), node(13, 12), node(13, 12)]);
  const r = await post([rpc('eth_getTransactionReceipt', [txHash], 1), rpc('eth_getTransactionReceipt', [txHash], 2)]);
  t.is(r.status, 200, r.text);
  t.is(r.headers['x-confirmable'], 'true');
  t.deepEqual(r.body.map((m: { result: { blockNumber: string } }) => m.result.blockNumber), [hex(12), hex(12)]);
  t.deepEqual(fakes.map((f) => f.requests.length), [1, 1, 0]);
});

test('a batch of receipts asked as a whole: the answer with a receipt that lacks the other one (from behind the best head) still takes back the null counted before', async (t) => {
  // Heads 13, 12, 13: the node with the receipt is a block behind, so its null for the other
  // receipt is no vote, nor its whole answer; the first node's null for the receipt it had is
  // taken back all the same, and the third node's null is not counted.
  const { fakes, post } = await composed(t, [node(13), node(12, 12), node(13)]);
  const first = await post(rpc('eth_getTransactionReceipt', [otherTx], 1));
  t.is(first.status, 200, first.text);
  const r = await post(receipts(txHash, 5));
  t.is(r.status, 503, r.text);
  t.false(Array.isArray(r.body), 'never a confirmed null');
  t.is(r.body.error.code, -32016);
  t.like(r.body.error.data, { hash: txHash, pin: 'transaction', had: [fakes[1]!.url] });
  // The first two are asked the batch. When the receipt comes first it is no vote (from behind
  // the best head), and the third is asked in its place; when the first node's null comes first,
  // the receipt then takes it back and no group can reach N: the third is not asked. Either way
  // each node asked is named, the first among those that lacked it.
  const askedBatch = fakes.map((f) => f.requests.some((q) => Array.isArray(q.body)));
  t.deepEqual(askedBatch.slice(0, 2), [true, true]);
  const lacked = askedBatch[2] ? [fakes[0]!.url, fakes[2]!.url] : [fakes[0]!.url];
  t.deepEqual([...r.body.error.data.lacked].sort(), lacked.sort());
});

test('a batch asked as a whole pinned by number and by hash: two lagging nodes asked first do not confirm null for the receipt the third node has: -32016', async (t) => {
  const { fakes, post } = await composed(t, [node(10), node(10), node(13, 12)]);
  const r = await post([rpc('eth_getBlockByNumber', [hex(12), false], 1), rpc('eth_getTransactionReceipt', [txHash], 2)]);
  t.is(r.status, 503, r.text);
  t.false(Array.isArray(r.body), 'never a confirmed null');
  t.is(r.body.error.code, -32016);
  t.like(r.body.error.data, { hash: txHash, had: [fakes[2]!.url] });
  t.deepEqual([...r.body.error.data.lacked].sort(), [fakes[0]!.url, fakes[1]!.url].sort());
});
