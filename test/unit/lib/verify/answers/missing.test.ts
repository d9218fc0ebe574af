/**
 * What reads as "this node lacks the data": a null of a method that answers null for an unknown
 * block or transaction, the empty bytes of a raw read, an empty list, an unknown-block error of
 * any client; and what does not.
 */
import test from 'ava';
import type { RpcCall } from '../../../../../lib/jsonrpc/types.js';
import { assessBody } from '../../../../../lib/verify/answers/answers.js';
import { answerBodyAsMissing, answersAsMissing, emptyBytesMeanMissing, missingBlockErrors, nullMeansMissing } from '../../../../../lib/verify/answers/missing.js';

const call = (method: string, ...params: unknown[]): RpcCall => ({ id: 1, method, params });
const hash = `0x${'ab'.repeat(32)}`;

/** A vote as the agreement loop holds it: the body and the hash of its canonical form (none for a body that cannot vote). */
const vote = (c: RpcCall, text: string) => {
  const a = assessBody(text, { batch: false, calls: [c] });
  return { body: Buffer.from(text), hash: a.ok ? a.hash : 'no vote' };
};

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

const missing = (c: RpcCall, text: string) => answerBodyAsMissing(c, vote(c, text));

test('answerBodyAsMissing should read a short body: null, an error, an empty list', (t) => {
  t.true(missing(call('eth_getTransactionByHash', hash), '{"jsonrpc":"2.0","id":1,"result":null}'));
  t.true(missing(call('eth_getBalance', '0x1', '0x10'), '{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"header not found"}}'));
  t.true(missing(call('eth_getLogs', { fromBlock: '0x1' }), '{"jsonrpc":"2.0","id":1,"result":[]}'));
  t.true(missing(call('debug_getRawHeader', '0x1'), '{"jsonrpc":"2.0","id":1,"result":"0x"}'));
  t.false(missing(call('eth_getCode', '0x1', '0x1'), '{"jsonrpc":"2.0","id":1,"result":"0x"}'), 'an account without code');
  t.false(missing(call('eth_call', {}, '0x1'), '{"jsonrpc":"2.0","id":1,"result":null}'));
  t.false(missing(call('eth_getLogs', { fromBlock: '0x1' }), '{"jsonrpc":"2.0","id":1,"result":[{}]}'));
  t.false(missing(call('eth_getBalance', '0x1', '0x10'), '{"jsonrpc":"2.0","id":1,"result":"0x0"}'));
});

test('answerBodyAsMissing should not take a body that is not a JSON object as missing', (t) => {
  const c = call('eth_getTransactionByHash', hash);
  t.false(missing(c, 'not json'));
  t.false(missing(c, '[{"result":null}]'));
  t.false(missing(c, 'null'));
});

const pad = ' \n\t'.repeat(3000);
test('answerBodyAsMissing should read a "not found" of any length: padded, with extra keys, a long error message', (t) => {
  const c = call('eth_getTransactionByHash', hash);
  t.true(missing(c, `{"jsonrpc":"2.0","id":1,"result":${pad}null${pad}}`));
  t.true(missing(c, `${pad}{${pad}"jsonrpc":"2.0",${pad}"id":1,"result":null}${pad}`));
  t.true(missing(c, `{"jsonrpc":"2.0","id":1,"result":null,"pad":"${'x'.repeat(5000)}"}`));
  t.true(missing(call('eth_getLogs', { fromBlock: '0x1' }), `{"jsonrpc":"2.0","id":1,"result":[${pad}]}`));
  t.true(missing(call('debug_getRawHeader', '0x1'), `{"jsonrpc":"2.0","id":1,"result":"0x"${pad}}`));
  t.true(missing(c, JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code: -32001, message: `block not found${'.'.repeat(8000)}` } })));
  t.true(missing(c, JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code: -32001, message: `${'.'.repeat(8000)} header not found` } })));
  t.true(missing(c, `{"jsonrpc":"2.0","id":"${'7'.repeat(5000)}","result":null,"error":{"code":-32001,"message":"block not found"}}`), 'a null result beside an error: the error is read');
  t.true(missing(c, `{"jsonrpc":"2.0","id":1,"\\u0065rror":{"code":-32001,"message":"block not found${'.'.repeat(8000)}"}}`), 'an escaped key');
  t.false(missing(c, JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code: -32001, message: `nope${'.'.repeat(8000)}` } })));
  t.false(missing(c, JSON.stringify({ jsonrpc: '2.0', id: 1, result: { hash, input: `0x${'00'.repeat(5000)}` } })), 'a long real answer');
  t.false(missing(c, `{"jsonrpc":"2.0","id":1,${pad}"result":${pad}{"hash":"${hash}"}}`), 'a real answer padded');
});

test('answerBodyAsMissing should not parse a long answer whose first members show a result, however long its id', (t) => {
  const c = call('eth_getLogs', { blockHash: hash });
  const votes = [
    vote(c, JSON.stringify({ jsonrpc: '2.0', id: 1, result: [{ data: `0x${'00'.repeat(5000)}` }] })),
    vote(c, JSON.stringify({ jsonrpc: '2.0', id: 'x'.repeat(6000), result: [{ data: `0x${'00'.repeat(5000)}` }] })),
    vote(c, `{ "id" : 7 , "jsonrpc" : "2.0" , ${' '.repeat(5000)} "result" : [{"data":"0x"}]}`),
  ];
  const parse = JSON.parse;
  let parsed = 0;
  JSON.parse = (...args: Parameters<typeof JSON.parse>) => {
    parsed += 1;
    return parse(...args);
  };
  try {
    for (const v of votes) t.false(answerBodyAsMissing(c, v));
  } finally {
    JSON.parse = parse;
  }
  t.is(parsed, 0);
});
