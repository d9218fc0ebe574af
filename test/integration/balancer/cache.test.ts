/**
 * The cache of confirmed answers on the wire: only confirmed answers about final blocks are kept;
 * a hit is the same answer under the client's id with the original quorum's headers, X-Cache: HIT
 * and Age, and no upstream call; N is honoured: an entry confirmed by fewer is topped up with only
 * the missing votes (X-Cache: TOPUP), and dropped when they dispute it; Cache-Control: no-cache
 * bypasses it.
 */
import test, { type ExecutionContext } from 'ava';
import { defaultAnswer, log, startFakeUpstream, type AnswerFn, type FakeUpstream } from '../../support/fake-upstream.js';
import { rpc, startGateway, type Gateway } from '../../support/gateway.js';

const ADDRESS = '0x00000000000000000000000000000000000000aa';
const LATEST = 0x64;
const FINALIZED = 0x5a;
const hex = (n: number) => `0x${n.toString(16)}`;
const txHash = (tail: string) => `0x${'11'.repeat(31)}${tail}`;

/** A chain at block 100 whose finalized block is 90; receipts: …aa in block 16 (final), …bb in block 96 (not yet), …cc unknown. */
const chainAnswer: AnswerFn = (call) => {
  const p = (call.params ?? []) as unknown[];
  switch (call.method) {
    case 'eth_blockNumber':
      return { result: hex(LATEST) };
    case 'eth_getBlockByNumber': {
      const tag = String(p[0]);
      const n = tag === 'finalized' || tag === 'safe' ? FINALIZED : tag === 'latest' ? LATEST : Number(tag);
      return { result: { number: hex(n), hash: `0x${n.toString(16).padStart(64, '0')}`, parentHash: `0x${'00'.repeat(32)}`, timestamp: '0x1', transactions: [] } };
    }
    case 'eth_getTransactionReceipt': {
      const h = String(p[0]);
      if (h.endsWith('cc')) return { result: null };
      const block = h.endsWith('aa') ? 0x10 : 0x60;
      return { result: { transactionHash: h, blockNumber: hex(block), blockHash: `0x${block.toString(16).padStart(64, '0')}`, status: '0x1', logs: [], transactionIndex: '0x0', gasUsed: '0x5208', cumulativeGasUsed: '0x5208', from: ADDRESS, to: ADDRESS, contractAddress: null, logsBloom: `0x${'00'.repeat(256)}`, type: '0x2', effectiveGasPrice: '0x1' } };
    }
    default:
      return defaultAnswer(call);
  }
};

async function setup(t: ExecutionContext, raw: Record<string, unknown> = {}, profiles: ('honest' | 'liar')[] = ['honest', 'honest', 'honest']): Promise<{ list: FakeUpstream[]; gw: Gateway }> {
  const list = await Promise.all(profiles.map((profile) => startFakeUpstream({ profile, answer: chainAnswer })));
  const gw = await startGateway({ refreshInterval: 3600, ...raw, chains: { 1337: { rpcs: list.map((f) => f.url) } } });
  t.teardown(async () => {
    await gw.close();
    await Promise.all(list.map((f) => f.close()));
  });
  await gw.rpc.startHeadTracking().runOnce();
  return { list, gw };
}

const callsOf = (list: FakeUpstream[], method: string) =>
  list.reduce((n, f) => n + f.requests.filter((r) => (r.body as { method?: string } | undefined)?.method === method).length, 0);

test('a confirmed read at a final block is kept: the next is answered from the cache, under its own id, with the quorum that confirmed it and no upstream call', async (t) => {
  const { list, gw } = await setup(t);
  const first = await gw.post('/confirmations/2/rpc/1337', rpc('eth_getBalance', [ADDRESS, hex(0x10)], 1));
  t.is(first.status, 200, first.text);
  t.is(first.headers['x-cache'], 'MISS');
  t.is(first.headers.age, undefined);
  t.is(callsOf(list, 'eth_getBalance'), 2);
  const second = await gw.post('/confirmations/2/rpc/1337', rpc('eth_getBalance', [ADDRESS, hex(0x10)], 'second'));
  t.is(second.status, 200, second.text);
  t.is(second.headers['x-cache'], 'HIT');
  t.regex(String(second.headers.age), /^\d+$/);
  t.is(callsOf(list, 'eth_getBalance'), 2, 'no upstream call for the hit');
  t.is(second.body.id, 'second');
  t.is(second.body.result, first.body.result);
  t.is(second.text, first.text.replace('"id":1', '"id":"second"'));
  for (const h of ['x-checked-urls', 'x-forwarded-from', 'x-json-hash', 'x-confirmable', 'x-required-confirmations']) t.is(second.headers[h], first.headers[h], h);
  t.not(second.headers['x-request-id'], first.headers['x-request-id']);
  // N=1 is served by the entry confirmed by 2.
  const one = await gw.post('/rpc/1337', rpc('eth_getBalance', [ADDRESS, hex(0x10)], 3));
  t.is(one.headers['x-cache'], 'HIT');
  t.is(one.headers['x-required-confirmations'], '1');
  t.is(one.headers['x-checked-urls'], first.headers['x-checked-urls'], 'the quorum that confirmed it');
  const metrics = (await gw.request('GET', '/metrics')).text;
  t.regex(metrics, /omnigate_cache_hits_total\{chain="1337"\} 2/);
  t.regex(metrics, /omnigate_cache_misses_total\{chain="1337"\} 1/);
  t.regex(metrics, /omnigate_cache_stored_total\{chain="1337"\} 1/);
  t.regex(metrics, /omnigate_cache_entries 1/);
});

/** How many eth_getBalance calls each upstream got. */
const balanceCalls = (list: FakeUpstream[]) => list.map((f) => f.requests.filter((r) => (r.body as { method?: string } | undefined)?.method === 'eth_getBalance').length);
/** The upstreams an answer's X-Checked-URLS names. */
const checked = (r: { headers: Record<string, unknown> }) => String(r.headers['x-checked-urls']).split(',');

test('top-up: an entry confirmed by 2 answers N=3 with one call, to the upstream not in its quorum; X-Cache: TOPUP; the entry then serves N=3 and N=2', async (t) => {
  const { list, gw } = await setup(t);
  const two = await gw.post('/confirmations/2/rpc/1337', rpc('eth_getBalance', [ADDRESS, hex(0x11)], 1));
  t.is(two.status, 200, two.text);
  const before = balanceCalls(list);
  t.deepEqual(before.filter((n) => n === 1).length, 2, 'N=2 asked two upstreams');
  const outsider = list[before.indexOf(0)]!;
  t.false(checked(two).includes(outsider.url));
  const three = await gw.post('/confirmations/3/rpc/1337', rpc('eth_getBalance', [ADDRESS, hex(0x11)], 'three'));
  t.is(three.status, 200, three.text);
  t.is(three.headers['x-cache'], 'TOPUP');
  t.is(three.headers.age, undefined);
  t.deepEqual(balanceCalls(list), before.map((n) => (n === 0 ? 1 : n)), 'exactly one call, to the upstream outside the quorum');
  t.deepEqual(checked(three).sort(), list.map((f) => f.url).sort(), 'the merged quorum: all three');
  t.deepEqual(checked(three).slice(0, 2), checked(two), 'the entry\'s quorum first');
  t.is(three.headers['x-forwarded-from'], two.headers['x-forwarded-from'], 'the kept provider\'s bytes');
  t.is(three.headers['x-required-confirmations'], '3');
  t.is(three.headers['x-json-hash'], two.headers['x-json-hash']);
  t.is(three.body.id, 'three');
  t.is(three.text, two.text.replace('"id":1', '"id":"three"'));
  // The entry is now the N=3 one: both N answered from it, listing the three.
  const again = await Promise.all([2, 3].map((n) => gw.post(`/confirmations/${n}/rpc/1337`, rpc('eth_getBalance', [ADDRESS, hex(0x11)], n))));
  for (const r of again) {
    t.is(r.headers['x-cache'], 'HIT');
    t.is(r.headers['x-checked-urls'], three.headers['x-checked-urls']);
  }
  t.is(callsOf(list, 'eth_getBalance'), 3);
  const metrics = (await gw.request('GET', '/metrics')).text;
  t.regex(metrics, /omnigate_cache_topups_total\{chain="1337"\} 1/);
  t.regex(metrics, /omnigate_cache_misses_total\{chain="1337"\} 2/, 'the first request and the top-up');
  t.regex(metrics, /omnigate_cache_hits_total\{chain="1337"\} 2/);
  t.regex(metrics, /omnigate_cache_stored_total\{chain="1337"\} 2/);
});

test('top-up of a read pinned by hash (a receipt in a final block): one call, the three listed', async (t) => {
  const { list, gw } = await setup(t);
  const two = await gw.post('/confirmations/2/rpc/1337', rpc('eth_getTransactionReceipt', [txHash('aa')], 1));
  t.is(two.status, 200, two.text);
  const three = await gw.post('/confirmations/3/rpc/1337', rpc('eth_getTransactionReceipt', [txHash('aa')], 2));
  t.is(three.status, 200, three.text);
  t.is(three.headers['x-cache'], 'TOPUP');
  t.is(checked(three).length, 3);
  t.is(callsOf(list, 'eth_getTransactionReceipt'), 3);
});

test('top-up disputed: the missing voter gives another answer: no answer for N=3 (502 listing the entry\'s quorum), one call; the entry is dropped', async (t) => {
  const { list, gw } = await setup(t);
  const two = await gw.post('/confirmations/2/rpc/1337', rpc('eth_getBalance', [ADDRESS, hex(0x12)], 1));
  t.is(two.status, 200, two.text);
  const before = balanceCalls(list);
  const outsider = list[before.indexOf(0)]!;
  outsider.profile = 'liar';
  const three = await gw.post('/confirmations/3/rpc/1337', rpc('eth_getBalance', [ADDRESS, hex(0x12)], 2));
  t.is(three.status, 502, three.text);
  t.is(three.body.error.code, -32010);
  t.deepEqual(balanceCalls(list), before.map((n) => (n === 0 ? 1 : n)), 'one call, to the upstream outside the quorum; the quorum is not asked again');
  const groups = three.body.error.data.groups as { hash: string; upstreams: string[] }[];
  t.is(groups.length, 2);
  t.deepEqual(groups[0]!.upstreams, checked(two), 'the entry\'s quorum is a group');
  t.is(groups[0]!.hash, String(two.headers['x-json-hash']));
  t.deepEqual(groups[1]!.upstreams, [outsider.url]);
  t.true(Array.isArray(three.body.error.data.differences) && three.body.error.data.differences.length > 0, 'explained as any dispute');
  t.is(three.headers['x-cache'], undefined);
  // The entry is gone: N=2 asks the upstreams again (the liar asked last now or outvoted).
  outsider.profile = 'honest';
  const after = await gw.post('/confirmations/2/rpc/1337', rpc('eth_getBalance', [ADDRESS, hex(0x12)], 3));
  t.is(after.status, 200, after.text);
  t.is(after.headers['x-cache'], 'MISS');
  t.is(callsOf(list, 'eth_getBalance'), 5);
  const metrics = (await gw.request('GET', '/metrics')).text;
  t.regex(metrics, /omnigate_cache_disputed_total\{chain="1337"\} 1/);
  t.notRegex(metrics, /omnigate_cache_topups_total\{chain="1337"\}/);
});

test('top-up: a missing voter that disagrees is outvoted by the next upstream: the entry\'s answer for N=3, two calls, the liar not listed', async (t) => {
  const { list, gw } = await setup(t, {}, ['honest', 'honest', 'honest', 'honest']);
  const two = await gw.post('/confirmations/2/rpc/1337', rpc('eth_getBalance', [ADDRESS, hex(0x13)], 1));
  const before = balanceCalls(list);
  const outside = list.filter((_, i) => before[i] === 0);
  t.is(outside.length, 2);
  // (the one ranked first of the two: configured order breaks the tie)
  outside[0]!.profile = 'liar';
  const three = await gw.post('/confirmations/3/rpc/1337', rpc('eth_getBalance', [ADDRESS, hex(0x13)], 2));
  t.is(three.status, 200, three.text);
  t.is(three.headers['x-cache'], 'TOPUP');
  t.is(three.headers['x-json-hash'], two.headers['x-json-hash']);
  t.deepEqual(checked(three), [...checked(two), outside[1]!.url]);
  const calls = balanceCalls(list);
  t.deepEqual(calls.filter((_, i) => before[i] === 1), [1, 1], 'the quorum is not asked again');
  t.is(calls.reduce((a, b) => a + b), 4, 'the liar, then the next upstream');
});

test('top-up: a missing voter that fails leaves the entry for the N that confirmed it', async (t) => {
  const { list, gw } = await setup(t);
  await gw.post('/confirmations/2/rpc/1337', rpc('eth_getBalance', [ADDRESS, hex(0x14)], 1));
  const outsider = list[balanceCalls(list).indexOf(0)]!;
  outsider.profile = 'error500';
  const three = await gw.post('/confirmations/3/rpc/1337', rpc('eth_getBalance', [ADDRESS, hex(0x14)], 2));
  t.is(three.status, 502, three.text);
  t.is(three.body.error.code, -32011);
  t.is(callsOf(list, 'eth_getBalance'), 3);
  const two = await gw.post('/confirmations/2/rpc/1337', rpc('eth_getBalance', [ADDRESS, hex(0x14)], 3));
  t.is(two.headers['x-cache'], 'HIT');
  t.is(callsOf(list, 'eth_getBalance'), 3);
  // Cache-Control: no-cache asks N upstreams anew, not only the missing votes.
  outsider.profile = 'honest';
  const fresh = await gw.post('/confirmations/3/rpc/1337', rpc('eth_getBalance', [ADDRESS, hex(0x14)], 4), { 'cache-control': 'no-cache' });
  t.is(fresh.headers['x-cache'], 'MISS');
  t.is(callsOf(list, 'eth_getBalance'), 6);
});

test('never kept: a read above the finalized block, an unconfirmed read, a hash pin in a block not final yet, an absence, a node error', async (t) => {
  const { list, gw } = await setup(t);
  const twice = async (path: string, method: string, params: unknown[]) => {
    const a = await gw.post(path, rpc(method, params, 1));
    const b = await gw.post(path, rpc(method, params, 2));
    return [a, b] as const;
  };
  const [aboveA, aboveB] = await twice('/confirmations/2/rpc/1337', 'eth_getBalance', [ADDRESS, hex(FINALIZED + 1)]);
  t.is(aboveA.status, 200, aboveA.text);
  t.is(aboveB.headers['x-cache'], 'MISS', 'block 91 is above the finalized 90');
  const [latest] = await twice('/confirmations/2/rpc/1337', 'eth_getBalance', [ADDRESS, 'latest']);
  t.is(latest.headers['x-cache'], undefined, 'not confirmable: not looked up');
  const [, pending] = await twice('/confirmations/2/rpc/1337', 'eth_getTransactionReceipt', [txHash('bb')]);
  t.is(pending.headers['x-cache'], 'MISS', 'its block 96 is not final');
  const [, absent] = await twice('/confirmations/2/rpc/1337', 'eth_getTransactionReceipt', [txHash('cc')]);
  t.is(absent.body.result, null);
  t.is(absent.headers['x-cache'], 'MISS', 'an absence the chain could still fill');
  const [, reverted] = await twice('/confirmations/2/rpc/1337', 'eth_call', [{ to: ADDRESS }, hex(0x10)]);
  t.is(reverted.body.error.code, 3);
  t.is(reverted.headers['x-cache'], 'MISS', 'a node error is not kept');
  const [, final] = await twice('/confirmations/2/rpc/1337', 'eth_getTransactionReceipt', [txHash('aa')]);
  t.is(final.headers['x-cache'], 'HIT', 'a receipt in final block 16 is');
  t.is(callsOf(list, 'eth_getTransactionReceipt'), 2 * 2 + 2 * 2 + 2);
});

test('one provider\'s finalized block is not the chain\'s: with the others\' tag polls failing, "finalized" is not resolved to it and nothing is kept by it', async (t) => {
  // Three providers at block 100. Two are honest but their safe/finalized polls fail (503); the
  // third says its finalized block is 99 (a node on a fork, or a liar). The chain's finalized
  // block is then unknown: it must not be that one provider's word.
  let tagsDown = true;
  const isTagPoll = (body: unknown) => {
    const c = body as { method?: string; params?: unknown[] };
    return c.method === 'eth_getBlockByNumber' && (c.params?.[0] === 'finalized' || c.params?.[0] === 'safe');
  };
  const honest = () => startFakeUpstream({ answer: chainAnswer, http: (body) => (tagsDown && isTagPoll(body) ? { status: 503, body: 'busy' } : undefined) });
  const forked: AnswerFn = (call) => (call.method === 'eth_getBlockByNumber' && (call.params?.[0] === 'finalized' || call.params?.[0] === 'safe') ? chainAnswer({ ...call, params: [hex(99), false] }) : chainAnswer(call));
  const list = await Promise.all([honest(), honest(), startFakeUpstream({ answer: forked })]);
  const gw = await startGateway({ refreshInterval: 3600, chains: { 1337: { rpcs: list.map((f) => f.url) } } });
  t.teardown(async () => {
    await gw.close();
    await Promise.all(list.map((f) => f.close()));
  });
  const tracker = gw.rpc.startHeadTracking();
  await tracker.runOnce();
  const chain = (await gw.request('GET', '/chains')).body[0];
  t.deepEqual(chain.upstreams.map((u: { heads: { finalized: string | null } }) => u.heads.finalized), [null, null, '99']);
  t.like(chain.heads, { latest: '100', safe: null, finalized: null }, 'one provider of three is not the chain');

  const tagged = await gw.post('/confirmations/2/rpc/1337', rpc('eth_getBlockByNumber', ['finalized', false], 1));
  t.is(tagged.status, 200, tagged.text);
  t.is(tagged.headers['x-confirmable'], 'false', '"finalized" is not pinned to block 99 and confirmed');
  t.is(tagged.headers['x-required-confirmations'], '1');

  const read = (id: number) => gw.post('/confirmations/2/rpc/1337', rpc('eth_getBalance', [ADDRESS, hex(95)], id));
  const first = await read(2);
  t.is(first.headers['x-confirmable'], 'true', first.text);
  const second = await read(3);
  t.is(second.headers['x-cache'], 'MISS', 'block 95 is not final by one provider\'s word');
  t.is(second.headers['x-confirmable'], 'true');
  t.is(callsOf(list, 'eth_getBalance'), 4, 'both reads asked two upstreams');

  // The honest ones answer their tags again (finalized 90): the chain's is the lower median, 90.
  tagsDown = false;
  await tracker.runOnce();
  t.like((await gw.request('GET', '/chains')).body[0].heads, { finalized: String(FINALIZED) });
  const resolved = await gw.post('/confirmations/2/rpc/1337', rpc('eth_getBlockByNumber', ['finalized', false], 4));
  t.is(resolved.headers['x-confirmable'], 'true', resolved.text);
  t.is(resolved.body.result.number, hex(FINALIZED));
  const third = await read(5);
  t.is(third.headers['x-cache'], 'MISS', 'block 95 is above the chain\'s finalized 90');
});

test('"earliest" is asked as block 0x0: two nodes that expired their history, which answer "earliest" from their cutoff, cannot confirm logs that lack the older ones', async (t) => {
  // As go-ethereum with --history.chain postmerge answers: "earliest" is its cutoff (here the
  // logs from block 8 on), a range from below the cutoff is refused (4444). A full node has both logs.
  const pruned: AnswerFn = (call) => {
    if (call.method !== 'eth_getLogs') return chainAnswer(call);
    const from = (call.params?.[0] as { fromBlock?: string }).fromBlock;
    return from === 'earliest' ? { result: [log(2)] } : { error: { code: 4444, message: 'pruned history unavailable' } };
  };
  const full: AnswerFn = (call) => (call.method === 'eth_getLogs' ? { result: [log(1), log(2)] } : chainAnswer(call));
  const list = await Promise.all([pruned, pruned, full, full].map((answer) => startFakeUpstream({ answer })));
  const gw = await startGateway({ refreshInterval: 3600, chains: { 1337: { rpcs: list.map((f) => f.url), strategy: 'priority' } } });
  t.teardown(async () => {
    await gw.close();
    await Promise.all(list.map((f) => f.close()));
  });
  await gw.rpc.startHeadTracking().runOnce();
  const logs = (id: number) => gw.post('/confirmations/2/rpc/1337', rpc('eth_getLogs', [{ fromBlock: 'earliest', toBlock: hex(0x10), address: ADDRESS }], id));
  const first = await logs(1);
  t.is(first.status, 200, first.text);
  t.is(first.headers['x-confirmable'], 'true');
  t.deepEqual(first.body.result, [log(1), log(2)], 'the logs since the genesis block, not since a cutoff');
  t.deepEqual(String(first.headers['x-checked-urls']).split(',').sort(), [list[2]!.url, list[3]!.url].sort(), 'the two full nodes');
  const fromBlocks = list.map((f) => f.requests.filter((r) => (r.body as { method?: string }).method === 'eth_getLogs').map((r) => (r.body as { params: { fromBlock: string }[] }).params[0]!.fromBlock));
  t.deepEqual(fromBlocks, [['0x0'], ['0x0'], ['0x0'], ['0x0']], 'every upstream was asked from block 0x0');
  const second = await logs(2);
  t.is(second.headers['x-cache'], 'HIT', 'a final range');
  t.deepEqual(second.body.result, [log(1), log(2)]);
});

test('a disagreement is never kept; Cache-Control: no-cache asks the upstreams; cache.memoryBytes: 0 turns it off', async (t) => {
  const { gw } = await setup(t, {}, ['honest', 'liar', 'liar']);
  const a = await gw.post('/confirmations/3/rpc/1337', rpc('eth_getBalance', [ADDRESS, hex(0x10)], 1));
  const b = await gw.post('/confirmations/3/rpc/1337', rpc('eth_getBalance', [ADDRESS, hex(0x10)], 2));
  t.is(a.status, 502);
  t.is(b.status, 502);

  const { list, gw: gw2 } = await setup(t);
  await gw2.post('/confirmations/2/rpc/1337', rpc('eth_getBalance', [ADDRESS, hex(0x12)], 1));
  const bypass = await gw2.post('/confirmations/2/rpc/1337', rpc('eth_getBalance', [ADDRESS, hex(0x12)], 2), { 'cache-control': 'no-cache' });
  t.is(bypass.headers['x-cache'], 'MISS');
  t.is(callsOf(list, 'eth_getBalance'), 4);

  const { list: list3, gw: off } = await setup(t, { cache: { memoryBytes: 0 } });
  await off.post('/confirmations/2/rpc/1337', rpc('eth_getBalance', [ADDRESS, hex(0x12)], 1));
  const again = await off.post('/confirmations/2/rpc/1337', rpc('eth_getBalance', [ADDRESS, hex(0x12)], 2));
  t.is(again.headers['x-cache'], undefined);
  t.is(callsOf(list3, 'eth_getBalance'), 4);
  t.notRegex((await off.request('GET', '/metrics')).text, /omnigate_cache_hits_total/);
});

test('batch members are answered from the cache too, each under its own id', async (t) => {
  const { list, gw } = await setup(t);
  const batch = (ids: number[]) => ids.map((id, i) => rpc('eth_getBalance', [ADDRESS, hex(0x20 + i)], id));
  const first = await gw.post('/confirmations/2/rpc/1337', batch([1, 2]));
  t.is(first.status, 200, first.text);
  const calls = callsOf(list, 'eth_getBalance');
  const second = await gw.post('/confirmations/2/rpc/1337', batch([7, 8]));
  t.is(callsOf(list, 'eth_getBalance'), calls, 'no upstream call');
  t.deepEqual(second.body.map((m: { id: number }) => m.id), [7, 8]);
  t.deepEqual(second.body.map((m: { result: string }) => m.result), first.body.map((m: { result: string }) => m.result));
  t.is(second.headers['x-confirmable'], 'true');
  t.is(second.headers['x-checked-urls'], first.headers['x-checked-urls']);
});

test('top-up of batch members: each member counts its entry\'s votes; only the upstream outside the quorum is asked, once per member', async (t) => {
  const { list, gw } = await setup(t);
  /** eth_getBalance calls per upstream, batch members included. */
  const memberCalls = () =>
    list.map((f) => f.requests.flatMap((r) => (Array.isArray(r.body) ? r.body : [r.body])).filter((c) => (c as { method?: string } | undefined)?.method === 'eth_getBalance').length);
  const batch = (ids: number[]) => ids.map((id, i) => rpc('eth_getBalance', [ADDRESS, hex(0x30 + i)], id));
  const two = await gw.post('/confirmations/2/rpc/1337', batch([1, 2]));
  t.is(two.status, 200, two.text);
  const before = memberCalls();
  t.is(before.reduce((a, b) => a + b), 4);
  const three = await gw.post('/confirmations/3/rpc/1337', batch([3, 4]));
  t.is(three.status, 200, three.text);
  t.deepEqual(three.body.map((m: { id: number }) => m.id), [3, 4]);
  t.deepEqual(three.body.map((m: { result: string }) => m.result), two.body.map((m: { result: string }) => m.result));
  t.is(three.headers['x-required-confirmations'], '3');
  const after = memberCalls();
  t.is(after.reduce((a, b) => a + b), 6, 'one call per member');
  t.deepEqual(after.map((n, i) => n - before[i]!).filter((n) => n > 0).length, 1, 'all to one upstream: the one outside both quorums');
  const hits = await gw.post('/confirmations/3/rpc/1337', batch([5, 6]));
  t.is(hits.status, 200, hits.text);
  t.is(memberCalls().reduce((a, b) => a + b), 6, 'then answered from the cache');
});

test('a long entry (megabytes of logs, put under the id a slice at a time) is answered under each client\'s id, every other byte as kept; its top-up too', async (t) => {
  // The id after the result, as Nethermind writes it: the whole entry is scanned to find it.
  const logs = Array.from({ length: 12_000 }, (_, i) => `{"address":"${ADDRESS}","blockNumber":"0x10","data":"0x${i.toString(16).padStart(64, '0')}${'00'.repeat(64)}","logIndex":"0x${i.toString(16)}","removed":false}`);
  const longLogs = (id: unknown) => `{"jsonrpc":"2.0","result":[${logs.join(',')}],"id":${JSON.stringify(id)}}`;
  const raw = (call: { id: unknown; method: string; params?: unknown }) =>
    call.method === 'eth_getLogs' ? longLogs(call.id) : JSON.stringify({ jsonrpc: '2.0', id: call.id, ...(chainAnswer(call as Parameters<AnswerFn>[0]) as object) });
  const list = await Promise.all([0, 1, 2].map(() => startFakeUpstream({ raw })));
  const gw = await startGateway({ refreshInterval: 3600, chains: { 1337: { rpcs: list.map((f) => f.url) } } });
  t.teardown(async () => {
    await gw.close();
    await Promise.all(list.map((f) => f.close()));
  });
  await gw.rpc.startHeadTracking().runOnce();
  const range = [{ fromBlock: hex(0x10), toBlock: hex(0x11) }];
  const first = await gw.post('/confirmations/2/rpc/1337', rpc('eth_getLogs', range, 1));
  t.is(first.status, 200, first.text.slice(0, 300));
  t.is(first.headers['x-cache'], 'MISS');
  t.true(first.text.length > 3_000_000, `${first.text.length} bytes`);
  // (Two calls, or three when a hedge went out: the long answer took longer than the head polls.)
  const asked = callsOf(list, 'eth_getLogs');
  const ids: unknown[] = ['client "b"', 'é', 12345678901, 7];
  const hits = await Promise.all(ids.map((id) => gw.post('/confirmations/2/rpc/1337', rpc('eth_getLogs', range, id))));
  for (const [i, hit] of hits.entries()) {
    t.is(hit.status, 200, hit.text.slice(0, 300));
    t.is(hit.headers['x-cache'], 'HIT');
    t.is(hit.headers['x-json-hash'], first.headers['x-json-hash']);
    t.is(hit.headers['x-checked-urls'], first.headers['x-checked-urls']);
    t.is(hit.text, longLogs(ids[i]), 'the kept bytes, under the client\'s id');
  }
  t.is(callsOf(list, 'eth_getLogs'), asked, 'no upstream call for the hits');
  // N=3: the entry's two votes and one call to the upstream outside its quorum.
  const topUp = await gw.post('/confirmations/3/rpc/1337', rpc('eth_getLogs', range, 'three'));
  t.is(topUp.status, 200, topUp.text.slice(0, 300));
  t.is(topUp.headers['x-cache'], 'TOPUP');
  t.is(topUp.headers['x-required-confirmations'], '3');
  t.is(topUp.text, longLogs('three'));
  t.is(callsOf(list, 'eth_getLogs'), asked + 1);
});

/** chainAnswer, with fields outside the receipt schema added to every receipt. */
const withExtras = (extras: Record<string, unknown>): AnswerFn => (call) => {
  const a = chainAnswer(call);
  return call.method === 'eth_getTransactionReceipt' && 'result' in a && a.result ? { result: { ...(a.result as object), ...extras } } : a;
};

test('top-up: a field outside the comparison that only the entry\'s quorum sent is left out of the answer confirmed by N; one the new voter sent alike stays', async (t) => {
  // The first upstream answers N=1 alone: its extras are in the entry, vouched for by it only.
  const list = await Promise.all([{ l1Fee: '0xdead', l1GasUsed: '0x640' }, { l1GasUsed: '0x640' }].map((extras) => startFakeUpstream({ answer: withExtras(extras) })));
  const gw = await startGateway({ refreshInterval: 3600, chains: { 1337: { rpcs: list.map((f) => f.url), strategy: 'priority' } } });
  t.teardown(async () => {
    await gw.close();
    await Promise.all(list.map((f) => f.close()));
  });
  await gw.rpc.startHeadTracking().runOnce();
  const one = await gw.post('/rpc/1337', rpc('eth_getTransactionReceipt', [txHash('aa')], 1));
  t.is(one.status, 200, one.text);
  t.is(one.headers['x-forwarded-from'], list[0]!.url);
  t.is(one.body.result.l1Fee, '0xdead', 'N=1: one provider\'s word, extras included');
  const two = await gw.post('/confirmations/2/rpc/1337', rpc('eth_getTransactionReceipt', [txHash('aa')], 2));
  t.is(two.status, 200, two.text);
  t.is(two.headers['x-cache'], 'TOPUP');
  t.is(two.headers['x-confirmable'], 'true');
  t.deepEqual(checked(two), list.map((f) => f.url));
  t.false('l1Fee' in two.body.result, `only the entry's provider sent it: ${two.text}`);
  t.is(two.body.result.l1GasUsed, '0x640', 'both sent it alike');
  t.is(two.headers['x-json-hash'], one.headers['x-json-hash']);
  t.is(two.text, one.text.replace('"id":1', '"id":2').replace('"l1Fee":"0xdead",', ''), 'the entry\'s bytes, less the extra');
  // The entry confirmed by 2 is the one without it.
  const hit = await gw.post('/confirmations/2/rpc/1337', rpc('eth_getTransactionReceipt', [txHash('aa')], 3));
  t.is(hit.headers['x-cache'], 'HIT');
  t.is(hit.text, two.text.replace('"id":2', '"id":3'));
  t.is(callsOf(list, 'eth_getTransactionReceipt'), 2);
});

test('top-up of a long entry (judged in the worker thread): a field only the entry\'s quorum sent is left out, the entry\'s other bytes kept', async (t) => {
  const logs = (extra: string) => Array.from({ length: 4_000 }, (_, i) => `{"address":"${ADDRESS}","blockNumber":"0x10","data":"0x${i.toString(16).padStart(64, '0')}${'00'.repeat(64)}","logIndex":"0x${i.toString(16)}","removed":false${i === 3_999 ? extra : ''}}`);
  const body = (extra: string) => (id: unknown) => `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":[${logs(extra).join(',')}]}`;
  const raws = [body(',"l1Fee":"0xdead"'), body('')].map(
    (longLogs) => (call: { id: unknown; method: string; params?: unknown }) =>
      call.method === 'eth_getLogs' ? longLogs(call.id) : JSON.stringify({ jsonrpc: '2.0', id: call.id, ...(chainAnswer(call as Parameters<AnswerFn>[0]) as object) }),
  );
  const list = await Promise.all(raws.map((raw) => startFakeUpstream({ raw })));
  // No hedge: the N=1 answer must be the first upstream's (with the extra), however long a loaded
  // machine takes over its 1 MiB; a hedge (the tests' 1 s) after a stall got the second's answer.
  const gw = await startGateway({ refreshInterval: 3600, timeouts: { hedgeMs: 0 }, chains: { 1337: { rpcs: list.map((f) => f.url), strategy: 'priority' } } });
  t.teardown(async () => {
    await gw.close();
    await Promise.all(list.map((f) => f.close()));
  });
  await gw.rpc.startHeadTracking().runOnce();
  const range = [{ fromBlock: hex(0x10), toBlock: hex(0x11) }];
  const one = await gw.post('/rpc/1337', rpc('eth_getLogs', range, 1));
  t.is(one.status, 200, one.text.slice(0, 300));
  t.is(one.headers['x-forwarded-from'], list[0]!.url);
  t.true(one.text.length > 1024 * 1024, `${one.text.length} bytes`);
  t.is(one.body.result[3_999].l1Fee, '0xdead');
  const two = await gw.post('/confirmations/2/rpc/1337', rpc('eth_getLogs', range, 2));
  t.is(two.status, 200, two.text.slice(0, 300));
  t.is(two.headers['x-cache'], 'TOPUP');
  t.false('l1Fee' in two.body.result[3_999], 'only the entry\'s provider sent it');
  t.is(two.text, body('')(2));
  // The entry itself was left whole for the requests it serves.
  const again = await gw.post('/rpc/1337', rpc('eth_getLogs', range, 3));
  t.is(again.headers['x-cache'], 'HIT');
  t.is(again.text, body('')(3), 'the entry confirmed by 2 replaced it');
});
