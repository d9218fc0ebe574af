import { createHash } from 'node:crypto';
import test from 'ava';
import { canonicalForm, canonicalJson, comparable, JsonNumber, sha256Hex, type Answer, type IgnoredValue } from '../../../../../lib/verify/answers/canonical.js';
import { defaultIgnoredFields, mergeIgnoredFields, schemaFields, shapes } from '../../../../../lib/verify/answers/compared-fields.js';
import { recordedPairs } from '../../../../support/execution-apis.js';

const canon = (method: string, answer: Answer) => canonicalJson(comparable(method, answer));

test('should sort keys recursively and drop whitespace', (t) => {
  t.is(canonicalJson({ b: 1, a: { d: [2, { z: 1, y: 2 }], c: null } }), '{"a":{"c":null,"d":[2,{"y":2,"z":1}]},"b":1}');
});

test('should keep array order', (t) => {
  t.is(canonicalJson([3, 1, 2]), '[3,1,2]');
});

test('should write undefined as null', (t) => {
  t.is(canonicalJson(undefined), 'null');
});

const vectors: [string, string][] = [
  ['', 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
  ['abc', 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'],
];
for (const [text, hex] of vectors) {
  test(`should hash ${JSON.stringify(text)} to the SHA-256 test vector`, (t) => {
    t.is(sha256Hex(text), hex);
  });
}

test('should hash the UTF-8 bytes of non-ASCII text', (t) => {
  t.is(sha256Hex('\u00e9'), createHash('sha256').update(Buffer.from([0xc3, 0xa9])).digest('hex'));
});

const forms: [string, string, Answer, string][] = [
  ['a scalar result', 'eth_chainId', { result: '0x539' }, '{"result":"0x539"}'],
  ['a null result', 'eth_getTransactionByHash', { result: null }, '{"result":null}'],
  ['a boolean result', 'eth_syncing', { result: false }, '{"result":false}'],
  ['an upper-case hex result, lower-cased', 'eth_call', { result: '0xABCDEF' }, '{"result":"0xabcdef"}'],
  ['a non-hex string, kept as is', 'web3_clientVersion', { result: 'Geth/v1.14.0-ABC' }, '{"result":"Geth/v1.14.0-ABC"}'],
  ['a 0x string that is not hex, kept as is', 'web3_clientVersion', { result: '0xZZ' }, '{"result":"0xZZ"}'],
  ['a lower-case 0x string that is not hex, kept as is', 'web3_clientVersion', { result: '0xzz' }, '{"result":"0xzz"}'],
  ['a 0X prefix, which is not hex, kept as is', 'eth_call', { result: '0XAB' }, '{"result":"0XAB"}'],
  ['a short string, kept as is', 'eth_call', { result: '0' }, '{"result":"0"}'],
  ['an empty hex string', 'eth_call', { result: '0x' }, '{"result":"0x"}'],
  [
    'logs, keeping their schema fields but nulls, sorted, and no key outside the schema',
    'eth_getLogs',
    { result: [{ topics: ['0xAA'], '0': 'x', address: '0xAB', data: null, constructor: 1 } as never] },
    '{"result":[{"address":"0xab","topics":["0xaa"]}]}',
  ],
  ['an error without data', 'eth_call', { error: { code: -32000 } }, '{"error":{"code":-32000}}'],
  ['an error with hex data, lower-cased', 'eth_call', { error: { code: 3, data: '0x08C379A0' } }, '{"error":{"code":3,"data":"0x08c379a0"}}'],
  ['an error with object data, sorted', 'eth_call', { error: { code: 3, data: { b: 1, a: '0xAA' } } }, '{"error":{"code":3,"data":{"a":"0xaa","b":1}}}'],
];
for (const [name, method, answer, expected] of forms) {
  test(`should write ${name} as ${expected}`, (t) => {
    t.is(canon(method, answer), expected);
  });
}

test('should ignore the error message of a code that means one thing (3: a revert)', (t) => {
  const a = { error: { code: 3, message: 'execution reverted', data: '0x01' } } as Answer;
  const b = { error: { code: 3, message: 'VM Exception while processing transaction: revert', data: '0x01' } } as Answer;
  t.is(canon('eth_call', a), canon('eth_call', b));
});

test('should tell errors apart by code and by data', (t) => {
  const base = canon('eth_call', { error: { code: 3, data: '0x01' } });
  t.not(canon('eth_call', { error: { code: -32000, data: '0x01' } }), base);
  t.not(canon('eth_call', { error: { code: 3, data: '0x02' } }), base);
  t.not(canon('eth_call', { error: { code: 3 } }), base);
});

test('should tell a result from an error', (t) => {
  t.not(canon('eth_call', { result: '0x' }), canon('eth_call', { error: { code: 3 } }));
});

// JSON-RPC 2.0 lets a server omit `data`; some clients write `"data": null` instead. Neither
// carries anything, so two honest nodes would otherwise "disagree" on the same error.
test('should treat error data null as absent', (t) => {
  t.is(canon('eth_call', { error: { code: -32000, data: null } }), canon('eth_call', { error: { code: -32000 } }));
});

test('should tell [] from null', (t) => {
  t.not(canon('eth_getLogs', { result: [] }), canon('eth_getLogs', { result: null }));
  t.is(canon('eth_getLogs', { result: [] }), '{"result":[]}');
});

const tx = {
  hash: '0xAA',
  from: '0x95222290DD7278Aa3Ddd389Cc1E1d165CC4BAfe5',
  to: null,
  value: '0x1',
  input: '0x',
  l1Fee: '0x5',
};
const shaped: [string, string, unknown, unknown][] = [
  [
    'a block, leaving out totalDifficulty and its extras and shaping its transactions',
    'eth_getBlockByNumber',
    { number: '0x1', hash: '0xAB', totalDifficulty: '0x10', l1BlockNumber: '0x2', transactions: [{ ...tx, chainId: '0x1', v: '0x1b' }] },
    { number: '0x1', hash: '0xab', transactions: [{ hash: '0xaa', from: '0x95222290dd7278aa3ddd389cc1e1d165cc4bafe5', value: '0x1', input: '0x' }] },
  ],
  ['a block with transaction hashes', 'eth_getBlockByHash', { number: '0x1', transactions: ['0xAB', '0xCD'] }, { number: '0x1', transactions: ['0xab', '0xcd'] }],
  [
    'a block with its withdrawals, compared whole',
    'eth_getBlockByNumber',
    { number: '0x1', withdrawalsRoot: '0x2', withdrawals: [{ index: '0x0', validatorIndex: '0x5', address: '0xAB', amount: '0x1', extra: 1 }] },
    { number: '0x1', withdrawalsRoot: '0x2', withdrawals: [{ index: '0x0', validatorIndex: '0x5', address: '0xab', amount: '0x1', extra: 1 }] },
  ],
  ['an uncle', 'eth_getUncleByBlockHashAndIndex', { number: '0x1', author: '0x2', uncles: [] }, { number: '0x1', uncles: [] }],
  ['a null block', 'eth_getBlockByNumber', null, null],
  ['a transaction', 'eth_getTransactionByHash', { ...tx, yParity: '0x1' }, { hash: '0xaa', from: '0x95222290dd7278aa3ddd389cc1e1d165cc4bafe5', value: '0x1', input: '0x' }],
  [
    'a blob transaction, every field in the schema',
    'eth_getTransactionByBlockNumberAndIndex',
    { type: '0x3', maxFeePerBlobGas: '0x1', blobVersionedHashes: ['0x01AB'], accessList: [{ address: '0xAB', storageKeys: [] }], blockTimestamp: '0x5' },
    { type: '0x3', maxFeePerBlobGas: '0x1', blobVersionedHashes: ['0x01ab'], accessList: [{ address: '0xab', storageKeys: [] }], blockTimestamp: '0x5' },
  ],
  [
    'a set-code transaction, its authorizations compared whole',
    'eth_getTransactionByBlockHashAndIndex',
    { type: '0x4', authorizationList: [{ chainId: '0x1', nonce: '0x0', address: '0xAB', yParity: '0x1', r: '0x2', s: '0x3' }], sourceHash: '0x9' },
    { type: '0x4', authorizationList: [{ chainId: '0x1', nonce: '0x0', address: '0xab', yParity: '0x1', r: '0x2', s: '0x3' }] },
  ],
  [
    'a receipt with logs',
    'eth_getTransactionReceipt',
    { status: '0x1', l1GasUsed: '0x1', contractAddress: null, blobGasUsed: '0x2', blobGasPrice: '0x3', logs: [{ address: '0xAB', data: '0x', blockTimestamp: '0x1', l1Extra: '0x1' }] },
    { status: '0x1', blobGasUsed: '0x2', blobGasPrice: '0x3', logs: [{ address: '0xab', data: '0x', blockTimestamp: '0x1' }] },
  ],
  ['block receipts', 'eth_getBlockReceipts', [{ status: '0x0', l1Fee: '0x1' }], [{ status: '0x0' }]],
  ['logs', 'eth_getLogs', [{ address: '0xAB', removed: false, blockTimestamp: '0x1' }], [{ address: '0xab', removed: false, blockTimestamp: '0x1' }]],
  ['filter logs', 'eth_getFilterLogs', [{ address: '0xAB', extra: 1 }], [{ address: '0xab' }]],
  ['an unshaped method, keeping every field', 'eth_feeHistory', { oldestBlock: '0xA', extra: 1 }, { oldestBlock: '0xa', extra: 1 }],
  // Its blocks carry `calls`, outside the Block schema: eth_simulateV1 is compared whole.
  ['eth_simulateV1, keeping every field', 'eth_simulateV1', [{ number: '0x1', calls: [{ status: '0x1' }] }], [{ number: '0x1', calls: [{ status: '0x1' }] }]],
];
for (const [name, method, result, expected] of shaped) {
  test(`should compare the schema fields of ${name} but the ignored ones and nulls`, (t) => {
    t.deepEqual(comparable(method, { result }), { result: expected });
  });
}

test('should not mutate the answer it reduces', (t) => {
  const result = { number: '0xAB', totalDifficulty: '0x1', transactions: [{ ...tx }] };
  const copy = structuredClone(result);
  comparable('eth_getBlockByNumber', { result });
  t.deepEqual(result, copy);
});

test('should compare the message of a -32000 error as written, and not that of -32602', (t) => {
  const e = (code: number, message: string) => canon('eth_call', { error: { code, message } });
  t.is(e(-32000, 'execution reverted'), '{"error":{"code":-32000,"message":"execution reverted"}}');
  t.not(e(-32000, 'execution reverted'), e(-32000, 'header not found'));
  t.not(e(-32000, 'execution reverted'), e(-32000, 'execution reverted '));
  t.is(e(-32602, 'invalid argument 0: hex string without 0x prefix'), e(-32602, 'Invalid params'));
  t.is(e(-32000, '0xAB'), '{"error":{"code":-32000,"message":"0xAB"}}', 'not lower-cased');
  t.not(canon('eth_call', { error: { code: -32000, message: 5 } }), canon('eth_call', { error: { code: -32000, message: 6 } }));
  t.not(canon('eth_call', { error: { code: -32000, message: 5 } }), canon('eth_call', { error: { code: -32000 } }));
});

test('should write a JsonNumber as its text, and a JS number as JSON.stringify does', (t) => {
  t.is(canonicalJson({ a: new JsonNumber('1.0'), b: new JsonNumber('12345678901234567993'), c: 1.5 }), '{"a":1.0,"b":12345678901234567993,"c":1.5}');
  t.is(canonicalForm('eth_chainId', { result: [new JsonNumber('1e400'), 2] }), '{"result":[1e400,2]}');
});

test('should note the ignored fields an answer carries, with their path and canonical value', (t) => {
  const found: IgnoredValue[] = [];
  const result = { number: '0x1', totalDifficulty: '0xAB', transactions: [{ hash: '0x1', chainId: null }, { hash: '0x2', v: '0x1B' }] };
  canonicalForm('eth_getBlockByNumber', { result }, { found });
  t.deepEqual(found, [
    { path: ['totalDifficulty'], key: '["totalDifficulty"]="0xab"' },
    { path: ['transactions', 1, 'v'], key: '["transactions",1,"v"]="0x1b"' },
  ]);
});

test('should note the fields outside the schema like ignored ones, wherever they are, and not those that are null', (t) => {
  const found: IgnoredValue[] = [];
  const result = { number: '0x1', l1BlockNumber: '0x13A', sendRoot: null, transactions: [{ hash: '0x1' }, { hash: '0x2', requestId: { a: 1.5 } }] };
  const form = canonicalForm('eth_getBlockByNumber', { result }, { found, path: [3] });
  t.is(form, '{"result":{"number":"0x1","transactions":[{"hash":"0x1"},{"hash":"0x2"}]}}');
  t.deepEqual(found, [
    { path: [3, 'l1BlockNumber'], key: '[3,"l1BlockNumber"]="0x13a"' },
    { path: [3, 'transactions', 1, 'requestId'], key: '[3,"transactions",1,"requestId"]={"a":1.5}' },
  ]);
  const inLists: IgnoredValue[] = [];
  canonicalForm('eth_getBlockReceipts', { result: [{ status: '0x1' }, { status: '0x1', l1Fee: '0x2', logs: [{ data: '0x' }, { data: '0x', zkIndex: 7 }] }] }, { found: inLists });
  t.deepEqual(inLists.map((v) => v.path), [[1, 'l1Fee'], [1, 'logs', 1, 'zkIndex']]);
});

test('should tell answers apart by a schema field, and not by a field outside the schema', (t) => {
  const block = (extra: Record<string, unknown>) => canonicalForm('eth_getBlockByNumber', { result: { number: '0x1', hash: '0xab', ...extra } });
  t.is(block({ l1BlockNumber: '0x1' }), block({ l1BlockNumber: '0x2' }));
  t.is(block({ l1BlockNumber: '0x1' }), block({}));
  t.not(block({ requestsHash: '0x1' }), block({ requestsHash: '0x2' }));
  t.not(block({ parentBeaconBlockRoot: '0x1' }), block({}), 'a schema field one answer lacks is a difference');
});

test('should leave out an own "__proto__" or "constructor" key of a log, noting it as a field', (t) => {
  const found: IgnoredValue[] = [];
  const logs = JSON.parse('[{"address":"0x1","__proto__":{"lie":true},"constructor":"0x2"}]') as unknown;
  t.is(canonicalForm('eth_getLogs', { result: logs }, { found }), '{"result":[{"address":"0x1"}]}');
  t.deepEqual(found.map((v) => v.key), ['[0,"__proto__"]={"lie":true}', '[0,"constructor"]="0x2"']);
});

test('should leave out the fields of config ignoredFields on top of the defaults', (t) => {
  const ignored = mergeIgnoredFields({ log: ['blockTimestamp'] }, { receipt: ['effectiveGasPrice'] });
  t.deepEqual(ignored.log, ['blockTimestamp']);
  t.deepEqual(ignored.block, ['totalDifficulty']);
  const logs = [{ address: '0x1', blockTimestamp: '0x5' }];
  t.is(canonicalForm('eth_getLogs', { result: logs }, { ignored }), '{"result":[{"address":"0x1"}]}');
  t.is(canonicalForm('eth_getLogs', { result: logs }), '{"result":[{"address":"0x1","blockTimestamp":"0x5"}]}');
  const receipts = [{ status: '0x1', effectiveGasPrice: '0x2' }];
  t.is(canonicalForm('eth_getBlockReceipts', { result: receipts }, { ignored }), '{"result":[{"status":"0x1"}]}');
  t.is(canonicalForm('eth_getBlockReceipts', { result: receipts }), '{"result":[{"effectiveGasPrice":"0x2","status":"0x1"}]}');
});

test('should list the execution-apis fields of each shape once, Prague and blob fields included', (t) => {
  for (const shape of shapes) t.is(new Set(schemaFields[shape]).size, schemaFields[shape].length, shape);
  const has = (shape: keyof typeof schemaFields, fields: string[]) => t.deepEqual(fields.filter((f) => !schemaFields[shape].includes(f)), [], shape);
  has('block', ['withdrawals', 'withdrawalsRoot', 'blobGasUsed', 'excessBlobGas', 'parentBeaconBlockRoot', 'requestsHash', 'baseFeePerGas', 'mixHash', 'uncles']);
  has('transaction', ['accessList', 'maxFeePerBlobGas', 'blobVersionedHashes', 'authorizationList', 'yParity', 'v', 'blockTimestamp']);
  has('receipt', ['blobGasUsed', 'blobGasPrice', 'logs', 'effectiveGasPrice', 'root', 'status', 'contractAddress']);
  has('log', ['removed', 'blockTimestamp', 'topics', 'data']);
  t.false(schemaFields.block.includes('totalDifficulty'), 'dropped from the schema (execution-apis#570), ignored by default');
});

/** Where each recorded method's result holds blocks, transactions, receipts and logs. */
const recorded: Record<string, true> = {
  eth_getBlockByNumber: true,
  eth_getBlockByHash: true,
  eth_getTransactionByHash: true,
  eth_getTransactionByBlockHashAndIndex: true,
  eth_getTransactionByBlockNumberAndIndex: true,
  eth_getTransactionReceipt: true,
  eth_getBlockReceipts: true,
  eth_getLogs: true,
};

test('should leave out no field of the execution-apis recorded answers but the default ignored ones', (t) => {
  const ignoredNames = new Set(shapes.flatMap((s) => defaultIgnoredFields[s]));
  let objects = 0;
  for (const pair of recordedPairs()) {
    if (!recorded[pair.method] || pair.response.result === undefined || pair.response.result === null) continue;
    const found: IgnoredValue[] = [];
    canonicalForm(pair.method, { result: pair.response.result }, { found });
    const outside = found.filter((v) => !ignoredNames.has(String(v.path[v.path.length - 1])));
    t.deepEqual(outside, [], pair.name);
    objects++;
  }
  t.true(objects > 30, `${objects} recorded results`);
});

test('should compare whole an object with no schema field at all, so that two different ones never agree on {}', (t) => {
  const junkA: Answer = { result: { foo: 1 } };
  const junkB: Answer = { result: { bar: 2 } };
  t.not(canonicalForm('eth_getBlockByNumber', junkA), canonicalForm('eth_getBlockByNumber', junkB));
  const found: IgnoredValue[] = [];
  t.deepEqual(comparable('eth_getLogs', { result: [{ foo: 1 }] }, { found }), { result: [{ foo: 1 }] });
  t.deepEqual(found, [], 'nothing left out: it is compared');
  // One schema field is enough to read it as its shape: the extra is left out.
  t.deepEqual(comparable('eth_getBlockByNumber', { result: { number: '0x1', foo: 1 } }), { result: { number: '0x1' } });
});
