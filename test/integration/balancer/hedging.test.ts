/**
 * Hedging: when no upstream answered within timeouts.hedgeMs, one more is asked; the first usable
 * answers win and the slower call is aborted (the hung upstream sees its connection closed).
 */
import test from 'ava';
import { startFakeUpstream } from '../../support/fake-upstream.js';
import { rpc, startGateway } from '../../support/gateway.js';

/** Polls `cond` until it holds, for at most 20 s (that long only when the assertion after it is about to fail). */
async function until(cond: () => boolean): Promise<void> {
  for (const end = Date.now() + 20_000; !cond() && Date.now() < end; ) await new Promise((r) => setTimeout(r, 20));
}

test('should hedge an N=1 request to a second upstream and abort the hung one', async (t) => {
  const fakes = await Promise.all([startFakeUpstream({ profile: 'hang' }), startFakeUpstream(), startFakeUpstream()]);
  // Without hedging the request would wait for the 60 s upstream timeout (longer than the test timeout).
  const gw = await startGateway({ timeouts: { hedgeMs: 100, upstreamMs: 60_000, requestMs: 90_000 }, chains: { 1: { rpcs: fakes.map((f) => f.url) } } });
  t.teardown(() => Promise.all([gw.close(), ...fakes.map((f) => f.close())]));
  const r = await gw.post('/rpc/1', rpc('eth_blockNumber', [], 3));
  t.is(r.status, 200);
  t.is(r.body.id, 3);
  t.is(r.headers['x-forwarded-from'], fakes[1]!.url);
  t.deepEqual(fakes.map((f) => f.calls), [1, 1, 0], 'one hedge, not more');
  await until(() => fakes[0]!.aborted === 1);
  t.is(fakes[0]!.aborted, 1, 'the hung call was aborted once the answer was decided');
});

test('should hedge a confirmable request when one of the N is hung', async (t) => {
  const fakes = await Promise.all([startFakeUpstream(), startFakeUpstream({ profile: 'hang' }), startFakeUpstream({ profile: 'pretty' })]);
  const gw = await startGateway({ timeouts: { hedgeMs: 100, upstreamMs: 60_000, requestMs: 90_000 }, chains: { 1: { rpcs: fakes.map((f) => f.url), confirmations: 2 } } });
  t.teardown(() => Promise.all([gw.close(), ...fakes.map((f) => f.close())]));
  const r = await gw.post('/rpc/1', rpc('eth_getBalance', ['0x1111111111111111111111111111111111111111', '0x1']));
  t.is(r.status, 200);
  t.deepEqual(String(r.headers['x-checked-urls']).split(','), [fakes[0]!.url, fakes[2]!.url]);
  await until(() => fakes[1]!.aborted === 1);
  t.is(fakes[1]!.aborted, 1);
});

test('should not hedge when hedgeMs is 0', async (t) => {
  const fakes = await Promise.all([startFakeUpstream({ delayMs: 300 }), startFakeUpstream()]);
  const gw = await startGateway({ timeouts: { hedgeMs: 0 }, chains: { 1: { rpcs: fakes.map((f) => f.url) } } });
  t.teardown(() => Promise.all([gw.close(), ...fakes.map((f) => f.close())]));
  const r = await gw.post('/rpc/1', rpc('eth_blockNumber'));
  t.is(r.headers['x-forwarded-from'], fakes[0]!.url);
  t.deepEqual(fakes.map((f) => f.calls), [1, 0]);
});
