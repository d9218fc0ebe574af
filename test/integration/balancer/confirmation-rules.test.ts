/**
 * The seed's confirmation rules on the wire (spec 4.3 and B2): which requests are checked
 * against N upstreams, seen through X-Confirmable, X-Required-Confirmations and how many
 * upstreams were called.
 */
import test from 'ava';
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream.js';
import { rpc, startGateway, type Gateway } from '../../support/gateway.js';

const addr = '0x1111111111111111111111111111111111111111';
const hash = `0x${'ab'.repeat(32)}`;

let fakes: FakeUpstream[];
let gw: Gateway;

test.before(async () => {
  fakes = await Promise.all([1, 2, 3].map(() => startFakeUpstream()));
  gw = await startGateway({
    confirmations: 2,
    // The calls are counted exactly: no hedge (a 150-member batch on a loaded machine has members
    // slower than the test gateway's 1 s hedge).
    timeouts: { hedgeMs: 0 },
    chains: { 1337: { rpcs: fakes.map((f) => f.url), confirmableMethods: ['eth_getTransactionReceipt'] } },
  });
});

test.after.always(async () => {
  await gw.close();
  await Promise.all(fakes.map((f) => f.close()));
});

const cases: [string, unknown, boolean, { calls: number }?][] = [
  ['eth_getBlockByNumber at a hex block', rpc('eth_getBlockByNumber', ['0x1b4', true]), true],
  ['eth_getBlockByNumber at latest', rpc('eth_getBlockByNumber', ['latest', false]), false],
  ['eth_getBlockByNumber at LATEST (tags are case-insensitive)', rpc('eth_getBlockByNumber', ['LATEST', false]), false],
  ['eth_getBlockByNumber at earliest (asked as 0x0)', rpc('eth_getBlockByNumber', ['earliest', false]), true],
  ['eth_getBlockByNumber at 0x0', rpc('eth_getBlockByNumber', ['0x0', false]), true],
  ['eth_getBlockByNumber at finalized (moves with the head)', rpc('eth_getBlockByNumber', ['finalized', false]), false],
  ['eth_getBlockTransactionCountByNumber at pending', rpc('eth_getBlockTransactionCountByNumber', ['pending']), false],
  ['eth_getBlockTransactionCountByNumber at a hex block', rpc('eth_getBlockTransactionCountByNumber', ['0x5']), true],
  ['eth_getBalance at a hex block', rpc('eth_getBalance', [addr, '0x10']), true],
  ['eth_getBalance at latest', rpc('eth_getBalance', [addr, 'latest']), false],
  ['eth_getBalance with no block parameter (means latest)', rpc('eth_getBalance', [addr]), false],
  ['eth_getBalance with a null block parameter', rpc('eth_getBalance', [addr, null]), false],
  ['eth_getBalance at an EIP-1898 block hash', rpc('eth_getBalance', [addr, { blockHash: hash }]), true],
  ['eth_getBalance at an EIP-1898 hex block number', rpc('eth_getBalance', [addr, { blockNumber: '0x10' }]), true],
  ['eth_getBalance at an EIP-1898 latest', rpc('eth_getBalance', [addr, { blockNumber: 'latest' }]), false],
  ['eth_getCode at a hex block', rpc('eth_getCode', [addr, '0x10']), true],
  ['eth_getCode at pending', rpc('eth_getCode', [addr, 'pending']), false],
  ['eth_getTransactionCount at a hex block', rpc('eth_getTransactionCount', [addr, '0x10']), true],
  ['eth_getTransactionCount at latest', rpc('eth_getTransactionCount', [addr, 'latest']), false],
  ['eth_call at a hex block', rpc('eth_call', [{ to: addr, data: '0x' }, '0x1']), true],
  ['eth_call at pending', rpc('eth_call', [{ to: addr, data: '0x' }, 'pending']), false],
  ['eth_call without a block', rpc('eth_call', [{ to: addr, data: '0x' }]), false],
  ['eth_getStorageAt at a hex block', rpc('eth_getStorageAt', [addr, '0x0', '0x10']), true],
  ['eth_getStorageAt at latest', rpc('eth_getStorageAt', [addr, '0x0', 'latest']), false],
  ['eth_getStorageAt without a block', rpc('eth_getStorageAt', [addr, '0x0']), false],
  ['eth_getLogs with hex fromBlock and toBlock', rpc('eth_getLogs', [{ fromBlock: '0x0', toBlock: '0x1', address: [addr] }]), true],
  ['eth_getLogs with toBlock latest', rpc('eth_getLogs', [{ fromBlock: '0x0', toBlock: 'latest' }]), false],
  ['eth_getLogs without toBlock (means latest)', rpc('eth_getLogs', [{ fromBlock: '0x1' }]), false],
  ['eth_getLogs without fromBlock (means latest)', rpc('eth_getLogs', [{ toBlock: '0x1' }]), false],
  ['eth_getLogs with blockHash', rpc('eth_getLogs', [{ blockHash: hash, topics: [[hash]] }]), true],
  ['eth_blockNumber (never)', rpc('eth_blockNumber'), false],
  ['eth_syncing (never)', rpc('eth_syncing'), false],
  ['eth_gasPrice (never)', rpc('eth_gasPrice'), false],
  ['eth_maxPriorityFeePerGas (never)', rpc('eth_maxPriorityFeePerGas'), false],
  ['eth_estimateGas (never)', rpc('eth_estimateGas', [{ from: addr, to: null }]), false],
  ['eth_sendRawTransaction (never)', rpc('eth_sendRawTransaction', ['0x02f8']), false],
  ['an unknown method falls through to not confirmable', rpc('net_version'), false],
  ['eth_getTransactionByHash is pinned by its hash (the method table)', rpc('eth_getTransactionByHash', [hash]), true],
  ['web3_clientVersion is not confirmable unless configured', rpc('web3_clientVersion', []), false],
  ['eth_getBlockReceipts at latest', rpc('eth_getBlockReceipts', ['latest']), false],
  ['eth_getProof at a hex block', rpc('eth_getProof', ['0x1111111111111111111111111111111111111111', [], '0x10']), true],
  ['a method the chain config adds is confirmable', rpc('eth_getTransactionReceipt', [hash]), true],
  ['a batch of confirmable calls', [rpc('eth_getBalance', [addr, '0x1'], 1), rpc('eth_getCode', [addr, '0x1'], 2)], true, { calls: 4 }],
  // each member on its own (issue 25): the pinned one asks 2, the latest one 1; the smallest N shows
  ['a batch with one latest member', [rpc('eth_getBalance', [addr, '0x1'], 1), rpc('eth_blockNumber', [], 2)], false, { calls: 3 }],
  ['a batch of pinned reads with eth_chainId (as ethers sends it)', [rpc('eth_chainId', [], 0), rpc('eth_getBalance', [addr, '0x1'], 1)], true, { calls: 4 }],
  ['a batch of eth_chainId and a read at earliest (asked as 0x0)', [rpc('eth_chainId', [], 0), rpc('eth_getBlockByNumber', ['earliest', false], 1)], true, { calls: 4 }],
  ['a batch of eth_chainId and net_version only', [rpc('eth_chainId', [], 0), rpc('net_version', [], 1)], false, { calls: 2 }],
  ['a lone eth_chainId', rpc('eth_chainId'), false],
  ['a batch of 150 pinned reads (viem batches up to 1,000)', Array.from({ length: 150 }, (_, i) => rpc('eth_getBalance', [addr, `0x${i + 1}`], i)), true, { calls: 300 }],
];

/** Calls the fakes received, alone or in upstream batches. */
const upstreamCalls = () => fakes.reduce((n, f) => n + f.requests.reduce((m, q) => m + (Array.isArray(q.body) ? q.body.length : 1), 0), 0);

for (const [title, body, confirmable, batch] of cases) {
  test.serial(`${confirmable ? 'confirmable' : 'not confirmable'}: ${title}`, async (t) => {
    const before = fakes.reduce((n, f) => n + f.calls, 0);
    const each = fakes.map((f) => f.calls);
    const callsBefore = upstreamCalls();
    const r = await gw.post('/rpc/1337', body);
    t.is(r.status, 200, r.text);
    t.is(r.headers['x-confirmable'], String(confirmable));
    t.is(r.headers['x-required-confirmations'], confirmable ? '2' : '1');
    // a batch: each member goes upstream to its own N; its calls to one upstream go as one
    // upstream batch (lib/upstream/transport/coalesce.ts): one request per upstream asked
    t.is(upstreamCalls() - callsBefore, batch?.calls ?? (confirmable ? 2 : 1), 'upstream calls');
    const asked = fakes.filter((f, i) => f.calls > each[i]!).length;
    t.is(fakes.reduce((n, f) => n + f.calls, 0) - before, asked, 'upstream requests: one per upstream asked');
    // X-Checked-URLS names each upstream that gave an answer returned, once (a batch's members may
    // go to different upstreams under the balanced strategy)
    t.is(String(r.headers['x-checked-urls']).split(',').length, batch ? asked : confirmable ? 2 : 1);
  });
}

test.serial('the path <n> overrides the configured confirmations for a confirmable call', async (t) => {
  const before = fakes.reduce((n, f) => n + f.calls, 0);
  const r = await gw.post('/confirmations/3/rpc/1337', rpc('eth_getBalance', [addr, '0x10']));
  t.is(r.status, 200);
  t.is(r.headers['x-required-confirmations'], '3');
  t.is(fakes.reduce((n, f) => n + f.calls, 0) - before, 3);
});

test.serial('a call that is not confirmable uses 1 whatever the path <n>', async (t) => {
  const r = await gw.post('/confirmations/3/rpc/1337', rpc('eth_blockNumber'));
  t.is(r.status, 200);
  t.is(r.headers['x-confirmable'], 'false');
  t.is(r.headers['x-required-confirmations'], '1');
});
