/**
 * The method table of lib/jsonrpc/README.md, row by row, on the wire: every method it lists is sent at N=3 with
 * its pin fixed (a block number, `earliest` asked as `0x0`, a block hash, a transaction hash) and
 * moving (`latest`, `pending`), and X-Confirmable, X-Required-Confirmations and the number of upstreams
 * asked must be what the table says. The conformance corpus (conformance.test.ts) covers only the
 * methods execution-apis has recorded pairs for; this covers the rest of the table (eth_gasPrice,
 * the filter methods, txpool, traces, …) with answers the fakes make up.
 * The table is written out here again, not read from lib/jsonrpc/methods.ts: a test that asked
 * the code what to expect would agree with any bug in it.
 */
import test from 'ava';
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream.js';
import { startGateway, type Gateway } from '../../support/gateway.js';

type Pin = { at: number; kind: 'block' | 'blockHash' | 'txHash' | 'number' } | { kind: 'filter' };

const address = '0x' + '11'.repeat(20);
const blockHash = '0x' + 'ab'.repeat(32);
const txHash = '0x' + 'cd'.repeat(32);
const tx = { from: address, to: address, data: '0x' };

/** Confirmable under the pin rule, with where the pin sits and the params around it. */
const pinned: Record<string, { pin: Pin; params: (pin: unknown) => unknown[] }> = {
  eth_getBlockByNumber: { pin: { at: 0, kind: 'block' }, params: (b) => [b, false] },
  eth_getBlockTransactionCountByNumber: { pin: { at: 0, kind: 'block' }, params: (b) => [b] },
  eth_getBlockReceipts: { pin: { at: 0, kind: 'block' }, params: (b) => [b] },
  eth_getBlockAccessList: { pin: { at: 0, kind: 'block' }, params: (b) => [b] },
  debug_getRawHeader: { pin: { at: 0, kind: 'block' }, params: (b) => [b] },
  debug_getRawBlock: { pin: { at: 0, kind: 'block' }, params: (b) => [b] },
  debug_getRawReceipts: { pin: { at: 0, kind: 'block' }, params: (b) => [b] },
  eth_getBalance: { pin: { at: 1, kind: 'block' }, params: (b) => [address, b] },
  eth_getCode: { pin: { at: 1, kind: 'block' }, params: (b) => [address, b] },
  eth_getTransactionCount: { pin: { at: 1, kind: 'block' }, params: (b) => [address, b] },
  eth_call: { pin: { at: 1, kind: 'block' }, params: (b) => [tx, b] },
  eth_getStorageValues: { pin: { at: 1, kind: 'block' }, params: (b) => [{ [address]: ['0x' + '00'.repeat(32)] }, b] },
  eth_createAccessList: { pin: { at: 1, kind: 'block' }, params: (b) => [tx, b] },
  eth_simulateV1: { pin: { at: 1, kind: 'block' }, params: (b) => [{ blockStateCalls: [{ calls: [tx] }] }, b] },
  eth_getStorageAt: { pin: { at: 2, kind: 'block' }, params: (b) => [address, '0x0', b] },
  eth_getProof: { pin: { at: 2, kind: 'block' }, params: (b) => [address, ['0x' + '00'.repeat(32)], b] },
  eth_getTransactionByBlockNumberAndIndex: { pin: { at: 0, kind: 'number' }, params: (b) => [b, '0x0'] },
  eth_getUncleByBlockNumberAndIndex: { pin: { at: 0, kind: 'number' }, params: (b) => [b, '0x0'] },
  eth_getUncleCountByBlockNumber: { pin: { at: 0, kind: 'number' }, params: (b) => [b] },
  eth_getLogs: { pin: { kind: 'filter' }, params: (b) => [{ fromBlock: b, toBlock: b, address }] },
  eth_getBlockByHash: { pin: { at: 0, kind: 'blockHash' }, params: (h) => [h, false] },
  eth_getBlockTransactionCountByHash: { pin: { at: 0, kind: 'blockHash' }, params: (h) => [h] },
  eth_getTransactionByBlockHashAndIndex: { pin: { at: 0, kind: 'blockHash' }, params: (h) => [h, '0x0'] },
  eth_getUncleByBlockHashAndIndex: { pin: { at: 0, kind: 'blockHash' }, params: (h) => [h, '0x0'] },
  eth_getUncleCountByBlockHash: { pin: { at: 0, kind: 'blockHash' }, params: (h) => [h] },
  eth_getTransactionByHash: { pin: { at: 0, kind: 'txHash' }, params: (h) => [h] },
  eth_getTransactionReceipt: { pin: { at: 0, kind: 'txHash' }, params: (h) => [h] },
  debug_getRawTransaction: { pin: { at: 0, kind: 'txHash' }, params: (h) => [h] },
};

/** Never confirmable by the table (the config may add some: method-config tests), sent with a fixed pin where they have one. */
const unconfirmable: Record<string, unknown[]> = {
  eth_estimateGas: [tx, '0x10'],
  eth_feeHistory: ['0x4', '0x10', [25, 75]],
  debug_traceBlockByNumber: ['0x10', {}],
  debug_traceBlockByHash: [blockHash, {}],
  debug_traceTransaction: [txHash, {}],
  debug_traceCall: [tx, '0x10', {}],
  trace_block: ['0x10'],
  trace_replayBlockTransactions: ['0x10', ['trace']],
  trace_call: [tx, ['trace'], '0x10'],
  trace_transaction: [txHash],
  trace_replayTransaction: [txHash, ['trace']],
  eth_blockNumber: [],
  eth_syncing: [],
  eth_gasPrice: [],
  eth_maxPriorityFeePerGas: [],
  eth_blobBaseFee: [],
  eth_baseFee: [],
  eth_chainId: [],
  net_version: [],
  eth_config: [],
  eth_capabilities: [],
  eth_coinbase: [],
  eth_accounts: [],
  eth_newFilter: [{ fromBlock: '0x10', toBlock: '0x10' }],
  eth_newBlockFilter: [],
  eth_newPendingTransactionFilter: [],
  eth_uninstallFilter: ['0x1'],
  eth_getFilterChanges: ['0x1'],
  eth_getFilterLogs: ['0x1'],
  txpool_content: [],
  txpool_contentFrom: [address],
  txpool_status: [],
  eth_sign: [address, '0xdeadbeef'],
  eth_signTransaction: [tx],
  eth_fillTransaction: [tx],
  testing_buildBlockV1: [{}],
};

let fakes: FakeUpstream[];
let gw: Gateway;

test.before(async () => {
  fakes = await Promise.all([1, 2, 3].map(() => startFakeUpstream()));
  gw = await startGateway({ chains: { 1337: { rpcs: fakes.map((f) => f.url) } } });
});

test.after.always(async () => {
  await gw?.close();
  await Promise.all((fakes ?? []).map((f) => f.close()));
});

const calls = () => fakes.reduce((sum, f) => sum + f.calls, 0);
let nextId = 1;

async function ask(t: import('ava').ExecutionContext, method: string, params: unknown[], confirmable: boolean, what: string) {
  const id = nextId++;
  const before = calls();
  const r = await gw.post('/confirmations/3/rpc/1337', { jsonrpc: '2.0', id, method, params });
  t.is(r.status, 200, `${what}: ${r.text.slice(0, 300)}`);
  t.is(r.body.id, id, what);
  t.is(r.headers['x-confirmable'], String(confirmable), what);
  t.is(r.headers['x-required-confirmations'], confirmable ? '3' : '1', what);
  t.is(calls() - before, confirmable ? 3 : 1, `${what}: upstreams asked`);
}

for (const [method, { pin, params }] of Object.entries(pinned)) {
  test.serial(`${method}: confirmable at a fixed pin, never at latest or pending`, async (t) => {
    if (pin.kind === 'txHash') return ask(t, method, params(txHash), true, 'a transaction hash');
    if (pin.kind === 'blockHash') return ask(t, method, params(blockHash), true, 'a block hash');
    await ask(t, method, params('0x10'), true, 'a block number');
    await ask(t, method, params('0x0'), true, 'block 0x0');
    await ask(t, method, params('earliest'), true, 'earliest (asked as 0x0)');
    if (pin.kind === 'block') {
      await ask(t, method, params(blockHash), true, 'a block hash');
      await ask(t, method, params({ blockHash }), true, 'EIP-1898 blockHash');
      await ask(t, method, params({ blockNumber: '0x10' }), true, 'EIP-1898 blockNumber');
      await ask(t, method, params({ blockNumber: 'latest' }), false, 'EIP-1898 latest');
    }
    await ask(t, method, params('latest'), false, 'latest');
    await ask(t, method, params('pending'), false, 'pending');
    if (pin.kind === 'filter') {
      await ask(t, method, [{ blockHash, address }], true, 'a filter by blockHash');
      await ask(t, method, [{ fromBlock: '0x10', toBlock: 'latest' }], false, 'a range up to latest');
      await ask(t, method, [{ fromBlock: '0x10' }], false, 'a range without toBlock (latest)');
    }
  });
}

for (const [method, params] of Object.entries(unconfirmable)) {
  test.serial(`${method}: one upstream, not confirmable, even on /confirmations/3/`, async (t) => {
    await ask(t, method, params, false, method);
  });
}

test.serial('the table lists every method once', (t) => {
  const both = Object.keys(pinned).filter((m) => Object.hasOwn(unconfirmable, m));
  t.deepEqual(both, []);
  t.true(Object.keys(pinned).length + Object.keys(unconfirmable).length >= 64);
});
