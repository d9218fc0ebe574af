/**
 * Absences and the future, on the wire: "not found" is vouched for only by providers that could
 * have seen the data, and a block no upstream has yet gets the nodes' own answer at once.
 *
 * - A read pinned by a transaction or block hash: a `null` (or an unknown-block error) is a vote
 *   only from an upstream at the best credible head (the highest head that is not suspect, not
 *   the median). Two providers three blocks behind cannot confirm that a transaction in the
 *   newest block does not exist.
 * - A block above every upstream's head (after asking each for its head now): relayed from one
 *   upstream, unconfirmed (X-Confirmable: false, X-Required-Confirmations: 1), as the node says it
 *   (`null`, "header not found", a range error), with no failure charged to any upstream.
 */
import test from 'ava';
import { defaultAnswer, startFakeUpstream, type AnswerFn, type FakeUpstream, type RpcCallIn } from '../../support/fake-upstream.js';
import { rpc, startGateway } from '../../support/gateway.js';

const hex = (n: number) => `0x${n.toString(16)}`;
const txHash = `0x${'a1'.repeat(32)}`;
const blockHashOf = (n: number) => `0x${n.toString(16).padStart(64, '0')}`;
const receiptAt = (n: number) => ({ transactionHash: txHash, blockHash: blockHashOf(n), blockNumber: hex(n), status: '0x1', logs: [], gasUsed: '0x5208', transactionIndex: '0x0' });
const txAt = (n: number) => ({ hash: txHash, blockHash: blockHashOf(n), blockNumber: hex(n), from: `0x${'12'.repeat(20)}`, nonce: '0x0', transactionIndex: '0x0', type: '0x2' });
const block = (n: number) => ({ number: hex(n), hash: blockHashOf(n), transactions: [] });

/**
 * A node whose head is `head()` (read at every call, so a test can move it). The transaction
 * `txHash` is in block `txBlock` (when given): the node knows it once its head has that block.
 */
const node = (head: () => number, txBlock?: number): AnswerFn => (call: RpcCallIn) => {
  const p = call.params ?? [];
  const h = head();
  const has = txBlock !== undefined && txBlock <= h;
  switch (call.method) {
    case 'eth_chainId':
      return { result: '0x1' };
    case 'eth_blockNumber':
      return { result: hex(h) };
    case 'eth_getTransactionReceipt':
      return { result: has && p[0] === txHash ? receiptAt(txBlock!) : null };
    case 'eth_getTransactionByHash':
      return { result: has && p[0] === txHash ? txAt(txBlock!) : null };
    case 'eth_getBlockByNumber': {
      const n = typeof p[0] === 'string' && p[0].startsWith('0x') ? Number(p[0]) : undefined;
      if (n === undefined) return { error: { code: -32602, message: 'invalid block tag' } };
      return { result: n <= h ? block(n) : null };
    }
    case 'eth_getBalance':
      return Number(p[1]) <= h ? { result: '0x1' } : { error: { code: -32000, message: 'header not found' } };
    case 'eth_getLogs': {
      const { toBlock } = p[0] as { toBlock: string };
      return Number(toBlock) <= h ? { result: [] } : { error: { code: -32000, message: 'block range extends beyond current head block' } };
    }
    default:
      return defaultAnswer(call);
  }
};

interface Setup {
  fakes: FakeUpstream[];
  gw: Awaited<ReturnType<typeof startGateway>>;
}

/** Fakes in the given order, priority strategy (list order), N from `confirmations`, heads probed once. */
async function setup(t: import('ava').ExecutionContext, answers: AnswerFn[], confirmations = 2, waitMs = 300): Promise<Setup> {
  const fakes = await Promise.all(answers.map((answer) => startFakeUpstream({ answer })));
  const gw = await startGateway({ heads: { waitMs }, chains: { 1: { rpcs: fakes.map((f) => f.url), confirmations, strategy: 'priority' } } });
  t.teardown(() => Promise.all([gw.close(), ...fakes.map((f) => f.close())]));
  await gw.rpc.startHealthChecks().firstRound;
  return { fakes, gw };
}

/** Calls of one method a fake received; of eth_getBlockByNumber, those for a block number (not the head polls' tags). */
const sent = (fake: FakeUpstream, method: string) =>
  fake.requests.filter((r) => {
    const call = r.body as RpcCallIn | undefined;
    return call?.method === method && !(method === 'eth_getBlockByNumber' && !String(call.params?.[0]).startsWith('0x'));
  }).length;
const checked = (r: { headers: Record<string, unknown> }) => String(r.headers['x-checked-urls']).split(',').map((u) => u.trim()).sort();
const failuresOf = (gw: Setup['gw']) => gw.rpc.registry.chains.get('1')!.upstreams.map((u) => u.health.failures);

// --- absences pinned by a hash: only the best head vouches

for (const method of ['eth_getTransactionReceipt', 'eth_getTransactionByHash']) {
  test(`${method}: two nodes 3 blocks behind, listed first, cannot confirm that a transaction of the newest block does not exist`, async (t) => {
    const { fakes, gw } = await setup(t, [node(() => 97, 100), node(() => 97, 100), node(() => 100, 100)]);
    const r = await gw.post('/rpc/1', rpc(method, [txHash], 31));
    t.not(r.body.result, null, 'never the lagging nodes\' null');
    t.is(r.status, 503, r.text);
    t.is(r.body.id, 31);
    t.is(r.body.error.code, -32016);
    t.deepEqual(r.body.error.data.had, [fakes[2]!.url], 'the node at the tip had it');
    t.deepEqual([...r.body.error.data.lacked].sort(), [fakes[0]!.url, fakes[1]!.url].sort());
    t.is(r.headers['x-json-hash'], undefined, 'nothing was confirmed');
    t.deepEqual(fakes.map((f) => sent(f, method)), [2, 2, 1], 'the lagging ones asked again after their heads were polled');
  });

  test(`${method}: a lagging node that reaches the block meanwhile is asked again once its head, polled at once, shows it; the transaction is confirmed by two`, async (t) => {
    // The first node is at 97 when asked, and at 100 right after: the gateway learns it only by
    // asking for its head again (no probe round follows within the wait).
    let lagging = 97;
    const first = node(() => lagging, 100);
    const catchingUp: AnswerFn = (call) => {
      const answer = first(call);
      if (call.method === method) lagging = 100;
      return answer;
    };
    const { fakes, gw } = await setup(t, [catchingUp, node(() => 97, 100), node(() => 100, 100)], 2, 5_000);
    const before = sent(fakes[0]!, 'eth_blockNumber');
    const r = await gw.post('/rpc/1', rpc(method, [txHash], 32));
    t.is(r.status, 200, r.text);
    t.is(r.headers['x-confirmable'], 'true');
    t.is(r.body.result.hash ?? r.body.result.transactionHash, txHash);
    t.deepEqual(checked(r), [fakes[0]!.url, fakes[2]!.url].sort());
    t.true(sent(fakes[0]!, 'eth_blockNumber') > before, 'its head was polled at once');
    t.is(sent(fakes[0]!, method), 2, 'asked once, and again after its head caught up');
  });
}

test('a transaction no node has: the null of the node at the best head counts, the lagging nodes\' nulls do not (-32016 naming the best head)', async (t) => {
  const { fakes, gw } = await setup(t, [node(() => 97), node(() => 97), node(() => 100)]);
  const r = await gw.post('/rpc/1', rpc('eth_getTransactionReceipt', [txHash], 33));
  t.is(r.status, 503, r.text);
  t.is(r.body.error.code, -32016);
  t.like(r.body.error.data, { hash: txHash, pin: 'transaction', required: 2, eligible: 1, bestHead: '0x64', atBestHead: [fakes[2]!.url] });
  t.deepEqual(
    r.body.error.data.behind.map((b: { upstream: string; latest: string }) => [b.upstream, b.latest]).sort(),
    [[fakes[0]!.url, '0x61'], [fakes[1]!.url, '0x61']].sort(),
  );
  t.truthy(r.headers['retry-after']);
  t.is(r.headers['x-json-hash'], undefined);
});

test('a transaction no node has, every node at the tip: the nulls of two are a confirmed null', async (t) => {
  const { fakes, gw } = await setup(t, [node(() => 100), node(() => 100), node(() => 100)]);
  const r = await gw.post('/rpc/1', rpc('eth_getTransactionReceipt', [txHash], 34));
  t.is(r.status, 200, r.text);
  t.is(r.headers['x-confirmable'], 'true');
  t.is(r.body.result, null);
  t.deepEqual(fakes.map((f) => sent(f, 'eth_getTransactionReceipt')), [1, 1, 0]);
});

test('a lagging node\'s null becomes a vote once its head, polled at once, reaches the best head', async (t) => {
  let lagging = 97;
  const { gw } = await setup(t, [node(() => lagging), node(() => 100), node(() => 100)], 2, 5_000);
  lagging = 100;
  const r = await gw.post('/rpc/1', rpc('eth_getTransactionReceipt', [txHash], 35));
  t.is(r.status, 200, r.text);
  t.is(r.body.result, null);
  t.is(r.headers['x-confirmable'], 'true');
  t.is(r.headers['x-required-confirmations'], '2');
});

test('N=1: a lagging node\'s null is not the answer; the node at the tip is asked and its receipt returned', async (t) => {
  const { fakes, gw } = await setup(t, [node(() => 97, 100), node(() => 100, 100)], 1);
  const r = await gw.post('/rpc/1', rpc('eth_getTransactionReceipt', [txHash], 36));
  t.is(r.status, 200, r.text);
  t.is(r.headers['x-confirmable'], 'true');
  t.is(r.headers['x-required-confirmations'], '1');
  t.is(r.headers['x-checked-urls'], fakes[1]!.url);
  t.deepEqual(r.body.result, receiptAt(100));
  t.deepEqual(fakes.map((f) => sent(f, 'eth_getTransactionReceipt')), [1, 1]);
});

// --- above every head: the nodes' own answer, at once, unconfirmed, nobody charged

const future: [string, ReturnType<typeof rpc>, (body: { result?: unknown; error?: { code: number; message: string } }) => void][] = [
  ['eth_getBlockByNumber of the next block: null', rpc('eth_getBlockByNumber', [hex(101), false], 41), (b) => void (b.result === null || assertFail('null', b))],
  ['eth_getBalance at the next block: the node\'s "header not found"', rpc('eth_getBalance', [`0x${'44'.repeat(20)}`, hex(101)], 41), (b) => void (b.error?.message === 'header not found' || assertFail('header not found', b))],
  ['eth_getLogs up to a block beyond every head: the node\'s range error', rpc('eth_getLogs', [{ fromBlock: hex(90), toBlock: hex(105) }], 41), (b) => void (b.error?.message === 'block range extends beyond current head block' || assertFail('range error', b))],
];
function assertFail(want: string, body: unknown): never {
  throw new Error(`expected ${want}, got ${JSON.stringify(body)}`);
}

for (const [name, body, check] of future) {
  test(`above every head, ${name}, relayed at once, unconfirmed, no upstream charged`, async (t) => {
    // A long wait for heads: answering at once shows the gateway did not wait for them.
    const { fakes, gw } = await setup(t, [node(() => 100), node(() => 100), node(() => 99)], 2, 20_000);
    const polls = fakes.map((f) => sent(f, 'eth_blockNumber'));
    const started = performance.now();
    const r = await gw.post('/rpc/1', body);
    t.is(r.status, 200, r.text);
    t.is(r.body.id, 41);
    check(r.body);
    t.is(r.headers['x-confirmable'], 'false');
    t.is(r.headers['x-required-confirmations'], '1');
    t.is(r.headers['x-checked-urls'], fakes[0]!.url, 'one upstream, relayed');
    t.truthy(r.headers['x-json-hash']);
    const method = (body as { method: string }).method;
    t.deepEqual(fakes.map((f) => sent(f, method)), [1, 0, 0]);
    t.true(fakes.every((f, i) => sent(f, 'eth_blockNumber') > polls[i]!), 'every upstream was asked for its head first');
    t.deepEqual(failuresOf(gw), [0, 0, 0], 'no upstream was charged for the client\'s question');
    t.true(performance.now() - started < 20_000, 'not the wait for heads');
  });
}

test('a block above the known heads that one upstream reached meanwhile: the fresh head poll finds it, and it is confirmable', async (t) => {
  let tip = 100;
  const { fakes, gw } = await setup(t, [node(() => 100), node(() => tip)], 1);
  tip = 101;
  const r = await gw.post('/rpc/1', rpc('eth_getBlockByNumber', [hex(101), false], 42));
  t.is(r.status, 200, r.text);
  t.is(r.headers['x-confirmable'], 'true');
  t.deepEqual(r.body.result, block(101));
  t.is(r.headers['x-checked-urls'], fakes[1]!.url, 'the upstream that has it');
});

test('a batch: the member above every head is relayed unconfirmed, the other confirmed; the batch says X-Confirmable false', async (t) => {
  const { fakes, gw } = await setup(t, [node(() => 100), node(() => 100), node(() => 100)]);
  const r = await gw.post('/rpc/1', [rpc('eth_getBlockByNumber', [hex(99), false], 1), rpc('eth_getBlockByNumber', [hex(120), false], 2)]);
  t.is(r.status, 200, r.text);
  t.deepEqual(r.body.map((m: { id: number; result: unknown }) => [m.id, m.result]), [[1, block(99)], [2, null]]);
  t.is(r.headers['x-confirmable'], 'false');
  t.deepEqual(failuresOf(gw), [0, 0, 0]);
  t.true(fakes.length === 3);
});
