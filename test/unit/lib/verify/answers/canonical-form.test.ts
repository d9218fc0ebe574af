/**
 * canonicalForm (the hot path) must give exactly canonicalJson(comparable()), and canonicalJson
 * exactly what json-stable-stringify gives: checked on generated JSON, integer-like, unicode and
 * "__proto__" keys included, and on the reply fixtures.
 */
import test from 'ava';
import fc from 'fast-check';
import stringify from 'json-stable-stringify';
import { readdirSync, readFileSync } from 'node:fs';
import { canonicalForm, canonicalJson, comparable } from '../../../../../lib/verify/answers/canonical.js';

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
  const dir = new URL('../../../../fixtures/replies/', import.meta.url);
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
