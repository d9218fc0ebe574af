import test from 'ava';
import { GatewayError } from '../../../../lib/errors.js';
import { neverConfirmable, pinnedMethods, type CustomMethods, type PinAt } from '../../../../lib/jsonrpc/methods.js';
import { classifyCall, classifyCalls } from '../../../../lib/jsonrpc/classify.js';
import type { RpcCall } from '../../../../lib/jsonrpc/types.js';

const none: CustomMethods = new Map();
/** Methods declared in config, each with where its pin is. */
const declared = (entries: [string, PinAt][]): CustomMethods => new Map(entries);
const addr = '0x95222290dd7278aa3ddd389cc1e1d165cc4bafe5';
const slot = '0x0000000000000000000000000000000000000000000000000000000000000003';
const hash = '0x88df016429689c079f3b2f6ad39fa052532c56795b733da78a91ebe6a713944b';
const n = '0x12a05f2';
const callObj = { from: '0x0000000000000000000000000000000000000000', to: null };
const filter = { address: [addr], topics: [[hash]] };

const call = (method: string, params: unknown[], id: number | string = 1): RpcCall => ({ id, method, params });
const confirmable = (calls: RpcCall | RpcCall[], extra: CustomMethods = none) =>
  classifyCalls(Array.isArray(calls) ? calls : [calls], extra).confirmable;

/**
 * reference-omnirpc.md §8.1, cases 1–35, with what omnigate answers. Where omnigate differs from
 * OmniRPC the note says why (spec B2: unknown methods are not confirmable by default).
 */
const reference: [number, RpcCall | RpcCall[], boolean, string?][] = [
  [1, call('eth_getBlockByNumber', ['latest', true]), false],
  [2, call('eth_getBlockByNumber', [n, true]), true],
  [3, call('eth_getBlockByNumber', ['latest', false]), false],
  [4, call('eth_getBlockByNumber', [n, false]), true],
  [5, call('eth_blockNumber', []), false],
  [6, call('eth_getTransactionByHash', [hash]), true, 'pinned by a transaction hash (method table)'],
  [7, call('eth_getBlockTransactionCountByHash', [hash]), true, 'pinned by a block hash (method table)'],
  [8, call('eth_getBlockTransactionCountByNumber', ['pending']), false],
  [9, call('eth_getTransactionByBlockHashAndIndex', [hash, '0x1']), true, 'pinned by a block hash (method table)'],
  [10, call('eth_getTransactionReceipt', [hash]), true, 'pinned by a transaction hash (method table)'],
  [11, call('eth_syncing', []), false],
  [12, call('net_version', []), false, 'not in the seed list (OmniRPC: true)'],
  [13, call('eth_getBalance', [addr, 'latest']), false],
  [14, call('eth_getBalance', [addr, 'pending']), false],
  [15, call('eth_getBalance', [addr, n]), true],
  [16, call('eth_getStorageAt', [addr, slot, 'latest']), false],
  [17, call('eth_getStorageAt', [addr, slot, 'pending']), false],
  [18, call('eth_getStorageAt', [addr, slot, n]), true],
  [19, call('eth_getCode', [addr, 'latest']), false],
  [20, call('eth_getCode', [addr, 'pending']), false],
  [21, call('eth_getCode', [addr, n]), true],
  [22, call('eth_getTransactionCount', [addr, 'latest']), false],
  [23, call('eth_getTransactionCount', [addr, 'pending']), false],
  [24, call('eth_getTransactionCount', [addr, n]), true],
  [25, call('eth_getLogs', [{ ...filter, fromBlock: '0x0', toBlock: 'latest' }]), false],
  [26, call('eth_getLogs', [{ ...filter, fromBlock: '0x0', toBlock: '0x1' }]), true],
  [27, call('eth_getLogs', [{ ...filter, blockHash: hash }]), true],
  [28, call('eth_call', [callObj, 'latest']), false],
  [29, call('eth_call', [callObj, '0x1']), true],
  [30, call('eth_call', [callObj, 'pending']), false],
  [31, call('eth_gasPrice', []), false],
  [32, call('eth_maxPriorityFeePerGas', []), false],
  [33, call('eth_estimateGas', [callObj]), false],
  [34, [call('eth_chainId', [])], false, 'eth_chainId is not in the seed list (OmniRPC: true)'],
  [35, [call('eth_chainId', [], 1), call('eth_blockNumber', [], 2)], false],
];

for (const [num, input, expected, note] of reference) {
  const method = Array.isArray(input) ? `batch [${input.map((c) => c.method).join(', ')}]` : `${input.method} ${JSON.stringify(input.params)}`;
  test(`should classify reference case ${num} (${method}) as ${expected ? '' : 'not '}confirmable${note ? ` — ${note}` : ''}`, (t) => {
    t.is(confirmable(input), expected);
  });
}

const extraSet = declared([['eth_chainId', { kind: 'none' }], ['net_version', { kind: 'none' }]]);
for (const num of [12, 34]) {
  const input = reference.find(([k]) => k === num)![1];
  test(`should classify reference case ${num} as confirmable once its method is in the extra set`, (t) => {
    t.true(confirmable(input, extraSet));
  });
}

/** Block parameters other than the seed cases. */
const blocks: [string, unknown, boolean][] = [
  ['safe', 'safe', false],
  ['finalized', 'finalized', false],
  ['earliest as sent (each node\'s lowest block: its history expiry cutoff; resolved to 0x0 by the classify stage)', 'earliest', false],
  ['LATEST (tags compare case-insensitively)', 'LATEST', false],
  ['Pending', 'Pending', false],
  ['Finalized', 'Finalized', false],
  ['EARLIEST', 'EARLIEST', false],
  ['0x0', '0x0', true],
  ['upper-case hex 0xABC', '0xABC', true],
  ['null, which means latest', null, false],
  ['EIP-1898 {blockHash}', { blockHash: hash }, true],
  ['EIP-1898 {blockHash, requireCanonical}', { blockHash: hash, requireCanonical: true }, true],
  ['EIP-1898 {blockNumber: "0x1"}', { blockNumber: '0x1' }, true],
  ['EIP-1898 {blockNumber: "latest"}', { blockNumber: 'latest' }, false],
  ['EIP-1898 {blockNumber: "pending"}', { blockNumber: 'pending' }, false],
  ['EIP-1898 {blockNumber: "safe"}', { blockNumber: 'safe' }, false],
];
for (const [name, block, expected] of blocks) {
  test(`should classify block ${name} as ${expected ? '' : 'not '}confirmable`, (t) => {
    t.is(confirmable(call('eth_getBalance', [addr, block])), expected);
    t.is(confirmable(call('eth_getBlockByNumber', [block, false])), expected, 'eth_getBlockByNumber');
    t.is(confirmable(call('eth_getStorageAt', [addr, slot, block])), expected, 'eth_getStorageAt');
  });
}

const missingBlock: RpcCall[] = [
  call('eth_getBalance', [addr]),
  call('eth_getCode', [addr]),
  call('eth_getTransactionCount', [addr]),
  call('eth_call', [callObj]),
  call('eth_getStorageAt', [addr, slot]),
  call('eth_getBlockTransactionCountByNumber', []),
];
for (const c of missingBlock) {
  test(`should read a missing block parameter of ${c.method} as latest (not confirmable)`, (t) => {
    t.false(confirmable(c));
  });
}

test('should accept eth_call state and block overrides after the block', (t) => {
  t.true(confirmable(call('eth_call', [callObj, '0x1', { [addr]: { balance: '0x1' } }])));
  t.true(confirmable(call('eth_call', [callObj, '0x1', {}, { number: '0x2' }])));
});

const filters: [string, Record<string, unknown>, boolean][] = [
  ['fromBlock and toBlock hex', { fromBlock: '0x1', toBlock: '0x2' }, true],
  ['earliest to hex (a pruned node\'s logs from its cutoff)', { fromBlock: 'earliest', toBlock: '0x2' }, false],
  ['0x0 to hex', { fromBlock: '0x0', toBlock: '0x2' }, true],
  ['fromBlock without toBlock (toBlock means latest)', { fromBlock: '0x1' }, false],
  ['toBlock without fromBlock (fromBlock means latest)', { toBlock: '0x2' }, false],
  ['no block at all', { address: addr }, false],
  ['an empty filter', {}, false],
  ['fromBlock latest', { fromBlock: 'latest', toBlock: '0x2' }, false],
  ['toBlock pending', { fromBlock: '0x1', toBlock: 'pending' }, false],
  ['toBlock safe', { fromBlock: '0x1', toBlock: 'safe' }, false],
  ['toBlock finalized', { fromBlock: '0x1', toBlock: 'finalized' }, false],
  ['toBlock LATEST', { fromBlock: '0x1', toBlock: 'LATEST' }, false],
  ['null fromBlock and toBlock', { fromBlock: null, toBlock: null }, false],
  ['blockHash', { blockHash: hash }, true],
  ['blockHash with topics', { blockHash: hash, topics: [null, [hash]] }, true],
];
for (const [name, f, expected] of filters) {
  test(`should classify eth_getLogs with ${name} as ${expected ? '' : 'not '}confirmable`, (t) => {
    t.is(confirmable(call('eth_getLogs', [f])), expected);
  });
}

/** Parameter lists no node accepts: -32602 before any upstream is called. */
const invalidParams: [string, RpcCall][] = [
  ['eth_getBalance []', call('eth_getBalance', [])],
  ['eth_getBalance [null, "0x1"]', call('eth_getBalance', [null, '0x1'])],
  ['eth_getCode []', call('eth_getCode', [])],
  ['eth_getTransactionCount []', call('eth_getTransactionCount', [])],
  ['eth_call []', call('eth_call', [])],
  ['eth_getStorageAt [addr]', call('eth_getStorageAt', [addr])],
  ['eth_getStorageAt []', call('eth_getStorageAt', [])],
  ['eth_getBlockByNumber [] (no flag)', call('eth_getBlockByNumber', [])],
  ['eth_getBlockByNumber ["0x1"] without the flag', call('eth_getBlockByNumber', ['0x1'])],
  ['eth_getBlockByNumber ["0x1", "true"] (string flag)', call('eth_getBlockByNumber', ['0x1', 'true'])],
  ['eth_getBlockByNumber ["1", true] (decimal string)', call('eth_getBlockByNumber', ['1', true])],
  ['eth_getBalance [addr, "1"] (decimal string)', call('eth_getBalance', [addr, '1'])],
  ['eth_getBalance [addr, 1] (JSON number)', call('eth_getBalance', [addr, 1])],
  ['eth_getBalance [addr, "0x"]', call('eth_getBalance', [addr, '0x'])],
  ['eth_getBalance [addr, "recent"] (unknown tag)', call('eth_getBalance', [addr, 'recent'])],
  ['eth_getBalance [addr, true]', call('eth_getBalance', [addr, true])],
  ['eth_getBalance [addr, ["0x1"]]', call('eth_getBalance', [addr, ['0x1']])],
  ['eth_getBalance with a short EIP-1898 blockHash', call('eth_getBalance', [addr, { blockHash: '0x12' }])],
  ['eth_getBalance with both blockHash and blockNumber', call('eth_getBalance', [addr, { blockHash: hash, blockNumber: '0x1' }])],
  ['eth_getBalance with an empty object block', call('eth_getBalance', [addr, {}])],
  ['eth_getBalance with a decimal EIP-1898 blockNumber', call('eth_getBalance', [addr, { blockNumber: '1' }])],
  ['eth_getBalance with 3 params', call('eth_getBalance', [addr, '0x1', '0x2'])],
  ['eth_getBlockByNumber with 3 params', call('eth_getBlockByNumber', ['0x1', true, 'x'])],
  ['eth_getBlockTransactionCountByNumber with 2 params', call('eth_getBlockTransactionCountByNumber', ['0x1', '0x2'])],
  ['eth_getStorageAt with 4 params', call('eth_getStorageAt', [addr, slot, '0x1', '0x2'])],
  ['eth_call with 5 params', call('eth_call', [callObj, '0x1', {}, {}, {}])],
  ['eth_getLogs []', call('eth_getLogs', [])],
  ['eth_getLogs [filter, extra]', call('eth_getLogs', [{ fromBlock: '0x1', toBlock: '0x2' }, 'x'])],
  ['eth_getLogs ["0x1"] (not a filter)', call('eth_getLogs', ['0x1'])],
  ['eth_getLogs [[]] (array filter)', call('eth_getLogs', [[]])],
  ['eth_getLogs with blockHash and fromBlock', call('eth_getLogs', [{ blockHash: hash, fromBlock: '0x1' }])],
  ['eth_getLogs with blockHash and toBlock', call('eth_getLogs', [{ blockHash: hash, toBlock: '0x2' }])],
  ['eth_getLogs with a short blockHash', call('eth_getLogs', [{ blockHash: '0x1234' }])],
  ['eth_getLogs with decimal fromBlock "1"', call('eth_getLogs', [{ fromBlock: '1', toBlock: '0x2' }])],
  ['eth_getLogs with numeric fromBlock 1', call('eth_getLogs', [{ fromBlock: 1, toBlock: '0x2' }])],
  ['eth_getLogs with numeric toBlock 2', call('eth_getLogs', [{ fromBlock: '0x1', toBlock: 2 }])],
  ['eth_getLogs with an EIP-1898 object as fromBlock', call('eth_getLogs', [{ fromBlock: { blockHash: hash }, toBlock: '0x2' }])],
];
for (const [name, c] of invalidParams) {
  test(`should answer -32602 for ${name}`, (t) => {
    const err = t.throws(() => classifyCall({ ...c, id: 'req-7' }, none)) as GatewayError;
    t.true(err instanceof GatewayError);
    t.is(err.rpcCode, -32602);
    t.is(err.status, 200, 'with HTTP 200, as a node sends its -32602');
    t.is(err.code, 'OMNI_ERR_INVALID_PARAMS');
    t.is(err.rpcId, 'req-7', 'echoes the client id');
    t.regex(err.message, new RegExp(c.method));
  });
}

test('should answer -32602 with id null for an invalid batch member, naming the member', (t) => {
  const err = t.throws(() => classifyCalls([call('eth_getBalance', [], 'b'), call('eth_chainId', [], 1)], none)) as GatewayError;
  t.is(err.rpcCode, -32602);
  t.is(err.rpcId, null);
  t.regex(err.message, /batch id "b"/);
});

// Found by this test: classifyCalls stops at the first non-confirmable member, so a bad member
// after it is never validated and reaches the upstreams, while the same batch in the other order
// is refused with -32602. Validation must not depend on the members' order.
test('should validate every batch member whatever its position', (t) => {
  const bad = call('eth_getBalance', [], 2);
  const first = t.throws(() => classifyCalls([bad, call('eth_blockNumber', [], 1)], none)) as GatewayError;
  t.is(first?.rpcCode, -32602);
  const second = t.throws(() => classifyCalls([call('eth_blockNumber', [], 1), bad], none)) as GatewayError | undefined;
  t.is(second?.rpcCode, -32602, 'the invalid member after a non-confirmable one was not validated');
});

const batches: [string, RpcCall[], boolean][] = [
  ['every member pinned', [call('eth_getBalance', [addr, '0x1'], 1), call('eth_getCode', [addr, '0x1'], 2)], true],
  ['one member latest', [call('eth_getBalance', [addr, '0x1'], 1), call('eth_getCode', [addr, 'latest'], 2)], false],
  ['one member never confirmable', [call('eth_getBalance', [addr, '0x1'], 1), call('eth_gasPrice', [], 2)], false],
  ['one unknown member', [call('eth_getBalance', [addr, '0x1'], 1), call('web3_clientVersion', [], 2)], false],
  ['a member pinned by hash', [call('eth_getBalance', [addr, '0x1'], 1), call('eth_getTransactionByHash', [hash], 2)], true],
  ['only chain constants', [call('eth_chainId', [], 1), call('net_version', [], 2)], false],
];
for (const [name, calls, expected] of batches) {
  test(`should classify a batch with ${name} as ${expected ? '' : 'not '}confirmable`, (t) => {
    t.is(confirmable(calls), expected);
  });
}

// Spec B2 says a batch is confirmable only if every member is. omnigate extends it on purpose:
// eth_chainId and net_version are fixed for a chain, and ethers v6 adds eth_chainId to its
// batches, which would otherwise all fall to one upstream (lib/jsonrpc/README.md, "Which requests are confirmable").
for (const neutral of ['eth_chainId', 'net_version']) {
  test(`should confirm a batch of pinned reads that includes ${neutral} (fixed for the chain)`, (t) => {
    t.true(confirmable([call('eth_getBalance', [addr, '0x1'], 1), call(neutral, [], 2)]));
  });
  test(`should not confirm a batch of ${neutral} with an unpinned read`, (t) => {
    t.false(confirmable([call('eth_getBalance', [addr, 'latest'], 1), call(neutral, [], 2)]));
  });
}

test('should not confirm a batch of chain constants only', (t) => {
  t.false(confirmable([call('eth_chainId', [], 1), call('net_version', [], 2)]));
});

test('should let the declared methods make a batch confirmable only when they cover every member', (t) => {
  const extra = declared([['eth_foo', { kind: 'block', at: 0, hash: true }]]);
  t.true(confirmable([call('eth_foo', ['0x1'], 1), call('eth_getBalance', [addr, '0x1'], 2)], extra));
  t.false(confirmable([call('eth_foo', ['0x1'], 1), call('eth_bar', ['0x1'], 2)], extra));
});

const unknown = ['web3_clientVersion', 'foo_bar', 'eth_chainId', 'net_version'];
for (const method of unknown) {
  test(`should not confirm the unlisted method ${method} by default`, (t) => {
    const c = classifyCall(call(method, ['latest']), none);
    t.false(c.confirmable);
    t.regex(c.reason, /not in the confirmable list|not confirmable: fixed for the chain/);
  });
}

const pinnedNotConfirmable = ['eth_feeHistory', 'debug_traceTransaction', 'eth_newFilter', 'eth_getFilterLogs'];
for (const method of pinnedNotConfirmable) {
  test(`should not confirm the table's unconfirmable method ${method}`, (t) => {
    t.false(classifyCall(call(method, ['0x1', '0x1']), none).confirmable);
  });
}

/** The reads the seed does not list, pinned by a hash or a block: confirmable under the same rule. */
const beyondSeed: [RpcCall, boolean][] = [
  [call('eth_getBlockByHash', [hash, true]), true],
  [call('eth_getTransactionByHash', [hash]), true],
  [call('eth_getTransactionReceipt', [hash]), true],
  [call('eth_getUncleByBlockHashAndIndex', [hash, '0x0']), true],
  [call('eth_getUncleCountByBlockHash', [hash]), true],
  [call('eth_getBlockReceipts', ['0x1']), true],
  [call('eth_getBlockReceipts', ['earliest']), false],
  [call('eth_getBlockReceipts', [hash]), true],
  [call('eth_getBlockReceipts', [{ blockHash: hash }]), true],
  [call('eth_getBlockReceipts', ['latest']), false],
  [call('eth_getBlockReceipts', ['pending']), false],
  [call('eth_getBlockReceipts', ['finalized']), false],
  [call('eth_getProof', [addr, [slot], '0x1']), true],
  [call('eth_getProof', [addr, [slot], 'latest']), false],
  [call('eth_getProof', [addr, [slot]]), false],
  [call('eth_getTransactionByBlockNumberAndIndex', ['0x1', '0x0']), true],
  [call('eth_getTransactionByBlockNumberAndIndex', ['latest', '0x0']), false],
  [call('eth_getUncleCountByBlockNumber', ['0x1']), true],
  [call('debug_getRawBlock', ['0x1']), true],
  [call('debug_getRawTransaction', [hash]), true],
];
for (const [c, expected] of beyondSeed) {
  test(`should classify ${c.method} ${JSON.stringify(c.params)} as ${expected ? '' : 'not '}confirmable`, (t) => {
    t.is(classifyCall(c, none).confirmable, expected);
  });
}

test('should refuse a hash pin that is not a 32-byte hash', (t) => {
  const err = t.throws(() => classifyCall(call('eth_getTransactionReceipt', ['0x1234']), none)) as GatewayError;
  t.regex(err.message, /params\[0\] \(transaction hash\) must be a 32-byte hex hash/);
});

test('should confirm a configured method by its declared pin only', (t) => {
  const extra = declared([['eth_foo', { kind: 'block', at: 1, hash: true }], ['eth_bar', { kind: 'txHash', at: 0 }], ['eth_const', { kind: 'none' }]]);
  t.true(classifyCall(call('eth_foo', [addr, '0x1']), extra).confirmable);
  t.false(classifyCall(call('eth_foo', [addr, 'latest']), extra).confirmable);
  t.false(classifyCall(call('eth_foo', [addr]), extra).confirmable);
  t.true(classifyCall(call('eth_bar', [hash]), extra).confirmable);
  t.regex(classifyCall(call('eth_const', []), extra).reason, /whatever the block/);
});

test('should let the config turn on a pinned method the table does not confirm', (t) => {
  const extra = declared([['debug_traceTransaction', { kind: 'txHash', at: 0 }]]);
  t.true(classifyCall(call('debug_traceTransaction', [hash]), extra).confirmable);
});

for (const method of neverConfirmable) {
  test(`should never confirm ${method}, even when the config declares it`, (t) => {
    t.false(confirmable(call(method, ['0x1']), declared([[method, { kind: 'none' }]])));
  });
}

test('should keep the block rule for a pinned method the config lists', (t) => {
  t.false(confirmable(call('eth_getBalance', [addr, 'latest']), declared([['eth_getBalance', { kind: 'block', at: 1, hash: true }]])));
});

test('should export the seed table of spec 4.3', (t) => {
  t.deepEqual([...pinnedMethods].sort(), [
    'eth_call',
    'eth_getBalance',
    'eth_getBlockByNumber',
    'eth_getBlockTransactionCountByNumber',
    'eth_getCode',
    'eth_getLogs',
    'eth_getStorageAt',
    'eth_getTransactionCount',
  ]);
  for (const m of ['eth_blockNumber', 'eth_estimateGas', 'eth_gasPrice', 'eth_maxPriorityFeePerGas', 'eth_sendRawTransaction', 'eth_syncing']) t.true(neverConfirmable.has(m), m);
});

test('should give a reason for every classification', (t) => {
  t.regex(classifyCall(call('eth_getBalance', [addr, 'latest']), none).reason, /params\[1\] is "latest"/);
  t.regex(classifyCall(call('eth_getBalance', [addr]), none).reason, /missing, which means latest/);
  t.regex(classifyCall(call('eth_blockNumber', []), none).reason, /never confirmable/);
  t.regex(classifyCalls([call('eth_getBalance', [addr, '0x1'], 1), call('eth_gasPrice', [], 'g')], none).reason, /batch member "g"/);
});
