import test from 'ava';
import { BlockNotAvailableError } from '../../../../lib/errors.js';
import type { RpcCall } from '../../../../lib/jsonrpc/types.js';
import { blockNeeded, eligible, hasBlock, resolveTag } from '../../../../lib/verify/eligibility.js';
import { answersAsMissing } from '../../../../lib/verify/answers/missing.js';
import { blockNotAvailable, waitForEligible } from '../../../../lib/verify/head-waits.js';
import { chainHead, headSettings, observe, recordHead, refreshChain, setChainHeadSettings } from '../../../../lib/health/heads.js';
import { startHeadTracker } from '../../../../lib/health/tracker.js';
import { newHealth } from '../../../../lib/health/health.js';
import type { Chain, Upstream } from '../../../../lib/upstream/registry.js';
import { rankUpstreams } from '../../../../lib/upstream/select.js';

const upstream = (index: number, head?: bigint): Upstream =>
  ({
    chainId: '1',
    index,
    url: `http://u${index}.example/KEY`,
    label: `http://u${index}.example/***`,
    provider: `p${index}`,
    health: { ...newHealth(), head },
    secrets: { scrub: (s: string) => s, echoedIn: () => false },
    hopToken: `t${index}`,
  }) as unknown as Upstream;

const chainOf = (heads: (bigint | undefined)[], settings: Partial<ReturnType<typeof headSettings>> = {}): Chain => {
  const chain = { id: '1', confirmations: 1, extraConfirmable: new Map(), ignoredFields: {}, upstreams: heads.map((h, i) => upstream(i, h)), providerCount: heads.length } as unknown as Chain;
  setChainHeadSettings(chain, { ...headSettings('1'), suspectBlocks: 10, ...settings });
  refreshChain(chain);
  return chain;
};

const call = (method: string, ...params: unknown[]): RpcCall => ({ id: 1, method, params });
const hash = `0x${'ab'.repeat(32)}`;

test('should take the chain head from the median, never the maximum', (t) => {
  const chain = chainOf([100n, 100n, 0xffffffffffffn]);
  t.is(chainHead(chain), 100n);
  t.deepEqual(chain.upstreams.map((u) => u.health.suspect), [false, false, true]);
  t.deepEqual(chain.upstreams.map((u) => u.health.lag), [0, 0, 0], 'the honest upstreams do not lag behind the outlier');
});

test('should take the highest head within suspectBlocks of the median, so honest laggards lag', (t) => {
  const chain = chainOf([100n, 110n, 100n]);
  t.is(chainHead(chain), 110n);
  t.deepEqual(chain.upstreams.map((u) => u.health.lag), [10, 0, 10]);
  t.deepEqual(chain.upstreams.map((u) => u.health.suspect), [false, false, false]);
});

test('should believe the lower of two upstreams far apart (no third to decide)', (t) => {
  const chain = chainOf([100n, 0xffffffffffffn]);
  t.is(chainHead(chain), 100n);
  t.true(chain.upstreams[1]!.health.suspect);
});

test('should leave upstreams out of rotation and unknown heads out of the chain head', (t) => {
  const chain = chainOf([undefined, 50n]);
  t.is(chainHead(chain), 50n);
  t.is(chainHead(chainOf([undefined, undefined])), undefined);
  const wrong = chainOf([200n, 50n, 50n]);
  wrong.upstreams[0]!.health.wrongChainId = '5';
  refreshChain(wrong);
  t.is(chainHead(wrong), 50n);
  t.false(wrong.upstreams[0]!.health.suspect, 'an upstream out of rotation is not judged');
});

test('should rank a suspect upstream after the honest ones', (t) => {
  const chain = chainOf([0xffffffffffffn, 100n, 100n]);
  t.deepEqual(rankUpstreams(chain.upstreams, Date.now()).map((u) => u.index), [1, 2, 0]);
});

test('should never move a head backwards on an answer, and on a poll only when two polls in a row say so', (t) => {
  const u = upstream(0, 100n);
  t.false(recordHead(u, 'latest', 90n, 'answer'));
  t.is(u.health.head, 100n);
  t.false(recordHead(u, 'latest', 95n, 'poll'), 'one lower poll is ignored');
  t.is(u.health.head, 100n);
  t.true(recordHead(u, 'latest', 95n, 'poll'), 'the second lower poll in a row is a reorg or a reset');
  t.is(u.health.head, 95n);
  t.false(recordHead(u, 'latest', 94n, 'poll'));
  t.true(recordHead(u, 'latest', 96n, 'poll'), 'a higher poll clears the pending drop');
  t.false(recordHead(u, 'latest', 93n, 'poll'), 'so a lower one must be seen twice again');
  t.is(u.health.head, 96n);
});

test('should raise a head from answers passing through, without parsing large bodies', (t) => {
  const chain = chainOf([100n, 100n, 100n]);
  const u = chain.upstreams[0]!;
  observe(u, call('eth_blockNumber'), Buffer.from('{"jsonrpc":"2.0","id":1,"result":"0x6e"}'));
  t.is(u.health.head, 110n);
  t.is(chainHead(chain), 110n, 'the chain head follows at once');
  t.is(chain.upstreams[1]!.health.lag, 10);
  observe(u, call('eth_getBlockByNumber', '0x78', false), Buffer.from('{"jsonrpc":"2.0","id":1,"result":{"hash":"0x1","number" : "0x78","transactions":[]}}'));
  t.is(u.health.head, 120n);
  observe(u, call('eth_getTransactionReceipt', hash), Buffer.from('{"jsonrpc":"2.0","id":1,"result":{"blockHash":"0x1","blockNumber":"0x82"}}'));
  t.is(u.health.head, 130n);
  observe(u, call('eth_getBlockByNumber', '0x1', false), Buffer.from('{"jsonrpc":"2.0","id":1,"result":{"number":"0x1"}}'));
  t.is(u.health.head, 130n, 'an older block does not lower the head');
  observe(u, call('eth_getTransactionByHash', hash), Buffer.from('{"jsonrpc":"2.0","id":1,"result":{"blockNumber":null}}'));
  observe(u, call('eth_getBalance', '0x1', '0xffff'), Buffer.from('{"jsonrpc":"2.0","id":1,"result":"0xffffff"}'));
  observe(u, call('eth_getBlockByNumber', '0x1', false), Buffer.from('{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"x","data":{"number":"0xfffff"}}}'));
  t.is(u.health.head, 130n, 'a pending transaction, a balance and an error carry no head');
});

test('should read the head in an answer as written: upper-case digits, whitespace around the colon, up to 16 digits', (t) => {
  const chain = chainOf([100n, 100n, 100n]);
  const u = chain.upstreams[0]!;
  observe(u, call('eth_blockNumber'), Buffer.from('{"jsonrpc":"2.0","id":1,"result":"0x8F"}'));
  t.is(u.health.head, 143n);
  observe(u, call('eth_blockNumber'), Buffer.from('{"jsonrpc":"2.0","id":1,"result" :\t\n "0x96"}'));
  t.is(u.health.head, 150n);
  observe(u, call('eth_blockNumber'), Buffer.from('{"jsonrpc":"2.0","id":1,"result":"0x1000000000000a1"}'));
  t.is(u.health.head, 0x1000000000000a1n, '15 digits, beyond what a number holds exactly');
  observe(u, call('eth_blockNumber'), Buffer.from('{"jsonrpc":"2.0","id":1,"result":"0x20000000000000000"}'));
  observe(u, call('eth_blockNumber'), Buffer.from('{"jsonrpc":"2.0","id":1,"result":"0x"}'));
  observe(u, call('eth_blockNumber'), Buffer.from('{"jsonrpc":"2.0","id":1,"result":"0xfffffffffffffff'));
  observe(u, call('eth_blockNumber'), Buffer.from('{"jsonrpc":"2.0","id":1,"result":["0xfffffffffffffff"]}'));
  t.is(u.health.head, 0x1000000000000a1n, '17 digits, no digit, no closing quote, not a quantity: no head');
});

const needs: [string, RpcCall, ReturnType<typeof blockNeeded>][] = [
  ['a block parameter', call('eth_getBalance', '0x1', '0x69'), { kind: 'number', block: 0x69n }],
  ['eth_getBlockByNumber', call('eth_getBlockByNumber', '0x69', false), { kind: 'number', block: 0x69n }],
  ['earliest as block 0', call('eth_getCode', '0x1', 'earliest'), { kind: 'number', block: 0n }],
  ['an EIP-1898 blockNumber', call('eth_call', {}, { blockNumber: '0x10' }), { kind: 'number', block: 16n }],
  ['an EIP-1898 blockHash', call('eth_call', {}, { blockHash: hash }), { kind: 'hash', hash, of: 'block' }],
  ['eth_getLogs toBlock', call('eth_getLogs', { fromBlock: '0x1', toBlock: '0x65' }), { kind: 'number', block: 0x65n }],
  ['eth_getLogs blockHash', call('eth_getLogs', { blockHash: hash }), { kind: 'hash', hash, of: 'block' }],
  ['eth_getLogs without toBlock as the head', call('eth_getLogs', { fromBlock: '0x1' }), { kind: 'head' }],
  ['latest as the head', call('eth_getBalance', '0x1', 'latest'), { kind: 'head' }],
  ['a missing block parameter as the head', call('eth_getBalance', '0x1'), { kind: 'head' }],
  ['safe as a tag', call('eth_getStorageAt', '0x1', '0x0', 'SAFE'), { kind: 'tag', tag: 'safe' }],
  ['finalized as a tag', call('eth_getProof', '0x1', [], 'finalized'), { kind: 'tag', tag: 'finalized' }],
  ['a block hash method', call('eth_getBlockByHash', hash, false), { kind: 'hash', hash, of: 'block' }],
  ['a transaction hash method', call('eth_getTransactionReceipt', hash), { kind: 'hash', hash, of: 'transaction' }],
  ['nothing for a method without a block', call('eth_chainId'), undefined],
];
for (const [what, c, need] of needs) {
  test(`blockNeeded should read ${what}`, (t) => {
    t.deepEqual(blockNeeded(c), need);
  });
}

test('hasBlock should compare the head, say unknown without one, and cap a suspect at the chain head', (t) => {
  const chain = chainOf([100n, 100n, 0xffffffffffffn, undefined]);
  t.true(hasBlock(chain.upstreams[0]!, 100n));
  t.false(hasBlock(chain.upstreams[0]!, 101n));
  t.is(hasBlock(chain.upstreams[3]!, 1n), undefined);
  t.true(hasBlock(chain.upstreams[2]!, 100n));
  t.false(hasBlock(chain.upstreams[2]!, 105n), 'the outlier is not believed above the chain head');
});

test('eligible should admit only upstreams at or above the pinned block, every batch member counted', (t) => {
  const chain = chainOf([100n, 100n, 110n, undefined]);
  const at = (c: RpcCall[]) => chain.upstreams.map((u) => eligible(chain, u, c));
  t.deepEqual(at([call('eth_getBlockByNumber', '0x69', false)]), [false, false, true, false]);
  t.deepEqual(at([call('eth_getBalance', '0x1', '0x64')]), [true, true, true, false]);
  t.deepEqual(at([call('eth_getBalance', '0x1', '0x10'), call('eth_getLogs', { fromBlock: '0x1', toBlock: '0x6e' })]), [false, false, true, false]);
  t.deepEqual(at([call('eth_getBlockByHash', hash, false)]), [true, true, true, true], 'a hash pin is judged by the answer');
  t.deepEqual(at([call('eth_blockNumber')]), [true, true, true, true]);
});

test('eligible should keep today\'s behaviour while no head is known (no tracker, no probe)', (t) => {
  const chain = chainOf([undefined, undefined]);
  t.true(eligible(chain, chain.upstreams[0]!, [call('eth_getBalance', '0x1', '0x69')]));
});

test('should count each provider once in the chain\'s heads, latest, safe and finalized', (t) => {
  // Two upstreams of one provider far behind, two other providers at the tip.
  const chain = chainOf([100n, 100n, 1000n, 1000n]);
  const [s1, s2] = chain.upstreams as [Upstream, Upstream];
  (s1 as { provider: string }).provider = 'shady';
  (s2 as { provider: string }).provider = 'shady';
  chain.upstreams.forEach((u, i) => {
    u.health.finalized = i < 2 ? 10n : 900n;
  });
  refreshChain(chain);
  t.is(chainHead(chain), 1000n, 'the median of three providers, not of four upstreams');
  t.deepEqual(chain.upstreams.map((u) => u.health.suspect), [false, false, false, false]);
  t.deepEqual(chain.upstreams.map((u) => u.health.lag), [900, 900, 0, 0]);
  t.is(chainHead(chain, 'finalized'), 900n);
  t.is(resolveTag(chain, 'finalized'), 900n, '"finalized" is not resolved to the one provider\'s stale block');
});

test('the chain\'s safe and finalized need more than half of the providers: one not known counts as lowest', (t) => {
  const finalizedOf = (values: (bigint | undefined)[]) => {
    const chain = chainOf(values.map(() => 100n));
    chain.upstreams.forEach((u, i) => (u.health.finalized = values[i]));
    return chainHead(chain, 'finalized');
  };
  t.is(finalizedOf([undefined, undefined, 99n]), undefined, 'one provider of three is not the chain');
  t.is(finalizedOf([90n, undefined, 99n]), 90n);
  t.is(finalizedOf([90n, 92n, 99n]), 92n);
  t.is(finalizedOf([undefined, 99n]), undefined, 'one of two is not the chain either');
  t.is(finalizedOf([90n, 99n]), 90n);
  t.is(finalizedOf([99n]), 99n, 'a chain of one provider has its word only');
  t.is(finalizedOf([90n, 91n, 99n, undefined]), 90n, 'three of four hold 90; only two hold 91');
});

test('resolveTag should give safe and finalized once the voters\' heads are known', (t) => {
  const chain = chainOf([100n, 100n, 100n]);
  t.is(resolveTag(chain, 'safe'), undefined);
  chain.upstreams[0]!.health.safe = 90n;
  chain.upstreams[1]!.health.safe = 92n;
  t.is(resolveTag(chain, 'safe', chain.upstreams.slice(0, 2)), 90n, 'the lowest of the voters');
  t.is(resolveTag(chain, 'safe', chain.upstreams), undefined, 'one voter unknown');
  t.is(resolveTag(chain, 'safe'), 90n, 'the chain: the lower median of the known ones');
  t.is(resolveTag(chain, 'earliest'), 0n);
  t.is(resolveTag(chain, '0x10'), 16n);
  t.is(resolveTag(chain, 'latest'), undefined);
  chain.upstreams[2]!.health.safe = 95n;
  t.deepEqual(chain.upstreams.map((u) => eligible(chain, u, [call('eth_getBalance', '0x1', 'safe')])), [true, true, true]);
});

test('should derive safe and finalized from the finality depth where a node has no tags', async (t) => {
  // Through the tracker's own path: an upstream whose tag calls fail with an error.
  const chain = chainOf([undefined], { finalityDepth: 64 });
  const u = chain.upstreams[0]!;
  (u as { transport: unknown }).transport = {
    async send({ payload }: { payload: { calls: RpcCall[] } }) {
      const c = payload.calls[0]!;
      const body = c.method === 'eth_blockNumber' ? { jsonrpc: '2.0', id: 1, result: '0x100' } : { jsonrpc: '2.0', id: 1, error: { code: -32602, message: 'invalid block tag' } };
      return { status: 200, body: Buffer.from(JSON.stringify(body)) };
    },
  };
  const tracker = startHeadTracker({ chains: new Map([['1', chain]]) } as never, { timeoutMs: 30_000 });
  t.teardown(() => tracker.stop());
  await tracker.runOnce();
  t.is(u.health.head, 256n);
  t.is(u.health.safe, 192n);
  t.is(u.health.finalized, 192n);
});

const missing: [string, RpcCall, { result?: unknown; error?: { code: number; message: string } }, boolean][] = [
  ['a null block', call('eth_getBlockByHash', hash, false), { result: null }, true],
  ['a null receipt', call('eth_getTransactionReceipt', hash), { result: null }, true],
  ['a null transaction', call('eth_getTransactionByHash', hash), { result: null }, true],
  ['geth header not found', call('eth_getBalance', '0x1', '0x69'), { error: { code: -32000, message: 'header not found' } }, true],
  ['geth unknown block', call('eth_getLogs', { blockHash: hash }), { error: { code: -32000, message: 'unknown block' } }, true],
  ['erigon/besu block not found', call('eth_call', {}, { blockHash: hash }), { error: { code: -32000, message: 'Block not found' } }, true],
  ['nethermind could not be found', call('eth_getBalance', '0x1', { blockHash: hash }), { error: { code: -32001, message: `Block ${hash} could not be found` } }, true],
  ['a pruned state', call('eth_getBalance', '0x1', '0x1'), { error: { code: -32000, message: 'missing trie node 0xabc (path )' } }, true],
  ['a balance of zero', call('eth_getBalance', '0x1', '0x1'), { result: '0x0' }, false],
  ['empty logs (a valid answer)', call('eth_getLogs', { blockHash: hash }), { result: [] }, false],
  ['a revert', call('eth_call', {}, '0x1'), { error: { code: 3, message: 'execution reverted' } }, false],
  ['a null result of a method where null is an answer', call('eth_call', {}, '0x1'), { result: null }, false],
];
for (const [what, c, answer, expected] of missing) {
  test(`answersAsMissing should read ${what} as ${expected ? 'missing' : 'an answer'}`, (t) => {
    t.is(answersAsMissing(c, answer), expected);
  });
}

test('blockNotAvailable should name the block and the heads seen, with Retry-After', (t) => {
  const chain = chainOf([100n, 100n, 110n], { waitMs: 2500 });
  const err = blockNotAvailable(chain, [call('eth_getBlockByNumber', '0x69', false)], 2, 2500, 7);
  t.true(err instanceof BlockNotAvailableError);
  t.is(err.rpcCode, -32016);
  t.is(err.status, 503);
  t.is(err.rpcId, 7);
  t.deepEqual(err.headers, { 'Retry-After': '3' });
  t.regex(err.message, /block 105 \(0x69\) is not yet available on 2 upstreams \(1 has it after waiting 2500 ms\)/);
  t.like(err.data, { block: '0x69', required: 2, eligible: 1, chainHead: '0x6e' });
  t.deepEqual((err.data as { heads: unknown[] }).heads[0], { upstream: 'http://u0.example/***', latest: '0x64' });
  t.false(JSON.stringify(err.data).includes('KEY'), 'URLs redacted');
});

test('waitForEligible should resolve as soon as a head refresh brings enough upstreams, or false at the end of the wait', async (t) => {
  const chain = chainOf([100n, 100n, 110n], { waitMs: 60_000 });
  const calls = [call('eth_getBlockByNumber', '0x69', false)];
  t.true(await waitForEligible(chain, calls, 1));
  const waiting = waitForEligible(chain, calls, 2);
  recordHead(chain.upstreams[0]!, 'latest', 0x69n, 'poll');
  refreshChain(chain);
  t.true(await waiting);
  // The wait's timer is unref'd (a wait must not hold the process): this one holds it meanwhile.
  const hold = setTimeout(() => {}, 10_000);
  t.teardown(() => clearTimeout(hold));
  t.false(await waitForEligible(chain, [call('eth_getBlockByNumber', '0x7f', false)], 1, { waitMs: 0 }));
  const aborted = new AbortController();
  const pending = waitForEligible(chain, [call('eth_getBlockByNumber', '0x7f', false)], 1, { signal: aborted.signal });
  aborted.abort();
  t.false(await pending);
});

test('headSettings should take the chain\'s keys, then the global ones, then the known chain, then the defaults', (t) => {
  t.like(headSettings('1'), { waitMs: 12_000, finalityDepth: 64, intervalMs: 4_000 });
  t.like(headSettings('999999'), { waitMs: 2_000, finalityDepth: 128 });
  t.like(headSettings('42161'), { waitMs: 1_000 }, 'at least a second');
  t.like(headSettings('1', { waitMs: 5, intervalMs: 100 }, { waitMs: 7 }), { waitMs: 7, intervalMs: 100 });
});

