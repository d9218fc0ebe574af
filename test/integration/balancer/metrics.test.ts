/** GET /metrics in Prometheus text: requests by chain/method/outcome, upstream latency, disagreements, health. */
import test from 'ava';
import { startFakeUpstream } from '../../support/fake-upstream.js';
import { rpc, startGateway } from '../../support/gateway.js';

test('should count requests, upstream latency, disagreements and health at /metrics', async (t) => {
  const key = 'feedfacefeedfacefeedfacefeedface';
  const fakes = await Promise.all([startFakeUpstream({ profile: 'liar', path: `/v2/${key}` }), startFakeUpstream(), startFakeUpstream()]);
  const gw = await startGateway({ chains: { 1: { rpcs: fakes.map((f) => f.url), confirmations: 2 } } });
  t.teardown(() => Promise.all([gw.close(), ...fakes.map((f) => f.close())]));
  await gw.post('/rpc/1', rpc('eth_getBalance', ['0x1111111111111111111111111111111111111111', '0x1']));
  await gw.post('/rpc/1', rpc('eth_blockNumber'));
  await gw.post('/rpc/1', rpc('web3_madeUpMethod'));
  await gw.post('/rpc/1', 'nope');
  const m = await gw.request('GET', '/metrics');
  t.is(m.status, 200);
  t.regex(m.headers['content-type'] as string, /^text\/plain/);
  t.regex(m.text, /omnigate_requests_total\{chain="1",method="eth_getBalance",outcome="ok"\} 1/);
  t.regex(m.text, /omnigate_requests_total\{chain="1",method="eth_blockNumber",outcome="ok"\} 1/);
  t.regex(m.text, /omnigate_requests_total\{chain="1",method="other",outcome="ok"\} 1/, 'unknown method names are bucketed');
  t.regex(m.text, /omnigate_requests_total\{chain="none",method="none",outcome="OMNI_ERR_PARSE"\} 1/);
  t.regex(m.text, /omnigate_upstream_disagreements_total\{chain="1",upstream="http:\/\/127\.0\.0\.1:\d+\/v2\/\*\*\*"\} 1/);
  t.regex(m.text, /omnigate_upstream_request_duration_seconds_count\{chain="1",upstream="[^"]+",outcome="vote"\} \d/);
  t.regex(m.text, /omnigate_upstream_up\{chain="1",upstream="[^"]+"\} 1/);
  t.false(m.text.includes(key), 'metrics labels are redacted');
});

test('should keep two keys of one upstream apart in /metrics and /chains, never showing either key', async (t) => {
  // One node reached with two provider keys: the redacted URLs are equal, the labels are not.
  const keys = ['feedfacefeedfacefeedfacefeedface', 'deadbeefdeadbeefdeadbeefdeadbeef'];
  const fake = await startFakeUpstream();
  const gw = await startGateway({ chains: { 1: { rpcs: keys.map((k) => `${fake.url}/v2/${k}`) } } });
  t.teardown(() => Promise.all([gw.close(), fake.close()]));
  const r = await gw.post('/rpc/1', rpc('eth_getBalance', ['0x1111111111111111111111111111111111111111', '0x1']));
  t.is(r.status, 200, r.text);
  const labels = [`${fake.url}/v2/***#1`, `${fake.url}/v2/***#2`];
  t.true(labels.includes(String(r.headers['x-forwarded-from'])), String(r.headers['x-forwarded-from']));
  const chains = await gw.request('GET', '/chains');
  t.deepEqual(chains.body[0].upstreams.map((u: { url: string }) => u.url), labels);
  const m = await gw.request('GET', '/metrics');
  // Two series (the second upstream, never called nor probed here, is 0 until its first probe).
  for (const label of labels) t.regex(m.text, new RegExp(`omnigate_upstream_up\\{chain="1",upstream="${label.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}"\\} [01]\n`), label);
  for (const key of keys) t.false(m.text.includes(key) || chains.text.includes(key) || JSON.stringify(r.headers).includes(key));
});
