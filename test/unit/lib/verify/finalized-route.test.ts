import test from 'ava';
import { finalizedBlockNumber, pinnedToFinalized, routeFinalized } from '../../../../lib/verify/finalized-route.js';
import { newHealth } from '../../../../lib/health/health.js';
import type { RpcPayload } from '../../../../lib/jsonrpc/types.js';
import type { Chain, Upstream } from '../../../../lib/upstream/registry.js';

function chainOf(finalized: (bigint | undefined)[], providers?: string[]): Chain {
  const upstreams = finalized.map((f, i) => {
    const health = newHealth();
    health.finalized = f;
    return { url: `http://u${i}`, label: `http://u${i}`, chainId: '1', provider: providers?.[i] ?? `p${i}`, health } as unknown as Upstream;
  });
  return { id: '1', upstreams, extraConfirmable: new Map() } as unknown as Chain;
}

const payloadOf = (calls: { method: string; params: unknown[] }[], batch = false): RpcPayload => {
  const withIds = calls.map((c, i) => ({ id: i + 1, ...c }));
  const body = batch ? withIds.map((c) => ({ jsonrpc: '2.0', ...c })) : { jsonrpc: '2.0', ...withIds[0] };
  return { calls: withIds, batch, raw: Buffer.from(JSON.stringify(body)) } as RpcPayload;
};

test('the N-th highest finalized report, one per provider; undefined with fewer than N', (t) => {
  const chain = chainOf([90n, 95n, 80n]);
  t.is(routeFinalized(chain, 1), 95n);
  t.is(routeFinalized(chain, 2), 90n);
  t.is(routeFinalized(chain, 3), 80n);
  t.is(routeFinalized(chain, 4), undefined);
  // Two upstreams of one provider count once.
  const shared = chainOf([100n, 99n, 50n], ['a', 'a', 'b']);
  t.is(routeFinalized(shared, 2), 50n);
});

test('it never goes back: a drop keeps the number given before; a rise moves it', (t) => {
  const chain = chainOf([90n, 90n, 90n]);
  t.is(routeFinalized(chain, 2), 90n);
  chain.upstreams[0]!.health.finalized = 80n;
  chain.upstreams[1]!.health.finalized = 80n;
  t.is(routeFinalized(chain, 2), 90n);
  chain.upstreams[0]!.health.finalized = undefined;
  chain.upstreams[1]!.health.finalized = undefined;
  t.is(routeFinalized(chain, 2), 90n, 'kept even with no report left');
  chain.upstreams[0]!.health.finalized = 91n;
  chain.upstreams[1]!.health.finalized = 92n;
  t.is(routeFinalized(chain, 2), 91n);
});

test('moving pins become the block; fixed ones, hashes and pending stay', (t) => {
  const at = 0x5an;
  const pinned = pinnedToFinalized(payloadOf([{ method: 'eth_getBalance', params: ['0xaa'] }]), at, new Map());
  t.deepEqual(pinned?.calls[0]?.params, ['0xaa', '0x5a']);
  t.deepEqual(JSON.parse(pinned!.raw.toString()), { jsonrpc: '2.0', id: 1, method: 'eth_getBalance', params: ['0xaa', '0x5a'] });
  t.deepEqual(pinnedToFinalized(payloadOf([{ method: 'eth_call', params: [{ to: '0xaa' }, { blockNumber: 'latest' }] }]), at, new Map())?.calls[0]?.params[1], { blockNumber: '0x5a' });
  t.is(pinnedToFinalized(payloadOf([{ method: 'eth_getBalance', params: ['0xaa', '0x10'] }]), at, new Map()), undefined);
  t.is(pinnedToFinalized(payloadOf([{ method: 'eth_getBalance', params: ['0xaa', 'pending'] }]), at, new Map()), undefined);
  t.is(pinnedToFinalized(payloadOf([{ method: 'eth_getBalance', params: ['0xaa', { blockHash: `0x${'ab'.repeat(32)}` }] }]), at, new Map()), undefined);
  const logs = pinnedToFinalized(payloadOf([{ method: 'eth_getLogs', params: [{ fromBlock: 'safe' }] }]), at, new Map());
  t.deepEqual(logs?.calls[0]?.params[0], { fromBlock: '0x5a', toBlock: '0x5a' });
  const batch = pinnedToFinalized(payloadOf([{ method: 'eth_chainId', params: [] }, { method: 'eth_getCode', params: ['0xaa', 'Finalized'] }], true), at, new Map());
  t.deepEqual(batch?.calls.map((c) => c.params), [[], ['0xaa', '0x5a']]);
  t.is(JSON.parse(batch!.raw.toString()).length, 2);
});

test('eth_blockNumber: the block, vouched for by the N providers that report it or higher', (t) => {
  const chain = chainOf([90n, 95n, 80n]);
  const call = { id: 'x', method: 'eth_blockNumber', params: [] };
  const v = finalizedBlockNumber(chain, call, 90n, 2);
  t.deepEqual(JSON.parse(v!.members[0]!.body.toString()), { jsonrpc: '2.0', id: 'x', result: '0x5a' });
  t.deepEqual(v!.members.map((m) => m.upstream.label).sort(), ['http://u0', 'http://u1']);
  t.is(finalizedBlockNumber(chain, call, 90n, 3), undefined);
});
