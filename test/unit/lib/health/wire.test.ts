/**
 * Probe and head-poll rounds sent to a cluster's workers: a round encoded as JSON (bigints as
 * strings), sent, and applied to another process's chain with the same config gives that chain's
 * upstreams the health and heads the probing process recorded, with no call of their own; a
 * round that does not fit the chain is refused.
 */
import test from 'ava';
import { chainHead, headSettings, headTags, setChainHeadSettings } from '../../../../lib/health/heads.js';
import { probeChain } from '../../../../lib/health/probe.js';
import { startHeadTracker, type HeadPoll } from '../../../../lib/health/tracker.js';
import { applyWireHeadPolls, applyWireProbeRound, decodeHeadPolls, encodeHeadPolls, encodeProbeRound } from '../../../../lib/health/wire.js';
import type { RpcCall } from '../../../../lib/jsonrpc/types.js';
import type { Chain, Registry } from '../../../../lib/upstream/registry.js';
import { testChain, testUpstream } from '../../../support/stage.js';

const probed = (chainId: string, head: string) => (call: RpcCall) => (call.method === 'eth_chainId' ? chainId : head);
const viaJson = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;
const registryOf = (...chains: Chain[]): Registry => ({ chains: new Map(chains.map((c) => [c.id, c])), loopThrough: () => undefined, close: async () => {} });
const health = (c: Chain) => c.upstreams.map((u) => ({ head: u.health.head, lag: u.health.lag, successes: u.health.successes, failures: u.health.failures, lastError: u.health.lastError, wrongChainId: u.health.wrongChainId, lastProbeAt: u.health.lastProbeAt }));

test('a probe round applied in another process records the same health, heads and lags, without a call', async (t) => {
  const primary = testChain([
    testUpstream(0, { answer: probed('0x1', '0x64') }),
    testUpstream(1, { answer: probed('0x1', '0x60') }),
    testUpstream(2, { answer: () => new Error('ECONNREFUSED') }),
    testUpstream(3, { answer: probed('0xa', '0x64') }),
  ]);
  const fresh = [0, 1, 2, 3].map((i) => testUpstream(i));
  const worker = testChain(fresh);
  const round = await probeChain(primary, 1000);
  t.true(applyWireProbeRound(worker, viaJson(encodeProbeRound(round))));
  t.deepEqual(health(worker), health(primary));
  t.like(worker.upstreams[1]!.health, { head: 96n, lag: 4 });
  t.like(worker.upstreams[2]!.health, { failures: 1, lastError: 'probe: ECONNREFUSED' });
  t.is(worker.upstreams[3]!.health.wrongChainId, '10');
  t.is(fresh.reduce((n, u) => n + u.sent.length, 0), 0);
});

test('a probe round skips an upstream found to be a loop, in the probing process or the receiving one', async (t) => {
  const primary = testChain([testUpstream(0, { answer: probed('0x1', '0x64'), health: { loop: true } }), testUpstream(1, { answer: probed('0x1', '0x64') })]);
  const worker = testChain([testUpstream(0), testUpstream(1, { health: { loop: true } })]);
  const wire = viaJson(encodeProbeRound(await probeChain(primary, 1000)));
  t.is(wire.results[0], null);
  t.true(applyWireProbeRound(worker, wire));
  t.is(worker.upstreams[0]!.health.lastProbeAt, 0);
  t.is(worker.upstreams[1]!.health.lastProbeAt, 0);
});

test('head-poll rounds applied in another process give it the same heads, tags and chain heads', async (t) => {
  const node = (head: bigint) => (call: RpcCall) => {
    if (call.method === 'eth_blockNumber') return `0x${head.toString(16)}`;
    return { number: `0x${(call.params[0] === 'safe' ? head - 10n : head - 20n).toString(16)}` };
  };
  const primary = testChain([testUpstream(0, { answer: node(100n) }), testUpstream(1, { answer: node(98n) })]);
  const fresh = [testUpstream(0), testUpstream(1)];
  const worker = testChain(fresh);
  const rounds: (HeadPoll | undefined)[][] = [];
  const tracker = startHeadTracker(registryOf(primary), { timeoutMs: 30_000, settings: () => ({ ...headSettings('1'), intervalMs: 3_600_000 }), onRound: (_c, polls) => rounds.push(polls) });
  try {
    await tracker.runOnce();
  } finally {
    tracker.stop();
  }
  t.true(rounds.length >= 1);
  for (const polls of rounds) t.true(applyWireHeadPolls(worker, viaJson(encodeHeadPolls(polls))));
  for (const [i, u] of worker.upstreams.entries()) {
    const p = primary.upstreams[i]!;
    t.deepEqual([u.health.head, u.health.safe, u.health.finalized, headTags(u)], [p.health.head, p.health.safe, p.health.finalized, headTags(p)]);
    t.true(u.health.headPolledAt > 0);
  }
  t.is(chainHead(worker, 'finalized'), chainHead(primary, 'finalized'));
  t.is(fresh.reduce((n, u) => n + u.sent.length, 0), 0);
});

test('a node without the tags: the receiving process derives safe and finalized from its own finality depth', (t) => {
  const worker = testChain([testUpstream(0)]);
  setChainHeadSettings(worker, { ...headSettings('1'), finalityDepth: 30 });
  t.true(applyWireHeadPolls(worker, viaJson(encodeHeadPolls([{ latest: 100n, safe: undefined, finalized: undefined, tags: 'absent' }]))));
  t.like(worker.upstreams[0]!.health, { head: 100n, safe: 70n, finalized: 70n });
  t.is(headTags(worker.upstreams[0]!), 'absent');
});

test('bigints past 2^53 survive the trip; an unpolled upstream stays as it was', (t) => {
  const big = 2n ** 60n + 1n;
  t.deepEqual(decodeHeadPolls(viaJson(encodeHeadPolls([{ latest: big, safe: undefined, finalized: big - 1n, tags: 'native' }, undefined]))), [
    { latest: big, safe: undefined, finalized: big - 1n, tags: 'native' },
    undefined,
  ]);
});

test('a round that does not fit the chain (another upstream count) is refused', async (t) => {
  const primary = testChain([testUpstream(0, { answer: probed('0x1', '0x64') })]);
  const worker = testChain([testUpstream(0), testUpstream(1)]);
  t.false(applyWireProbeRound(worker, encodeProbeRound(await probeChain(primary, 1000))));
  t.false(applyWireHeadPolls(worker, encodeHeadPolls([{ latest: 5n, safe: undefined, finalized: undefined, tags: undefined }])));
  t.is(worker.upstreams[0]!.health.head, undefined);
});
