/**
 * Lifecycle: what a pipeline leaves behind once closed, in a process that goes on (an embedding
 * app that builds pipelines again, on a config reload say, or runs several). A closed pipeline
 * must be garbage: nothing process-wide (observers, timers, listeners) may keep it reachable.
 */
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { setImmediate as tick, setTimeout as sleep } from 'node:timers/promises';
import v8 from 'node:v8';
import vm from 'node:vm';
import test from 'ava';
import { rpcPipeline } from '../../../middleware/index.js';
import { UpstreamCallError } from '../../../lib/upstream/transport/contract.js';
import { createWsTransport } from '../../../lib/upstream/transport/ws.js';
import { pollHeadsNow } from '../../../lib/health/tracker.js';
import { until } from '../../support/wait.js';
import { defaultAnswer, startFakeUpstream, startFakeWsUpstream, type AnswerFn, type FakeUpstream } from '../../support/fake-upstream.js';
import { makeConfig, rpc as call, startGateway } from '../../support/gateway.js';

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;

/** Collects garbage until `ref` is gone, a few rounds at most; whether it is gone. */
async function collected(ref: WeakRef<object>): Promise<boolean> {
  for (let i = 0; i < 6 && ref.deref() !== undefined; i++) {
    await tick();
    gc();
  }
  return ref.deref() === undefined;
}

const config = () => makeConfig({ chains: { 1: { rpcs: ['http://127.0.0.1:1', 'http://127.0.0.1:2'] } } });

test('a closed pipeline with process metrics is garbage; two at once both serve the process metrics', async (t) => {
  const refs: WeakRef<object>[] = [];
  await (async () => {
    const a = rpcPipeline(config(), { processMetrics: true });
    const b = rpcPipeline(config(), { processMetrics: true });
    for (const rpc of [a, b]) {
      const text = await rpc.metrics.registry.metrics();
      t.regex(text, /^omnigate_process_cpu_user_seconds_total /m);
      t.regex(text, /^# TYPE omnigate_nodejs_gc_duration_seconds histogram/m);
      t.regex(text, /^omnigate_upstream_up\{/m, 'and its own metrics');
    }
    await Promise.all([a.close(), b.close()]);
    refs.push(new WeakRef(a.registry), new WeakRef(b.registry));
  })();
  for (const ref of refs) t.true(await collected(ref), 'the closed pipeline (its upstreams, agents) is collected');
});

test('a pipeline closed after probes, head tracking, ws upstreams and requests of every kind is garbage', async (t) => {
  const fakes = await Promise.all([startFakeUpstream(), startFakeUpstream(), startFakeWsUpstream()]);
  t.teardown(() => Promise.all(fakes.map((f) => f.close())));
  const refs: WeakRef<object>[] = [];
  await (async () => {
    const gw = await startGateway({ heads: { intervalMs: 100, waitMs: 100 }, chains: { 1: { rpcs: fakes.map((f) => f.url), confirmations: 2 } } });
    await gw.rpc.startHealthChecks().firstRound;
    await gw.rpc.startHeadTracking().runOnce();
    const balance = (block: string, id: number) => call('eth_getBalance', [`0x${'11'.repeat(20)}`, block], id);
    const replies = await Promise.all([
      gw.post('/rpc/1', balance('0x1', 1)),
      gw.post('/rpc/1', [balance('0x1', 1), balance('0x2', 2), call('eth_blockNumber', [], 3)]),
      gw.post('/rpc/1', call('eth_getBlockByNumber', ['0xffffff', false])), // above the head: waits for heads
      gw.request('GET', '/metrics'),
    ]);
    t.deepEqual(replies.map((r) => r.status > 0), [true, true, true, true]);
    await gw.close();
    refs.push(new WeakRef(gw.rpc.registry), new WeakRef(gw.rpc));
  })();
  for (const ref of refs) t.true(await collected(ref), 'the closed pipeline is collected');
});

test('close() of a ws upstream whose handshake is not answered ends at once, and the call waiting for it is never written', async (t) => {
  // Accepts the TCP connection, never answers the upgrade.
  const sockets: net.Socket[] = [];
  const received: Buffer[] = [];
  const server = net.createServer((s) => {
    sockets.push(s);
    s.on('data', (d) => received.push(d));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => {
    for (const s of sockets) s.destroy();
    server.close();
  });
  const transport = createWsTransport(`ws://127.0.0.1:${(server.address() as AddressInfo).port}`, { maxBytes: 1e6, handshakeTimeoutMs: 60_000 });
  const body = { jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] };
  const pending = transport.send({
    payload: { calls: [body], batch: false, raw: Buffer.from(JSON.stringify(body)) },
    requestId: 'r',
    signal: new AbortController().signal,
    timeoutMs: 60_000,
    maxBytes: 1e6,
  });
  pending.catch(() => undefined);
  while (sockets.length === 0) await sleep(10);
  const closed = await Promise.race([transport.close().then(() => 'closed'), sleep(5_000).then(() => 'still waiting')]);
  t.is(closed, 'closed', 'close() does not wait for the handshake timeout');
  const err = await t.throwsAsync(pending);
  t.true(err instanceof UpstreamCallError && !err.sent, 'the call failed, not sent');
  t.false(Buffer.concat(received).includes('eth_blockNumber'), 'nothing but the upgrade request reached the upstream');
});

test('head polls of more than 10 upstreams at once (the tracker, on-demand polls) raise no MaxListenersExceededWarning', async (t) => {
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
  process.on('warning', onWarning);
  t.teardown(() => process.off('warning', onWarning));
  // One slow fake behind 12 paths: 12 upstreams whose polls are in flight together.
  const fake = await startFakeUpstream({ delayMs: 100 });
  t.teardown(() => fake.close());
  const rpcs = Array.from({ length: 12 }, (_, i) => `${fake.url}/u${i}`);
  const gw = await startGateway({ chains: { 1: { rpcs } } });
  t.teardown(() => gw.close());
  await gw.rpc.startHeadTracking().runOnce();
  const chain = gw.rpc.registry.chains.get('1')!;
  pollHeadsNow(chain, chain.upstreams);
  // The polls made (waited for by count, not for a fixed time: a loaded machine makes them later).
  await until(() => fake.calls >= 24);
  t.deepEqual(warnings.filter((w) => w.startsWith('MaxListenersExceededWarning')), []);
});

test('rpc.close() ends the requests waiting for heads at once: -32015, not after heads.waitMs', async (t) => {
  // A node at block 0x150 and two at 0x100 that lack anything above it: a read at 0x120 waits
  // for their heads (a block no node has would be relayed at once instead).
  const node = (head: string): AnswerFn => (c) => {
    if (c.method === 'eth_blockNumber') return { result: head };
    if (c.method === 'eth_getBalance') return head === '0x150' ? { result: '0x1' } : { error: { code: -32000, message: 'header not found' } };
    return defaultAnswer(c);
  };
  const fakes = await Promise.all([startFakeUpstream({ answer: node('0x100') }), startFakeUpstream({ answer: node('0x100') }), startFakeUpstream({ answer: node('0x150') })]);
  t.teardown(() => Promise.all(fakes.map((f) => f.close())));
  const gw = await startGateway({
    heads: { waitMs: 60_000 },
    timeouts: { requestMs: 60_000 },
    chains: { 1: { rpcs: fakes.map((f) => f.url), confirmations: 2 } },
  });
  t.teardown(() => gw.close());
  await gw.rpc.startHeadTracking().runOnce();
  const asked = () => fakes.reduce((n, f) => n + f.requests.filter((r) => (r.body as { method?: string }).method === 'eth_getBalance').length, 0);
  const reply = gw.post('/rpc/1', call('eth_getBalance', [`0x${'11'.repeat(20)}`, '0x120'], 7));
  // Two answer "header not found": the request polls their heads at once and waits for them to
  // rise. Their eth_blockNumber after their eth_getBalance shows it is waiting (the wait begins
  // as the poll is sent).
  const method = (r: FakeUpstream['requests'][number]) => (r.body as { method?: string }).method;
  const polledAfterRead = (f: FakeUpstream) => {
    const read = f.requests.findIndex((r) => method(r) === 'eth_getBalance');
    return read >= 0 && f.requests.slice(read + 1).some((r) => method(r) === 'eth_blockNumber');
  };
  await until(() => asked() >= 3 && fakes.slice(0, 2).some(polledAfterRead));
  await gw.rpc.close();
  const end = await Promise.race([reply, sleep(5_000).then(() => 'still waiting' as const)]);
  if (end === 'still waiting') return t.fail('the request still waits for heads after close()');
  t.is(end.status, 503);
  t.is(end.body.id, 7);
  t.is(end.body.error.code, -32015, end.text);
});

test('starting the probes or the head tracker after close() is refused, saying why', async (t) => {
  const rpc = rpcPipeline(config());
  await rpc.close();
  t.throws(() => rpc.startHealthChecks(), { message: /startHealthChecks\(\) after close\(\)/ });
  t.throws(() => rpc.startHeadTracking(), { message: /startHeadTracking\(\) after close\(\)/ });
});
