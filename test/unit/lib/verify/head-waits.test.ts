/**
 * Waiting for heads (woken by each head refresh, ended by the wait's bound, the question's end or
 * the pipeline's close) and the -32016 errors naming the block or hash and who had it.
 */
import test from 'ava';
import { endHeadWaits, headSettings, recordHead, refreshChain, setChainHeadSettings } from '../../../../lib/health/heads.js';
import type { RpcCall } from '../../../../lib/jsonrpc/types.js';
import type { Chain } from '../../../../lib/upstream/registry.js';
import { absenceNotVouched, blockNotAvailable, eligibleProviders, hashNotAvailable, waitForEligible, waitUntil } from '../../../../lib/verify/head-waits.js';
import { testChain, testUpstream } from '../../../support/stage.js';

const hash = `0x${'cd'.repeat(32)}`;
const balanceAt = (block: string): RpcCall[] => [{ id: 1, method: 'eth_getBalance', params: ['0x1', block] }];

function chainAt(heads: bigint[], providers?: string[], waitMs = 3000): Chain {
  const upstreams = heads.map((_, i) => testUpstream(i, { provider: providers?.[i] }));
  const chain = testChain(upstreams);
  setChainHeadSettings(chain, { ...headSettings('1'), waitMs });
  heads.forEach((h, i) => recordHead(upstreams[i]!, 'latest', h, 'poll'));
  refreshChain(chain);
  return chain;
}

test('eligibleProviders should count the providers whose head reached the block, each once', (t) => {
  const chain = chainAt([0x20n, 0x20n, 0x10n], ['a', 'a', 'b']);
  t.is(eligibleProviders(chain, balanceAt('0x15')), 1);
  t.is(eligibleProviders(chain, balanceAt('0x10')), 2);
  t.is(eligibleProviders(chain, balanceAt('0x10'), chain.upstreams.slice(0, 2)), 1, 'among the given upstreams only');
});

test('waitForEligible should resolve true at once when enough providers have the block', async (t) => {
  t.true(await waitForEligible(chainAt([0x20n, 0x20n]), balanceAt('0x20'), 2));
});

test('waitForEligible should wake on the head refresh that brings enough providers', async (t) => {
  const chain = chainAt([0x20n, 0x10n]);
  const waiting = waitForEligible(chain, balanceAt('0x20'), 2, { waitMs: 60_000 });
  recordHead(chain.upstreams[1]!, 'latest', 0x18n, 'poll');
  refreshChain(chain); // not enough yet: still waiting
  recordHead(chain.upstreams[1]!, 'latest', 0x20n, 'poll');
  refreshChain(chain);
  t.true(await waiting);
});

test('waitUntil should resolve false at the end of its wait, on abort, and once the chain\'s heads ended', async (t) => {
  const chain = chainAt([0x10n]);
  t.false(await waitUntil(chain, () => false, { waitMs: 0 }));
  const ended = new AbortController();
  const aborted = waitUntil(chain, () => false, { waitMs: 60_000, signal: ended.signal });
  ended.abort();
  t.false(await aborted);
  const closing = chainAt([0x10n]);
  const waiting = waitUntil(closing, () => false, { waitMs: 60_000 });
  endHeadWaits(closing);
  t.false(await waiting);
  t.false(await waitUntil(closing, () => false, { waitMs: 60_000 }), 'no wait once ended');
});

test('waitUntil with atOnce false should not judge before the first refresh', async (t) => {
  const chain = chainAt([0x10n]);
  let judged = 0;
  const waiting = waitUntil(chain, () => (judged += 1) > 0, { waitMs: 60_000, atOnce: false });
  t.is(judged, 0);
  refreshChain(chain);
  t.true(await waiting);
});

test('blockNotAvailable should name the block, the eligible count and the heads, with Retry-After from heads.waitMs', (t) => {
  const chain = chainAt([0x20n, 0x10n], undefined, 2500);
  const err = blockNotAvailable(chain, balanceAt('0x20'), 2, 1200.4, 9);
  t.like(err, { rpcCode: -32016, status: 503, rpcId: 9, headers: { 'Retry-After': '3' } });
  t.deepEqual(err.data, {
    block: '0x20', required: 2, eligible: 1, waitedMs: 1200, chainHead: '0x20',
    heads: [{ upstream: 'http://u0.test/***', latest: '0x20' }, { upstream: 'http://u1.test/***', latest: '0x10' }],
  });
  t.regex(err.message, /^block 32 \(0x20\) is not yet available on 2 upstreams \(1 has it after waiting 1200 ms\)/);
});

test('hashNotAvailable should name the hash, who had it and who lacked it', (t) => {
  const chain = chainAt([0x10n, 0x10n, 0x10n], undefined, 500);
  const [a, b, c] = chain.upstreams;
  const err = hashNotAvailable(chain, { kind: 'hash', hash, of: 'transaction' }, 2, [a!], [b!, c!], 'x');
  t.like(err, { rpcCode: -32016, rpcId: 'x', headers: { 'Retry-After': '1' } });
  t.deepEqual(err.data, { hash, pin: 'transaction', required: 2, eligible: 1, had: ['http://u0.test/***'], lacked: ['http://u1.test/***', 'http://u2.test/***'] });
});

test('absenceNotVouched should name the best head and who answered from behind it', (t) => {
  const chain = chainAt([0x30n, 0x30n, 0x10n]);
  const [a, b, c] = chain.upstreams;
  const err = absenceNotVouched(chain, { kind: 'hash', hash, of: 'block' }, 3, [a!, b!], [c!]);
  t.like(err, { rpcCode: -32016, status: 503 });
  t.deepEqual(err.data, { hash, pin: 'block', required: 3, eligible: 2, bestHead: '0x30', atBestHead: ['http://u0.test/***', 'http://u1.test/***'], behind: [{ upstream: 'http://u2.test/***', latest: '0x10' }] });
});
