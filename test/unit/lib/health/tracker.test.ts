/**
 * The head tracker over fake transports: latest every round, safe and finalized every tagEvery-th
 * (native tags, or derived from the finality depth where the node has none), upstreams out of
 * rotation left alone; pollHeadsNow on any chain (heads learned on demand), one poll per upstream in flight.
 */
import test from 'ava';
import { chainHead, headSettings, headTags } from '../../../../lib/health/heads.js';
import { headsPolled, pollHeadsNow, startHeadTracker, tagEvery } from '../../../../lib/health/tracker.js';
import type { RpcCall } from '../../../../lib/jsonrpc/types.js';
import type { Chain, Registry } from '../../../../lib/upstream/registry.js';
import { testChain, testUpstream } from '../../../support/stage.js';

/** A node at `head`, with safe/finalized tags 10 and 20 blocks below it. */
const node = (head: bigint) => (call: RpcCall) => {
  if (call.method === 'eth_blockNumber') return `0x${head.toString(16)}`;
  const tag = call.params[0];
  return { number: `0x${(tag === 'safe' ? head - 10n : head - 20n).toString(16)}` };
};

const registryOf = (...chains: Chain[]): Registry => ({ chains: new Map(chains.map((c) => [c.id, c])), loopThrough: () => undefined, close: async () => {} });
const methods = (u: { sent: { payload: { calls: readonly RpcCall[] } }[] }) => u.sent.map((r) => `${r.payload.calls[0]!.method}${r.payload.calls[0]!.params[0] === undefined ? '' : ` ${String(r.payload.calls[0]!.params[0])}`}`);

test('should poll latest, safe and finalized in the first round, latest only in the next ones', async (t) => {
  const u = testUpstream(0, { answer: node(100n) });
  const chain = testChain([u]);
  const tracker = startHeadTracker(registryOf(chain), { timeoutMs: 30_000, settings: () => ({ ...headSettings('1'), intervalMs: 3_600_000 }) });
  try {
    await tracker.runOnce(); // runs beside the first round; both ask for the tags, not yet known
    t.true(headsPolled(chain));
    t.like(u.health, { head: 100n, safe: 90n, finalized: 80n });
    t.is(headTags(u), 'native');
    t.is(chainHead(chain, 'finalized'), 80n);
    const before = methods(u).length;
    await tracker.runOnce(); // round 2 of tagEvery: latest only
    t.true(tagEvery > 2);
    t.deepEqual(methods(u).slice(before), ['eth_blockNumber']);
  } finally {
    tracker.stop();
  }
});

test('should derive safe and finalized from the finality depth on a node without the tags', async (t) => {
  const u = testUpstream(0);
  // An error answer for the tags: the node does not know them.
  (u.transport as { send: unknown }).send = async (request: { payload: { calls: RpcCall[] } }) => {
    const call = request.payload.calls[0]!;
    const body = call.method === 'eth_blockNumber' ? { result: '0x64' } : { error: { code: -32602, message: 'unknown block tag' } };
    return { body: Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, ...body })) };
  };
  const chain = testChain([u]);
  const tracker = startHeadTracker(registryOf(chain), { timeoutMs: 30_000, settings: () => ({ ...headSettings('1'), intervalMs: 3_600_000, finalityDepth: 30 }) });
  try {
    await tracker.runOnce();
    t.is(headTags(u), 'absent');
    t.like(u.health, { head: 100n, safe: 70n, finalized: 70n });
  } finally {
    tracker.stop();
  }
});

test('should leave an upstream out of rotation unpolled', async (t) => {
  const wrong = testUpstream(0, { answer: node(100n), health: { wrongChainId: '5' } });
  const loop = testUpstream(1, { answer: node(100n), health: { loop: true } });
  const tracker = startHeadTracker(registryOf(testChain([wrong, loop])), { timeoutMs: 30_000 });
  try {
    await tracker.runOnce();
    t.is(wrong.sent.length + loop.sent.length, 0);
  } finally {
    tracker.stop();
  }
});

test('pollHeadsNow should learn the heads of a chain whose heads were never polled', async (t) => {
  const u = testUpstream(0, { answer: node(100n) });
  const chain = testChain([u]);
  t.false(headsPolled(chain));
  await pollHeadsNow(chain, [u]);
  t.is(u.sent.filter((r) => r.payload.calls[0]!.method === 'eth_blockNumber').length, 1);
  t.is(u.health.head, 100n);
  t.true(headsPolled(chain));
});

test('pollHeadsNow should ask each upstream for its latest head once, however many requests wait', async (t) => {
  let head = 100n;
  const upstreams = [0, 1].map((i) => testUpstream(i, { answer: (call) => (call.method === 'eth_blockNumber' ? `0x${head.toString(16)}` : { number: '0x1' }), health: { headPolledAt: 1 } }));
  const chain = testChain(upstreams);
  head = 120n;
  await Promise.all([pollHeadsNow(chain, upstreams), pollHeadsNow(chain, upstreams)]);
  t.deepEqual(upstreams.map((u) => u.sent.filter((r) => r.payload.calls[0]!.method === 'eth_blockNumber').length), [1, 1]);
  t.deepEqual(upstreams.map((u) => u.health.head), [120n, 120n]);
  t.is(chainHead(chain), 120n, 'the chain is refreshed');
});
