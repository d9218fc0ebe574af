import { readFileSync } from 'node:fs';
import test from 'ava';
import type { RpcCall, RpcPayload } from '../../../../../lib/jsonrpc/types.js';
import { assessBody, confirmedBody, maxInexactNumbers, readJson, scanText, type Assessment } from '../../../../../lib/verify/answers/answers.js';
import fc from 'fast-check';
import { canonicalJson, comparable, JsonNumber, sha256Hex } from '../../../../../lib/verify/answers/canonical.js';
import { mergeIgnoredFields } from '../../../../../lib/verify/answers/compared-fields.js';
import { fromRoot } from '../../../../support/paths.js';

const fixture = (name: string) => readFileSync(fromRoot(`test/fixtures/replies/${name}.json`));

const single = (method: string, params: unknown[] = [], id: string | number = 1): RpcPayload => ({
  calls: [{ id, method, params }],
  batch: false,
  raw: Buffer.from(JSON.stringify({ jsonrpc: '2.0', id, method, params })),
});
const batch = (calls: RpcCall[]): RpcPayload => ({
  calls,
  batch: true,
  raw: Buffer.from(JSON.stringify(calls.map((c) => ({ jsonrpc: '2.0', ...c })))),
});

const vote = (a: Assessment) => {
  if (!a.ok) throw new Error(`expected a vote, got: ${a.reason}`);
  return a;
};
const reasonOf = (a: Assessment) => {
  if (a.ok) throw new Error(`expected no vote, got hash ${a.hash}`);
  return a.reason;
};

/** Fixture kind → the request it answers, the variants that must hash as `compact`, and the liars. */
const kinds: Record<string, { payload: RpcPayload; same: string[]; liars: string[] }> = {
  // The block's extras are outside the schema (l1BlockNumber, sendRoot…) or ignored by default (totalDifficulty).
  block: { payload: single('eth_getBlockByNumber', ['0x12a05f2', true]), same: ['pretty', 'reordered', 'checksum-case', 'extras'], liars: ['liar'] },
  // Those of the receipt and the logs include a log's blockTimestamp, a schema field.
  receipt: { payload: single('eth_getTransactionReceipt', ['0x' + '11'.repeat(32)]), same: ['pretty', 'reordered', 'checksum-case'], liars: ['liar', 'extras'] },
  logs: { payload: single('eth_getLogs', [{ fromBlock: '0x12a05f2', toBlock: '0x12a05f2' }]), same: ['pretty', 'reordered', 'checksum-case'], liars: ['liar', 'extras'] },
  error: { payload: single('eth_call', [{ to: '0x' + '22'.repeat(20), data: '0x8da5cb5b' }, '0x12a05f2']), same: ['pretty', 'reordered', 'other-message', 'checksum-case'], liars: ['liar', 'liar-code'] },
};

/**
 * The fields of the *.extras fixtures, as an operator would list them in ignoredFields: only the
 * log's blockTimestamp counts (a schema field); the others are left out as outside the schema,
 * listed or not.
 */
const extrasIgnored = mergeIgnoredFields({
  block: ['l1BlockNumber', 'sendCount', 'sendRoot'],
  transaction: ['l1BlockNumber'],
  receipt: ['l1Fee', 'l1GasPrice', 'l1GasUsed', 'l1FeeScalar'],
  log: ['blockTimestamp'],
});

for (const [kind, { payload, same, liars }] of Object.entries(kinds)) {
  if (kind !== 'error') {
    test(`should hash the extras ${kind} reply like the compact one when config ignores its extras`, (t) => {
      const a = vote(assessBody(fixture(`${kind}.extras`), payload, extrasIgnored));
      t.is(a.hash, vote(assessBody(fixture(`${kind}.compact`), payload, extrasIgnored)).hash);
      t.true(a.ignored!.length > 0);
    });
  }
  const reference = vote(assessBody(fixture(`${kind}.compact`), payload));
  for (const variant of same) {
    test(`should hash the ${variant} ${kind} reply like the compact one`, (t) => {
      const a = vote(assessBody(fixture(`${kind}.${variant}`), payload));
      t.is(a.hash, reference.hash);
      t.is(a.canonical, reference.canonical);
    });
  }
  for (const variant of liars) {
    test(`should not hash the ${variant} ${kind} reply like the compact one`, (t) => {
      t.not(vote(assessBody(fixture(`${kind}.${variant}`), payload)).hash, reference.hash);
    });
  }
  test(`should make the ${kind} hash the SHA-256 of the canonical form of {result} or {error}`, (t) => {
    const body = JSON.parse(fixture(`${kind}.compact`).toString()) as { result?: unknown; error?: { code: number; data?: unknown } };
    const answer = body.error ? { error: body.error } : { result: body.result };
    const canonical = canonicalJson(comparable(payload.calls[0]!.method, answer));
    t.is(reference.canonical, canonical);
    t.is(reference.hash, sha256Hex(canonical));
    t.false(/\s/.test(canonical.replace(/"[^"]*"/g, '')), 'no whitespace outside strings');
  });
}

test('should give the same hash whatever the request id', (t) => {
  const a = vote(assessBody('{"jsonrpc":"2.0","id":1,"result":"0x539"}', single('eth_chainId', [], 1)));
  const b = vote(assessBody('{"jsonrpc":"2.0","id":"abc","result":"0x539"}', single('eth_chainId', [], 'abc')));
  t.is(a.hash, b.hash);
  t.is(a.canonical, '{"result":"0x539"}');
});

test('should accept a Buffer or a string body alike', (t) => {
  const text = '{"jsonrpc":"2.0","id":1,"result":"0x1"}';
  t.is(vote(assessBody(text, single('eth_chainId'))).hash, vote(assessBody(Buffer.from(text), single('eth_chainId'))).hash);
});

test('should tell a [] result from a null result', (t) => {
  const p = single('eth_getLogs', [{ fromBlock: '0x1', toBlock: '0x1' }]);
  t.not(vote(assessBody('{"jsonrpc":"2.0","id":1,"result":[]}', p)).hash, vote(assessBody('{"jsonrpc":"2.0","id":1,"result":null}', p)).hash);
});

test('should count a null result as a vote', (t) => {
  t.is(vote(assessBody('{"jsonrpc":"2.0","id":1,"result":null}', single('eth_getTransactionReceipt', ['0x01']))).canonical, '{"result":null}');
});

test('should count a revert as a vote', (t) => {
  const a = vote(assessBody(fixture('error.compact'), kinds.error!.payload));
  t.regex(a.canonical, /^\{"error":\{"code":3,"data":"0x08c379a0/);
});

test('should read an error with "result": null next to it as the error', (t) => {
  const a = vote(assessBody('{"jsonrpc":"2.0","id":1,"result":null,"error":{"code":-32000,"message":"invalid block range params"}}', single('eth_getBalance')));
  t.is(a.canonical, '{"error":{"code":-32000,"message":"invalid block range params"}}');
});

// Bridges are full of rate-limited contracts: their revert reasons say "rate limit". Such a revert
// is the chain's answer (spec B4: "a revert that N upstreams agree on is a valid answer"), not the
// provider's trouble; only the code (3 = execution reverted) tells them apart.
test('should count a revert whose reason mentions a rate limit as a vote', (t) => {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    error: { code: 3, message: 'execution reverted: RateLimiter: rate limit exceeded', data: '0x08c379a0' },
  });
  const a = assessBody(body, single('eth_call', [{ to: '0x' + '22'.repeat(20) }, '0x1']));
  t.true(a.ok, a.ok ? '' : `not a vote: ${a.reason}`);
});

/** Bodies that are not a vote, with a readable reason. */
const failures: [string, string, RegExp][] = [
  ['an empty body', '', /^not JSON: ""$/],
  ['non-JSON', '{"jsonrpc":"2.0","id":1,"result":', /^not JSON: /],
  ['an HTML error page', '<html>\n<head><title>502 Bad Gateway</title></head>\n<body>nginx</body></html>', /^not JSON: "<html> <head><title>502 Bad Gateway/],
  ['a JSON string', '"ok"', /not a JSON-RPC response object/],
  ['an array for a single call', '[{"jsonrpc":"2.0","id":1,"result":"0x1"}]', /not a JSON-RPC response object/],
  ['neither result nor error', '{"jsonrpc":"2.0","id":1}', /neither result nor error/],
  ['a wrong id', '{"jsonrpc":"2.0","id":2,"result":"0x1"}', /wrong id 2 \(expected 1\)/],
  ['the id as a string', '{"jsonrpc":"2.0","id":"1","result":"0x1"}', /wrong id "1" \(expected 1\)/],
  ['a null id (the upstream could not parse the call)', '{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}', /wrong id null/],
  ['a rate limit (-32005)', '{"jsonrpc":"2.0","id":1,"error":{"code":-32005,"message":"daily request count exceeded, request rate limited"}}', /rate limited -32005: daily request count exceeded/],
  ['HTTP-style 429 code', '{"jsonrpc":"2.0","id":1,"error":{"code":429,"message":"Too Many Requests"}}', /rate limited 429/],
  ['an internal error (-32603)', '{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"internal error"}}', /provider error -32603/],
  ['a -32000 with a capacity message', '{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"Your app has exceeded its compute units per second capacity"}}', /rate limited -32000/],
  ['a -32001 with a quota message', '{"jsonrpc":"2.0","id":1,"error":{"code":-32001,"message":"Monthly quota reached"}}', /rate limited -32001/],
  ['an error without a code', '{"jsonrpc":"2.0","id":1,"error":{"message":"boom"}}', /error without an integer code/],
  ['a string code', '{"jsonrpc":"2.0","id":1,"error":{"code":"3","message":"boom"}}', /error without an integer code/],
  ['an error that is a string', '{"jsonrpc":"2.0","id":1,"error":"boom"}', /error without an integer code/],
];
for (const [name, body, reason] of failures) {
  test(`should not count ${name} as a vote`, (t) => {
    t.regex(reasonOf(assessBody(body, single('eth_getBalance', ['0x' + '33'.repeat(20), '0x1']))), reason);
  });
}

test('should keep the reason short for a long body', (t) => {
  const reason = reasonOf(assessBody(`<html>${'x'.repeat(5000)}</html>`, single('eth_chainId')));
  t.true(reason.length < 120, reason);
  t.true(reason.endsWith('…"'), reason);
});

// ---- batches ----

const block = JSON.parse(fixture('block.compact').toString()).result as unknown;
const logs = JSON.parse(fixture('logs.compact').toString()).result as unknown;
const calls: RpcCall[] = [
  { id: 1, method: 'eth_getBlockByNumber', params: ['0x12a05f2', true] },
  { id: 'logs', method: 'eth_getLogs', params: [{ fromBlock: '0x12a05f2', toBlock: '0x12a05f2' }] },
  { id: 3, method: 'eth_chainId', params: [] },
];
const payload = batch(calls);
const members = {
  1: { jsonrpc: '2.0', id: 1, result: block },
  logs: { jsonrpc: '2.0', id: 'logs', result: logs },
  3: { jsonrpc: '2.0', id: 3, result: '0x1' },
};
const answer = (...order: (keyof typeof members)[]) => JSON.stringify(order.map((k) => members[k]));
const inOrder = vote(assessBody(answer(1, 'logs', 3), payload));

const orders: (keyof typeof members)[][] = [
  [3, 'logs', 1],
  ['logs', 3, 1],
  [1, 3, 'logs'],
];
for (const order of orders) {
  test(`should match batch answers by id whatever the upstream's order (${order.join(', ')})`, (t) => {
    t.is(vote(assessBody(answer(...order), payload)).hash, inOrder.hash);
  });
}

test('should compare a batch in request order, member by member', (t) => {
  const expected = canonicalJson([
    comparable('eth_getBlockByNumber', { result: block }),
    comparable('eth_getLogs', { result: logs }),
    comparable('eth_chainId', { result: '0x1' }),
  ]);
  t.is(inOrder.canonical, expected);
  t.is(inOrder.hash, sha256Hex(expected));
});

test('should hash a pretty batch with a block\'s provider extras like the compact one, noting them', (t) => {
  const extras = JSON.parse(fixture('block.extras').toString()).result as unknown;
  const body = JSON.stringify([members[3], { ...members[1], result: extras }, members.logs], null, 2);
  for (const ignored of [undefined, extrasIgnored]) {
    const a = vote(assessBody(body, payload, ignored));
    t.is(a.hash, inOrder.hash);
    t.true(a.ignored!.some((v) => v.key === '[0,"totalDifficulty"]="0xc70d815d562d3cfa955"'), 'paths start at the request position');
    t.true(a.ignored!.some((v) => v.key === '[0,"transactions",1,"l1BlockNumber"]="0x13a1b2c"'), 'a field outside the schema is noted like an ignored one');
  }
});

test('should tell a batch apart when a log gains a blockTimestamp (a schema field), unless config ignores it', (t) => {
  const extras = JSON.parse(fixture('logs.extras').toString()).result as unknown;
  const body = JSON.stringify([members[1], { ...members.logs, result: extras }, members[3]]);
  t.not(vote(assessBody(body, payload)).hash, inOrder.hash);
  t.is(vote(assessBody(body, payload, extrasIgnored)).hash, inOrder.hash);
});

test('should tell a batch apart when one member lies', (t) => {
  const liar = JSON.parse(fixture('logs.liar').toString()).result as unknown;
  t.not(vote(assessBody(JSON.stringify([members[1], { ...members.logs, result: liar }, members[3]]), payload)).hash, inOrder.hash);
});

test('should give a batch a different hash from its members answered one by one', (t) => {
  t.not(vote(assessBody(JSON.stringify([members[3]]), batch([calls[2]!]))).hash, vote(assessBody(JSON.stringify(members[3]), single('eth_chainId', [], 3))).hash);
});

const batchFailures: [string, string, RegExp][] = [
  ['a missing member', answer(1, 3), /no answer for batch id "logs"/],
  ['a wrong id', JSON.stringify([members[1], members.logs, { ...members[3], id: 4 }]), /batch answer has id 4, which was not asked/],
  ['an id of the wrong type', JSON.stringify([members[1], members.logs, { ...members[3], id: '3' }]), /batch answer has id "3", which was not asked/],
  ['one error object for the whole batch', '{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"batch too large"}}', /answered the batch with one error: batch too large/],
  ['an object without error', '{"jsonrpc":"2.0","id":1,"result":"0x1"}', /answered a batch with a non-array/],
  ['non-JSON', '<html>502</html>', /^not JSON: "<html>502<\/html>"/],
  ['a member rate-limited', JSON.stringify([members[1], { jsonrpc: '2.0', id: 'logs', error: { code: -32005, message: 'limit exceeded' } }, members[3]]), /batch id "logs": rate limited -32005/],
  ['a member with neither result nor error', JSON.stringify([members[1], { jsonrpc: '2.0', id: 'logs' }, members[3]]), /batch id "logs": neither result nor error/],
];
for (const [name, body, reason] of batchFailures) {
  test(`should not count a batch answer with ${name} as a vote`, (t) => {
    t.regex(reasonOf(assessBody(body, payload)), reason);
  });
}

test('should count a batch member error (a revert) as part of the vote', (t) => {
  const revert = { jsonrpc: '2.0', id: 3, error: { code: 3, message: 'execution reverted', data: '0x' } };
  const a = vote(assessBody(JSON.stringify([members[1], members.logs, revert]), payload));
  t.not(a.hash, inOrder.hash);
  t.true(a.canonical.endsWith(',{"error":{"code":3,"data":"0x"}}]'));
});

// --- lossless reading: numbers as written, duplicate keys ------------------------------------

const balance = single('eth_getBalance', ['0x' + '11'.repeat(20), '0x10']);
const reply = (result: string) => `{"jsonrpc":"2.0","id":1,"result":${result}}`;
const hashOf = (text: string, p = balance) => vote(assessBody(text, p)).hash;

const numberPairs: [string, string][] = [
  ['12345678901234567993', '12345678901234567992'],
  ['1e400', 'null'],
  ['1.0', '1'],
  ['1e2', '100'],
  ['-0', '0'],
  ['{"a":9007199254740993}', '{"a":9007199254740992}'],
  ['[1e400]', '[null]'],
];
for (const [a, b] of numberPairs) {
  test(`should tell ${a} from ${b}: numbers are compared as written`, (t) => {
    t.not(hashOf(reply(a)), hashOf(reply(b)));
  });
}

test('should write a number JSON.parse would change as written in the canonical form', (t) => {
  t.is(vote(assessBody(reply('{"big":12345678901234567993,"x":1.50,"s":"0x1"}'), balance)).canonical, '{"result":{"big":12345678901234567993,"s":"0x1","x":1.50}}');
  t.is(vote(assessBody(reply('[1, 2.5, -3]'), balance)).canonical, '{"result":[1,2.5,-3]}');
});

test('should read an error code of an answer with a big number elsewhere', (t) => {
  const a = vote(assessBody('{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"m","data":{"n":1e400}}}', balance));
  t.is(a.canonical, '{"error":{"code":-32000,"data":{"n":1e400},"message":"m"}}');
});

const duplicates: [string, string][] = [
  ['in the result', reply('{"a":"0x1","a":"0x2"}')],
  ['with the same value twice', reply('{"a":"0x1","a":"0x1"}')],
  ['deep in a log', reply('[{"address":"0x1","topics":[],"data":"0x","data":"0x2"}]')],
  ['in the envelope', '{"jsonrpc":"2.0","id":1,"result":"0x1","result":"0x2"}'],
  ['in an error', '{"jsonrpc":"2.0","id":1,"error":{"code":3,"code":-32000,"message":"x"}}'],
  ['next to a number that needs the lossless parser', reply('{"a":1.0,"a":2}')],
];
for (const [where, text] of duplicates) {
  test(`should not count an answer with a duplicate key ${where} as a vote, and say so`, (t) => {
    t.regex(reasonOf(assessBody(text, balance)), /duplicate key/);
  });
}

test('should not count a batch answer with a duplicate key in one member as a vote', (t) => {
  const p = batch([{ id: 1, method: 'eth_chainId', params: [] }, { id: 2, method: 'eth_chainId', params: [] }]);
  t.regex(reasonOf(assessBody('[{"jsonrpc":"2.0","id":1,"result":"0x1"},{"jsonrpc":"2.0","id":2,"result":"0x1","id":2}]', p)), /duplicate key/);
});

// Go's encoding/json and .NET's Newtonsoft match keys case-insensitively (Go with Unicode simple
// folding), the last one winning: a client would read the value that was not compared.
const caseTwins: [string, string][] = [
  ['in the envelope', '{"jsonrpc":"2.0","id":1,"result":"0x1","Result":"0x2"}'],
  ['as the id', '{"jsonrpc":"2.0","id":1,"result":"0x1","ID":2}'],
  ['in an error', '{"jsonrpc":"2.0","id":1,"error":{"code":3,"message":"x","data":"0x1","DATA":"0x2"}}'],
  ['as a null beside a field of a transaction', reply('{"hash":"0x1","to":"0x2","To":null}')],
  ['folded beyond ASCII (long s)', '{"jsonrpc":"2.0","id":1,"result":"0x1","re\\u017fult":"0x2"}'],
  ['folded beyond ASCII (Kelvin sign)', reply('{"k":"0x1","\\u212a":"0x2"}')],
  ['deep in a log of a list', reply('[{"address":"0x1"},{"address":"0x1","Address":"0x2"}]')],
];
for (const [where, text] of caseTwins) {
  test(`should not count an answer with two keys that differ only in letter case ${where} as a vote, and say so`, (t) => {
    t.regex(reasonOf(assessBody(text, balance)), /differ only in letter case/);
  });
}

test('should count keys that only look alike once folded by no parser, and the same key in two objects', (t) => {
  t.is(vote(assessBody(reply('{"ss":"0x1","s":"0x2","i":"0x3","j":"0x4"}'), balance)).canonical, '{"result":{"i":"0x3","j":"0x4","s":"0x2","ss":"0x1"}}');
  t.true(assessBody(reply('[{"hash":"0x1"},{"Hash":"0x1"}]'), balance).ok, 'one key in each object');
});

test('should find two keys that differ only in letter case wherever they are put in any JSON text', (t) => {
  fc.assert(
    fc.property(jsonValue, fc.string({ minLength: 1 }).filter((k) => k.toUpperCase() !== k.toLowerCase()), (v, key) => {
      const twin = key.toLowerCase() === key ? key.toUpperCase() : key.toLowerCase();
      const text = `{${JSON.stringify(key)}:1,"x":${JSON.stringify(v)},${JSON.stringify(twin)}:2}`;
      return 'reason' in readJson(JSON.stringify([v, text.length]).replace(/^\[/, `[${text},`));
    }),
    { numRuns: 500, seed: 7 },
  );
  t.pass();
});

test('should not count an answer with an error and a result (a "result": null beside the error is the error)', (t) => {
  t.regex(reasonOf(assessBody('{"jsonrpc":"2.0","id":1,"error":{"code":3,"message":"x","data":"0x1"},"result":"0x2"}', balance)), /both a result and an error/);
  t.regex(reasonOf(assessBody('{"jsonrpc":"2.0","id":1,"result":false,"error":{"code":-32000,"message":"x"}}', balance)), /both a result and an error/);
  t.true(assessBody('{"jsonrpc":"2.0","id":1,"result":"0x2","error":null}', balance).ok);
});

test('should not count an answer that is not UTF-8', (t) => {
  const bytes = (b: number[]) => Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":1,"result":"'), Buffer.from(b), Buffer.from('"}')]);
  // (the last: a U+FFFD written as UTF-8 does not hide a byte that is not)
  for (const b of [[0xed, 0xa0, 0x80], [0xc0, 0xa2], [0xff], [0xe2, 0x82], [0xef, 0xbf, 0xbd, 0xe2, 0x82, 0xac, 0xff]]) t.regex(reasonOf(assessBody(bytes(b), balance)), /^not UTF-8/, String(b));
  t.true(assessBody(bytes([0xe2, 0x82, 0xac, 0xef, 0xbf, 0xbd]), balance).ok, '€ and U+FFFD written as UTF-8');
});

test('should not take colons, quotes and digits inside strings for members or numbers', (t) => {
  const text = reply(String.raw`{"k\":":"a\\\":b:1.0","n":"1e400","e":"\\"}`);
  const read = readJson(text);
  t.deepEqual(read, { value: JSON.parse(text), inexact: 0 });
  t.deepEqual(scanText(text), { members: 6, inexact: [], spelled: 0 });
});

test('should locate the numbers JSON.parse would change, and only those', (t) => {
  const text = '{"a":[1,1.0,-0,0,12345678901234567993],"b":1e400}';
  const { inexact } = scanText(text);
  const tokens = [];
  for (let k = 0; k < inexact.length; k += 2) tokens.push(text.slice(inexact[k], inexact[k + 1]));
  t.deepEqual(tokens, ['1.0', '-0', '12345678901234567993', '1e400']);
});

test('should not take a string that looks like an internal marker for a number', (t) => {
  const text = String.raw`{"a":"\u0000x:0","b":"\u0000","c":1.0}`;
  const read = readJson(text) as { value: Record<string, unknown> };
  t.is(read.value.a, '\u0000x:0');
  t.is(read.value.b, '\u0000');
  t.true(read.value.c instanceof JsonNumber);
  t.is(vote(assessBody(reply(text), balance)).canonical, String.raw`{"result":{"a":"\u0000x:0","b":"\u0000","c":1.0}}`);
});

const jsonValue = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.string(),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(fc.string(), tie('value'), { maxKeys: 5 }),
  ),
})).value;

test('should count the members of any JSON text as JSON.parse sees them, and prove its numbers exact', (t) => {
  fc.assert(
    fc.property(jsonValue, fc.constantFrom(undefined, 1, '\t'), (v, space) => {
      const text = JSON.stringify(v, null, space);
      const read = readJson(text);
      if ('reason' in read) return false;
      // JSON.stringify writes every number as String(n): exact, so the fast path's value is JSON.parse's
      return JSON.stringify(read.value) === JSON.stringify(JSON.parse(text)) && scanText(text).inexact.length === 0;
    }),
    { numRuns: 1_000, seed: 5 },
  );
  t.pass();
});

test('should find a duplicate key wherever it is put in any JSON text', (t) => {
  fc.assert(
    fc.property(jsonValue, fc.string(), (v, key) => {
      const dup = `{${JSON.stringify(key)}:1,"x":${JSON.stringify(v)},${JSON.stringify(key)}:2}`;
      return 'reason' in readJson(JSON.stringify([v, JSON.parse('{}'), dup.length]).replace(/^\[/, `[${dup},`));
    }),
    { numRuns: 500, seed: 6 },
  );
  t.pass();
});

// --- what is returned under a confirmation ----------------------------------------------------

const blockCall = single('eth_getBlockByNumber', ['0x10', false]);
const blockReply = (extra: string) => Buffer.from(`{"jsonrpc":"2.0","id":1,"result":{"number":"0x10","gasUsed":1.0${extra},"transactions":["0xAB"]}}`);
const member = (body: Buffer, p = blockCall) => ({ body, ...vote(assessBody(body, p)) });

test('should return the raw bytes when the N agree on every ignored field (or none carries one)', (t) => {
  const a = member(blockReply(',"totalDifficulty":"0x5"'));
  const b = member(blockReply(',"totalDifficulty":"0x5"'));
  t.is(a.hash, b.hash);
  t.is(confirmedBody([a, b], blockCall), a.body);
  const c = member(blockReply(''));
  t.is(confirmedBody([c, a], blockCall), c.body, 'the forwarded answer has no ignored field: nothing to remove');
});

test('should remove an ignored field the N did not all carry alike, keeping numbers as written', (t) => {
  const a = member(blockReply(',"totalDifficulty":"0x5"'));
  for (const other of [member(blockReply('')), member(blockReply(',"totalDifficulty":"0x6"'))]) {
    t.is(a.hash, other.hash);
    const out = confirmedBody([a, other], blockCall).toString();
    t.is(out, '{"jsonrpc":"2.0","id":1,"result":{"number":"0x10","gasUsed":1.0,"transactions":["0xAB"]}}');
  }
});

test('should keep an ignored field that agrees up to hex case, and treat null as absent', (t) => {
  const a = member(blockReply(',"totalDifficulty":"0xAB"'));
  t.is(confirmedBody([a, member(blockReply(',"totalDifficulty":"0xab"'))], blockCall), a.body);
  const n = member(blockReply(',"totalDifficulty":null'));
  t.is(confirmedBody([n, member(blockReply(''))], blockCall), n.body);
});

test('should remove an unconfirmed ignored field from the right member of a batch', (t) => {
  const p = batch([{ id: 'a', method: 'eth_chainId', params: [] }, { id: 7, method: 'eth_getTransactionByHash', params: ['0x1'] }]);
  const tx = (extra: string) => `{"hash":"0x1","nonce":12345678901234567993${extra}}`;
  const first = Buffer.from(`[{"jsonrpc":"2.0","id":7,"result":${tx(',"chainId":"0x1","v":"0x25"')}},{"jsonrpc":"2.0","id":"a","result":"0x1"}]`);
  const second = Buffer.from(`[{"jsonrpc":"2.0","id":"a","result":"0x1"},{"jsonrpc":"2.0","id":7,"result":${tx(',"v":"0x25"')}}]`);
  const a = member(first, p);
  const b = member(second, p);
  t.is(a.hash, b.hash);
  t.is(confirmedBody([a, b], p).toString(), `[{"jsonrpc":"2.0","id":7,"result":{"hash":"0x1","nonce":12345678901234567993,"v":"0x25"}},{"jsonrpc":"2.0","id":"a","result":"0x1"}]`);
});

test('should return a field outside the schema only when all N sent it alike', (t) => {
  const p = single('eth_getBlockByNumber', ['0x10', true]);
  const body = (block: string, tx: string) => Buffer.from(`{"jsonrpc":"2.0","id":1,"result":{"number":"0x10","gasUsed":1.0${block},"transactions":[{"hash":"0xAB"${tx}}]}}`);
  const extras = member(body(',"l1BlockNumber":"0x13a1b2c"', ',"l1BlockNumber":"0x13a1b2c"'), p);
  const plainBlock = member(body('', ''), p);
  const other = member(body(',"l1BlockNumber":"0x13a1b2d"', ',"l1BlockNumber":"0x13a1b2c"'), p);
  t.is(extras.hash, plainBlock.hash);
  t.is(extras.hash, other.hash, 'a different value of a field outside the schema is not a disagreement');
  t.is(confirmedBody([extras, plainBlock], p).toString(), '{"jsonrpc":"2.0","id":1,"result":{"number":"0x10","gasUsed":1.0,"transactions":[{"hash":"0xAB"}]}}');
  t.is(confirmedBody([extras, member(body(',"l1BlockNumber":"0x13a1b2c"', ',"l1BlockNumber":"0x13a1b2c"'), p)], p), extras.body, 'all sent both alike: the raw bytes');
  t.is(
    confirmedBody([extras, other], p).toString(),
    '{"jsonrpc":"2.0","id":1,"result":{"number":"0x10","gasUsed":1.0,"transactions":[{"hash":"0xAB","l1BlockNumber":"0x13a1b2c"}]}}',
    'sent by all with different values: not vouched for, removed; the one sent alike stays',
  );
});

test('should remove a receipt field outside the schema from eth_getBlockReceipts when one of the N lacks it', (t) => {
  const p = single('eth_getBlockReceipts', ['0x10']);
  const body = (extra: string) => Buffer.from(`{"jsonrpc":"2.0","id":1,"result":[{"status":"0x1","logs":[]},{"status":"0x1"${extra},"logs":[{"data":"0x","l1Index":"0x1"}]}]}`);
  const a = member(body(',"l1Fee":"0x1c3b5"'), p);
  const b = member(body(''), p);
  t.is(a.hash, b.hash);
  t.is(confirmedBody([a, b], p).toString(), '{"jsonrpc":"2.0","id":1,"result":[{"status":"0x1","logs":[]},{"status":"0x1","logs":[{"data":"0x","l1Index":"0x1"}]}]}');
});

test('JsonNumber stays out of ordinary results', (t) => {
  t.false(JSON.stringify(vote(assessBody(reply('{"a":1}'), balance)).canonical).includes('text'));
  t.true(new JsonNumber('1').text === '1');
});

// ---- refusals of one request (too large) vs provider trouble ----

const logsCall = single('eth_getLogs', [{ fromBlock: '0x0', toBlock: 'latest' }]);
const errorBody = (code: number, message: string) => JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code, message } });

/** Refusals seen from nodes and providers for a wide eth_getLogs. */
const refusals: [string, number, string][] = [
  ['geth / Infura', -32005, 'query returned more than 10000 results'],
  ['Alchemy', -32602, 'Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range and no limit on the response size'],
  ['QuickNode', -32614, 'eth_getLogs is limited to a 10,000 range'],
  ['a -32000 block range', -32000, 'block range too large'],
  ['Ankr', -32600, 'block range is too wide'],
  ['a max range', -32000, 'exceed maximum block range: 5000'],
  ['erigon', -32000, 'query exceeds max results 20000'],
  ['a response size', -32008, 'response size exceeded'],
  ['a too-many-results wording', -32005, 'too many results, limit the query to 1000 blocks'],
];
for (const [name, code, message] of refusals) {
  test(`should take ${name}'s ${code} "${message.slice(0, 40)}" as a refusal, not a vote nor trouble`, (t) => {
    const a = assessBody(errorBody(code, message), logsCall);
    t.false(a.ok);
    if (a.ok) return;
    t.truthy(a.refused, a.reason);
    t.regex(a.reason, /^refused as too large: /);
    t.regex(a.refused!.hash ?? '', /^[0-9a-f]{64}$/);
  });
}

const notRefusals: [string, number, string, 'trouble' | 'vote'][] = [
  ['an Infura rate limit', -32005, 'daily request count exceeded, request rate limited', 'trouble'],
  ['a bare "limit exceeded"', -32005, 'limit exceeded', 'trouble'],
  ['a rate limit that names a range', -32005, 'rate limit: too many block range requests', 'trouble'],
  ['a revert that mentions a range', 3, 'execution reverted: block range too large', 'vote'],
  ['a -32000 revert that mentions a range', -32000, 'execution reverted: query returned more than 10 results', 'vote'],
  ['a lagging node\'s unknown block (trouble.ts)', -32000, 'header not found', 'trouble'],
  ['a reversed range (the node\'s answer)', -32602, 'invalid block range params', 'vote'],
];
for (const [name, code, message, kind] of notRefusals) {
  test(`should not take ${name} as a refusal (${kind})`, (t) => {
    const a = assessBody(errorBody(code, message), logsCall);
    if (kind === 'vote') return void t.true(a.ok, a.ok ? '' : a.reason);
    t.false(a.ok);
    if (!a.ok) {
      t.is(a.refused, undefined);
      t.regex(a.reason, /^(provider error|rate limited)/);
    }
  });
}

test('should give two refusals with the same code the same hash, as votes would have', (t) => {
  const a = assessBody(errorBody(-32005, 'query returned more than 10000 results'), logsCall);
  const b = assessBody(`{"id":1,"jsonrpc":"2.0","error":{"message":"query returned more than 10000 results","code":-32005}}`, logsCall);
  t.true(!a.ok && !b.ok && a.refused?.hash === b.refused?.hash);
});

test('should take a refused batch member as a refusal without a hash (a batch is not relayed as one)', (t) => {
  const calls = [{ id: 1, method: 'eth_chainId', params: [] }, { id: 2, method: 'eth_getLogs', params: [{}] }];
  const body = JSON.stringify([{ jsonrpc: '2.0', id: 1, result: '0x1' }, { jsonrpc: '2.0', id: 2, error: { code: -32005, message: 'query returned more than 10000 results' } }]);
  const a = assessBody(body, batch(calls));
  t.false(a.ok);
  if (a.ok) return;
  t.regex(a.reason, /^batch id 2: refused as too large/);
  t.deepEqual(a.refused, {});
});

test('should judge an answer with maxInexactNumbers numbers spelled inexactly, and refuse one with more before any is kept', (t) => {
  const call = { id: 1, method: 'eth_feeHistory', params: [] };
  const payload = { batch: false, calls: [call], raw: Buffer.alloc(0) };
  const list = (n: number) => Buffer.from(`{"jsonrpc":"2.0","id":1,"result":{"ratios":[${Array.from({ length: n }, (_, i) => (i % 2 === 0 ? '1.0' : '5e-07')).join(',')}],"ok":[1,2]}}`);
  const at = assessBody(list(maxInexactNumbers), payload);
  t.true(at.ok, at.ok ? '' : at.reason);
  const over = assessBody(list(maxInexactNumbers + 1), payload);
  t.false(over.ok);
  t.regex(over.ok ? '' : over.reason, /^more than 10000 numbers written otherwise than JavaScript writes them/);
  // scanText keeps the offsets of the first ones only, and counts them all.
  const scan = scanText(list(maxInexactNumbers + 5).toString(), 3);
  t.is(scan.inexact.length, 6);
  t.is(scan.spelled, maxInexactNumbers + 5);
  // The count is checked before the keys (sliced.ts gives this verdict from the first run over it).
  const dup = assessBody(Buffer.from(`{"jsonrpc":"2.0","id":1,"result":{"a":[${'1.0,'.repeat(maxInexactNumbers)}1.0],"a":1}}`), payload);
  t.regex(dup.ok ? '' : dup.reason, /^more than 10000 numbers/);
  t.regex((() => { const d = assessBody(Buffer.from(`{"jsonrpc":"2.0","id":1,"result":{"a":[1.0],"a":1}}`), payload); return d.ok ? '' : d.reason; })(), /duplicate key/);
});
