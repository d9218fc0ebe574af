/**
 * Large answers judged in a worker thread (lib/verify/answers/off-thread.ts) get the verdict the main
 * thread gives: the same assessment (hash, ignored fields, reason, refusal) on the replies
 * fixtures, the execution-apis corpus and generated bodies; and a thread that fails, stalls, is
 * aborted or closed fails only that call. Serial: the tests share the one thread.
 */
import { readdirSync, readFileSync } from 'node:fs';
import test from 'ava';
import fc from 'fast-check';
import type { RpcCall, RpcPayload } from '../../../../../lib/jsonrpc/types.js';
import { echoerOf, scrubberOf } from '../../../../../lib/upstream/redact.js';
import type { Upstream } from '../../../../../lib/upstream/registry.js';
import { Cancellation } from '../../../../../lib/upstream/transport/contract.js';
import { assessBody } from '../../../../../lib/verify/answers/answers.js';
import { assessOutcome } from '../../../../../lib/verify/assess.js';
import { mergeIgnoredFields, type IgnoredFields } from '../../../../../lib/verify/answers/compared-fields.js';
import { lacksBlock } from '../../../../../lib/verify/answers/missing.js';
import { closeOffThread, compareSliceBytes, holdOffThread, judgedOf, judgedOffThread, judgeOffThread as judgeOrNot, nestedTooDeep, offThreadCounts, offThreadFrom, type Judged, type JudgedResponse } from '../../../../../lib/verify/answers/off-thread.js';
import { recordedPairs } from '../../../../support/execution-apis.js';
import { randomJson, serialize } from '../../../../support/fuzz-arbitraries.js';
import { urlFromRoot } from '../../../../support/paths.js';

/** The thread starts in these tests: every answer comes back judged. */
async function judgeOffThread(...args: Parameters<typeof judgeOrNot>): Promise<JudgedResponse> {
  const r = await judgeOrNot(...args);
  if (!('judged' in r)) throw new Error('the thread did not judge the answer');
  return r as JudgedResponse;
}

const secrets = { all: ['k3yOfUpstreamA1234', 'otherProviderKey99'], own: ['k3yOfUpstreamA1234'] };
const scrub = scrubberOf(secrets.all);
const echoedIn = echoerOf(secrets.own);

const single = (method: string, params: unknown[] = [], id: RpcCall['id'] = 1): RpcPayload => ({ calls: [{ id, method, params }], batch: false, raw: Buffer.alloc(0) });
const batch = (calls: RpcCall[]): RpcPayload => ({ calls, batch: true, raw: Buffer.alloc(0) });

/** What the main thread decides (assess.ts assessOutcome's part), in the thread's terms. */
function inMain(body: Buffer, payload: RpcPayload, ignored: IgnoredFields | undefined, beyondHeads: boolean): Judged {
  const a = assessBody(body, payload, ignored, scrub, beyondHeads ? lacksBlock : undefined);
  return judgedOf(a, (a.ok || a.refused !== undefined) && echoedIn(body));
}

async function inThread(body: Buffer, payload: RpcPayload, ignored: IgnoredFields | undefined, beyondHeads: boolean) {
  return judgeOffThread(Buffer.from(body), payload, ignored, beyondHeads, secrets, new Cancellation(), 60_000);
}

async function same(t: { deepEqual(a: unknown, b: unknown, m?: string): void; true(v: boolean, m?: string): void }, body: Buffer, payload: RpcPayload, ignored?: IgnoredFields, beyondHeads = false, label = '') {
  const r = await inThread(body, payload, ignored, beyondHeads);
  t.deepEqual(r.judged, inMain(body, payload, ignored, beyondHeads), label);
  t.true(r.body.equals(body), `${label}: the bytes come back`);
}

const kinds: Record<string, RpcPayload> = {
  block: single('eth_getBlockByNumber', ['0x12a05f2', true]),
  receipt: single('eth_getTransactionReceipt', ['0x' + '11'.repeat(32)]),
  logs: single('eth_getLogs', [{ fromBlock: '0x12a05f2', toBlock: '0x12a05f2' }]),
  error: single('eth_call', [{ to: '0x' + '22'.repeat(20), data: '0x8da5cb5b' }, '0x12a05f2']),
};
const extrasIgnored = mergeIgnoredFields({ block: ['l1BlockNumber'], receipt: ['l1Fee'], log: ['blockTimestamp'] });

test.serial('should judge every replies fixture in the thread as in the main thread', async (t) => {
  const dir = urlFromRoot('test/fixtures/replies/');
  const files = readdirSync(dir).filter((f) => f.endsWith('.json'));
  t.true(files.length >= 20);
  for (const file of files) {
    const body = readFileSync(new URL(file, dir));
    const payload = kinds[file.split('.')[0]!]!;
    for (const ignored of [undefined, extrasIgnored]) {
      await same(t, body, payload, ignored, false, file);
      // Pretty-printed past the threshold: the size the thread is for.
      const big = Buffer.from(JSON.stringify(JSON.parse(body.toString()), null, ' '.repeat(10)).replace(/\n/g, `\n${' '.repeat(200)}`));
      await same(t, big, payload, ignored, false, `${file} (large)`);
    }
  }
});

test.serial('should judge the execution-apis corpus in the thread as in the main thread', async (t) => {
  const pairs = recordedPairs();
  t.true(pairs.length > 50);
  for (const pair of pairs) {
    await same(t, Buffer.from(pair.responseText), single(pair.request.method, pair.request.params ?? [], pair.request.id as RpcCall['id']), undefined, false, pair.name);
  }
});

test.serial('should judge generated answers in the thread as in the main thread', async (t) => {
  const methods = ['eth_getLogs', 'eth_getBlockByNumber', 'eth_getTransactionReceipt', 'eth_getBlockReceipts', 'eth_call', 'eth_getProof'];
  const member = fc.oneof(
    randomJson.map((v) => `{"jsonrpc":"2.0","id":1,"result":${serialize(v)}}`),
    fc.tuple(fc.integer({ min: -33000, max: 10 }), fc.constantFrom('header not found', 'rate limited', 'query returned more than 10000 results', 'boom k3yOfUpstreamA1234 boom', 'execution reverted'), randomJson).map(
      ([code, message, data]) => `{"jsonrpc":"2.0","id":1,"error":{"code":${code},"message":${JSON.stringify(message)},"data":${serialize(data)}}}`,
    ),
    randomJson.map((v) => serialize(v)),
    fc.constant('{"jsonrpc":"2.0","id":1,"result":"0xk3yOfUpstreamA1234"}'),
    fc.constant('{"jsonrpc":"2.0","id":1,"result":[{"address":"0x1","Address":"0x2"}]}'),
    fc.constant('{"jsonrpc":"2.0","id":1,"result":{"a":1.0,"a":2}}'),
  );
  await fc.assert(
    fc.asyncProperty(fc.constantFrom(...methods), member, fc.boolean(), fc.boolean(), async (method, text, beyondHeads, ignore) => {
      const body = Buffer.from(text);
      const r = await inThread(body, single(method, []), ignore ? extrasIgnored : undefined, beyondHeads);
      return JSON.stringify(r.judged) === JSON.stringify(inMain(body, single(method, []), ignore ? extrasIgnored : undefined, beyondHeads)) && r.body.equals(body);
    }),
    { numRuns: 300 },
  );
  // A batch: members matched by id, in request order.
  const calls: RpcCall[] = [{ id: 1, method: 'eth_getLogs', params: [] }, { id: 'b', method: 'eth_getBlockByNumber', params: ['0x1', false] }];
  const text = `[{"jsonrpc":"2.0","id":"b","result":{"number":"0x1","hash":"0xAB","l1BlockNumber":"0x5"}},{"jsonrpc":"2.0","id":1,"result":[{"logIndex":"0x0","data":"0x"}]}]`;
  await same(t, Buffer.from(text), batch(calls), undefined, false, 'batch');
});

test.serial('should hand back the body in a buffer of its own when it was part of a larger one', async (t) => {
  const whole = Buffer.from(`xx{"jsonrpc":"2.0","id":1,"result":"0x10"}yy`);
  const body = whole.subarray(2, whole.length - 2);
  const r = await judgeOffThread(body, single('eth_blockNumber'), undefined, false, secrets, new Cancellation(), 60_000);
  t.is(r.body.toString(), '{"jsonrpc":"2.0","id":1,"result":"0x10"}');
  t.is(whole.toString().slice(0, 2), 'xx', 'the larger buffer is untouched');
  t.true(r.judged.judgement?.ok);
});

test.serial('should send answers of offThreadFrom bytes or more to the thread, and smaller ones not', (t) => {
  t.true(judgedOffThread(Buffer.alloc(offThreadFrom, 0x20)));
  t.false(judgedOffThread(Buffer.alloc(offThreadFrom - 1, 0x20)));
});

/** Answers under offThreadFrom whose judgement costs far more than their size (test/bench/hostile-upstream.mjs). */
const costly: Record<string, Buffer> = {
  keys: Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, result: Object.fromEntries(Array.from({ length: 60_000 }, (_, i) => [`k${i}`, i])) })),
  keysSpread: Buffer.from(`{"jsonrpc":"2.0","id":1,"result":[${Array.from({ length: 60_000 }, (_, i) => `{"k${i}":0}`).join(',')}]}`),
  floats: Buffer.from(`{"jsonrpc":"2.0","id":1,"result":[${'1.0,'.repeat(9_999)}1.0],"n":[${'1,'.repeat(200_000)}1]}`),
  empties: Buffer.from(`{"jsonrpc":"2.0","id":1,"result":[${'{},'.repeat(99_999)}{}]}`),
  escapes: Buffer.from(`{"jsonrpc":"2.0","id":1,"result":"${'\\u0000'.repeat(150_000)}"}`),
};

test.serial('should send an answer under offThreadFrom to the thread when judging it costs far more than its size, and judge it as the main thread does', async (t) => {
  for (const [name, body] of Object.entries(costly)) {
    t.true(body.length < offThreadFrom, name);
    const before = offThreadCounts.costly;
    t.true(judgedOffThread(body), name);
    t.is(offThreadCounts.costly - before, 1, name);
    await same(t, body, kinds.logs!, undefined, false, name);
  }
  // Ordinary answers of the same sizes stay on the event loop: hex strings, a list of logs.
  const hex = Buffer.from(`{"jsonrpc":"2.0","id":1,"result":"0x${'ab'.repeat(500_000)}"}`);
  const logs = Buffer.from(`{"jsonrpc":"2.0","id":1,"result":[${Array.from({ length: 1_500 }, (_, i) => `{"address":"0x${'ab'.repeat(20)}","topics":["0x${'cd'.repeat(32)}","0x${'ef'.repeat(32)}"],"data":"0x${'12'.repeat(64)}","blockNumber":"0x1234","transactionHash":"0x${'9a'.repeat(32)}","transactionIndex":"0x1","blockHash":"0x${'be'.repeat(32)}","logIndex":"0x${i.toString(16)}","removed":false}`).join(',')}]}`);
  for (const body of [hex, logs]) {
    t.true(body.length > 800_000 && body.length < offThreadFrom);
    t.false(judgedOffThread(body));
  }
});

/** Eight megabytes of logs of a kilobyte each: long for the thread, not many objects to judge. */
const big = Buffer.from(`{"jsonrpc":"2.0","id":1,"result":[${Array.from({ length: 7_500 }, (_, i) => `{"logIndex":"0x${i.toString(16)}","data":"0x${'ab'.repeat(512)}"}`).join(',')}]}`);

test.serial('should resolve an aborted call at once as unchecked, and judge the next answer', async (t) => {
  const signal = new Cancellation();
  const pending = judgeOffThread(Buffer.from(big), single('eth_getLogs'), undefined, false, secrets, signal, 60_000);
  signal.abort();
  t.is((await pending).judged.unchecked, 'aborted');
  const already = new Cancellation();
  already.abort();
  t.is((await judgeOffThread(Buffer.from(big), single('eth_getLogs'), undefined, false, secrets, already, 60_000)).judged.unchecked, 'aborted');
  await same(t, big, single('eth_getLogs'), undefined, false, 'after an abort');
});

test.serial('should fail a call as unchecked when the thread takes longer than its timeout, and judge the next one in a new thread', async (t) => {
  const r = await judgeOffThread(Buffer.from(big), single('eth_getLogs'), undefined, false, secrets, new Cancellation(), 1);
  t.is(r.judged.unchecked, 'not judged within 1 ms');
  await same(t, big, single('eth_getLogs'), undefined, false, 'after a timeout');
});

test.serial('should fail a call as unchecked when the thread crashes, and judge the next one in a new thread', async (t) => {
  // A task the thread cannot read (no list of secrets) throws outside the assessment.
  const r = await judgeOffThread(Buffer.from(big), single('eth_getLogs'), undefined, false, { all: undefined as unknown as string[], own: [] }, new Cancellation(), 60_000);
  t.regex(r.judged.unchecked ?? '', /^the checking thread failed: /);
  await same(t, big, single('eth_getLogs'), undefined, false, 'after a crash');
});

test.serial('should end the thread when the last hold is released, failing the answer it was judging, and start again on demand', async (t) => {
  const release = holdOffThread();
  const pending = judgeOffThread(Buffer.from(big), single('eth_getLogs'), undefined, false, secrets, new Cancellation(), 60_000);
  release();
  release(); // a second release of the same hold changes nothing
  t.is((await pending).judged.unchecked, 'the checking thread was closed');
  await same(t, big, single('eth_getLogs'), undefined, false, 'after close');
  closeOffThread();
});

test.serial('should make an unchecked answer a failure of kind unchecked, and use the thread\'s verdict otherwise', async (t) => {
  const upstream = { health: { loop: false }, secrets: { scrub, echoedIn: () => { throw new Error('not called for a judged answer'); } } } as unknown as Upstream;
  const payload = single('eth_getLogs');
  const unchecked = assessOutcome({ upstream, ok: true, ms: 5, value: { body: Buffer.alloc(0), judged: { judgement: undefined, echoed: false, unchecked: 'aborted' } } as never }, payload);
  t.false(unchecked.ok);
  t.is(!unchecked.ok && unchecked.kind, 'unchecked');
  // A thread that failed says why in an error's message, which may quote the bytes it read.
  const failed = assessOutcome({ upstream, ok: true, ms: 5, value: { body: Buffer.alloc(0), judged: { judgement: undefined, echoed: false, unchecked: 'the checking thread failed: Unexpected token in "key K3YOFUPSTREAMA1234"' } } as never }, payload);
  t.is(!failed.ok && failed.reason, 'the answer (0 bytes) was not checked: the checking thread failed: Unexpected token in "key ***"');
  const r = await inThread(big, payload, undefined, false);
  const voted = assessOutcome({ upstream, ok: true, ms: 5, value: r }, payload);
  t.true(voted.ok);
  const main = assessBody(big, payload);
  t.is(voted.ok && voted.hash, main.ok && main.hash);
  const echoed = await inThread(Buffer.from('{"jsonrpc":"2.0","id":1,"result":"k3yOfUpstreamA1234"}'), payload, undefined, false);
  const refused = assessOutcome({ upstream, ok: true, ms: 5, value: echoed }, payload);
  t.false(refused.ok);
  t.regex(!refused.ok ? refused.reason : '', /quotes this upstream's URL or key/);
  // A refusal is relayed as written when no vote comes (by its hash): one quoting the key is not.
  const refusal = Buffer.from('{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"not available for k3yOfUpstreamA1234"}}');
  t.deepEqual(inMain(refusal, payload, undefined, false).echoed, true);
  const quoting = assessOutcome({ upstream, ok: true, ms: 5, value: await inThread(refusal, payload, undefined, false) }, payload);
  t.false(quoting.ok);
  t.true(!quoting.ok && quoting.refused !== undefined, 'still a refusal, not the provider\'s failure');
  t.is(!quoting.ok && quoting.refused?.hash, undefined, 'with no hash it could be relayed by');
  t.regex(!quoting.ok ? quoting.reason : '', /quotes this upstream's URL or key/);
  closeOffThread();
});

test.serial('should judge the same bytes for the same request once, and still check each answer for its own upstream\'s key', async (t) => {
  // Long enough for the thread; one log quotes upstream B's key (an answer B must not vote with).
  const body = Buffer.from(`{"jsonrpc":"2.0","id":1,"result":[${Array.from({ length: 12_000 }, (_, i) => `{"logIndex":"0x${i.toString(16)}","data":"0x${i === 7 ? 'b0bsK3yOfUpstreamB' : 'ab'.repeat(40)}"}`).join(',')}]}`);
  t.true(body.length >= offThreadFrom);
  const payload = single('eth_getLogs');
  const ofA = { all: ['k3yOfUpstreamA1234', 'b0bsK3yOfUpstreamB'], own: ['k3yOfUpstreamA1234'] };
  const ofB = { all: ofA.all, own: ['b0bsK3yOfUpstreamB'] };
  const send = (bytes: Buffer, who: typeof ofA, p: RpcPayload = payload, ignored?: IgnoredFields) => judgeOffThread(Buffer.from(bytes), p, ignored, false, who, new Cancellation(), 60_000);
  const main = assessBody(body, payload, undefined, scrubberOf(ofA.all));
  t.true(main.ok);
  const before = { ...offThreadCounts };
  // Three answers of one request at once: one judged, two compared with it.
  const [a, b, c] = await Promise.all([send(body, ofA), send(body, ofB), send(body, ofA)]);
  t.deepEqual({ judged: offThreadCounts.judged - before.judged, same: offThreadCounts.same - before.same }, { judged: 1, same: 2 });
  for (const r of [a, b, c]) {
    t.true(r.body.equals(body));
    t.is(r.judged.judgement?.ok && r.judged.judgement.hash, main.ok && main.hash);
  }
  t.false(a.judged.echoed);
  t.true(b.judged.echoed, 'B\'s own key is in the bytes: checked for B, not taken from A');
  t.false(c.judged.echoed);
  // Later, while the first answer is still held: compared too.
  const later = await send(body, ofB);
  t.true(later.judged.echoed);
  t.is(offThreadCounts.same - before.same, 3);
  // One byte changed (a key written twice): judged on its own, and refused.
  const twice = Buffer.from(body.toString().replace('{"logIndex":"0x5",', '{"data":"0x00005",'));
  t.is(twice.length, body.length);
  const refused = await send(twice, ofA);
  t.deepEqual(refused.judged, judgedOf(assessBody(twice, payload, undefined, scrubberOf(ofA.all)), false));
  t.false(refused.judged.judgement?.ok);
  // The same bytes for another request, or with other ignored fields: judged again.
  await send(body, ofA, single('eth_getLogs'));
  await send(body, ofA, payload, extrasIgnored);
  t.deepEqual({ judged: offThreadCounts.judged - before.judged, same: offThreadCounts.same - before.same }, { judged: 4, same: 3 });
  t.true(a.body.length > 0); // held to here: the verdicts compared against were alive
  // Closing the thread drops its verdicts: the same bytes are judged again.
  closeOffThread();
  await send(body, ofA);
  t.deepEqual({ judged: offThreadCounts.judged - before.judged, same: offThreadCounts.same - before.same }, { judged: 5, same: 3 });
  closeOffThread();
});

test.serial('should compare long answers a slice at a time: equal to the last byte takes the verdict, a byte that differs in any slice is judged, an abort while compared frees the thread', async (t) => {
  const payload = single('eth_getLogs');
  // Logs of 836 bytes: the size is the point (more than three slices), not the count of objects,
  // which is what judging an answer costs.
  const count = Math.ceil((3.5 * compareSliceBytes) / 800);
  const body = Buffer.from(`{"jsonrpc":"2.0","id":1,"result":[${Array.from({ length: count }, (_, i) => `{"logIndex":"0x${i.toString(16).padStart(6, '0')}","data":"0x${'ab'.repeat(400)}"}`).join(',')}]}`);
  t.true(body.length > 3 * compareSliceBytes, `${body.length} bytes`);
  const send = (bytes: Buffer, signal = new Cancellation()) => judgeOrNot(Buffer.from(bytes), payload, undefined, false, secrets, signal, 60_000);
  const main = assessBody(body, payload, undefined, scrub);
  const before = { ...offThreadCounts };
  const counts = () => ({ judged: offThreadCounts.judged - before.judged, same: offThreadCounts.same - before.same });
  const first = (await send(body)) as JudgedResponse;
  t.is(first.judged.judgement?.ok && first.judged.judgement.hash, main.ok && main.hash);
  // One log of the last slice, and one of a middle slice, written otherwise (same length): each judged on its own.
  const changed = (i: number) => Buffer.from(body.toString().replace(`"logIndex":"0x${i.toString(16).padStart(6, '0')}"`, `"logIndex":"0x${(i + 1).toString(16).padStart(6, '0')}"`));
  for (const i of [count - 10, Math.floor(count / 2)]) {
    const other = changed(i);
    t.is(other.length, body.length);
    const r = (await send(other)) as JudgedResponse;
    const theirs = assessBody(other, payload, undefined, scrub);
    t.is(r.judged.judgement?.ok && r.judged.judgement.hash, theirs.ok && theirs.hash);
    t.not(theirs.ok && theirs.hash, main.ok && main.hash);
  }
  t.deepEqual(counts(), { judged: 3, same: 0 });
  // The same bytes, to the last one: the verdict given.
  const again = (await send(body)) as JudgedResponse;
  t.is(again.judged.judgement?.ok && again.judged.judgement.hash, main.ok && main.hash);
  t.true(again.body.equals(body));
  t.deepEqual(counts(), { judged: 3, same: 1 });
  // Aborted while its bytes are compared (after the first slice): unchecked, and the next answer is judged.
  const signal = new Cancellation();
  const aborted = send(body, signal);
  signal.abort();
  t.is(((await aborted) as JudgedResponse).judged.unchecked, 'aborted');
  const after = (await send(changed(5))) as JudgedResponse;
  t.true(after.judged.judgement?.ok);
  t.deepEqual(counts(), { judged: 4, same: 1 });
  t.true(first.body.length > 0); // held to here: the verdict compared against was alive
  closeOffThread();
});

test.serial('should check answers that take the verdict of the same bytes for each upstream\'s own key anywhere in their bytes: one across the 4 MiB mark, one in the last log', async (t) => {
  const payload = single('eth_getLogs');
  const count = Math.ceil((2.5 * compareSliceBytes) / 440);
  const text = `{"jsonrpc":"2.0","id":1,"result":[${Array.from({ length: count }, (_, i) => `{"logIndex":"0x${i.toString(16).padStart(6, '0')}","data":"0x${'ab'.repeat(200)}"}`).join(',')}]}`;
  const body = Buffer.from(text);
  const keyB = 'b0bsK3yOfUpstreamB';
  const keyC = 'c4rlsK3yOfUpstreamC';
  // B's key across the end of the first `compareSliceBytes`, C's in the last log: each inside a data string.
  const across = compareSliceBytes - 7;
  const dataOf = (at: number) => body.lastIndexOf('"data":"0x', at) + 10;
  t.true(dataOf(across) + 400 >= across + keyB.length && body.indexOf('"', dataOf(across)) > across + keyB.length, 'B\'s key inside one data string');
  body.write(keyB, across, 'latin1');
  const last = dataOf(body.length - 10) + 100;
  body.write(keyC, last, 'latin1');
  t.true(body.length > 2 * compareSliceBytes);
  const all = ['k3yOfUpstreamA1234', keyB, keyC];
  const who = (key: string) => ({ all, own: [key] });
  const send = (key: string) => judgeOffThread(Buffer.from(body), payload, undefined, false, who(key), new Cancellation(), 60_000);
  const main = assessBody(body, payload, undefined, scrubberOf(all));
  t.true(main.ok);
  const before = { ...offThreadCounts };
  const [a, b, c, a2] = await Promise.all([send(all[0]!), send(keyB), send(keyC), send(all[0]!)]);
  t.deepEqual({ judged: offThreadCounts.judged - before.judged, same: offThreadCounts.same - before.same }, { judged: 1, same: 3 });
  for (const r of [a, b, c, a2]) {
    t.true(r.body.equals(body));
    t.is(r.judged.judgement?.ok && r.judged.judgement.hash, main.ok && main.hash);
  }
  t.deepEqual([a.judged.echoed, b.judged.echoed, c.judged.echoed, a2.judged.echoed], [false, true, true, false]);
  // A key that differs from the bytes in its last character is not found.
  const cut = await send(`${keyB.slice(0, -1)}Z`);
  t.false(cut.judged.echoed);
  closeOffThread();
});

test.serial('should scan an answer for its nesting first when given the limit: too deep, not judged and no verdict kept; within it, judged, and the same bytes then take the verdict unscanned', async (t) => {
  const payload = single('eth_getLogs');
  const logs = `${'{"data":"0x00"},'.repeat(80_000)}`;
  const deep = Buffer.from(`{"jsonrpc":"2.0","id":1,"result":[${logs}${'['.repeat(300)}${']'.repeat(300)}]}`);
  const fine = Buffer.from(`{"jsonrpc":"2.0","id":1,"result":[${logs}${'['.repeat(200)}${']'.repeat(200)}]}`);
  t.true(deep.length >= offThreadFrom && fine.length >= offThreadFrom);
  const send = (bytes: Buffer, maxDepth: number | undefined) => judgeOffThread(Buffer.from(bytes), payload, undefined, false, secrets, new Cancellation(), 60_000, maxDepth);
  const before = { ...offThreadCounts };
  const counts = () => ({ judged: offThreadCounts.judged - before.judged, same: offThreadCounts.same - before.same });
  const refused = await send(deep, 256);
  t.deepEqual(refused.judged, { judgement: undefined, echoed: false, unchecked: nestedTooDeep });
  t.true(refused.body.equals(deep), 'the bytes come back');
  // No verdict kept for them: the same bytes are scanned again, and refused again.
  t.is((await send(deep, 256)).judged.unchecked, nestedTooDeep);
  t.deepEqual(counts(), { judged: 2, same: 0 });
  // Within the limit (the outer object and list add two levels): judged as ever.
  const ok = await send(fine, 256);
  t.deepEqual(ok.judged, inMain(fine, payload, undefined, false));
  // Without a limit (the transport scanned them), deep bytes are judged: the scan is the caller's choice.
  t.is((await send(deep, undefined)).judged.unchecked, undefined);
  // The same bytes as a verdict given: that verdict, not scanned again (a limit they would fail is not looked at).
  const same = await send(fine, 1);
  t.deepEqual(same.judged, ok.judged);
  t.deepEqual(counts(), { judged: 4, same: 1 });
  closeOffThread();
});
