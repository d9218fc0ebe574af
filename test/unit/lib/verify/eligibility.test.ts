/**
 * Eligibility predicates of issues 17 and 25: the pin of every method of the table and of the
 * config (one table, methods.ts pinOf), `safe`/`finalized` resolved through the tracked heads,
 * hash pins (answers that look missing), the wait for heads to rise and the -32016 for a hash.
 */
import test from 'ava';
import { BlockNotAvailableError } from '../../../../lib/errors.js';
import { type CustomMethods } from '../../../../lib/jsonrpc/methods.js';
import { classifyCalls } from '../../../../lib/jsonrpc/classify.js';
import type { RpcCall, RpcPayload } from '../../../../lib/jsonrpc/types.js';
import { blockNeeded, eligible, hashPinned, highestBlock, resolveTags } from '../../../../lib/verify/eligibility.js';
import { answerBodyAsMissing } from '../../../../lib/verify/answers/missing.js';
import { assessBody } from '../../../../lib/verify/answers/answers.js';
import { hashNotAvailable, waitForHeadsToRise } from '../../../../lib/verify/head-waits.js';
import { headSettings, recordHead, refreshChain, setChainHeadSettings } from '../../../../lib/health/heads.js';
import { newHealth } from '../../../../lib/health/health.js';
import type { Chain, Upstream } from '../../../../lib/upstream/registry.js';

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

const chainOf = (heads: (bigint | undefined)[], custom: CustomMethods = new Map(), waitMs = 1000): Chain => {
  const chain = { id: '1', confirmations: 2, extraConfirmable: custom, ignoredFields: {}, upstreams: heads.map((h, i) => upstream(i, h)), providerCount: heads.length } as unknown as Chain;
  setChainHeadSettings(chain, { ...headSettings('1'), suspectBlocks: 10, waitMs });
  refreshChain(chain);
  return chain;
};

const call = (method: string, ...params: unknown[]): RpcCall => ({ id: 1, method, params });
const single = (c: RpcCall): RpcPayload => ({ calls: [c], batch: false, raw: Buffer.from(JSON.stringify({ jsonrpc: '2.0', ...c })) });
const hash = `0x${'ab'.repeat(32)}`;
const custom: CustomMethods = new Map([['foo_getThing', { kind: 'block', at: 1, hash: true }], ['foo_byTx', { kind: 'txHash', at: 0 }]]);

// --- blockNeeded: one table (pinOf), every method of it and the config's

const needs: [string, RpcCall, ReturnType<typeof blockNeeded>][] = [
  ['eth_getBlockReceipts by number', call('eth_getBlockReceipts', '0x69'), { kind: 'number', block: 0x69n }],
  ['eth_getBlockReceipts by hash', call('eth_getBlockReceipts', hash), { kind: 'hash', hash, of: 'block' }],
  ['eth_getProof', call('eth_getProof', '0x1', [], '0x70'), { kind: 'number', block: 0x70n }],
  ['eth_getTransactionByBlockNumberAndIndex', call('eth_getTransactionByBlockNumberAndIndex', '0x71', '0x0'), { kind: 'number', block: 0x71n }],
  ['eth_getTransactionByBlockHashAndIndex', call('eth_getTransactionByBlockHashAndIndex', hash, '0x0'), { kind: 'hash', hash, of: 'block' }],
  ['eth_simulateV1 at a block', call('eth_simulateV1', {}, '0x72'), { kind: 'number', block: 0x72n }],
  ['debug_getRawReceipts', call('debug_getRawReceipts', '0x73'), { kind: 'number', block: 0x73n }],
  ['an EIP-1898 blockHash of eth_getProof', call('eth_getProof', '0x1', [], { blockHash: hash }), { kind: 'hash', hash, of: 'block' }],
  ['a block number beyond 2^53 exactly', call('eth_getBalance', '0x1', '0xffffffffffffffffff'), { kind: 'number', block: 0xffffffffffffffffffn }],
  ['a config-declared block pin', call('foo_getThing', '0x1', '0x74'), { kind: 'number', block: 0x74n }],
  ['a config-declared transaction hash pin', call('foo_byTx', hash), { kind: 'hash', hash, of: 'transaction' }],
  ['pending as the head', call('eth_getProof', '0x1', [], 'pending'), { kind: 'head' }],
  ['a method neither in the table nor declared', call('foo_unknown', '0x1', '0x74'), undefined],
  ['a malformed hash', call('eth_getTransactionReceipt', '0x12'), undefined],
];
for (const [what, c, need] of needs) {
  test(`blockNeeded should read ${what}`, (t) => {
    t.deepEqual(blockNeeded(c, custom), need);
  });
}

test('highestBlock and eligible should read the chain\'s config-declared pins', (t) => {
  const chain = chainOf([100n, 100n, 110n], custom);
  const c = [call('foo_getThing', '0x1', '0x69')];
  t.is(highestBlock(chain, c), 0x69n);
  t.deepEqual(chain.upstreams.map((u) => eligible(chain, u, c)), [false, false, true]);
  const plain = chainOf([100n, 100n, 110n]);
  t.is(highestBlock(plain, c), undefined, 'undeclared: no pin');
});

test('hashPinned should name block and transaction hashes of a single call, and nothing else', (t) => {
  const chain = chainOf([undefined], custom);
  t.deepEqual(hashPinned(chain, call('eth_getTransactionReceipt', hash)), { kind: 'hash', hash, of: 'transaction' });
  t.deepEqual(hashPinned(chain, call('eth_getLogs', { blockHash: hash })), { kind: 'hash', hash, of: 'block' });
  t.deepEqual(hashPinned(chain, call('eth_call', {}, { blockHash: hash })), { kind: 'hash', hash, of: 'block' });
  t.deepEqual(hashPinned(chain, call('foo_byTx', hash)), { kind: 'hash', hash, of: 'transaction' });
  t.is(hashPinned(chain, call('eth_getBalance', '0x1', '0x10')), undefined);
});

// --- answers that look missing

test('answerBodyAsMissing should read null, [], unknown-block errors as missing, and real answers as answers', (t) => {
  // A vote: the body and the hash of its canonical form (of a null, [] or "0x" the same for every method).
  const body = (o: unknown) => {
    const text = JSON.stringify({ jsonrpc: '2.0', id: 1, ...(o as object) });
    const a = assessBody(text, { batch: false, calls: [call('eth_chainId')] });
    return { body: Buffer.from(text), hash: a.ok ? a.hash : 'no vote' };
  };
  const receipt = call('eth_getTransactionReceipt', hash);
  t.true(answerBodyAsMissing(receipt, body({ result: null })));
  t.true(answerBodyAsMissing(call('eth_getLogs', { blockHash: hash }), body({ result: [] })));
  t.true(answerBodyAsMissing(call('eth_getBlockReceipts', hash), body({ result: null })));
  t.true(answerBodyAsMissing(call('eth_getProof', '0x1', [], { blockHash: hash }), body({ error: { code: -32000, message: 'header for hash not found' } })));
  t.true(answerBodyAsMissing(receipt, body({ error: { code: -32000, message: 'transaction indexing is in progress' } })));
  t.false(answerBodyAsMissing(receipt, body({ result: { blockNumber: '0x1', status: '0x1' } })));
  t.false(answerBodyAsMissing(call('eth_call', {}, { blockHash: hash }), body({ error: { code: 3, message: 'execution reverted' } })));
  t.false(answerBodyAsMissing(call('eth_call', {}, { blockHash: hash }), body({ result: null })), 'null is an answer of eth_call');
  // A lagging node's other ways of saying it lacks the block: reth's empty raw header or block,
  // a null raw read or state read (never a value of a block the node has).
  t.true(answerBodyAsMissing(call('debug_getRawHeader', '0x69'), body({ result: '0x' })));
  t.true(answerBodyAsMissing(call('debug_getRawBlock', '0x69'), body({ result: '0x' })));
  t.true(answerBodyAsMissing(call('debug_getRawReceipts', '0x69'), body({ result: null })));
  t.true(answerBodyAsMissing(call('debug_getRawTransaction', hash), body({ result: null })));
  t.true(answerBodyAsMissing(call('eth_getBalance', '0x1', '0x69'), body({ result: null })));
  t.true(answerBodyAsMissing(call('debug_getRawHeader', hash), body({ error: { code: -32000, message: 'header #[1 2 3] not found' } })));
  t.false(answerBodyAsMissing(call('eth_getCode', '0x1', '0x69'), body({ result: '0x' })), 'an account without code');
  t.false(answerBodyAsMissing(call('debug_getRawHeader', '0x69'), body({ result: '0xf901' })));
});

// --- safe / finalized resolved through the heads

const withSafe = (chain: Chain, safe: (bigint | undefined)[], finalized: (bigint | undefined)[] = safe) => {
  chain.upstreams.forEach((u, i) => {
    u.health.safe = safe[i];
    u.health.finalized = finalized[i];
  });
  return chain;
};

test('resolveTags should leave a request without tags alone, allocating nothing', (t) => {
  const chain = withSafe(chainOf([100n, 100n, 100n]), [90n, 90n, 90n]);
  t.is(resolveTags(chain, single(call('eth_getBalance', '0x1', 'latest'))), undefined);
  t.is(resolveTags(chain, single(call('eth_blockNumber'))), undefined);
  t.is(resolveTags(chain, single(call('eth_getLogs', { fromBlock: '0x1', toBlock: '0x2' }))), undefined);
});

test('resolveTags should stay out while the heads are not tracked (the tag stays unconfirmable)', (t) => {
  const chain = chainOf([100n, 100n, 100n]);
  t.is(resolveTags(chain, single(call('eth_getBalance', '0x1', 'finalized'))), undefined);
});

test('resolveTags should resolve earliest to block 0x0, heads tracked or not (a node that expired its history reads earliest as its cutoff)', (t) => {
  const chain = chainOf([100n, 100n, 100n]);
  const r = resolveTags(chain, single(call('eth_getLogs', { fromBlock: 'Earliest', toBlock: '0x10' })))!;
  t.deepEqual(r.resolved, [{ tag: 'earliest', block: 0n }]);
  t.deepEqual(r.payload.calls[0]!.params, [{ fromBlock: '0x0', toBlock: '0x10' }]);
  t.true(classifyCalls(r.payload.calls, new Map()).confirmable);
  t.deepEqual(resolveTags(chain, single(call('eth_getBalance', '0x1', { blockNumber: 'earliest' })))!.payload.calls[0]!.params, ['0x1', { blockNumber: '0x0' }]);
});

test('resolveTags should resolve to the chain\'s robust head (lower median), keep the id, and write the raw anew', (t) => {
  const chain = withSafe(chainOf([100n, 100n, 100n, 100n]), [90n, 91n, 0xffffffn, undefined], [80n, 81n, 82n, undefined]);
  const c: RpcCall = { id: 'abc', method: 'eth_getBalance', params: ['0x1', 'SAFE'] };
  const r = resolveTags(chain, single(c))!;
  t.deepEqual(r.resolved, [{ tag: 'safe', block: 90n }], 'the lower median of the four providers, the unknown one counting as lowest: the outlier does not move it');
  t.deepEqual(r.payload.calls, [{ id: 'abc', method: 'eth_getBalance', params: ['0x1', '0x5a'] }]);
  t.false(r.payload.batch);
  t.deepEqual(JSON.parse(r.payload.raw.toString()), { jsonrpc: '2.0', id: 'abc', method: 'eth_getBalance', params: ['0x1', '0x5a'] });
  t.deepEqual(classifyCalls(r.payload.calls, new Map()).confirmable, true);
});

test('resolveTags should resolve EIP-1898 blockNumber, eth_getLogs fromBlock and toBlock, and every batch member', (t) => {
  const chain = withSafe(chainOf([100n, 100n, 100n]), [90n, 90n, 90n], [64n, 64n, 64n]);
  const calls: RpcCall[] = [
    { id: 1, method: 'eth_call', params: [{ to: '0x1' }, { blockNumber: 'finalized', requireCanonical: true }] },
    { id: 2, method: 'eth_getLogs', params: [{ fromBlock: 'finalized', toBlock: 'safe', address: '0x2' }] },
    { id: 3, method: 'eth_chainId', params: [] },
  ];
  const r = resolveTags(chain, { calls, batch: true, raw: Buffer.from(JSON.stringify(calls)) })!;
  t.deepEqual(r.payload.calls[0]!.params, [{ to: '0x1' }, { blockNumber: '0x40', requireCanonical: true }]);
  t.deepEqual(r.payload.calls[1]!.params, [{ fromBlock: '0x40', toBlock: '0x5a', address: '0x2' }]);
  t.is(r.payload.calls[2], calls[2], 'a member without a tag is kept as is');
  t.deepEqual(JSON.parse(r.payload.raw.toString()).map((m: { id: number }) => m.id), [1, 2, 3]);
  t.true(classifyCalls(r.payload.calls, new Map()).confirmable);
  t.is(calls[1]!.params[0] && (calls[1]!.params[0] as { toBlock: string }).toBlock, 'safe', 'the client\'s call is not mutated');
});

test('resolveTags should resolve a config-declared pin, and leave a body with an inexact number as it is', (t) => {
  const chain = withSafe(chainOf([100n, 100n, 100n], custom), [90n, 90n, 90n]);
  t.deepEqual(resolveTags(chain, single(call('foo_getThing', '0x1', 'safe')))!.payload.calls[0]!.params, ['0x1', '0x5a']);
  const c = call('eth_call', { to: '0x1', gas: 1e400 }, 'safe');
  t.is(resolveTags(chain, { calls: [c], batch: false, raw: Buffer.from('{"jsonrpc":"2.0","id":1,"method":"eth_call","params":[{"to":"0x1","gas":1e400},"safe"]}') }), undefined);
});

test('resolveTags should resolve through the finality depth where the nodes have no tags (heads.ts derives them)', (t) => {
  // heads.ts writes safe = finalized = latest − finalityDepth on such nodes; resolveTags reads them alike.
  const chain = withSafe(chainOf([1000n, 1000n, 1000n]), [872n, 872n, 872n]);
  t.deepEqual(resolveTags(chain, single(call('eth_getBlockByNumber', 'finalized', false)))!.resolved, [{ tag: 'finalized', block: 872n }]);
});

// --- waiting for heads to rise, and the -32016 of a hash

test('waitForHeadsToRise should resolve when one of the lacking upstreams reports a higher head, or false at the end of the wait', async (t) => {
  const chain = chainOf([100n, 100n, 110n]);
  const waiting = waitForHeadsToRise(chain, chain.upstreams.slice(0, 2), { waitMs: 60_000 });
  recordHead(chain.upstreams[2]!, 'latest', 0x70n, 'poll');
  refreshChain(chain); // another upstream rose: not yet
  recordHead(chain.upstreams[1]!, 'latest', 101n, 'poll');
  refreshChain(chain);
  t.true(await waiting);
  // The wait's timer is unref'd (a wait must not hold the process): this one holds it meanwhile.
  const hold = setTimeout(() => {}, 10_000);
  t.teardown(() => clearTimeout(hold));
  t.false(await waitForHeadsToRise(chain, chain.upstreams.slice(0, 1), { waitMs: 0 }));
  t.false(await waitForHeadsToRise(chainOf([undefined]), [], { waitMs: 1 }), 'without heads: the plain bounded wait');
});

test('waitForHeadsToRise should end at once, false, when its question ended (its signal), and stop listening', async (t) => {
  const chain = chainOf([100n, 100n, 110n]);
  const ended = new AbortController();
  const waiting = waitForHeadsToRise(chain, chain.upstreams.slice(0, 2), { waitMs: 60_000, signal: ended.signal });
  ended.abort();
  t.false(await waiting);
  // A head rising later finds no listener of that wait (it resolved once, false).
  recordHead(chain.upstreams[1]!, 'latest', 101n, 'poll');
  refreshChain(chain);
  t.false(await waitForHeadsToRise(chain, chain.upstreams.slice(0, 1), { waitMs: 60_000, signal: ended.signal }), 'already ended: false at once');
});

test('hashNotAvailable should name the hash, who had it and who lacked it, with Retry-After', (t) => {
  const chain = chainOf([100n, 100n, 100n], new Map(), 2500);
  const [a, b, c] = chain.upstreams as [Upstream, Upstream, Upstream];
  const err = hashNotAvailable(chain, { kind: 'hash', hash, of: 'transaction' }, 2, [a], [b, c], 7);
  t.true(err instanceof BlockNotAvailableError);
  t.is(err.rpcCode, -32016);
  t.is(err.status, 503);
  t.is(err.rpcId, 7);
  t.deepEqual(err.headers, { 'Retry-After': '3' });
  t.is(err.message, `transaction ${hash} is not yet available on 2 upstreams (1 has it, 2 answer as if they lack it): retry shortly`);
  t.deepEqual(err.data, { hash, pin: 'transaction', required: 2, eligible: 1, had: [a.label], lacked: [b.label, c.label] });
  t.notRegex(JSON.stringify(err.data), /KEY/, 'URLs redacted');
});
