/**
 * The write path: what each outcome of a write says (accepted, known, rejected, not taken,
 * unknown, a wrong hash), a write sent on only when no byte reached an upstream or it was turned
 * away, never after its bytes may have been delivered, the broadcast mode, and -32017 / -32011.
 */
import test from 'ava';
import { txHashOf } from '../../../../lib/jsonrpc/writes.js';
import type { Outcome } from '../../../../lib/upstream/fanout.js';
import type { Upstream } from '../../../../lib/upstream/registry.js';
import { UpstreamCallError, type UpstreamResponse } from '../../../../lib/upstream/transport/contract.js';
import { assessOutcome } from '../../../../lib/verify/assess.js';
import type { Timers } from '../../../../lib/verify/question.js';
import { broadcastCount, classifyWriteOutcome, knownAnswer, knownHashOf, runWrite, writeFailure, writeHashes, type WriteEnd, type WriteOutcome } from '../../../../lib/verify/write.js';
import { single, testUpstream } from '../../../support/stage.js';

const rawTx = '0x02f86f0180843b9aca008506fc23ac0082c35094c02aaa39b223fe8d0a0e5c4f27ead9083c756cc28084d0e30db0c001a0da344fb56a478090f5ab434db4fe6797b5c1d76d6c223d346392d55c34084e8fa04b0eff816bd20109fa01f5deb5f67fe3a860cabc686591258e91f3c26ffde4fd';
const payload = single('eth_sendRawTransaction', [rawTx], 1);
const txHash = txHashOf(payload.calls[0]!)!;

const body = (answer: object) => ({ body: Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, ...answer })) });
const ok = (upstream: Upstream, answer: object): Outcome<Upstream, UpstreamResponse> => ({ upstream, ok: true, value: body(answer), ms: 3 });
const failed = (upstream: Upstream, error: Error): Outcome<Upstream, UpstreamResponse> => ({ upstream, ok: false, error, ms: 3 });
const classifyKnowing = (o: Outcome<Upstream, UpstreamResponse>, knownHash: string | undefined) => classifyWriteOutcome(o, assessOutcome(o, payload), payload, knownHash);
const classify = (o: Outcome<Upstream, UpstreamResponse>) => classifyKnowing(o, txHash);

test('txHashOf of the test transaction is a 32-byte hash, and knownHashOf stands for it', (t) => {
  t.regex(txHash, /^0x[0-9a-f]{64}$/);
  t.is(knownHashOf(payload), txHash);
  t.is(knownHashOf({ ...payload, batch: true }), undefined);
  t.deepEqual(writeHashes(payload), { txHash });
});

const u = testUpstream(0);
const outcomes: [string, Outcome<Upstream, UpstreamResponse>, WriteOutcome][] = [
  ['its hash as the result', ok(u, { result: txHash }), 'accepted'],
  ['already known', ok(u, { error: { code: -32000, message: 'already known' } }), 'known'],
  ['nonce too low', ok(u, { error: { code: -32000, message: 'nonce too low' } }), 'rejected'],
  ['another hash as the result', ok(u, { result: `0x${'11'.repeat(32)}` }), 'wrong-hash'],
  ['a rate limit', ok(u, { error: { code: 429, message: 'Too Many Requests' } }), 'not-taken'],
  ['a connection never made', failed(u, new UpstreamCallError('transport', 'ECONNREFUSED', { sent: false })), 'not-taken'],
  ['HTTP 429', failed(u, new UpstreamCallError('rate-limited', 'HTTP 429', { retryAfterMs: 1000 })), 'not-taken'],
  ['HTTP 503 with a Retry-After', failed(u, new UpstreamCallError('rate-limited', 'HTTP 503', { retryAfterMs: 1000 })), 'unknown'],
  ['TheRPC\'s rate limit', ok(u, { error: { code: -32029, message: 'rate limited' } }), 'not-taken'],
  ['a timeout after the write', failed(u, new UpstreamCallError('timeout', 'no answer within 10 ms')), 'unknown'],
  ['HTTP 502', failed(u, new UpstreamCallError('http-status', 'HTTP 502')), 'unknown'],
  ['a body that is not JSON-RPC', { upstream: u, ok: true, value: { body: Buffer.from('<html>') }, ms: 1 }, 'unknown'],
];
for (const [what, o, expected] of outcomes) {
  test(`should classify ${what} as ${expected}`, (t) => {
    t.is(classify(o), expected);
  });
}

test('should not take already known as accepted without a known hash', (t) => {
  t.is(classifyKnowing(ok(u, { error: { code: -32000, message: 'already known' } }), undefined), 'rejected');
});

test('knownAnswer should answer the transaction\'s hash with the client\'s id', (t) => {
  const a = knownAnswer(u, single('eth_sendRawTransaction', [rawTx], 'c-7'), txHash, 4);
  t.deepEqual(JSON.parse(a.body.toString()), { jsonrpc: '2.0', id: 'c-7', result: txHash });
  t.like(a, { ok: true, ms: 4, upstream: u });
});

/** Runs a write over upstreams whose calls end as `plan` says (undefined: never ends). */
function write(plan: ((up: Upstream) => Promise<UpstreamResponse>)[], broadcast = 1, timers?: Timers) {
  const upstreams = plan.map((_, i) => testUpstream(i));
  const called: string[] = [];
  const counted: boolean[] = [];
  let resolveEnd: ((end: WriteEnd) => void) | undefined;
  const ended = new Promise<WriteEnd>((resolve) => (resolveEnd = resolve));
  const run = runWrite(upstreams, payload, {
    call: (up) => {
      called.push(up.label.slice(7, 9));
      return plan[up.index]!(up);
    },
    deadlineMs: 60_000,
    assess: (o) => assessOutcome(o, payload),
    broadcast,
    knownHash: txHash,
    onOutcome: (_a, c) => counted.push(c),
    timers,
  }, (end) => resolveEnd!(end));
  return { ended, called, counted, upstreams, run };
}

const answer = (a: object) => () => Promise.resolve(body(a));
const fail = (e: Error) => () => Promise.reject(e);
const never = () => new Promise<UpstreamResponse>(() => {});

test('should send the write on when no byte reached the first upstream, and name only those it reached', async (t) => {
  const { ended, called, counted } = write([fail(new UpstreamCallError('transport', 'ECONNREFUSED', { sent: false })), answer({ result: txHash })]);
  const end = await ended;
  t.deepEqual(called, ['u0', 'u1']);
  t.deepEqual(counted, [false, true]);
  t.is(end.kind, 'answered');
  if (end.kind !== 'answered') return;
  t.true(end.accepted);
  t.deepEqual(end.sentTo.map((x) => x.label), ['http://u1.test/***']);
  t.deepEqual(JSON.parse(end.verdict.members[0]!.body.toString()).result, txHash);
});

test('should never send a write elsewhere once its bytes may have reached an upstream', async (t) => {
  const { ended, called } = write([fail(new UpstreamCallError('timeout', 'no answer within 10 ms')), answer({ result: txHash })]);
  const end = await ended;
  t.deepEqual(called, ['u0']);
  t.like(end, { kind: 'unknown', cause: 'unanswered' });
  const err = writeFailure(end as Extract<WriteEnd, { kind: 'unknown' }>, payload);
  t.like(err, { rpcCode: -32017, status: 504, data: { txHash, upstreams: ['http://u0.test/***'], failures: [{ upstream: 'http://u0.test/***', reason: 'no answer within 10 ms' }], cause: 'unanswered' } });
  t.regex(err.message, new RegExp(`look up ${txHash}`));
});

test('should answer a node\'s already known with the transaction\'s hash', async (t) => {
  const end = await write([answer({ error: { code: -32000, message: 'already known' } })]).ended;
  t.like(end, { kind: 'answered', accepted: true, known: true });
  if (end.kind === 'answered') t.is(JSON.parse(end.verdict.members[0]!.body.toString()).result, txHash);
});

test('should relay a node\'s rejection as its answer', async (t) => {
  const end = await write([answer({ error: { code: -32000, message: 'nonce too low' } })]).ended;
  t.like(end, { kind: 'answered', accepted: false });
  if (end.kind === 'answered') t.deepEqual(JSON.parse(end.verdict.members[0]!.body.toString()).error, { code: -32000, message: 'nonce too low' });
});

test('should end a broadcast on the first acceptance, whatever the others said', async (t) => {
  const { ended, called } = write([answer({ error: { code: -32000, message: 'nonce too low' } }), answer({ result: txHash }), never], 3);
  const end = await ended;
  t.deepEqual(called.sort(), ['u0', 'u1', 'u2']);
  t.like(end, { kind: 'answered', accepted: true });
});

test('should say the write failed (-32011, not delivered) when it reached no upstream', async (t) => {
  const refused = () => Promise.reject(new UpstreamCallError('transport', 'ECONNREFUSED', { sent: false }));
  const end = await write([refused, refused]).ended;
  t.is(end.kind, 'failed');
  const err = writeFailure(end as Extract<WriteEnd, { kind: 'failed' }>, payload);
  t.like(err, { rpcCode: -32011, data: { write: true, txHash } });
  t.is((err.data as { failures: unknown[] }).failures.length, 2);
});

test('should end unknown at the deadline while a call is in flight, and on the client\'s abort', async (t) => {
  let fire: (() => void) | undefined;
  const timers: Timers = { now: () => 0, setTimeout: (fn) => ((fire = fn), 1), clearTimeout: () => {} };
  const { ended } = write([never], 1, timers);
  fire!();
  t.like(await ended, { kind: 'unknown', cause: 'deadline' });
  const aborted = write([never]);
  aborted.run.abort();
  t.like(await aborted.ended, { kind: 'unknown', cause: 'aborted' });
});

test('broadcastCount should broadcast only a chain\'s broadcast setting, to at most the candidates', (t) => {
  t.is(broadcastCount(payload, undefined, 5), 1);
  t.is(broadcastCount(payload, 1, 5), 1);
  t.is(broadcastCount(payload, 3, 5), 3);
  t.is(broadcastCount(payload, Infinity, 4), 4);
});
