/**
 * Dead, failing and hung upstreams are skipped for confirmable and unconfirmable requests;
 * WebSocket upstreams vote; a chain served only over ws works; a provider key in the URL path
 * reaches the upstream and never appears in the logs.
 */
import test from 'ava';
import { createCliLogger } from '../../../lib/cli/logger.js';
import { deadUrl, startFakeUpstream, startFakeWsUpstream, type FakeUpstream } from '../../support/fake-upstream.js';
import { rpc, startGateway } from '../../support/gateway.js';

const pinned = rpc('eth_getBalance', ['0x1111111111111111111111111111111111111111', '0x10']);
const latest = rpc('eth_getBalance', ['0x1111111111111111111111111111111111111111', 'latest']);

async function closeAll(...things: { close(): Promise<void> }[]) {
  await Promise.all(things.map((x) => x.close()));
}

for (const [name, body, n] of [
  ['confirmable', pinned, 2],
  ['not confirmable', latest, 1],
] as const) {
  test(`should skip a dead upstream (${name})`, async (t) => {
    const good = await Promise.all([startFakeUpstream(), startFakeUpstream()]);
    const gw = await startGateway({ chains: { 1: { rpcs: [await deadUrl(), ...good.map((f) => f.url)], confirmations: 2 } } });
    t.teardown(() => closeAll(gw, ...good));
    const r = await gw.post('/rpc/1', body);
    t.is(r.status, 200, r.text);
    t.is(r.headers['x-required-confirmations'], String(n));
    t.false((r.headers['x-checked-urls'] as string).includes(gw.rpc.registry.chains.get('1')!.upstreams[0]!.url));
  });

  test(`should skip an upstream that answers HTTP 500 with HTML (${name})`, async (t) => {
    const fakes = await Promise.all([startFakeUpstream({ profile: 'error500' }), startFakeUpstream(), startFakeUpstream()]);
    const gw = await startGateway({ chains: { 1: { rpcs: fakes.map((f) => f.url), confirmations: 2 } } });
    t.teardown(() => closeAll(gw, ...fakes));
    const r = await gw.post('/rpc/1', body);
    t.is(r.status, 200, r.text);
    t.is(fakes[0]!.calls, 1);
    t.false((r.headers['x-checked-urls'] as string).includes(fakes[0]!.url));
  });

  test(`should give up on a hung upstream after timeouts.upstreamMs and use another (${name})`, async (t) => {
    const fakes = await Promise.all([startFakeUpstream({ profile: 'hang' }), startFakeUpstream(), startFakeUpstream()]);
    // 1.5 s, not less: under load (2 shared cores) a healthy fake can take 300 ms to answer. No
    // hedging, so that only the timeout moves the request on.
    const gw = await startGateway({ timeouts: { upstreamMs: 1_500, hedgeMs: 0 }, chains: { 1: { rpcs: fakes.map((f) => f.url), confirmations: 2 } } });
    t.teardown(() => closeAll(gw, ...fakes));
    const r = await gw.post('/rpc/1', body);
    t.is(r.status, 200, r.text);
    t.is(fakes[0]!.calls, 1);
    t.false((r.headers['x-checked-urls'] as string).includes(fakes[0]!.url));
  });
}

test('should rank an upstream that keeps failing last, so later requests do not wait for it', async (t) => {
  const fakes = await Promise.all([startFakeUpstream(), startFakeUpstream()]);
  const gw = await startGateway({ chains: { 1: { rpcs: fakes.map((f) => f.url) } } });
  t.teardown(() => closeAll(gw, ...fakes));
  t.is((await gw.post('/rpc/1', latest)).status, 200);
  fakes[0]!.profile = 'error500'; // it answered once, then keeps failing
  for (let i = 0; i < 5; i++) t.is((await gw.post('/rpc/1', latest)).status, 200);
  t.is(fakes[0]!.calls, 3, 'answered once, failed twice, then ranked last');
  t.is(fakes[1]!.calls, 5);
});

test('should rank an upstream that failed and never answered last from its first failure', async (t) => {
  const fakes = await Promise.all([startFakeUpstream({ profile: 'error500' }), startFakeUpstream()]);
  const gw = await startGateway({ chains: { 1: { rpcs: fakes.map((f) => f.url) } } });
  t.teardown(() => closeAll(gw, ...fakes));
  for (let i = 0; i < 5; i++) t.is((await gw.post('/rpc/1', latest)).status, 200);
  t.is(fakes[0]!.calls, 1, 'asked once, then ranked after the upstream that answers');
  t.is(fakes[1]!.calls, 5);
});

test('should answer 504 when the request deadline passes', async (t) => {
  const fakes = await Promise.all([startFakeUpstream({ profile: 'hang' }), startFakeUpstream({ profile: 'hang' })]);
  const gw = await startGateway({ timeouts: { upstreamMs: 5_000, requestMs: 300 }, chains: { 1: { rpcs: fakes.map((f) => f.url) } } });
  t.teardown(() => closeAll(gw, ...fakes));
  const r = await gw.post('/rpc/1', { ...latest, id: 77 });
  t.is(r.status, 504);
  t.is(r.body.id, 77);
  t.is(r.body.error.code, -32012);
});

test('should let WebSocket upstreams take part in confirmation', async (t) => {
  const ws = await Promise.all([startFakeWsUpstream({ profile: 'pretty' }), startFakeWsUpstream()]);
  const http = await startFakeUpstream();
  const gw = await startGateway({ chains: { 1: { rpcs: [ws[0]!.url, http.url, ws[1]!.url], confirmations: 3 } } });
  t.teardown(() => closeAll(gw, ...ws, http));
  const r = await gw.post('/rpc/1', { ...pinned, id: 'ws-1' });
  t.is(r.status, 200, r.text);
  t.is(r.body.id, 'ws-1', 'the client id comes back even though ws calls use ids of their own');
  t.deepEqual((r.headers['x-checked-urls'] as string).split(',').sort(), [ws[0]!.url, http.url, ws[1]!.url].sort());
  t.deepEqual([ws[0]!.calls, http.calls, ws[1]!.calls], [1, 1, 1]);
});

test('should serve a chain that has only ws upstreams, batches and concurrent calls included', async (t) => {
  const ws = await Promise.all([startFakeWsUpstream(), startFakeWsUpstream({ profile: 'reordered' })]);
  const gw = await startGateway({ chains: { 7: { rpcs: ws.map((w) => w.url), confirmations: 2 } } });
  t.teardown(() => closeAll(gw, ...ws));
  const results = await Promise.all(
    Array.from({ length: 20 }, (_, i) => gw.post('/rpc/7', rpc('eth_getBalance', ['0x1111111111111111111111111111111111111111', `0x${i + 1}`], i))),
  );
  for (const [i, r] of results.entries()) {
    t.is(r.status, 200, r.text);
    t.is(r.body.id, i);
  }
  const batch = await gw.post('/rpc/7', [rpc('eth_chainId', [], 'a'), rpc('eth_getBlockByNumber', ['0x2', false], 'b')]);
  t.is(batch.status, 200, batch.text);
  t.deepEqual(batch.body.map((m: { id: string }) => m.id).sort(), ['a', 'b']);
  t.is(batch.body.find((m: { id: string }) => m.id === 'a').result, '0x539');
});

test('should skip a dead ws upstream', async (t) => {
  const dead = (await deadUrl()).replace('http:', 'ws:');
  const good = await startFakeWsUpstream();
  const gw = await startGateway({ chains: { 1: { rpcs: [dead, good.url] } } });
  t.teardown(() => closeAll(gw, good));
  const r = await gw.post('/rpc/1', latest);
  t.is(r.status, 200, r.text);
  t.is(r.headers['x-forwarded-from'], good.url);
});

test('should send the provider key in the path upstream and keep it out of every log line', async (t) => {
  const key = '9f3c2a7b1e5d4c8a9b0f1e2d3c4b5a69';
  const fakes = await Promise.all([
    startFakeUpstream({ path: `/v2/${key}` }),
    startFakeUpstream({ path: `/v2/${key}`, profile: 'liar' }),
    startFakeUpstream({ path: `/v2/${key}`, profile: 'error500' }),
  ]);
  const lines: string[] = [];
  // No secret scrubbing here: this proves omnigate itself never logs a raw URL.
  const logger = createCliLogger({ level: 'debug', write: (l) => lines.push(l) });
  const gw = await startGateway({ chains: { 1: { rpcs: fakes.map((f) => f.url), confirmations: 2 } } }, { logger });
  t.teardown(() => closeAll(gw, ...fakes));
  const ok = await gw.post('/rpc/1', rpc('eth_blockNumber'));
  t.is(ok.status, 200);
  t.is(fakes[0]!.requests[0]!.path, `/v2/${key}`);
  const bad = await gw.post('/rpc/1', pinned);
  t.is(bad.status, 502);
  t.false(JSON.stringify(bad.body).includes(key), 'error data is redacted');
  t.true(JSON.stringify(bad.body).includes('/v2/***'));
  t.true(lines.length >= 3, 'requests were logged');
  t.false(lines.join('').includes(key), 'the key appears in a log line');
  t.true(lines.join('').includes('/v2/***'));
});

test('should name upstreams by their redacted URL in the headers by default', async (t) => {
  const key = 'abcdef0123456789abcdef0123456789';
  const fake: FakeUpstream = await startFakeUpstream({ path: `/${key}` });
  const gw = await startGateway({ chains: { 1: { rpcs: [fake.url] } } });
  t.teardown(() => closeAll(gw, fake));
  const r = await gw.post('/rpc/1', latest, { origin: 'https://any.page.example' });
  t.is(r.status, 200);
  t.is(r.headers['access-control-allow-origin'], '*', 'a web page can read the headers');
  t.false(JSON.stringify(r.headers).includes(key));
  t.is(r.headers['x-forwarded-from'], fake.url.replace(key, '***'));
  t.is(r.headers['x-checked-urls'], fake.url.replace(key, '***'));
});

test('should show the raw URLs in the headers only when redactHeaders is false (an explicit opt-out)', async (t) => {
  const key = 'abcdef0123456789abcdef0123456789';
  const fake: FakeUpstream = await startFakeUpstream({ path: `/${key}` });
  const gw = await startGateway({ redactHeaders: false, chains: { 1: { rpcs: [fake.url] } } });
  t.teardown(() => closeAll(gw, fake));
  const r = await gw.post('/rpc/1', latest);
  t.is(r.status, 200);
  t.is(r.headers['x-forwarded-from'], fake.url);
  t.is(r.headers['x-checked-urls'], fake.url);
});
