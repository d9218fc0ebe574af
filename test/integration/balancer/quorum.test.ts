/**
 * Agreement on the wire (spec B4): exactly N calls when the first N agree, early answer without
 * waiting for slow upstreams, formatting never causes disagreement, a liar is never returned,
 * escalation on failure or disagreement, and 502 data naming hashes and failures.
 */
import test from 'ava';
import { createHash } from 'node:crypto';
import stringify from 'json-stable-stringify';
import { deadUrl, startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream.js';
import { rpc, startGateway } from '../../support/gateway.js';

const pinnedBalance = rpc('eth_getBalance', ['0x1111111111111111111111111111111111111111', '0x10']);

async function setup(profiles: Parameters<typeof startFakeUpstream>[0][], confirmations: number) {
  const fakes = await Promise.all(profiles.map((p) => startFakeUpstream(p)));
  const gw = await startGateway({ confirmations, chains: { 1: { rpcs: fakes.map((f) => f.url) } } });
  return { fakes, gw, close: () => Promise.all([gw.close(), ...fakes.map((f) => f.close())]) };
}

const calls = (fakes: FakeUpstream[]) => fakes.map((f) => f.calls);

test('should make exactly N upstream calls when the first N agree', async (t) => {
  const { fakes, gw, close } = await setup([{}, {}, {}, {}, {}], 3);
  const r = await gw.post('/rpc/1', pinnedBalance);
  t.is(r.status, 200);
  t.is(r.headers['x-confirmable'], 'true');
  t.is(r.headers['x-required-confirmations'], '3');
  t.deepEqual(calls(fakes), [1, 1, 1, 0, 0]);
  t.deepEqual(String(r.headers['x-checked-urls']).split(','), fakes.slice(0, 3).map((f) => f.url));
  t.is(r.headers['x-forwarded-from'], fakes[String(r.headers['x-checked-urls']).split(',').indexOf(r.headers['x-forwarded-from'] as string)]!.url);
  await close();
});

test('should answer without waiting for upstreams it does not need', async (t) => {
  // The system we replace waited for every configured URL even when the first N agreed.
  const { fakes, gw, close } = await setup([{}, {}, {}, { profile: 'hang' }, { profile: 'hang' }], 3);
  const r = await gw.post('/rpc/1', pinnedBalance);
  t.is(r.status, 200);
  t.deepEqual(calls(fakes), [1, 1, 1, 0, 0]);
  t.deepEqual(String(r.headers['x-checked-urls']).split(','), fakes.slice(0, 3).map((f) => f.url));
  await close();
});

test('should agree across compact, pretty, reordered and extra-field answers with one X-Json-Hash', async (t) => {
  const { fakes, gw, close } = await setup([{ profile: 'honest' }, { profile: 'pretty' }, { profile: 'reordered' }, { profile: 'extras' }], 4);
  const r = await gw.post('/rpc/1', rpc('eth_getBlockByNumber', ['0x20', true]));
  t.is(r.status, 200, r.text);
  t.deepEqual(calls(fakes), [1, 1, 1, 1]);
  t.is(String(r.headers['x-checked-urls']).split(',').length, 4);
  await close();
});

test('should hash the canonical form, whatever the id and whichever upstream is forwarded', async (t) => {
  const { gw, close, fakes } = await setup([{ profile: 'pretty' }, { profile: 'reordered' }], 1);
  const a = await gw.post('/rpc/1', rpc('eth_getBlockByNumber', ['0x20', false], 7));
  // take the pretty upstream out: the reordered one answers now
  await fakes[0]!.close();
  const b = await gw.post('/rpc/1', rpc('eth_getBlockByNumber', ['0x20', false], 'other-id'));
  t.is(a.status, 200);
  t.is(b.status, 200);
  t.not(a.headers['x-forwarded-from'], b.headers['x-forwarded-from']);
  t.is(a.headers['x-json-hash'], b.headers['x-json-hash']);
  t.regex(a.headers['x-json-hash'] as string, /^[0-9a-f]{64}$/);
  // a client recomputes it (lib/verify/README.md recipe): hex strings lower-cased, keys sorted, no whitespace
  const lower = (_k: unknown, v: unknown) => (typeof v === 'string' && /^0x[0-9a-f]*$/i.test(v) ? v.toLowerCase() : v);
  const expected = createHash('sha256').update(stringify({ result: b.body.result }, { replacer: lower }) as string).digest('hex');
  t.is(b.headers['x-json-hash'], expected);
  await close();
});

test('should return the forwarded upstream raw bytes', async (t) => {
  const { gw, close } = await setup([{ profile: 'pretty' }, { profile: 'pretty' }], 2);
  const r = await gw.post('/rpc/1', pinnedBalance);
  t.is(r.status, 200);
  t.true(r.text.includes('\n  "jsonrpc": "2.0"'), 'body is the pretty upstream bytes, not re-serialized');
  t.is(r.body.id, 1);
  await close();
});

test('should never return a liar: escalate past it to a group of N', async (t) => {
  const { fakes, gw, close } = await setup([{ profile: 'liar' }, {}, {}, {}], 2);
  const r = await gw.post('/rpc/1', pinnedBalance);
  t.is(r.status, 200);
  t.deepEqual(calls(fakes), [1, 1, 1, 0]);
  t.false(r.headers['x-checked-urls']!.includes(fakes[0]!.url));
  t.not(r.headers['x-forwarded-from'], fakes[0]!.url);
  t.false(String(r.body.result).endsWith('ff'));
  t.is(gw.rpc.registry.chains.get('1')!.upstreams[0]!.health.disagreements, 1);
  await close();
});

test('should answer 502 with hashes and failures when no N agree', async (t) => {
  const dead = await deadUrl();
  const fakes = await Promise.all([startFakeUpstream({ profile: 'liar' }), startFakeUpstream(), startFakeUpstream({ profile: 'error500' })]);
  const gw = await startGateway({ chains: { 1: { rpcs: [...fakes.map((f) => f.url), dead], confirmations: 2 } } });
  t.teardown(() => Promise.all([gw.close(), ...fakes.map((f) => f.close())]));
  const r = await gw.post('/rpc/1', { ...pinnedBalance, id: 'abc' });
  t.is(r.status, 502);
  t.is(r.headers['content-type'], 'application/json');
  t.is(r.body.jsonrpc, '2.0');
  t.is(r.body.id, 'abc');
  t.is(r.body.error.code, -32010);
  t.is(r.body.error.data.required, 2);
  t.is(r.body.error.data.groups.length, 2);
  for (const g of r.body.error.data.groups) t.regex(g.hash, /^[0-9a-f]{64}$/);
  const reasons = r.body.error.data.failures.map((f: { reason: string }) => f.reason).join(' | ');
  t.regex(reasons, /HTTP 500/);
  t.regex(reasons, /ECONNREFUSED/);
  t.deepEqual(calls(fakes), [1, 1, 1]);
});

test('should answer 502 -32011 when every upstream fails', async (t) => {
  const fakes = await Promise.all([startFakeUpstream({ profile: 'error500' }), startFakeUpstream({ profile: 'error500' })]);
  const gw = await startGateway({ chains: { 1: { rpcs: fakes.map((f) => f.url) } } });
  t.teardown(() => Promise.all([gw.close(), ...fakes.map((f) => f.close())]));
  const r = await gw.post('/rpc/1', rpc('eth_blockNumber', [], 5));
  t.is(r.status, 502);
  t.is(r.body.id, 5);
  t.is(r.body.error.code, -32011);
  t.is(r.body.error.data.failures.length, 2);
});

test('should return an error answer that N upstreams agree on (a revert) as is', async (t) => {
  const { gw, close } = await setup([{}, { profile: 'pretty' }], 2);
  const r = await gw.post('/rpc/1', rpc('eth_call', [{ to: '0x1111111111111111111111111111111111111111', data: '0x' }, '0x10']));
  t.is(r.status, 200);
  t.is(r.body.error.code, 3);
  t.is(r.headers['x-confirmable'], 'true');
  await close();
});

test('should agree on a batch member by member, in request order', async (t) => {
  const { fakes, gw, close } = await setup([{ profile: 'reordered' }, {}], 2);
  const batch = [pinnedBalance, { ...rpc('eth_getBlockByNumber', ['0x5', false]), id: 2 }];
  const r = await gw.post('/rpc/1', batch);
  t.is(r.status, 200);
  t.is(r.headers['x-confirmable'], 'true');
  t.deepEqual(calls(fakes), [1, 1], 'both members asked of both upstreams, as one upstream batch each');
  t.deepEqual(fakes.map((f) => (f.requests[0]!.body as unknown[]).length), [2, 2]);
  t.is(r.body.length, 2);
  t.deepEqual(r.body.map((m: { id: unknown }) => m.id), [pinnedBalance.id, 2]);
  await close();
});

