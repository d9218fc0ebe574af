/**
 * The eligibility policy on one question (a single call: a batch split per member asks one per
 * member; or a batch asked as a whole, its answer read member by member): which hooks it hands
 * the agreement loop, and the -32016 it makes of a loop's end.
 */
import test from 'ava';
import type { RpcContext } from '../../../../lib/pipeline/context.js';
import type { RpcCall } from '../../../../lib/jsonrpc/types.js';
import { headSettings, refreshChain, setChainHeadSettings } from '../../../../lib/health/heads.js';
import { newHealth } from '../../../../lib/health/health.js';
import type { Chain, Upstream } from '../../../../lib/upstream/registry.js';
import type { Assessed, Failed, Good } from '../../../../lib/verify/question.js';
import { eligibilityPolicy, ineligibleError } from '../../../../lib/verify/eligibility-policy.js';
import { aboveEveryHead } from '../../../../lib/verify/eligibility.js';

const upstream = (index: number, head?: bigint): Upstream =>
  ({ chainId: '1', index, url: `http://u${index}.example/`, label: `u${index}`, provider: `p${index}`, health: { ...newHealth(), head, headPolledAt: head === undefined ? 0 : 1 } }) as unknown as Upstream;

const chainOf = (heads: (bigint | undefined)[]): Chain => {
  const chain = { id: '1', confirmations: 2, extraConfirmable: new Map(), ignoredFields: {}, upstreams: heads.map((h, i) => upstream(i, h)), providerCount: heads.length } as unknown as Chain;
  setChainHeadSettings(chain, { ...headSettings('1'), waitMs: 10 });
  refreshChain(chain);
  return chain;
};

const hash = `0x${'ab'.repeat(32)}`;
const receipt = (id = 1): RpcCall => ({ id, method: 'eth_getTransactionReceipt', params: [hash] });
const ctxOf = (chain: Chain, calls: RpcCall[], required = 2): RpcContext =>
  ({ requestId: 'r', log: {} as never, chain, confirmable: true, required, payload: { calls, batch: calls.length > 1, raw: Buffer.from('') } }) as RpcContext;
const answer = (u: Upstream, result: unknown): Good => ({ upstream: u, ok: true, body: Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, result })), hash: JSON.stringify(result), ms: 1 });

test('a single call pinned to a hash: "not found" is no vote from an upstream whose head is unknown', (t) => {
  const chain = chainOf([undefined, undefined, 100n]);
  const [a, b, c] = chain.upstreams as [Upstream, Upstream, Upstream];
  const policy = eligibilityPolicy(ctxOf(chain, [receipt()]))!;
  t.false(policy.eligible!(a, answer(a, null)), 'its head unknown: it may be lagging');
  t.true(policy.eligible!(b, answer(b, { blockNumber: '0x1' })), 'the data is a vote whatever the head');
  t.true(policy.eligible!(c, answer(c, null)), 'at the best head: a vote');
  t.false(eligibilityPolicy(ctxOf(chainOf([undefined, undefined]), [receipt()]))!.eligible!(a, answer(a, null)), 'no head known at all: no vote either');
});

test('a single call pinned to a hash: "not found" votes until an upstream has the data, then not', (t) => {
  const chain = chainOf([100n, 100n, 100n]);
  const [a, b, c] = chain.upstreams as [Upstream, Upstream, Upstream];
  const policy = eligibilityPolicy(ctxOf(chain, [receipt()]))!;
  const nullOfA = answer(a, null);
  t.true(policy.eligible!(a, nullOfA), 'nobody has it yet: a vote');
  t.false(policy.recheck!(nullOfA));
  const data = answer(b, { blockNumber: '0x1' });
  t.true(policy.eligible!(b, data));
  t.true(policy.recheck!(data), 'the first answer with the data: recheck the votes');
  t.false(policy.eligible!(a, nullOfA), 'the null counted before is taken back');
  t.false(policy.eligible!(c, answer(c, null)));
  t.false(policy.recheck!(answer(c, { blockNumber: '0x1' })), 'only once');
});

test('the hash policy at N=1 too (a lagging node\'s null is not the answer), none for an unconfirmable call', (t) => {
  const chain = chainOf([97n, 100n]);
  const [a, b] = chain.upstreams as [Upstream, Upstream];
  const policy = eligibilityPolicy(ctxOf(chain, [receipt()], 1))!;
  t.false(policy.eligible!(a, answer(a, null)), 'behind the best head: its null is no answer');
  t.true(policy.eligible!(b, answer(b, null)));
  t.is(eligibilityPolicy({ ...ctxOf(chain, [receipt()]), confirmable: false }), undefined);
});

test('a hash pin with heads polled: "not found" votes only from an upstream at the best credible head (not the median)', (t) => {
  // Heads 97, 97, 100: the median is 97, the best credible head 100.
  const chain = chainOf([97n, 97n, 100n]);
  const [a, b, c] = chain.upstreams as [Upstream, Upstream, Upstream];
  const policy = eligibilityPolicy(ctxOf(chain, [receipt()]))!;
  t.false(policy.eligible!(a, answer(a, null)));
  t.false(policy.eligible!(b, answer(b, [])));
  t.true(policy.eligible!(c, answer(c, null)));
  t.true(policy.eligible!(a, answer(a, { blockNumber: '0x61' })), 'an answer with the data is a vote from anyone');
  const unknown = (u: Upstream) => ({ upstream: u, ok: false as const, reason: 'provider error -32000: unknown block', ms: 1 });
  t.true(policy.lacking!(unknown(a)), 'behind: its unknown-block error is lag, asked again after the wait');
  t.false(policy.lacking!(unknown(c)), 'at the best head: a failure as before');
  // A suspect far above the others does not set the best head.
  const withSuspect = chainOf([97n, 97n, 100n, 100_000n]);
  t.true(withSuspect.upstreams[3]!.health.suspect);
  t.true(eligibilityPolicy(ctxOf(withSuspect, [receipt()]))!.eligible!(withSuspect.upstreams[2]!, answer(withSuspect.upstreams[2]!, null)));
});

test('ineligibleError for an absence: -32016 naming the best head and who was behind it', (t) => {
  const chain = chainOf([97n, 97n, 100n]);
  const [a, b, c] = chain.upstreams as [Upstream, Upstream, Upstream];
  const end: Failed = { kind: 'failed', cause: 'ineligible', required: 2, votes: [{ hash: 'null', item: answer(c, null) }], ineligible: [answer(a, null), answer(b, null)], failures: [], called: [a, b, c] };
  const err = ineligibleError(ctxOf(chain, [receipt(5)]), 2, true, end) as Error & { rpcCode: number; rpcId: unknown; status: number; data: Record<string, unknown> };
  t.is(err.rpcCode, -32016);
  t.is(err.rpcId, 5);
  t.like(err.data, { hash, pin: 'transaction', required: 2, eligible: 1, bestHead: '0x64', atBestHead: ['u2'] });
  t.deepEqual(err.data.behind, [{ upstream: 'u0', latest: '0x61' }, { upstream: 'u1', latest: '0x61' }]);
  t.regex(err.message, /was not found, but only 1 of the 2 upstreams needed is at the best head \(block 100\); 2 behind it could not have seen it yet/);
});

test('a single call pinned to a block number: the number policy once heads are polled', (t) => {
  const chain = chainOf([100n, 100n, 110n]);
  const call: RpcCall = { id: 1, method: 'eth_getBlockReceipts', params: ['0x69'] };
  const policy = eligibilityPolicy(ctxOf(chain, [call]))!;
  const [a, , c] = chain.upstreams as [Upstream, Upstream, Upstream];
  t.false(policy.eligible!(a, answer(a, null)), 'below the block, a null: no vote');
  t.true(policy.eligible!(a, answer(a, [{ status: '0x1' }])), 'a real answer proves the node had it');
  t.true(policy.eligible!(c, answer(c, null)));
  t.is(policy.recheck, undefined);
});

test('a log range: a vote only from an upstream known to have its toBlock, whatever it answered; a whole read\'s real answer votes from an unknown head', (t) => {
  const logs: RpcCall = { id: 1, method: 'eth_getLogs', params: [{ fromBlock: '0x5a', toBlock: '0x69' }] };
  const list = [{ blockNumber: '0x5a', logIndex: '0x0' }];
  const chain = chainOf([undefined, 100n, 110n]);
  const [a, b, c] = chain.upstreams as [Upstream, Upstream, Upstream];
  const policy = eligibilityPolicy(ctxOf(chain, [logs]))!;
  t.false(policy.eligible!(a, answer(a, list)), 'its head unknown: the list may be partial');
  t.false(policy.eligible!(b, answer(b, list)), 'below toBlock: a partial list');
  t.true(policy.eligible!(c, answer(c, list)));
  t.true(policy.eligible!(c, answer(c, [])), 'at or above toBlock, an empty list too');
  const unpolled = chainOf([undefined, undefined]);
  const [d] = unpolled.upstreams as [Upstream];
  t.false(eligibilityPolicy(ctxOf(unpolled, [logs]))!.eligible!(d, answer(d, list)), 'no head polled on the chain: no vote either');
  const balance: RpcCall = { id: 1, method: 'eth_getBalance', params: [`0x${'11'.repeat(20)}`, '0x69'] };
  t.true(eligibilityPolicy(ctxOf(unpolled, [balance]))!.eligible!(d, answer(d, '0x1')), 'a real balance: its node had the block');
});

test('ineligibleError for a hash: -32016 when one had it and others lacked it, else the usual 502', (t) => {
  const chain = chainOf([undefined, undefined, undefined]);
  const [a, b, c] = chain.upstreams as [Upstream, Upstream, Upstream];
  const ctx = ctxOf(chain, [receipt(9)]);
  const end = (votes: Good[], ineligible: Good[], failures: Extract<Assessed, { ok: false }>[] = []): Failed => ({
    kind: 'failed', cause: 'ineligible', required: 2, votes: votes.map((v) => ({ hash: v.hash, item: v })), ineligible, failures, called: [a, b, c],
  });
  const err = ineligibleError(ctx, 2, true, end([answer(a, { blockNumber: '0x1' })], [answer(b, null)], [{ upstream: c, ok: false, reason: 'provider error -32000: unknown block', ms: 1 }])) as Error & { rpcCode: number; rpcId: unknown; data: Record<string, unknown> };
  t.is(err.rpcCode, -32016);
  t.is(err.rpcId, 9);
  t.like(err.data, { hash, pin: 'transaction', had: ['u0'], lacked: ['u1', 'u2'] });
  t.is(ineligibleError(ctx, 2, false, end([answer(a, null)], [])), undefined, 'nobody had it, nobody behind: the usual 502');
  t.is(ineligibleError(ctx, 2, false, end([answer(a, { x: 1 }), answer(b, { x: 2 })], [answer(c, null)])), undefined, 'the holders disagree: a dispute (502)');
  t.is(ineligibleError(ctx, 2, false, end([answer(a, { x: 1 })], [], [{ upstream: b, ok: false, reason: 'timeout', ms: 1 }])), undefined, 'no one lacked it: upstreams failed (502)');
});

const batchAnswer = (u: Upstream, ...results: unknown[]): Good => {
  const body = JSON.stringify(results.map((result, i) => ({ jsonrpc: '2.0', id: i + 1, result })));
  return { upstream: u, ok: true, body: Buffer.from(body), hash: body, ms: 1 };
};
const other = `0x${'cd'.repeat(32)}`;

test('a batch asked as a whole with members pinned by hash: a member that looks missing votes only from the best head, and only until an upstream has its data', (t) => {
  const chain = chainOf([97n, 100n, 100n, 100n]);
  const [a, b, c, d] = chain.upstreams as [Upstream, Upstream, Upstream, Upstream];
  const calls: RpcCall[] = [receipt(1), { id: 2, method: 'eth_getTransactionReceipt', params: [other] }];
  const policy = eligibilityPolicy(ctxOf(chain, calls))!;
  t.false(policy.eligible!(a, batchAnswer(a, null, null)), 'behind the best head: its nulls are no vote');
  t.true(policy.eligible!(a, batchAnswer(a, { blockNumber: '0x1' }, { blockNumber: '0x2' })), 'the data is a vote whatever the head');
  const nullsOfB = batchAnswer(b, null, null);
  t.true(policy.eligible!(b, nullsOfB), 'at the best head, nobody has either yet: a vote');
  t.false(policy.recheck!(nullsOfB));
  // a, behind the best head, has the first receipt and lacks the second: no vote, but its data counts.
  const partOfA = batchAnswer(a, { blockNumber: '0x1' }, null);
  t.false(policy.eligible!(a, partOfA));
  t.true(policy.recheck!(partOfA), 'the first answer with a member\'s data: recheck the votes');
  t.false(policy.eligible!(b, nullsOfB), 'the nulls counted before are taken back');
  t.true(policy.eligible!(c, batchAnswer(c, { blockNumber: '0x1' }, null)), 'the second member still votes "not found" from the best head');
  t.false(policy.recheck!(batchAnswer(d, { blockNumber: '0x1' }, null)), 'only once per member');
  t.false(policy.eligible!(c, { ...batchAnswer(c, null, null), body: Buffer.from('{"jsonrpc":"2.0","id":1,"result":null}') }), 'not read member by member: as if every member were missing');
  const unknownBlock = { upstream: c, ok: false as const, reason: 'provider error -32000: header for hash not found', ms: 1 };
  t.true(policy.lacking!(unknownBlock), 'an upstream had data: an unknown-block error is lag');
});

test('ineligibleError for a batch asked as a whole: -32016 naming the member\'s hash, who had it and who lacked it; or the best head and who was behind it', (t) => {
  const chain = chainOf([97n, 100n, 100n]);
  const [a, b, c] = chain.upstreams as [Upstream, Upstream, Upstream];
  const calls: RpcCall[] = [{ id: 1, method: 'eth_getTransactionReceipt', params: [other] }, receipt(2)];
  const ctx = ctxOf(chain, calls);
  const end = (votes: Good[], ineligible: Good[]): Failed => ({ kind: 'failed', cause: 'ineligible', required: 2, votes: votes.map((v) => ({ hash: v.hash, item: v })), ineligible, failures: [], called: [a, b, c] });
  const had = ineligibleError(ctx, 2, true, end([batchAnswer(c, null, { blockNumber: '0x1' })], [batchAnswer(a, null, null), batchAnswer(b, null, null)])) as Error & { rpcCode: number; rpcId: unknown; data: Record<string, unknown> };
  t.is(had.rpcCode, -32016);
  t.is(had.rpcId, null);
  t.like(had.data, { hash, pin: 'transaction', had: ['u2'], lacked: ['u0', 'u1'] });
  const behind = ineligibleError(ctx, 2, true, end([batchAnswer(b, null, null)], [batchAnswer(a, null, null)])) as Error & { data: Record<string, unknown> };
  t.like(behind.data, { hash: other, bestHead: '0x64', atBestHead: ['u1'] });
  t.deepEqual(behind.data.behind, [{ upstream: 'u0', latest: '0x61' }]);
  t.is(ineligibleError(ctx, 2, true, end([batchAnswer(b, null, { x: 1 }), batchAnswer(c, null, { x: 2 })], [batchAnswer(a, null, null)])), undefined, 'the holders disagree: a dispute (502)');
});

test('aboveEveryHead: a block no upstream has reached is; a head at it is not; with no head known (every poll failed) nothing is', (t) => {
  const block = (n: number): RpcCall => ({ id: 1, method: 'eth_getBlockByNumber', params: [`0x${n.toString(16)}`, false] });
  const chain = chainOf([100n, 99n]);
  t.true(aboveEveryHead(chain, [block(101)]));
  t.false(aboveEveryHead(chain, [block(100)]));
  t.false(aboveEveryHead(chain, [receipt()]), 'a hash pin has no number to compare');
  const unknown = chainOf([undefined, undefined]);
  unknown.upstreams[0]!.health.headPolledAt = 1; // polled, but no head came back
  t.false(aboveEveryHead(unknown, [block(101)]));
});
