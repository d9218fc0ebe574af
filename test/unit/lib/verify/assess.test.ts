/**
 * One upstream outcome judged: a vote whose hash does not depend on formatting, or a failure with
 * a reason scrubbed of provider keys (a transport error, a wrong id, a provider error, an answer
 * quoting the upstream's own key, our own gateway come back); an unknown-block error is the
 * nodes' answer only for a block above every head.
 */
import test from 'ava';
import type { Outcome } from '../../../../lib/upstream/fanout.js';
import { loopReason } from '../../../../lib/upstream/loop.js';
import type { Upstream } from '../../../../lib/upstream/registry.js';
import type { UpstreamResponse } from '../../../../lib/upstream/transport/contract.js';
import { assessOutcome, judgeOf } from '../../../../lib/verify/assess.js';
import { single, testUpstream } from '../../../support/stage.js';

const payload = single('eth_getBalance', ['0x1', '0x10'], 3);
const answered = (upstream: Upstream, body: string): Outcome<Upstream, UpstreamResponse> => ({ upstream, ok: true, value: { body: Buffer.from(body) }, ms: 7 });

test('should make an answer a vote whose hash is the same however it is written', (t) => {
  const u = testUpstream(0);
  const compact = assessOutcome(answered(u, '{"jsonrpc":"2.0","id":3,"result":"0xAB"}'), payload);
  const pretty = assessOutcome(answered(u, '{\n  "result": "0xab",\n  "id": 3,\n  "jsonrpc": "2.0"\n}'), payload);
  t.true(compact.ok && pretty.ok);
  t.is(compact.ok && compact.hash, pretty.ok && pretty.hash);
  t.like(compact, { ok: true, ms: 7, upstream: u });
  const other = assessOutcome(answered(u, '{"jsonrpc":"2.0","id":3,"result":"0xac"}'), payload);
  t.not(other.ok && other.hash, compact.ok && compact.hash);
});

test('should make a transport error a failure with its kind and a scrubbed reason', (t) => {
  const u = { ...testUpstream(0), secrets: { scrub: (s: string) => s.replaceAll('KEY0', '***'), echoedIn: () => false } };
  const err = Object.assign(new Error('connect refused to http://u0.test/KEY0'), { kind: 'transport' });
  t.deepEqual(assessOutcome({ upstream: u, ok: false, error: err, ms: 2 }, payload), { upstream: u, ok: false, reason: 'connect refused to http://u0.test/***', ms: 2, kind: 'transport', retryAfterMs: undefined });
});

test('should name the loop as the reason when the upstream is this gateway itself', (t) => {
  const u = testUpstream(0, { health: { loop: true } });
  t.like(assessOutcome({ upstream: u, ok: false, error: new Error('HTTP 508'), ms: 1 }, payload), { ok: false, reason: loopReason });
});

test('should fail an answer with another id, or that is not JSON', (t) => {
  const u = testUpstream(0);
  t.like(assessOutcome(answered(u, '{"jsonrpc":"2.0","id":4,"result":"0x1"}'), payload), { ok: false });
  t.like(assessOutcome(answered(u, '<html>'), payload), { ok: false });
});

test('should not count an answer that quotes the upstream\'s own key', (t) => {
  const u = { ...testUpstream(0), secrets: { scrub: (s: string) => s, echoedIn: (b: Buffer) => b.includes('KEY0') } };
  t.deepEqual(assessOutcome(answered(u, '{"jsonrpc":"2.0","id":3,"result":"KEY0"}'), payload), {
    upstream: u, ok: false, reason: 'the answer quotes this upstream\'s URL or key (not forwarded)', ms: 7,
  });
});

test('should take an unknown-block error as the nodes\' answer only for a block above every head', (t) => {
  const u = testUpstream(0);
  const body = '{"jsonrpc":"2.0","id":3,"error":{"code":-32000,"message":"header not found"}}';
  const judged = (beyondHeads: boolean) => judgeOf({ payload, ignored: undefined, beyondHeads })(answered(u, body));
  t.like(judged(false), { ok: false });
  t.like(judged(true), { ok: true });
});
