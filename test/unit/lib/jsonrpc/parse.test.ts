import test from 'ava';
import { BatchTooLargeError, GatewayError, InvalidRequestError, ParseError } from '../../../../lib/errors.js';
import { parsePayload, readableId } from '../../../../lib/jsonrpc/parse.js';

const options = { maxBatchSize: 3 };
const parse = (text: string | Buffer) => parsePayload(typeof text === 'string' ? Buffer.from(text) : text, options);

/** What every rejection must carry; `rpcId` is the id the error answer echoes (null when unreadable). */
interface Rejection {
  rpcCode: number;
  status: number;
  code: string;
  rpcId: string | number | null;
  message?: RegExp;
}

const parseError: Omit<Rejection, 'rpcId'> = { rpcCode: -32700, status: 400, code: 'OMNI_ERR_PARSE' };
const invalid: Omit<Rejection, 'rpcId'> = { rpcCode: -32600, status: 400, code: 'OMNI_ERR_INVALID_REQUEST' };

const rejections: [string, string | Buffer, Rejection][] = [
  ['an empty body', '', { ...parseError, rpcId: null, message: /empty/ }],
  ['a whitespace-only body', ' \r\n\t ', { ...parseError, rpcId: null, message: /empty/ }],
  ['a BOM-only body', '\uFEFF', { ...parseError, rpcId: null }],
  ['non-JSON', '{"jsonrpc":"2.0",', { ...parseError, rpcId: null, message: /not valid JSON/ }],
  ['HTML', '<html><body>hi</body></html>', { ...parseError, rpcId: null }],
  ['an empty batch []', '[]', { ...invalid, rpcId: null, message: /empty batch/ }],
  ['a number', '42', { ...invalid, rpcId: null, message: /JSON object/ }],
  ['a string', '"eth_chainId"', { ...invalid, rpcId: null }],
  ['null', 'null', { ...invalid, rpcId: null }],
  ['true', 'true', { ...invalid, rpcId: null }],
  ['a missing jsonrpc', '{"id":7,"method":"eth_chainId","params":[]}', { ...invalid, rpcId: 7, message: /"jsonrpc": "2.0"/ }],
  ['jsonrpc "1.0"', '{"jsonrpc":"1.0","id":7,"method":"eth_chainId"}', { ...invalid, rpcId: 7 }],
  ['jsonrpc as the number 2', '{"jsonrpc":2,"id":"x","method":"eth_chainId"}', { ...invalid, rpcId: 'x' }],
  ['a missing id (notification)', '{"jsonrpc":"2.0","method":"eth_chainId","params":[]}', { ...invalid, rpcId: null, message: /no id/ }],
  ['a float id', '{"jsonrpc":"2.0","id":1.5,"method":"eth_chainId"}', { ...invalid, rpcId: null, message: /an id 1\.5 with a fraction: an id is a string or an integer/ }],
  ['an id above 2^53', '{"jsonrpc":"2.0","id":9007199254740993,"method":"eth_chainId"}', { ...invalid, rpcId: null, message: /an id 9007199254740993 that JSON parsers round \(to 9007199254740992\).*as a string/ }],
  // (quoted as written: JSON.parse would show 12345678901234567000)
  ['a 20-digit id', '{"jsonrpc":"2.0","id":12345678901234567890,"method":"eth_chainId"}', { ...invalid, rpcId: null, message: /an id 12345678901234567890 that/ }],
  // (JSON.parse reads it as Infinity, which JSON.stringify writes as null)
  ['an id 1e400', '{"jsonrpc":"2.0","id":1e400,"method":"eth_chainId"}', { ...invalid, rpcId: null, message: /an id 1e400 out of the range of JSON numbers as parsers read them \(Infinity\)/ }],
  ['an id -1e400, in a long body', `{"jsonrpc":"2.0","id":-1e400,"method":"eth_call","params":["${'0'.repeat(300)}"]}`, { ...invalid, rpcId: null, message: /an id -1e400 out of the range.*\(-Infinity\)/ }],
  ['a null id', '{"jsonrpc":"2.0","id":null,"method":"eth_chainId"}', { ...invalid, rpcId: null, message: /the id null/ }],
  ['an object id', '{"jsonrpc":"2.0","id":{"a":1},"method":"eth_chainId"}', { ...invalid, rpcId: null, message: /an id that is an object/ }],
  ['an array id', '{"jsonrpc":"2.0","id":[1],"method":"eth_chainId"}', { ...invalid, rpcId: null, message: /an id that is an array/ }],
  ['a boolean id', '{"jsonrpc":"2.0","id":true,"method":"eth_chainId"}', { ...invalid, rpcId: null, message: /an id that is boolean true/ }],
  ['a missing method', '{"jsonrpc":"2.0","id":3}', { ...invalid, rpcId: 3, message: /"method"/ }],
  ['an empty method', '{"jsonrpc":"2.0","id":3,"method":""}', { ...invalid, rpcId: 3 }],
  ['a numeric method', '{"jsonrpc":"2.0","id":3,"method":5}', { ...invalid, rpcId: 3 }],
  ['params as an object', '{"jsonrpc":"2.0","id":"a","method":"eth_getBalance","params":{"address":"0x0"}}', { ...invalid, rpcId: 'a', message: /"params" must be an array/ }],
  ['params as a string', '{"jsonrpc":"2.0","id":4,"method":"eth_chainId","params":"x"}', { ...invalid, rpcId: 4 }],
  ['params null', '{"jsonrpc":"2.0","id":4,"method":"eth_chainId","params":null}', { ...invalid, rpcId: 4 }],
  [
    'a batch over maxBatchSize',
    JSON.stringify([1, 2, 3, 4].map((id) => ({ jsonrpc: '2.0', id, method: 'eth_chainId' }))),
    { rpcCode: -32007, status: 400, code: 'OMNI_ERR_BATCH_TOO_LARGE', rpcId: null, message: /more than 3 calls, the limit is 3/ },
  ],
  // counted before JSON.parse reads the body (a tenth of a second for 5 MB of small calls): what follows is not read
  ['a batch over maxBatchSize whose tail is not JSON', `[{},{},{},{},${'{'.repeat(10)} oops`, { rpcCode: -32007, status: 400, code: 'OMNI_ERR_BATCH_TOO_LARGE', rpcId: null, message: /more than 3 calls/ }],
  [
    'a batch over maxBatchSize of strings, arrays and objects with commas in them',
    '[{"a":[1,2,3],"b":"x,y,z"},"p,q",[7,8,9],{"c":{"d":1,"e":2}}]',
    { rpcCode: -32007, status: 400, code: 'OMNI_ERR_BATCH_TOO_LARGE', rpcId: null },
  ],
];

for (const [name, body, expected] of rejections) {
  test(`should reject ${name} with ${expected.rpcCode}`, (t) => {
    const err = t.throws(() => parse(body));
    t.true(err instanceof GatewayError, `${err?.name} is a GatewayError`);
    const e = err as GatewayError;
    t.is(e.rpcCode, expected.rpcCode);
    t.is(e.status, expected.status);
    t.is(e.code, expected.code);
    // undefined means "the error handler works it out", which is null before the payload exists.
    t.is(e.rpcId ?? null, expected.rpcId);
    if (expected.message) t.regex(e.message, expected.message);
  });
}

test('should use the error classes of the catalogue', (t) => {
  t.true(t.throws(() => parse('{'))! instanceof ParseError);
  t.true(t.throws(() => parse('[]'))! instanceof InvalidRequestError);
  t.true(t.throws(() => parse('[{},{},{},{}]'))! instanceof BatchTooLargeError);
});

test('should check the batch size before looking at the members', (t) => {
  const err = t.throws(() => parse('[1,2,3,4]')) as GatewayError;
  t.is(err.rpcCode, -32007);
});

const accepted: [string, string, { id: string | number; method: string; params: unknown[] }][] = [
  ['a numeric id', '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}', { id: 1, method: 'eth_chainId', params: [] }],
  ['a string id', '{"jsonrpc":"2.0","id":"abc-1","method":"eth_chainId","params":[]}', { id: 'abc-1', method: 'eth_chainId', params: [] }],
  ['an empty string id', '{"jsonrpc":"2.0","id":"","method":"eth_chainId"}', { id: '', method: 'eth_chainId', params: [] }],
  ['id 0', '{"jsonrpc":"2.0","id":0,"method":"eth_chainId"}', { id: 0, method: 'eth_chainId', params: [] }],
  ['a negative id', '{"jsonrpc":"2.0","id":-5,"method":"eth_chainId"}', { id: -5, method: 'eth_chainId', params: [] }],
  ['the largest safe integer id', '{"jsonrpc":"2.0","id":9007199254740991,"method":"eth_chainId"}', { id: 9007199254740991, method: 'eth_chainId', params: [] }],
  ['absent params as []', '{"jsonrpc":"2.0","id":2,"method":"eth_blockNumber"}', { id: 2, method: 'eth_blockNumber', params: [] }],
  [
    'params kept as sent',
    '{"jsonrpc":"2.0","id":2,"method":"eth_getBalance","params":["0xAbC","0x10"]}',
    { id: 2, method: 'eth_getBalance', params: ['0xAbC', '0x10'] },
  ],
  ['a body with a BOM', '\uFEFF{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}', { id: 1, method: 'eth_chainId', params: [] }],
  ['surrounding whitespace', '\n  {"jsonrpc":"2.0","id":1,"method":"eth_chainId"}\n', { id: 1, method: 'eth_chainId', params: [] }],
];

for (const [name, body, call] of accepted) {
  test(`should accept ${name}`, (t) => {
    const payload = parse(body);
    t.false(payload.batch);
    t.deepEqual(payload.calls, [call]);
  });
}

const writtenIds: [string, number | string][] = [
  ['1.0', 1],
  ['1e2', 100],
  ['1E2', 100],
  ['-0', -0],
  ['10e-1', 1],
  ['"\\u0031"', '1'],
  ['"a\\/b"', 'a/b'],
];
for (const [text, id] of writtenIds) {
  test(`should keep the id ${text} as written, to echo it so, alone and in a batch`, (t) => {
    const single = parse(`{"jsonrpc":"2.0","id":${text},"method":"eth_chainId"}`).calls[0]!;
    t.is(single.id, id);
    t.is(single.idText, text);
    const long = parse(`{"jsonrpc":"2.0", "id" : ${text} ,"method":"eth_call","params":["${'0'.repeat(300)}"]}`).calls[0]!;
    t.is(long.idText, text);
    const batch = parse(`[{"jsonrpc":"2.0","id":7,"method":"eth_chainId"}, {"id":${text},"jsonrpc":"2.0","method":"eth_chainId"}]`);
    t.is(batch.calls[0]!.idText, undefined);
    t.is(batch.calls[1]!.idText, text);
  });
}

test('should carry no id text for an id written as JSON.stringify writes it', (t) => {
  for (const text of ['1', '-5', '0', '"abc"', '"a\\"b"', '9007199254740991']) {
    t.false('idText' in parse(`{"jsonrpc":"2.0","id":${text},"method":"eth_chainId"}`).calls[0]!, text);
  }
});

test('should keep the raw bytes exactly as sent', (t) => {
  const raw = Buffer.from(' {"jsonrpc":"2.0",  "id":1,"method":"eth_chainId"} ');
  t.is(parse(raw).raw, raw);
});

// raw is what HTTP upstreams receive byte for byte, and geth (Go encoding/json) rejects a leading
// BOM with -32700: an accepted BOM must not be forwarded, or every upstream fails the call.
test('should not forward a BOM it accepted to the upstreams', (t) => {
  const raw = Buffer.from('\uFEFF{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}');
  const payload = parse(raw);
  t.not(payload.raw.subarray(0, 3).toString('hex'), 'efbbbf', 'payload.raw still starts with the UTF-8 BOM');
});

test('should parse a batch in order, with params defaulted per member', (t) => {
  const payload = parse('[{"jsonrpc":"2.0","id":"a","method":"eth_chainId"},{"jsonrpc":"2.0","id":2,"method":"eth_getBalance","params":["0x1","0x2"]}]');
  t.true(payload.batch);
  t.deepEqual(payload.calls, [
    { id: 'a', method: 'eth_chainId', params: [] },
    { id: 2, method: 'eth_getBalance', params: ['0x1', '0x2'] },
  ]);
});

test('should treat a one-member batch as a batch', (t) => {
  t.true(parse('[{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}]').batch);
});

test('should accept a batch exactly at maxBatchSize', (t) => {
  const body = JSON.stringify([1, 2, 3].map((id) => ({ jsonrpc: '2.0', id, method: 'eth_chainId' })));
  t.is(parse(body).calls.length, 3);
});

test('should allow the number 1 and the string "1" as two different ids of one batch', (t) => {
  const payload = parse('[{"jsonrpc":"2.0","id":1,"method":"eth_chainId"},{"jsonrpc":"2.0","id":"1","method":"eth_chainId"}]');
  t.deepEqual(
    payload.calls.map((c) => c.id),
    [1, '1'],
  );
});

test('should keep each batch member on its own: calls with their bytes, refusals with their ids, notifications', (t) => {
  const body = '[ {"jsonrpc":"2.0","id":"x","method":"a_b","params":[12345678901234567890]} ,5,{"jsonrpc":"2.0","id":7},[],{"jsonrpc":"2.0","method":"n_n"},{"jsonrpc":"2.0","method":1},{"jsonrpc":"2.0","id":"x","method":"a_b"}]';
  const payload = parsePayload(Buffer.from(body), { maxBatchSize: 10 });
  t.true(payload.batch);
  const members = payload.members!;
  t.deepEqual(members.map((m) => m.kind), ['call', 'invalid', 'invalid', 'invalid', 'notification', 'invalid', 'call']);
  // a call's bytes as the client wrote them (the big number's digits too), whitespace around cut
  t.is(members[0]!.kind === 'call' && members[0]!.raw.toString(), '{"jsonrpc":"2.0","id":"x","method":"a_b","params":[12345678901234567890]}');
  const error = (i: number) => (members[i] as { error: unknown }).error as GatewayError;
  t.regex(error(1).message, /batch\[1\] must be a JSON object/);
  t.is(error(1).rpcId ?? null, null);
  t.regex(error(2).message, /batch\[2\] must have a non-empty string "method"/);
  t.is(error(2).rpcId, 7);
  t.is(error(3).rpcCode, -32600);
  t.regex(error(5).message, /batch\[5\]/);
  t.deepEqual(members[4], { kind: 'notification', method: 'n_n' });
  // a repeated id is not refused: each member gets its own answer, in order
  t.deepEqual(payload.calls.map((c) => c.id), ['x', 'x']);
});

const readable: [unknown, string | number | null][] = [
  [{ id: 1 }, 1],
  [{ id: 'x' }, 'x'],
  [{ id: 1.5 }, null],
  [{ id: null }, null],
  [{ id: [1] }, null],
  [{}, null],
  [[{ id: 1 }], null],
  [null, null],
  ['x', null],
];
for (const [value, id] of readable) {
  test(`should read id ${JSON.stringify(id)} from ${JSON.stringify(value)}`, (t) => {
    t.is(readableId(value), id);
  });
}

test('should refuse a body nested deeper than maxDepth before parsing, echoing a readable id', (t) => {
  const deep = (id: string) => Buffer.from(`{"jsonrpc":"2.0","id":${id},"method":"eth_call","params":${'['.repeat(10)}${']'.repeat(10)}}`);
  const err = t.throws(() => parsePayload(deep('"q"'), { maxBatchSize: 10, maxDepth: 8 }));
  t.is((err as { rpcCode?: number }).rpcCode, -32600);
  t.is((err as { rpcId?: unknown }).rpcId, 'q');
  t.regex(err!.message, /deeper than 8 levels \(limits\.jsonDepth\)/);
  t.notThrows(() => parsePayload(deep('1'), { maxBatchSize: 10, maxDepth: 11 }));
  const cut = t.throws(() => parsePayload(Buffer.from(`{"id":1,"params":${'['.repeat(20)}`), { maxBatchSize: 10, maxDepth: 8 }));
  t.is((cut as { rpcCode?: number }).rpcCode, -32700);
});

test('should hold the depth limit at a body as long as the limit, which is not scanned for depth', (t) => {
  // A body of n bytes nests at most n levels: at maxDepth = its length it passes the depth check
  // unscanned; one byte shorter a limit, it is scanned and refused.
  const body = Buffer.from(`[[[[[[[[[[{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}]]]]]]]]]]`);
  const depth = 11;
  const atLength = parsePayload(body, { maxBatchSize: 10, maxDepth: body.length });
  t.is(atLength.members?.[0]?.kind, 'invalid', 'not a depth refusal: the batch\'s one member is refused on its own terms');
  const err = t.throws(() => parsePayload(body, { maxBatchSize: 10, maxDepth: depth - 1 }));
  t.regex(err!.message, /deeper than 10 levels/);
  t.notThrows(() => parsePayload(Buffer.from('{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}'), { maxBatchSize: 10, maxDepth: 1 }), 'depth 1 at a limit of 1, scanned (the body is longer)');
  const two = t.throws(() => parsePayload(Buffer.from('{"jsonrpc":"2.0","id":1,"method":"eth_call","params":[]}'), { maxBatchSize: 10, maxDepth: 1 }));
  t.regex(two!.message, /deeper than 1 levels/);
});
