/**
 * Issue 17 "Done means", on real nodes: three anvil nodes where one is behind (blocks mined on
 * two of them only, and the last on one only). A pinned read of a block two nodes have is
 * confirmed by those two; a block only one node has, and a receipt only one node has, get -32016
 * naming the block or the hash; `finalized` is resolved through the tracked heads and confirmed.
 */
import test from 'ava';
import { anvilWallet, signTx, startAnvils, stopAllAnvils, type AnvilCluster } from '../../support/anvil.js';
import { rpc, startGateway, type Gateway } from '../../support/gateway.js';

test.after.always(async () => {
  await stopAllAnvils();
});

interface Setup {
  cluster: AnvilCluster;
  gw: Gateway;
  /** The urls in the order the gateway lists them: the node one block behind first. */
  urls: { ahead: string; middle: string; behind: string };
  txHash: string;
}

/**
 * Node `ahead` at block 3 (block 3 holds a transfer only it has), `middle` at 2, `behind` at 1.
 * The gateway lists `behind` first, so that it is asked first, then `ahead`, then `middle`.
 */
async function setup(t: import('ava').ExecutionContext): Promise<Setup> {
  const cluster = await startAnvils(3);
  t.teardown(() => cluster.stop());
  const [ahead, middle, behind] = cluster.nodes as [typeof cluster.nodes[0], typeof cluster.nodes[0], typeof cluster.nodes[0]];
  const ts = (n: number) => cluster.genesisTimestamp + 12 * n;
  await cluster.mineSame([], ts(1));
  await cluster.mineSame([], ts(2), [ahead, middle]);
  const transfer = await signTx(anvilWallet(0), { chainId: cluster.chainId, nonce: 0, to: '0x00000000000000000000000000000000000b0b00', value: 1n, gasLimit: 21_000n });
  await cluster.mineSame([transfer], ts(3), [ahead]);
  const block3 = await ahead.rpc<{ transactions: string[] }>('eth_getBlockByNumber', ['0x3', false]);
  const gw = await startGateway({
    heads: { waitMs: 300 },
    chains: { [cluster.chainId]: { rpcs: [behind.url, ahead.url, middle.url], confirmations: 2, strategy: 'priority' } },
  });
  t.teardown(() => gw.close());
  await gw.rpc.startHeadTracking().runOnce();
  return { cluster, gw, urls: { ahead: ahead.url, middle: middle.url, behind: behind.url }, txHash: block3.transactions[0]! };
}

const checked = (h: unknown) => String(h).split(',').map((u) => u.trim()).sort();

test('three anvil nodes, one behind: a block two have is confirmed by those two; one only one has gets -32016 naming it', async (t) => {
  const { cluster, gw, urls } = await setup(t);
  const path = `/rpc/${cluster.chainId}`;

  const two = await gw.post(path, rpc('eth_getBlockByNumber', ['0x2', false], 1));
  t.is(two.status, 200, two.text);
  t.is(two.headers['x-confirmable'], 'true');
  t.deepEqual(checked(two.headers['x-checked-urls']), [urls.ahead, urls.middle].sort(), 'the node behind (asked first) is not a voter');
  t.is(two.body.result.number, '0x2');

  const logs = await gw.post(path, rpc('eth_getLogs', [{ fromBlock: '0x1', toBlock: '0x2' }], 2));
  t.is(logs.status, 200, logs.text);
  t.deepEqual(checked(logs.headers['x-checked-urls']), [urls.ahead, urls.middle].sort(), 'the behind node\'s [] is no vote');

  for (const body of [rpc('eth_getBlockByNumber', ['0x3', false], 3), rpc('eth_getBlockReceipts', ['0x3'], 3), rpc('eth_getLogs', [{ fromBlock: '0x1', toBlock: '0x3' }], 3)]) {
    const one = await gw.post(path, body);
    t.is(one.status, 503, `${body.method}: ${one.text}`);
    t.is(one.body.id, 3);
    t.is(one.body.error.code, -32016);
    t.regex(one.body.error.message, /^block 3 \(0x3\) is not yet available on 2 upstreams/);
    t.like(one.body.error.data, { block: '0x3', required: 2, eligible: 1 });
    t.truthy(one.headers['retry-after']);
  }
});

test('three anvil nodes: a receipt only one node has is never a confirmed null, -32016 names the hash and the node that had it', async (t) => {
  const { cluster, gw, urls, txHash } = await setup(t);
  const r = await gw.post(`/rpc/${cluster.chainId}`, rpc('eth_getTransactionReceipt', [txHash], 'receipt'));
  t.is(r.status, 503, r.text);
  t.is(r.body.id, 'receipt');
  t.is(r.body.error.code, -32016);
  t.like(r.body.error.data, { hash: txHash, pin: 'transaction', required: 2, eligible: 1 });
  t.deepEqual(r.body.error.data.had, [urls.ahead]);
  t.deepEqual([...r.body.error.data.lacked].sort(), [urls.behind, urls.middle].sort());
});

test('three anvil nodes: finalized is resolved through the tracked heads and confirmed', async (t) => {
  const { cluster, gw } = await setup(t);
  const address = anvilWallet(1).address;
  const r = await gw.post(`/rpc/${cluster.chainId}`, rpc('eth_getBalance', [address, 'finalized'], 5));
  t.is(r.status, 200, r.text);
  t.is(r.headers['x-confirmable'], 'true');
  t.is(r.headers['x-required-confirmations'], '2');
  const finalized = await cluster.nodes[0]!.rpc<{ number: string }>('eth_getBlockByNumber', ['finalized', false]);
  t.is(r.body.result, await cluster.nodes[0]!.rpc<string>('eth_getBalance', [address, finalized.number]));
});
