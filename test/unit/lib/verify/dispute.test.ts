import test from 'ava';
import fc from 'fast-check';
import type { RpcCall, RpcPayload } from '../../../../lib/jsonrpc/types.js';
import { canonicalJson, JsonNumber } from '../../../../lib/verify/answers/canonical.js';
import { comparableAnswers, diffAnswers, preview } from '../../../../lib/verify/dispute.js';

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

const log = (i: number, data = `0x${i.toString(16).padStart(64, '0')}`) => ({
  address: '0x1111111111111111111111111111111111111111',
  blockHash: `0x${'ab'.repeat(32)}`,
  blockNumber: '0x10',
  data,
  logIndex: `0x${i.toString(16)}`,
  removed: false,
  topics: [`0x${'cd'.repeat(32)}`],
  transactionHash: `0x${'ef'.repeat(32)}`,
  transactionIndex: '0x0',
});
const logs = (n: number, change?: (l: ReturnType<typeof log>, i: number) => Record<string, unknown>) =>
  Array.from({ length: n }, (_, i) => (change ? change(log(i), i) : log(i)));
const body = (result: unknown, id: unknown = 1) => JSON.stringify({ jsonrpc: '2.0', id, result });
const getLogs = single('eth_getLogs', [{ fromBlock: '0x10', toBlock: '0x10' }]);
const diffBodies = (payload: RpcPayload, bodies: string[], options = {}) =>
  diffAnswers(bodies.map((b) => comparableAnswers(b, payload)), { ...(payload.batch ? { batchIds: payload.calls.map((c) => c.id) } : {}), ...options });

test('should name the one log field two eth_getLogs answers differ on, with both values', (t) => {
  const a = body(logs(3));
  const b = body(logs(3, (l, i) => (i === 1 ? { ...l, data: '0xdead' } : l)));
  t.deepEqual(diffBodies(getLogs, [a, b]), [
    { path: 'result[1].data', values: [{ group: 0, value: `"0x${'1'.padStart(64, '0')}"` }, { group: 1, value: '"0xdead"' }] },
  ]);
});

test('should not name what the comparison does not count: hex case, key order, whitespace, ignored fields', (t) => {
  const block = { number: '0x10', hash: `0x${'ab'.repeat(32)}`, miner: '0xAbCdEf0000000000000000000000000000000000', totalDifficulty: '0x1', transactions: [] };
  const a = body(block);
  const b = JSON.stringify({ result: { ...block, miner: block.miner.toLowerCase(), totalDifficulty: '0x2' }, id: 1, jsonrpc: '2.0' }, null, 2);
  t.deepEqual(diffBodies(single('eth_getBlockByNumber', ['0x10', false]), [a, b]), []);
});

test('should not name a field outside the execution-apis schema, and name a schema field beside it', (t) => {
  const block = { number: '0x10', hash: `0x${'ab'.repeat(32)}`, l1BlockNumber: '0x5', transactions: [{ hash: '0x1', l1BlockNumber: '0x5' }] };
  const a = body(block);
  const b = body({ ...block, l1BlockNumber: '0x6', requestsHash: '0x1', transactions: [{ hash: '0x1' }] });
  t.deepEqual(diffBodies(single('eth_getBlockByNumber', ['0x10', true]), [a, b]), [{ path: 'result.requestsHash', values: [{ group: 0, absent: true }, { group: 1, value: '"0x1"' }] }]);
});

test('should give the lengths of arrays that differ in length first, then the elements one answer lacks', (t) => {
  const d = diffBodies(getLogs, [body(logs(3)), body(logs(2))]);
  t.deepEqual(d[0], { path: 'result.length', values: [{ group: 0, value: '3' }, { group: 1, value: '2' }] });
  t.is(d[1]!.path, 'result[2]');
  t.deepEqual(d[1]!.values[1], { group: 1, absent: true });
  t.regex(d[1]!.values[0]!.value!, /^\{"address":"0x1111/);
  t.is(d.length, 2);
});

test('should compare a result with an error as two absent halves', (t) => {
  const err = JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code: -32000, message: 'header not found' } });
  t.deepEqual(diffBodies(single('eth_getBalance', ['0x11', '0x10']), [body('0x0'), err]), [
    { path: 'error', values: [{ group: 0, absent: true }, { group: 1, value: '{"code":-32000,"message":"header not found"}' }] },
    { path: 'result', values: [{ group: 0, value: '"0x0"' }, { group: 1, absent: true }] },
  ]);
});

test('should name a batch member by its id, in request order whatever the answer order', (t) => {
  const payload = batch([
    { id: 'a', method: 'eth_chainId', params: [] },
    { id: 7, method: 'eth_getBlockByNumber', params: ['0x10', false] },
  ]);
  const a = JSON.stringify([{ jsonrpc: '2.0', id: 7, result: { number: '0x10', hash: '0x01' } }, { jsonrpc: '2.0', id: 'a', result: '0x1' }]);
  const b = JSON.stringify([{ jsonrpc: '2.0', id: 'a', result: '0x1' }, { jsonrpc: '2.0', id: 7, result: { number: '0x10', hash: '0x02' } }]);
  t.deepEqual(diffBodies(payload, [a, b]), [{ path: '[id=7].result.hash', values: [{ group: 0, value: '"0x01"' }, { group: 1, value: '"0x02"' }] }]);
});

test('should show all groups at a path where three answers differ, and quote keys that are not identifiers', (t) => {
  const p = single('eth_call', [{}, 'latest']);
  const d = diffBodies(p, [body({ 'a key': 1 }), body({ 'a key': 2 }), body({ 'a key': 1 })]);
  t.deepEqual(d, [{ path: 'result["a key"]', values: [{ group: 0, value: '1' }, { group: 1, value: '2' }, { group: 2, value: '1' }] }]);
});

test('should keep numbers as written: 1.0 and 1 differ, the same huge integer does not', (t) => {
  const p = single('eth_call', [{}, 'latest']);
  const raw = (r: string) => `{"jsonrpc":"2.0","id":1,"result":${r}}`;
  t.deepEqual(diffBodies(p, [raw('[1.0,123456789012345678901234567890]'), raw('[1,123456789012345678901234567890]')]), [
    { path: 'result[0]', values: [{ group: 0, value: '1.0' }, { group: 1, value: '1' }] },
  ]);
});

test('should stop at the limit, in document order, and cut long values to the width', (t) => {
  const a = body(logs(50));
  const b = body(logs(50, (l) => ({ ...l, data: `0x${'9'.repeat(300)}` })));
  const d = diffBodies(getLogs, [a, b]);
  t.deepEqual(d.map((x) => x.path), ['result[0].data', 'result[1].data', 'result[2].data', 'result[3].data', 'result[4].data']);
  t.is(d[0]!.values[1]!.value, `"0x${'9'.repeat(77)}…`);
  t.is(diffBodies(getLogs, [a, b], { limit: 2, width: 10 })[1]!.values[1]!.value, `"0x${'9'.repeat(7)}…`);
});

test('should scrub keys from values and paths before cutting them', (t) => {
  const p = single('eth_call', [{}, 'latest']);
  const secret = 'SECRETKEY1234567890';
  const d = diffBodies(p, [body({ [secret]: `https://x.example/${secret}` }), body({})], { scrub: (s: string) => s.replaceAll(secret, '***') });
  t.deepEqual(d, [{ path: 'result.***', values: [{ group: 0, value: '"https://x.example/***"' }, { group: 1, absent: true }] }]);
  t.false(JSON.stringify(d).includes(secret));
});

test('should write a bounded preview of a large value', (t) => {
  const big = logs(5000);
  const text = preview(big, 100);
  t.true(text.length < 400, `${text.length} characters`);
  t.true(canonicalJson(big).startsWith(text.slice(0, 100)));
  t.is(preview({ b: [1, new JsonNumber('1.0')], a: null }, 1000), '{"a":null,"b":[1,1.0]}');
});

test('should find no difference exactly when the canonical texts are equal, and the same paths both ways (property)', (t) => {
  fc.assert(
    fc.property(fc.jsonValue(), fc.jsonValue(), (a, b) => {
      const ab = diffAnswers([a, b], { limit: 1000 });
      const ba = diffAnswers([b, a], { limit: 1000 });
      if ((ab.length === 0) !== (canonicalJson(a) === canonicalJson(b))) return false;
      return JSON.stringify(ab.map((d) => d.path)) === JSON.stringify(ba.map((d) => d.path));
    }),
    { numRuns: 500 },
  );
  fc.assert(
    fc.property(fc.jsonValue(), (a) => diffAnswers([a, structuredClone(a)]).length === 0),
    { numRuns: 200 },
  );
  t.pass();
});
