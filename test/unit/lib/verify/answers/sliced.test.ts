/**
 * judgeBody (answers.ts) reads a single call's result list one element at a time: its verdict
 * must be assessBody's, exactly (hash, ignored fields with their paths, reasons), on every
 * answer: long lists of logs with extras, odd numbers, odd keys, whitespace, and bytes that are
 * not JSON by a single separator.
 */
import { readFileSync } from 'node:fs';
import test from 'ava';
import fc from 'fast-check';
import type { RpcPayload } from '../../../../../lib/jsonrpc/types.js';
import { assessBody, maxInexactNumbers, type Assessment } from '../../../../../lib/verify/answers/answers.js';
import { judgeBody, type Judgement } from '../../../../../lib/verify/answers/sliced.js';
import { canonicalJson, comparable, sha256Hex } from '../../../../../lib/verify/answers/canonical.js';
import { mergeIgnoredFields, type IgnoredFields } from '../../../../../lib/verify/answers/compared-fields.js';
import { lacksBlock } from '../../../../../lib/verify/answers/missing.js';
import { recordedPairs } from '../../../../support/execution-apis.js';
import { Entries, randomJson, Raw, serialize } from '../../../../support/fuzz-arbitraries.js';
import { fromRoot } from '../../../../support/paths.js';

const single = (method: string, id: number | string = 1): RpcPayload => ({ calls: [{ id, method, params: [] }], batch: false, raw: Buffer.alloc(0) });
const strip = (a: Assessment): Judgement => (a.ok ? (a.ignored ? { ok: true, hash: a.hash, ignored: a.ignored } : { ok: true, hash: a.hash }) : a);
const scrub = (text: string) => text.replaceAll('s3cr3tKey9', '***');
const extras = mergeIgnoredFields({ log: ['blockTimestamp'], receipt: ['l1Fee'], block: ['l1BlockNumber'] });

function check(body: string | Buffer, payload: RpcPayload, ignored?: IgnoredFields, beyondHeads = false): boolean {
  const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body);
  const asAnswer = beyondHeads ? lacksBlock : undefined;
  return JSON.stringify(judgeBody(bytes, payload, ignored, scrub, asAnswer)) === JSON.stringify(strip(assessBody(bytes, payload, ignored, scrub, asAnswer)));
}

const logKeys = ['removed', 'logIndex', 'transactionIndex', 'transactionHash', 'blockHash', 'blockNumber', 'blockTimestamp', 'address', 'data', 'topics'];
const oddKeys = ['l1BlockNumber', 'Address', 'ADDRESS', 'logindex', '__proto__', '0', '7', 'reſult', 'status', 'logs', 'transactions'];
const scalar = fc.oneof(
  fc.constantFrom('0xAbCdEf', '0x', '0x0', '0x5523d3c98809dddb82c686e152f5c58b1b0fb59e', 'plain', 's3cr3tKey9', 'a"]},[{b', '\\', 'header not found'),
  fc.constantFrom(new Raw('1.0'), new Raw('1e400'), new Raw('-0'), new Raw('12345678901234567993'), new Raw('7'), new Raw('null'), new Raw('true'), new Raw('"\\u0041\\"]"')),
  randomJson,
);
const element: fc.Arbitrary<unknown> = fc.oneof(
  { arbitrary: fc.array(fc.tuple(fc.oneof(fc.constantFrom(...logKeys), fc.constantFrom(...oddKeys)), fc.oneof(scalar, fc.array(scalar, { maxLength: 3 }))), { maxLength: 8 }).map((e) => new Entries(e)), weight: 6 },
  { arbitrary: scalar, weight: 2 },
  { arbitrary: fc.array(scalar, { maxLength: 3 }), weight: 1 },
);
const sep = fc.constantFrom('', '', ' ', '\n', '\r\n\t');
/** A list written with its separators, or with one of them wrong. */
const listText = fc.tuple(fc.array(element, { maxLength: 12 }), sep, fc.constantFrom('ok', 'ok', 'ok', 'ok', 'double-comma', 'trailing-comma', 'no-comma', 'leading-comma', 'unclosed')).map(([items, s, fault]) => {
  const texts = items.map((v) => serialize(v, s));
  if (fault === 'double-comma' && texts.length > 1) return `[${s}${texts[0]},,${texts.slice(1).join(`,${s}`)}]`;
  if (fault === 'trailing-comma') return `[${texts.join(',')},${s}]`;
  if (fault === 'no-comma' && texts.length > 1) return `[${texts.join(` ${s}`)}]`;
  if (fault === 'leading-comma') return `[,${texts.join(',')}]`;
  if (fault === 'unclosed') return `[${texts.join(',')}`;
  return `[${s}${texts.join(`,${s}`)}${s}]`;
});
/** The answer around the list: members in any order, with extras, an error beside it, a second result, trailing bytes. */
const body = fc
  .tuple(listText, sep, fc.constantFrom('plain', 'plain', 'plain', 'result-first', 'error', 'error-null', 'twice', 'escaped-key', 'wrong-id', 'trailing', 'extra-member', 'nested-result'))
  .map(([list, s, shape]) => {
    switch (shape) {
      case 'result-first': return `{${s}"result"${s}:${s}${list},"id":1,"jsonrpc":"2.0"}`;
      case 'error': return `{"jsonrpc":"2.0","id":1,"error":{"code":-32000,"message":"x"},"result":${list}}`;
      case 'error-null': return `{"jsonrpc":"2.0","id":1,"error":null,"result":${list}}`;
      case 'twice': return `{"jsonrpc":"2.0","id":1,"result":${list},"result":[]}`;
      case 'escaped-key': return `{"jsonrpc":"2.0","id":1,"\\u0072esult":${list}}`;
      case 'wrong-id': return `{"jsonrpc":"2.0","id":2,"result":${list}}`;
      case 'trailing': return `{"jsonrpc":"2.0","id":1,"result":${list}} x`;
      case 'extra-member': return `{"jsonrpc":"2.0","id":1,"result":${list},"Result":1}`;
      case 'nested-result': return `{"jsonrpc":"2.0","id":1,"x":{"result":[1]},"result":${list}}`;
      default: return `{${s}"jsonrpc":"2.0",${s}"id":1,${s}"result":${s}${list}${s}}`;
    }
  });
const methods = ['eth_getLogs', 'eth_getBlockReceipts', 'eth_getBlockByNumber', 'eth_call', 'debug_traceBlockByNumber', 'eth_getUncleByBlockHashAndIndex'];

test('should give assessBody\'s verdict on generated answers with a result list', (t) => {
  fc.assert(
    fc.property(body, fc.constantFrom(...methods), fc.boolean(), (text, method, ignore) => check(text, single(method), ignore ? extras : undefined)),
    { numRuns: 3000 },
  );
  t.pass();
});

test('should give assessBody\'s verdict on generated answers of any shape', (t) => {
  fc.assert(
    fc.property(randomJson, fc.constantFrom(...methods), fc.boolean(), (v, method, beyondHeads) => check(serialize(v), single(method), undefined, beyondHeads) && check(`{"jsonrpc":"2.0","id":1,"result":${serialize(v)}}`, single(method))),
    { numRuns: 1000 },
  );
  t.pass();
});

test('should give assessBody\'s verdict on the replies fixtures and the execution-apis corpus', (t) => {
  for (const kind of ['logs', 'receipt', 'block', 'error']) {
    for (const variant of ['compact', 'pretty', 'reordered', 'checksum-case', 'liar']) {
      const text = readFileSync(fromRoot(`test/fixtures/replies/${kind}.${variant}.json`));
      for (const method of ['eth_getLogs', 'eth_getBlockReceipts', 'eth_getTransactionReceipt', 'eth_getBlockByNumber']) {
        t.true(check(text, single(method)), `${kind}.${variant} as ${method}`);
        t.true(check(text, single(method), extras), `${kind}.${variant} as ${method}, extras ignored`);
      }
    }
  }
  for (const pair of recordedPairs()) {
    const payload: RpcPayload = { calls: [{ id: pair.request.id as number, method: pair.request.method, params: pair.request.params ?? [] }], batch: false, raw: Buffer.alloc(0) };
    t.true(check(pair.responseText, payload), pair.name);
  }
});

test('should read a long log list in slices to the hash of the whole, with the paths of its extras', (t) => {
  const logs = Array.from({ length: 3000 }, (_, i) => ({ address: i % 2 ? '0xABCDEF' : '0xabcdef', logIndex: `0x${i.toString(16)}`, data: '0x00', ...(i % 100 === 0 && { l1BlockNumber: '0x1' }), removed: false, blockTimestamp: null }));
  const text = JSON.stringify({ jsonrpc: '2.0', id: 'x', result: logs }, null, 1);
  const sliced = judgeBody(Buffer.from(text), single('eth_getLogs', 'x'));
  const whole = assessBody(Buffer.from(text), single('eth_getLogs', 'x'));
  t.true(sliced.ok && whole.ok);
  t.deepEqual(sliced, strip(whole));
  t.is(sliced.ok && sliced.ignored?.length, 30);
  t.deepEqual(sliced.ok && sliced.ignored?.[1]?.path, [100, 'l1BlockNumber']);
});

test('should hash runs of any length, multi-byte text in them, to the canonical form of the whole', (t) => {
  // Plain logs (written by one JSON.stringify per run), one of 600 KB and one of 1.2 MB (longer
  // than a run, the second longer than the buffer a run is decoded from), text in several scripts.
  const log = (i: number, data: string) => ({ address: '0x5523d3c98809dddb82c686e152f5c58b1b0fb59e', topics: ['0x12'], data, blockNumber: '0x1', logIndex: `0x${i.toString(16)}`, removed: false });
  const logs = Array.from({ length: 4000 }, (_, i) => log(i, `0x${(i + 1).toString(16).padStart(128, '0')}`));
  logs[1000] = log(1000, `0x${'ab'.repeat(300_000)}`);
  logs[2500] = log(2500, `0x${'cd'.repeat(600_000)}`);
  logs[3000] = { ...log(3000, '0x'), data: 'ünïcødé ✓ 日本語 😀 "quoted" \\ end' } as ReturnType<typeof log>;
  const text = JSON.stringify({ jsonrpc: '2.0', id: 1, result: logs });
  const expected = sha256Hex(canonicalJson(comparable('eth_getLogs', { result: JSON.parse(text).result as unknown })));
  const sliced = judgeBody(Buffer.from(text), single('eth_getLogs'));
  t.deepEqual(sliced, { ok: true, hash: expected });
  t.deepEqual(sliced, strip(assessBody(Buffer.from(text), single('eth_getLogs'))));
  // The same again: the buffer kept from the long run decodes the next answer's runs alike.
  t.deepEqual(judgeBody(Buffer.from(text), single('eth_getLogs')), sliced);
});

test('should not vote on a list that one misplaced comma makes other than JSON', (t) => {
  for (const text of ['{"id":1,"result":[1,,2]}', '{"id":1,"result":[1,2,]}', '{"id":1,"result":[1 2]}', '{"id":1,"result":[,1]}', '{"id":1,"result":[{"a":1}{"b":2}]}', '{"id":1,"result":[1,2]', '{"id":1,"result":[1,2]]}']) {
    const j = judgeBody(Buffer.from(text), single('eth_getLogs'));
    t.false(j.ok, text);
    t.deepEqual(j, strip(assessBody(Buffer.from(text), single('eth_getLogs'))), text);
  }
});

test('should count the numbers spelled inexactly over the whole list, not per slice: the verdict is assessBody\'s either side of the limit', (t) => {
  const payload: RpcPayload = { batch: false, calls: [{ id: 1, method: 'eth_getLogs', params: [] }], raw: Buffer.alloc(0) };
  // Elements of about 60 KB with 2 000 inexact numbers each: every slice (256 KB) holds fewer than the limit.
  const element = (k: number) => `{"data":"0x${'ab'.repeat(28_000)}","n":[${Array.from({ length: 2_000 }, (_, i) => (i === 0 ? `${k}.0` : '1.0')).join(',')}]}`;
  for (const n of [maxInexactNumbers / 2_000, maxInexactNumbers / 2_000 + 1]) {
    const body = Buffer.from(`{"jsonrpc":"2.0","id":1,"result":[${Array.from({ length: n }, (_, k) => element(k)).join(',')}]}`);
    const whole = assessBody(body, payload);
    t.is(whole.ok, n === maxInexactNumbers / 2_000, `${n} elements`);
    const judged = judgeBody(body, payload);
    const { canonical: _, ...expected } = whole.ok ? whole : { ...whole, canonical: undefined };
    t.true(JSON.stringify(judged) === JSON.stringify(expected), `${n} elements: ${JSON.stringify(judged).slice(0, 200)}`);
  }
  // Over the count in the first run: the verdict of the whole, a later run proven JSON first (one that is not: not JSON, as whole).
  const many = (tail: string) => Buffer.from(`{"jsonrpc":"2.0","id":1,"result":[[${'1.0,'.repeat(maxInexactNumbers)}1.0],"0x${'ab'.repeat(200_000)}",{"a":1,"a":2}${tail}]}`);
  for (const body of [many(''), many(',{"b":}')]) {
    const whole = assessBody(body, payload);
    t.false(whole.ok);
    t.deepEqual(judgeBody(body, payload), whole);
  }
});

test('a long list is judged in memory for its runs, not for each element: 2 million numbers within a 48 MB heap', async (t) => {
  // Two offsets per element, in a JS array, took more than this heap for these 2 million numbers
  // (a 60 MB answer of 15 million peaked at 743–946 MB RSS in the judging thread); the runs of
  // about 256 KB are some 30 here, and the judgement takes ~17 MB. A heap limit is a hard bound,
  // not a timing: past it the process aborts.
  const { execFile } = await import('node:child_process');
  const sliced = fromRoot('lib/verify/answers/sliced.ts');
  const script = `const { judgeBody } = await import(${JSON.stringify(sliced)});
const payload = { batch: false, calls: [{ id: 1, method: 'eth_getBalance', params: [] }] };
const verdict = judgeBody(Buffer.from('{"jsonrpc":"2.0","id":1,"result":[' + '1.0,'.repeat(1999999) + '1.0]}'), payload);
console.log(JSON.stringify(verdict.ok ? 'ok' : verdict.reason));`;
  const out = await new Promise<string>((resolve, reject) => {
    // (killed if it ever hangs: a child left behind would outlive the test)
    execFile(process.execPath, ['--max-old-space-size=48', '--import', 'tsx', '--input-type=module', '-e', script], { cwd: process.cwd(), timeout: 120_000, killSignal: 'SIGKILL' }, (err, stdout, stderr) =>
      err ? reject(new Error(`${err.message}\n${stderr.slice(-500)}`)) : resolve(stdout),
    );
  });
  // (more numbers spelled 1.0 than readJson keeps: refused, once every run is proven JSON)
  t.regex(JSON.parse(out) as string, /^more than 10000 numbers written otherwise/);
});
