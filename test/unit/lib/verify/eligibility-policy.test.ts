/**
 * The eligibility policy on one question (a single call: a batch split per member asks one per
 * member): which hooks it hands the agreement loop, and the -32016 it makes of a loop's end.
 */
import test from 'ava';
import type { Assessed, RpcContext } from '../../../../lib/context.js';
import type { RpcCall } from '../../../../lib/jsonrpc/types.js';
import { headSettings, refreshChain, setChainHeadSettings } from '../../../../lib/upstream/heads.js';
import { newHealth } from '../../../../lib/upstream/health.js';
import type { Chain, Upstream } from '../../../../lib/upstream/registry.js';
import type { Failed, Good } from '../../../../lib/verify/agreement.js';
import { eligibilityPolicy, ineligibleError } from '../../../../lib/verify/eligibility-policy.js';

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

test('a single call pinned to a hash: "not found" votes until an upstream has the data, then not', (t) => {
  const chain = chainOf([undefined, undefined, undefined]);
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

test('no hash policy at N=1 (the first answer decides) nor for a batch as a whole', (t) => {
  const chain = chainOf([undefined, undefined]);
  t.is(eligibilityPolicy(ctxOf(chain, [receipt()], 1)), undefined);
  t.is(eligibilityPolicy(ctxOf(chain, [receipt(1), receipt(2)])), undefined);
  t.is(eligibilityPolicy({ ...ctxOf(chain, [receipt()]), confirmable: false }), undefined);
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
  t.is(ineligibleError(ctx, 2, false, end([answer(a, null)], [])), undefined, 'nobody had it');
  t.is(ineligibleError(ctx, 2, false, end([answer(a, { x: 1 }), answer(b, { x: 2 })], [answer(c, null)])), undefined, 'the holders disagree: a dispute (502)');
  t.is(ineligibleError(ctx, 2, false, end([answer(a, { x: 1 })], [], [{ upstream: b, ok: false, reason: 'timeout', ms: 1 }])), undefined, 'no one lacked it: upstreams failed (502)');
});
