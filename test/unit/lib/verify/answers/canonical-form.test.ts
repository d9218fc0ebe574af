/**
 * canonicalForm (the hot path) must give exactly canonicalJson(comparable()), and canonicalJson
 * exactly what json-stable-stringify gives: checked on generated JSON, integer-like, unicode and
 * "__proto__" keys included, and on the reply fixtures.
 */
import test from 'ava';
import fc from 'fast-check';
import stringify from 'json-stable-stringify';
import { readdirSync, readFileSync } from 'node:fs';
import { canonicalForm, canonicalJson, comparable, JsonNumber, resultElementsForm, type IgnoredValue } from '../../../../../lib/verify/answers/canonical.js';
import { mergeIgnoredFields } from '../../../../../lib/verify/answers/compared-fields.js';
import { urlFromRoot } from '../../../../support/paths.js';

// Schema fields (kept in blocks, transactions, receipts and logs, and walked into) and others (left out there).
const key = fc.oneof(
  fc.string(),
  fc.constantFrom('0', '1', '9', '10', '01', '$x', '__proto__', 'constructor', 'l1BlockNumber'),
  fc.constantFrom('blockHash', 'number', 'transactions', 'logs', 'status', 'address', 'topics', 'hash'),
);
const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    fc.constant(null),
    fc.boolean(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.string(),
    fc.stringMatching(/^0x[0-9a-fA-F]{0,12}$/),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(key, tie('value'), { maxKeys: 5 }),
  ),
})).value;
const methods = ['eth_getBlockByNumber', 'eth_getTransactionReceipt', 'eth_getLogs', 'eth_getBlockReceipts', 'eth_call', 'eth_getTransactionByHash', 'net_version'];

test('canonicalJson equals json-stable-stringify on generated JSON', (t) => {
  fc.assert(
    fc.property(json, (v) => canonicalJson(v) === (stringify(v) ?? 'null')),
    { numRuns: 2_000, seed: 7 },
  );
  t.pass();
});

test('canonicalForm equals canonicalJson(comparable()) on generated answers', (t) => {
  fc.assert(
    fc.property(fc.constantFrom(...methods), json, fc.boolean(), (method, v, isError) => {
      const answer = isError ? { error: { code: -32000, data: v } } : { result: v };
      return canonicalForm(method, answer) === canonicalJson(comparable(method, answer));
    }),
    { numRuns: 2_000, seed: 11 },
  );
  t.pass();
});

test('canonicalForm equals json-stable-stringify of comparable() on every reply fixture', (t) => {
  const dir = urlFromRoot('test/fixtures/replies/');
  const files = readdirSync(dir).filter((f) => f.endsWith('.json'));
  t.true(files.length > 10);
  for (const file of files) {
    const body = JSON.parse(readFileSync(new URL(file, dir), 'utf8')) as { result?: unknown; error?: { code: number; data?: unknown } };
    const answer = body.error ? { error: body.error } : { result: body.result };
    for (const method of methods) t.is(canonicalForm(method, answer), stringify(comparable(method, answer))!, `${file} as ${method}`);
  }
});

test('an own "__proto__" key of an answer counts like any other key', (t) => {
  const a = JSON.parse('{"x":"1","__proto__":{"lie":true}}') as unknown;
  const b = JSON.parse('{"x":"1"}') as unknown;
  t.not(canonicalForm('net_version', { result: a }), canonicalForm('net_version', { result: b }));
});

// Log-like objects: mostly schema fields with values written alike by JSON.stringify and the
// canonical form, sometimes one that is not (upper-case hex, null, a nested object, a number kept
// as written, an extra key), so that lists mix objects written the fast way and the other.
const logKeys = ['address', 'topics', 'data', 'blockNumber', 'blockHash', 'transactionHash', 'transactionIndex', 'logIndex', 'removed', 'blockTimestamp'];
const logValue = fc.oneof(
  fc.stringMatching(/^0x[0-9a-f]{0,10}$/),
  fc.stringMatching(/^0x[0-9a-fA-F]{0,10}$/),
  fc.array(fc.oneof(fc.stringMatching(/^0x[0-9a-fA-F]{0,6}$/), fc.constant(null), fc.integer(), fc.dictionary(fc.constantFrom('a', 'data', 'address'), fc.string(), { maxKeys: 2 })), { maxLength: 3 }),
  fc.boolean(),
  fc.integer(),
  fc.string(),
  fc.constant(null),
  fc.constant(new JsonNumber('1.0')),
  fc.dictionary(fc.constantFrom('a', 'data', 'topics'), fc.stringMatching(/^0x[0-9A-F]{0,4}$/), { maxKeys: 2 }),
);
const logLike = fc.dictionary(fc.oneof({ weight: 9, arbitrary: fc.constantFrom(...logKeys) }, { weight: 1, arbitrary: fc.constantFrom('l1Fee', 'zk', '__proto__', '0') }), logValue, { maxKeys: 10 });
/** Config ignoredFields on top of the defaults: log fields left out like extras. */
const ignoring = mergeIgnoredFields({ log: ['blockTimestamp', 'removed'], receipt: ['logsBloom'] });
const logList = fc.array(fc.oneof({ weight: 9, arbitrary: logLike }, { weight: 1, arbitrary: logValue }), { maxLength: 6 });

test('canonicalForm and resultElementsForm equal canonicalJson(comparable()) on generated log lists, with the same fields noted', (t) => {
  fc.assert(
    fc.property(fc.constantFrom('eth_getLogs', 'eth_getFilterLogs', 'eth_getBlockReceipts', 'eth_getBlockByNumber'), logList, fc.nat(3), fc.constantFrom(undefined, ignoring), (method, list, from, ignored) => {
      const expectedFound: IgnoredValue[] = [];
      const expected = canonicalJson(comparable(method, { result: list }, { found: expectedFound, ignored }));
      const gotFound: IgnoredValue[] = [];
      if (canonicalForm(method, { result: list }, { found: gotFound, ignored }) !== expected) return false;
      if (JSON.stringify(gotFound) !== JSON.stringify(expectedFound)) return false;
      // The same elements as a run starting at `from` of a longer list: the paths count from there.
      const runFound: IgnoredValue[] = [];
      const longer = [...Array.from({ length: from }, () => ({})), ...list];
      const longerFound: IgnoredValue[] = [];
      const whole = canonicalJson(comparable(method, { result: longer }, { found: longerFound, ignored }));
      const head = canonicalJson(comparable(method, { result: longer.slice(0, from) }, { ignored }));
      const run = resultElementsForm(method, list, from, { found: runFound, ignored });
      const joined = `{"result":[${[head.slice('{"result":['.length, -2), run].filter((s) => s !== '').join(',')}]}`;
      return joined === whole && JSON.stringify(runFound) === JSON.stringify(longerFound);
    }),
    { numRuns: 3_000, seed: 5 },
  );
  t.pass();
});

test('a field inherited from a polluted Object.prototype is no field of a log', (t) => {
  // One log with an extra key (as many own keys as compared fields read, the inherited one counted), one without.
  const lists = ['[{"address":"0xcd","data":"0x","l1Fee":"0x1"}]', '[{"address":"0xab","data":"0x"}]', '{"address":"0xab","data":"0x","zk":1}'];
  const before = lists.map((text) => canonicalForm('eth_getLogs', { result: JSON.parse(text) }));
  const proto = Object.prototype as Record<string, unknown>;
  proto.blockHash = '0xee';
  try {
    for (const [i, text] of lists.entries()) {
      t.is(canonicalForm('eth_getLogs', { result: JSON.parse(text) }), before[i]!);
      if (text.startsWith('[')) t.is(resultElementsForm('eth_getLogs', JSON.parse(text) as unknown[], 0), before[i]!.slice('{"result":['.length, -2));
    }
  } finally {
    delete proto.blockHash;
  }
  t.deepEqual(before, ['{"result":[{"address":"0xcd","data":"0x"}]}', '{"result":[{"address":"0xab","data":"0x"}]}', '{"result":{"address":"0xab","data":"0x"}}']);
});
