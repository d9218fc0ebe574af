/**
 * The finalized route on the wire: `latest`, `safe`, `finalized` and a left-out block pinned to
 * the highest block N providers report as finalized; eth_blockNumber answered with it and no
 * upstream call; the number never goes back when providers' finalized heads drop; -32016 before
 * N providers report one.
 */
import test, { type ExecutionContext } from 'ava';
import { finalizedChain, startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream.js';
import { rpc, startGateway, type Gateway } from '../../support/gateway.js';
import { tagEvery } from '../../../lib/health/tracker.js';

const ADDRESS = '0x00000000000000000000000000000000000000aa';

/** Three nodes at block 100 whose finalized heads the test sets (undefined: the node answers null). */
async function setup(t: ExecutionContext, finalized: (number | undefined)[]): Promise<{ list: FakeUpstream[]; gw: Gateway; heads: (number | undefined)[] }> {
  const heads = [...finalized];
  const list = await Promise.all(
    heads.map((_, i) =>
      startFakeUpstream({ answer: finalizedChain(() => heads[i]) }),
    ),
  );
  const gw = await startGateway({ refreshInterval: 3600, chains: { 1337: { rpcs: list.map((f) => f.url) } } });
  t.teardown(async () => {
    await gw.close();
    await Promise.all(list.map((f) => f.close()));
  });
  await gw.rpc.startHeadTracking().runOnce();
  return { list, gw, heads };
}

/** The block parameter each node received for `method`, in order. */
const blocksAsked = (list: FakeUpstream[], method: string, at: number) =>
  list.flatMap((f) => f.requests.filter((r) => (r.body as { method?: string }).method === method).map((r) => (r.body as { params: unknown[] }).params[at]));

const count = (list: FakeUpstream[], method: string) => list.reduce((n, f) => n + f.requests.filter((r) => (r.body as { method?: string }).method === method).length, 0);

test('latest, safe, finalized and a left-out block are pinned to the block N providers report as finalized; the read is confirmed', async (t) => {
  const { list, gw } = await setup(t, [90, 95, 80]);
  // N=2: the second-highest report, 90.
  for (const [i, params] of [[ADDRESS, 'latest'], [ADDRESS, 'SAFE'], [ADDRESS, 'finalized'], [ADDRESS]].entries()) {
    const r = await gw.post('/confirmations/2/finalized/rpc/1337', rpc('eth_getBalance', params, i));
    t.is(r.status, 200, r.text);
    t.is(r.body.id, i);
    t.is(r.headers['x-confirmable'], 'true');
    t.is(r.headers['x-required-confirmations'], '2');
  }
  t.deepEqual([...new Set(blocksAsked(list, 'eth_getBalance', 1))], ['0x5a']);
  // N=1: the highest report, 95; the plain route is untouched.
  await gw.post('/finalized/rpc/1337', rpc('eth_getBalance', [ADDRESS, 'latest'], 9));
  t.true(blocksAsked(list, 'eth_getBalance', 1).includes('0x5f'));
  const plain = await gw.post('/rpc/1337', rpc('eth_getBalance', [ADDRESS, 'latest'], 10));
  t.is(plain.headers['x-confirmable'], 'false');
  // A filter's moving ends, too.
  const logs = await gw.post('/confirmations/2/finalized/rpc/1337', rpc('eth_getLogs', [{ address: ADDRESS, fromBlock: '0x1' }], 11));
  t.is(logs.headers['x-confirmable'], 'true');
  const filters = list.flatMap((f) => f.requests.filter((r) => (r.body as { method?: string }).method === 'eth_getLogs').map((r) => (r.body as { params: { toBlock?: string; fromBlock?: string }[] }).params[0]!));
  t.true(filters.length >= 2 && filters.every((f) => f.toBlock === '0x5a' && f.fromBlock === '0x1'));
});

test('eth_blockNumber is answered with the route\'s block, vouched for by N providers\' finalized heads, with no upstream call', async (t) => {
  const { list, gw } = await setup(t, [90, 95, 80]);
  const before = count(list, 'eth_blockNumber');
  const r = await gw.post('/confirmations/2/finalized/rpc/1337', rpc('eth_blockNumber', [], 'n'));
  t.is(r.status, 200, r.text);
  t.deepEqual(r.body, { jsonrpc: '2.0', id: 'n', result: '0x5a' });
  t.is(r.headers['x-confirmable'], 'true');
  t.is(String(r.headers['x-checked-urls']).split(',').length, 2);
  t.is(count(list, 'eth_blockNumber'), before);
  // In a batch, each member on its own.
  const batch = await gw.post('/confirmations/2/finalized/rpc/1337', [rpc('eth_blockNumber', [], 1), rpc('eth_getBalance', [ADDRESS], 2)]);
  t.is(batch.status, 200, batch.text);
  t.is(batch.body[0].result, '0x5a');
  t.is(batch.headers['x-confirmable'], 'true');
});

test('the route never goes back: when providers\' finalized heads drop, it keeps its block; eth_blockNumber says -32016 while fewer than N vouch for it', async (t) => {
  const { list, gw, heads } = await setup(t, [90, 90, 90]);
  const tracker = gw.rpc.startHeadTracking();
  t.is((await gw.post('/confirmations/2/finalized/rpc/1337', rpc('eth_blockNumber', [], 1))).body.result, '0x5a');
  heads[0] = 80;
  heads[1] = 80;
  // (the tracker asks for finalized heads every tagEvery rounds, and lowers one after two lower polls in a row)
  for (let i = 0; i < 2 * tagEvery + 1; i++) await tracker.runOnce();
  const read = await gw.post('/confirmations/2/finalized/rpc/1337', rpc('eth_getBalance', [ADDRESS, 'latest'], 2));
  t.is(read.status, 200, read.text);
  t.is(blocksAsked(list, 'eth_getBalance', 1).at(-1), '0x5a', 'still block 90, not 80');
  const n = await gw.post('/confirmations/2/finalized/rpc/1337', rpc('eth_blockNumber', [], 3));
  t.is(n.status, 503, n.text);
  t.is(n.body.error.code, -32016);
  t.is(n.body.id, 3);
  heads[0] = 91;
  heads[1] = 91;
  for (let i = 0; i < tagEvery; i++) await tracker.runOnce();
  t.is((await gw.post('/confirmations/2/finalized/rpc/1337', rpc('eth_blockNumber', [], 4))).body.result, '0x5b', 'and it moves on');
});

test('before N providers report a finalized block: -32016 with the client\'s id, naming each upstream\'s report', async (t) => {
  const { gw } = await setup(t, [90, undefined, undefined]);
  const r = await gw.post('/confirmations/2/finalized/rpc/1337', rpc('eth_getBalance', [ADDRESS, 'latest'], 'x'));
  t.is(r.status, 503, r.text);
  t.is(r.body.error.code, -32016);
  t.is(r.body.id, 'x');
  t.regex(r.body.error.message, /fewer than 2 providers report one/);
  t.is(r.body.error.data.finalized.length, 3);
  t.truthy(r.headers['retry-after']);
  t.is((await gw.post('/finalized/rpc/1337', rpc('eth_getBalance', [ADDRESS, 'latest'], 'y'))).status, 200, 'N=1 has its block');
});

test('a read pinned by the route is kept by the cache: the next one is a hit', async (t) => {
  const { list, gw } = await setup(t, [90, 90, 90]);
  await gw.post('/confirmations/2/finalized/rpc/1337', rpc('eth_getBalance', [ADDRESS, 'latest'], 1));
  const calls = count(list, 'eth_getBalance');
  const again = await gw.post('/confirmations/2/finalized/rpc/1337', rpc('eth_getBalance', [ADDRESS, 'finalized'], 2));
  t.is(again.headers['x-cache'], 'HIT');
  t.is(count(list, 'eth_getBalance'), calls);
});
