/**
 * Which calls are confirmable, and where their pins sit: block parameters, EIP-1898 objects,
 * filters and hashes; the config's declared pins; parameters no node would accept refused with
 * -32602; subscriptions refused with -32601; a batch confirmable only when every member is,
 * chain constants aside.
 */
import test from 'ava';
import { batchNeutral, classifyCall, classifyCalls, pinAtOf, pinOf, refusedMethods } from '../../../../lib/jsonrpc/classify.js';
import type { CustomMethods } from '../../../../lib/jsonrpc/methods.js';
import type { RpcCall } from '../../../../lib/jsonrpc/types.js';

const call = (method: string, ...params: unknown[]): RpcCall => ({ id: 1, method, params });
const hash = `0x${'ab'.repeat(32)}`;
const address = `0x${'11'.repeat(20)}`;
const none: CustomMethods = new Map();

const confirmable: [string, RpcCall, boolean][] = [
  ['a hex block', call('eth_getBalance', address, '0x10'), true],
  ['earliest as sent (each node\'s lowest block; the classify stage asks for 0x0)', call('eth_getBalance', address, 'earliest'), false],
  ['0x0', call('eth_getBalance', address, '0x0'), true],
  ['latest', call('eth_getBalance', address, 'latest'), false],
  ['pending', call('eth_getBalance', address, 'PENDING'), false],
  ['safe (unresolved)', call('eth_getBalance', address, 'safe'), false],
  ['a missing block (latest)', call('eth_getBalance', address), false],
  ['a block hash', call('eth_getBalance', address, hash), true],
  ['EIP-1898 blockHash', call('eth_call', {}, { blockHash: hash }), true],
  ['EIP-1898 blockNumber', call('eth_call', {}, { blockNumber: '0x5' }), true],
  ['EIP-1898 blockNumber latest', call('eth_call', {}, { blockNumber: 'latest' }), false],
  ['a transaction hash', call('eth_getTransactionReceipt', hash), true],
  ['a filter from and to a number', call('eth_getLogs', { fromBlock: '0x1', toBlock: '0x2' }), true],
  ['a filter to latest', call('eth_getLogs', { fromBlock: '0x1', toBlock: 'latest' }), false],
  ['a filter without blocks', call('eth_getLogs', {}), false],
  ['a filter by blockHash', call('eth_getLogs', { blockHash: hash }), true],
  ['eth_blockNumber', call('eth_blockNumber'), false],
  ['eth_chainId on its own', call('eth_chainId'), false],
  ['a method in no list', call('foo_bar', '0x1'), false],
];
for (const [what, c, expected] of confirmable) {
  test(`should classify ${what} as ${expected ? 'confirmable' : 'not confirmable'}`, (t) => {
    const verdict = classifyCall(c, none);
    t.is(verdict.confirmable, expected);
    t.true(verdict.reason.length > 0);
  });
}

const refused: [string, RpcCall, RegExp][] = [
  ['a block that is neither a number, a tag nor a hash', call('eth_getBalance', address, 'yesterday'), /params\[1\] must be a hex block number/],
  ['a missing required parameter', call('eth_getBlockByNumber', '0x1'), /full transactions flag/],
  ['too many params', call('eth_getBalance', address, '0x1', 'extra'), /takes at most 2 parameters, got 3/],
  ['a malformed transaction hash', call('eth_getTransactionReceipt', '0x12'), /32-byte hex hash/],
  ['blockHash with fromBlock', call('eth_getLogs', { blockHash: hash, fromBlock: '0x1' }), /EIP-234/],
  ['a filter that is not an object', call('eth_getLogs', 'x'), /filter object/],
  ['an EIP-1898 key Go reads otherwise', call('eth_call', {}, { BlockHash: hash }), /spell it exactly/],
];
for (const [what, c, message] of refused) {
  test(`should refuse ${what} with -32602 and the call's id`, (t) => {
    let err: unknown;
    try {
      classifyCall(c, none);
    } catch (e) {
      err = e;
    }
    t.like(err, { rpcCode: -32602, rpcId: 1 });
    t.regex((err as Error).message, message);
  });
}

test('should refuse subscriptions with -32601', (t) => {
  for (const method of refusedMethods) t.throws(() => classifyCall(call(method, 'newHeads'), none), { message: /not served/ });
  t.like(t.throws(() => classifyCall(call('eth_subscribe'), none)), { rpcCode: -32601, rpcId: 1 });
});

test('should follow the config\'s declared pins, and not a method named like an Object property', (t) => {
  const custom: CustomMethods = new Map([['foo_at', { kind: 'block', at: 1, hash: false }], ['foo_fixed', { kind: 'none' }], ['eth_getBlockByHash', { kind: 'blockHash', at: 0 }]]);
  t.true(classifyCall(call('foo_at', 'x', '0x5'), custom).confirmable);
  t.false(classifyCall(call('foo_at', 'x', 'latest'), custom).confirmable);
  t.true(classifyCall(call('foo_fixed'), custom).confirmable);
  t.false(classifyCall(call('toString'), custom).confirmable);
  t.false(classifyCall(call('constructor', '0x1'), new Map([['constructor', { kind: 'none' }]])).confirmable);
});

test('should never confirm a call with a key Go nodes read as another', (t) => {
  t.false(classifyCall({ ...call('eth_getBalance', address, '0x10'), alias: 'Params' }, none).confirmable);
});

test('should never confirm a call whose params hold two keys that differ only in letter case, at any depth', (t) => {
  const to = '0x' + 'aa'.repeat(20);
  const folded = classifyCall(call('eth_call', { to, To: '0x' + 'bb'.repeat(20), data: '0x' }, '0x10'), none);
  t.false(folded.confirmable);
  t.regex(folded.reason, /"to" and "To", which differ only in letter case/);
  t.false(classifyCall(call('eth_call', { to, data: '0x' }, '0x10', { [to]: { balance: '0x1' }, [to.toUpperCase().replace('0X', '0x')]: { balance: '0x2' } }), none).confirmable);
  t.false(classifyCall(call('eth_call', { to, data: '0x' }, '0x10', { [to]: { stateDiff: { '0xab': '0x1', '0xAB': '0x2' } } }), none).confirmable);
  t.false(classifyCall(call('eth_getLogs', { fromBlock: '0x1', toBlock: '0x2', topics: [[{ a: 1, A: 2 }]] }), none).confirmable, 'inside an array');
  t.false(classifyCall(call('eth_call', { to, data: '0x', 'ſ': 1, S: 2 }, '0x10'), none).confirmable, 'folded as Go folds (ſ is s)');
  t.true(classifyCall(call('eth_call', { to, data: '0x', input: '0x' }, '0x10', { [to]: { balance: '0x1' } }), none).confirmable, 'distinct keys stay confirmable');
  t.throws(() => classifyCall(call('eth_getBalance', address, { blockNumber: '0x10', BlockNumber: 'latest' }), none), { message: /BlockNumber/ }, 'a pin key spelled otherwise is still refused');
});

test('a batch should be confirmable only when every member is, chain constants aside', (t) => {
  const pinned = call('eth_getBalance', address, '0x10');
  t.true(classifyCalls([pinned, call('eth_chainId'), call('net_version')], none).confirmable);
  t.false(classifyCalls([pinned, call('eth_blockNumber')], none).confirmable);
  t.false(classifyCalls([call('eth_chainId'), call('net_version')], none).confirmable, 'only chain constants');
  t.false(classifyCalls([pinned, { ...call('eth_chainId'), alias: 'ID' }], none).confirmable);
  t.deepEqual([...batchNeutral].sort(), ['eth_chainId', 'net_version']);
});

test('a batch member\'s bad params should name the member and echo no id', (t) => {
  const err = t.throws(() => classifyCalls([call('eth_blockNumber'), { id: 'm2', method: 'eth_getBalance', params: [address, 'bad'] }], none));
  t.like(err, { rpcCode: -32602, rpcId: null });
  t.regex(err!.message, /^batch id "m2": /);
});

const pins: [string, RpcCall, ReturnType<typeof pinOf>][] = [
  ['a number', call('eth_getBalance', address, '0x10'), { kind: 'number', block: 16n }],
  ['earliest', call('eth_getBalance', address, 'earliest'), { kind: 'number', block: 0n }],
  ['a tag', call('eth_getBalance', address, 'Safe'), { kind: 'tag', tag: 'safe' }],
  ['nothing (latest)', call('eth_getBalance', address), { kind: 'tag', tag: 'latest' }],
  ['a block hash', call('eth_call', {}, { blockHash: hash }), { kind: 'blockHash', hash }],
  ['a transaction hash', call('eth_getTransactionByHash', hash), { kind: 'txHash', hash }],
  ['a filter\'s toBlock', call('eth_getLogs', { fromBlock: '0x1', toBlock: '0x9' }), { kind: 'number', block: 9n }],
  ['a filter\'s blockHash', call('eth_getLogs', { blockHash: hash }), { kind: 'blockHash', hash }],
  ['a malformed block', call('eth_getBalance', address, 'yesterday'), { kind: 'none' }],
  ['a method without a pin', call('eth_blockNumber'), { kind: 'none' }],
];
for (const [what, c, pin] of pins) {
  test(`pinOf should find ${what}`, (t) => {
    t.deepEqual(pinOf(c), pin);
  });
}

test('pinAtOf should take the table\'s pin over the config\'s, and none for an Object property name', (t) => {
  const custom: CustomMethods = new Map([['foo_at', { kind: 'block', at: 2, hash: true }], ['eth_getBalance', { kind: 'none' }], ['hasOwnProperty', { kind: 'none' }]]);
  t.deepEqual(pinAtOf('foo_at', custom), { kind: 'block', at: 2, hash: true });
  t.deepEqual(pinAtOf('eth_getBalance', custom), pinAtOf('eth_getBalance'));
  t.is(pinAtOf('hasOwnProperty', custom), undefined);
  t.is(pinAtOf('foo_unknown'), undefined);
});
