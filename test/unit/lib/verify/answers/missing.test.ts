/**
 * What reads as "this node lacks the data": a null of a method that answers null for an unknown
 * block or transaction, the empty bytes of a raw read, an empty list, an unknown-block error of
 * any client; and what does not.
 */
import test from 'ava';
import type { RpcCall } from '../../../../../lib/jsonrpc/types.js';
import { answerBodyAsMissing, answersAsMissing, emptyBytesMeanMissing, missingBlockErrors, nullMeansMissing } from '../../../../../lib/verify/answers/missing.js';

const call = (method: string, ...params: unknown[]): RpcCall => ({ id: 1, method, params });
const hash = `0x${'ab'.repeat(32)}`;

test('should take null as missing for the block and transaction reads, and for a method outside the table', (t) => {
  for (const method of ['eth_getBlockByNumber', 'eth_getBlockByHash', 'eth_getTransactionByHash', 'eth_getTransactionReceipt']) {
    t.true(nullMeansMissing.has(method), method);
    t.true(answersAsMissing(call(method, hash), { result: null }), method);
  }
  t.true(answersAsMissing(call('foo_declaredByConfig', '0x1'), { result: null }));
  t.false(answersAsMissing(call('eth_getBlockByNumber', '0x1', false), { result: { number: '0x1' } }));
});

test('should not take null as missing where null is an honest answer', (t) => {
  t.false(nullMeansMissing.has('eth_call'));
  t.false(answersAsMissing(call('eth_call', {}, '0x1'), { result: null }));
});

test('should take empty bytes as missing only for the raw reads that never return them', (t) => {
  t.true(emptyBytesMeanMissing.has('debug_getRawHeader'));
  t.true(answersAsMissing(call('debug_getRawHeader', '0x1'), { result: '0x' }));
  t.false(answersAsMissing(call('eth_getCode', '0x1', '0x1'), { result: '0x' }), 'an account without code');
  t.false(answersAsMissing(call('eth_call', {}, '0x1'), { result: '0x' }));
});

const lacking = [
  'header not found',
  'unknown block',
  'block not found',
  'Block 0x1234 not found',
  'Block 0xabc could not be found',
  'missing trie node 0x1 (path )',
  'historical state 0xabc is not available',
  'BlockOutOfRange: block is out of range',
  'block number 9 is in the future',
  'header for hash not found',
  'header #0x10 not found',
  'transaction indexing is in progress',
  'HEADER NOT FOUND',
];
for (const message of lacking) {
  test(`should take the error ${JSON.stringify(message)} as missing`, (t) => {
    t.true(missingBlockErrors.some((re) => re.test(message)));
    t.true(answersAsMissing(call('eth_getBalance', '0x1', '0x10'), { error: { message } }));
  });
}

test('should not take other errors as missing', (t) => {
  for (const message of ['execution reverted', 'invalid argument 0: hex string without 0x prefix', 'rate limited', '']) {
    t.false(answersAsMissing(call('eth_getBalance', '0x1', '0x10'), { error: { message } }), message);
  }
  t.false(answersAsMissing(call('eth_getBalance', '0x1', '0x10'), { error: { message: 42 } }), 'a message that is not a string');
});

test('answerBodyAsMissing should read a short body: null, an error, an empty list', (t) => {
  t.true(answerBodyAsMissing(call('eth_getTransactionByHash', hash), Buffer.from('{"jsonrpc":"2.0","id":1,"result":null}')));
  t.true(answerBodyAsMissing(call('eth_getBalance', '0x1', '0x10'), Buffer.from('{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"header not found"}}')));
  t.true(answerBodyAsMissing(call('eth_getLogs', { fromBlock: '0x1' }), Buffer.from('{"jsonrpc":"2.0","id":1,"result":[]}')));
  t.false(answerBodyAsMissing(call('eth_getLogs', { fromBlock: '0x1' }), Buffer.from('{"jsonrpc":"2.0","id":1,"result":[{}]}')));
  t.false(answerBodyAsMissing(call('eth_getBalance', '0x1', '0x10'), Buffer.from('{"jsonrpc":"2.0","id":1,"result":"0x0"}')));
});

test('answerBodyAsMissing should not take a body that is not a JSON object, or a long one, as missing', (t) => {
  const c = call('eth_getTransactionByHash', hash);
  t.false(answerBodyAsMissing(c, Buffer.from('not json')));
  t.false(answerBodyAsMissing(c, Buffer.from('[{"result":null}]')));
  t.false(answerBodyAsMissing(c, Buffer.from('null')));
  t.false(answerBodyAsMissing(c, Buffer.from(`{"jsonrpc":"2.0","id":1,"result":null,"pad":"${'x'.repeat(5000)}"}`)));
});
