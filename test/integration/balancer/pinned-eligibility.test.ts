/**
 * Issues 17 and 25, "who may vote" for every pinned read: hash pins (a `null` from a node that
 * lacks what another upstream has is not a vote for "not found"), the pins of the whole method
 * table and of the config (eth_getBlockReceipts, eth_getProof, a declared custom method), and
 * `safe`/`finalized` resolved through the tracked heads. Fake upstreams on real sockets; every
 * assertion is on the wire (status, headers, body, what each upstream was sent).
 */
import test from 'ava';
import { defaultAnswer, startFakeUpstream, type AnswerFn, type FakeOptions, type FakeUpstream, type RpcCallIn } from '../../support/fake-upstream.js';
import { rpc, startGateway } from '../../support/gateway.js';

const txHash = `0x${'a1'.repeat(32)}`;
const blockHash = `0x${'b2'.repeat(32)}`;
const address = `0x${'44'.repeat(20)}`;
const receipt = { transactionHash: txHash, blockHash, blockNumber: '0x64', status: '0x1', logs: [], gasUsed: '0x5208' };
const hex = (n: number) => `0x${n.toString(16)}`;
const block = (n: number) => ({ number: hex(n), hash: `0x${n.toString(16).padStart(64, '0')}`, transactions: [] });

/**
 * A node at `head` (finalized/safe at `finalized` when given: it answers the tags), which knows
 * the receipt `txHash` and the block `blockHash` only when `knows`.
 */
const node = (head: number, options: { knows?: boolean; finalized?: number } = {}): AnswerFn => (call) => {
  const p = call.params ?? [];
  const at = (v: unknown) => (typeof v === 'string' && v.startsWith('0x') ? Number(v) : undefined);
  switch (call.method) {
    case 'eth_chainId':
      return { result: '0x1' };
    case 'eth_blockNumber':
      return { result: hex(head) };
    case 'eth_getBlockByNumber': {
      if ((p[0] === 'safe' || p[0] === 'finalized') && options.finalized !== undefined) return { result: block(options.finalized) };
      if (p[0] === 'safe' || p[0] === 'finalized') return { error: { code: -32602, message: 'invalid block tag' } };
      const n = at(p[0]);
      return { result: n !== undefined && n <= head ? block(n) : null };
    }
    case 'eth_getTransactionReceipt':
      return { result: options.knows && p[0] === txHash ? receipt : null };
    case 'eth_getBlockReceipts': {
      if (p[0] === blockHash) return { result: options.knows ? [receipt] : null };
      const n = at(p[0]);
      return { result: n !== undefined && n <= head ? [receipt] : null };
    }
    case 'eth_getProof': {
      const n = at(p[2]);
      return n !== undefined && n <= head ? { result: { address, balance: '0x1', storageProof: [] } } : { error: { code: -32000, message: 'header not found' } };
    }
    case 'foo_getThing': {
      const n = at(p[1]);
      return { result: n !== undefined && n <= head ? { thing: n } : null };
    }
    case 'eth_getBalance': {
      const n = at(p[1]);
      return n !== undefined && n <= head ? { result: hex(1000 + n) } : { error: { code: -32000, message: 'header not found' } };
    }
    default:
      return defaultAnswer(call);
  }
};

async function gateway(t: import('ava').ExecutionContext, answers: (AnswerFn | FakeOptions)[], chain: Record<string, unknown> = {}, top: Record<string, unknown> = {}) {
  const fakes = await Promise.all(answers.map((a) => startFakeUpstream(typeof a === 'function' ? { answer: a } : a)));
  const gw = await startGateway({ heads: { waitMs: 300 }, ...top, chains: { 1: { rpcs: fakes.map((f) => f.url), confirmations: 2, strategy: 'priority', ...chain } } });
  t.teardown(() => Promise.all([gw.close(), ...fakes.map((f) => f.close())]));
  return { fakes, gw };
}

/** X-Checked-URLS as a sorted list (arrival order varies). */
const checked = (r: { headers: Record<string, unknown> }) => String(r.headers['x-checked-urls']).split(',').map((u) => u.trim()).sort();

/** The calls of one method a fake received (probes and head polls aside). */
const sent = (fake: FakeUpstream, method: string) => fake.requests.map((r) => r.body as RpcCallIn).filter((b) => b?.method === method);

// --- hash pins

test('a receipt one upstream has and two answer null at N=2: never a confirmed null, -32016 naming the hash and who had it', async (t) => {
  const { fakes, gw } = await gateway(t, [node(100, { knows: true }), node(100), node(100)]);
  const r = await gw.post('/rpc/1', rpc('eth_getTransactionReceipt', [txHash], 41));
  t.is(r.status, 503, r.text);
  t.is(r.body.id, 41);
  t.is(r.body.error.code, -32016);
  t.regex(r.body.error.message, new RegExp(`transaction ${txHash} is not yet available on 2 upstreams \\(1 has it, 2 answer as if they lack it\\)`));
  t.like(r.body.error.data, { hash: txHash, pin: 'transaction', required: 2, eligible: 1 });
  t.deepEqual(r.body.error.data.had, [fakes[0]!.url]);
  t.deepEqual([...r.body.error.data.lacked].sort(), [fakes[1]!.url, fakes[2]!.url].sort());
  t.truthy(r.headers['retry-after']);
  t.is(r.headers['x-json-hash'], undefined, 'nothing was confirmed');
  // The lacking ones were asked again after the wait for heads; the one that had it once.
  t.deepEqual(fakes.map((f) => sent(f, 'eth_getTransactionReceipt').length), [1, 2, 2]);
});

test('a null counted before the upstream with the receipt answered is taken back', async (t) => {
  // The null comes first and is counted; the receipt arrives later and takes it back (without
  // that, the third upstream's null would make two and confirm "not found").
  const { fakes, gw } = await gateway(t, [node(100), { answer: node(100, { knows: true }), delayMs: 200 }, node(100)]);
  const r = await gw.post('/rpc/1', rpc('eth_getTransactionReceipt', [txHash], 42));
  t.is(r.status, 503, r.text);
  t.is(r.body.error.code, -32016);
  t.deepEqual(r.body.error.data.had, [fakes[1]!.url]);
});

test('an upstream inventing a receipt turns the honest nulls into -32016 at once, never a confirmed receipt', async (t) => {
  // Heads tracked, all at 100; the liar's receipt names block 100, which the others have: they
  // are not behind, so no wait for heads; the client is refused, not misled.
  const { fakes, gw } = await gateway(t, [node(100, { knows: true }), node(100), node(100)]);
  await gw.rpc.startHealthChecks().firstRound;
  const r = await gw.post('/rpc/1', rpc('eth_getTransactionReceipt', [txHash], 46));
  t.is(r.status, 503, r.text);
  t.is(r.body.error.code, -32016);
  t.deepEqual(r.body.error.data.had, [fakes[0]!.url]);
  t.deepEqual(fakes.map((f) => sent(f, 'eth_getTransactionReceipt').length), [1, 1, 1], 'the lacking nodes are not behind: not asked again');
});

test('a receipt two upstreams have is confirmed by them; the third one\'s null is not a vote', async (t) => {
  const { fakes, gw } = await gateway(t, [node(100, { knows: true }), node(100), node(100, { knows: true })]);
  const r = await gw.post('/rpc/1', rpc('eth_getTransactionReceipt', [txHash], 43));
  t.is(r.status, 200, r.text);
  t.is(r.headers['x-confirmable'], 'true');
  t.deepEqual(checked(r), [fakes[0]!.url, fakes[2]!.url].sort());
  t.is(r.body.id, 43);
  t.deepEqual(r.body.result, receipt);
});

test('a receipt no upstream has: the N nulls are a confirmed null as before', async (t) => {
  // Heads probed: the nodes are known to be at the best head, so their nulls are votes.
  const { fakes, gw } = await gateway(t, [node(100), node(100), node(100)]);
  await gw.rpc.startHealthChecks().firstRound;
  const r = await gw.post('/rpc/1', rpc('eth_getTransactionReceipt', [txHash], 44));
  t.is(r.status, 200, r.text);
  t.is(r.headers['x-confirmable'], 'true');
  t.deepEqual(checked(r), [fakes[0]!.url, fakes[1]!.url].sort());
  t.is(r.body.result, null);
  t.is(sent(fakes[2]!, 'eth_getTransactionReceipt').length, 0, 'two nulls suffice: the third is not asked');
});

test('eth_getBlockReceipts by block hash one upstream has: -32016 naming the block hash', async (t) => {
  const { gw } = await gateway(t, [node(100), node(100, { knows: true }), node(100)]);
  const r = await gw.post('/rpc/1', rpc('eth_getBlockReceipts', [blockHash], 45));
  t.is(r.status, 503, r.text);
  t.like(r.body.error.data, { hash: blockHash, pin: 'block' });
});

// --- block-number pins of the whole table and of the config (heads 100, 100, 110)

async function lagging(t: import('ava').ExecutionContext, chain: Record<string, unknown> = {}) {
  const g = await gateway(t, [node(100), node(100), node(110)], chain);
  await g.gw.rpc.startHealthChecks().firstRound;
  return g;
}

const aboveTwoHeads: [string, ReturnType<typeof rpc>][] = [
  ['eth_getBlockReceipts(0x69)', rpc('eth_getBlockReceipts', ['0x69'], 7)],
  ['eth_getProof at 0x69', rpc('eth_getProof', [address, [], '0x69'], 7)],
  ['eth_getProof at EIP-1898 {blockNumber: 0x69}', rpc('eth_getProof', [address, [], { blockNumber: '0x69' }], 7)],
];
for (const [name, body] of aboveTwoHeads) {
  test(`${name} above two nodes' head: -32016 naming the block`, async (t) => {
    const { gw } = await lagging(t);
    const r = await gw.post('/rpc/1', body);
    t.is(r.status, 503, r.text);
    t.is(r.body.id, 7);
    t.is(r.body.error.code, -32016);
    t.like(r.body.error.data, { block: '0x69', required: 2, eligible: 1 });
  });
}

test('a config-declared pinned method gets eligibility: above two heads -32016, below them confirmed', async (t) => {
  const { gw } = await lagging(t, { confirmableMethods: [{ method: 'foo_getThing', block: 1 }] });
  const above = await gw.post('/rpc/1', rpc('foo_getThing', [address, '0x69'], 8));
  t.is(above.status, 503, above.text);
  t.like(above.body.error, { code: -32016, data: { block: '0x69', eligible: 1 } });
  const below = await gw.post('/rpc/1', rpc('foo_getThing', [address, '0x60'], 9));
  t.is(below.status, 200, below.text);
  t.is(below.headers['x-confirmable'], 'true');
  t.deepEqual(below.body.result, { thing: 0x60 });
});

// --- safe / finalized

test('finalized is resolved to the chain\'s finalized head, sent upstream as that number and confirmed by upstreams at or above it', async (t) => {
  // Heads 93, 100, 110; finalized 90, 94, 98: the chain's finalized is the lower median, 94.
  // The first upstream (head 93) does not have block 94: its null is not a vote.
  const { fakes, gw } = await gateway(t, [node(93, { finalized: 90 }), node(100, { finalized: 94 }), node(110, { finalized: 98 })]);
  await gw.rpc.startHeadTracking().runOnce();
  const r = await gw.post('/rpc/1', rpc('eth_getBlockByNumber', ['finalized', false], 'fin-1'));
  t.is(r.status, 200, r.text);
  t.is(r.headers['x-confirmable'], 'true');
  t.is(r.headers['x-required-confirmations'], '2');
  t.deepEqual(checked(r), [fakes[1]!.url, fakes[2]!.url].sort());
  t.is(r.body.id, 'fin-1', 'the client\'s id');
  t.deepEqual(r.body.result, block(94));
  const asked = fakes.flatMap((f) => sent(f, 'eth_getBlockByNumber').filter((b) => b.id === 'fin-1'));
  t.true(asked.length >= 3);
  t.deepEqual(asked.map((b) => b.params), asked.map(() => ['0x5e', false]), 'the resolved number was sent, never the tag');
  t.true(sent(fakes[0]!, 'eth_getBlockByNumber').some((b) => b.id === 'fin-1'), 'the upstream below was asked, and not counted');
});

test('safe in eth_getBalance: resolved, and the answer relayed with the client\'s id', async (t) => {
  const { fakes, gw } = await gateway(t, [node(100, { finalized: 90 }), node(100, { finalized: 90 }), node(100, { finalized: 90 })]);
  await gw.rpc.startHeadTracking().runOnce();
  const r = await gw.post('/rpc/1', rpc('eth_getBalance', [address, 'safe'], 77));
  t.is(r.status, 200, r.text);
  t.is(r.headers['x-confirmable'], 'true');
  t.is(r.text, `{"jsonrpc":"2.0","id":77,"result":"${hex(1000 + 90)}"}`);
  t.deepEqual(sent(fakes[0]!, 'eth_getBalance').map((b) => b.params), [[address, '0x5a']]);
});

test('without tracked heads, finalized stays unconfirmable and is sent as the tag', async (t) => {
  const { fakes, gw } = await gateway(t, [node(100, { finalized: 90 }), node(100, { finalized: 90 })]);
  const r = await gw.post('/rpc/1', rpc('eth_getBlockByNumber', ['finalized', false], 3));
  t.is(r.status, 200, r.text);
  t.is(r.headers['x-confirmable'], 'false');
  t.is(r.headers['x-required-confirmations'], '1');
  t.deepEqual(sent(fakes[0]!, 'eth_getBlockByNumber').map((b) => b.params), [['finalized', false]]);
});
