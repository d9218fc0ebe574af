/** GET /health, GET /chains (redacted, with health) and GET /collection.json on the wire. */
import test from 'ava';
import { startFakeUpstream } from '../../support/fake-upstream.js';
import { rpc, startGateway } from '../../support/gateway.js';

test('should answer /health, /chains and /collection.json', async (t) => {
  const key = '0123456789abcdef0123456789abcdef';
  const fakes = await Promise.all([startFakeUpstream({ path: `/v3/${key}` }), startFakeUpstream({ profile: 'error500' })]);
  const gw = await startGateway({ chains: { 10: { rpcs: fakes.map((f) => f.url), confirmableMethods: ['eth_getBlockByHash'] } } });
  t.teardown(() => Promise.all([gw.close(), ...fakes.map((f) => f.close())]));
  await gw.post('/rpc/10', rpc('eth_blockNumber'));

  const health = await gw.request('GET', '/health');
  t.is(health.status, 200);
  t.is(health.body.status, 'ok');

  const chains = await gw.request('GET', '/chains');
  t.is(chains.status, 200);
  t.false(chains.text.includes(key));
  const [chain] = chains.body;
  t.is(chain.chainId, '10');
  t.deepEqual(chain.confirmableMethods, ['eth_getBlockByHash']);
  t.regex(chain.upstreams[0].url, /\/v3\/\*\*\*$/);
  t.is(chain.upstreams[0].transport, 'http');
  t.is(chain.upstreams[0].successes, 1);
  t.is(chain.upstreams[1].successes + chain.upstreams[1].failures, 0);

  const collection = await gw.request('GET', '/collection.json');
  t.is(collection.status, 200);
  t.regex(collection.body.info.schema, /v2\.1\.0/);
  t.deepEqual(collection.body.item.map((f: { name: string }) => f.name), ['eth', 'eth (confirmations)']);
  t.is(collection.body.variable.find((v: { key: string }) => v.key === 'baseUrl').value, gw.url);

  const post = await gw.request('POST', '/health', '{}');
  t.is(post.status, 405);
  t.is(post.body.error.code, -32004);
});

test('without access: the collection asks for no key (no apiKey variable, no X-Api-Key header)', async (t) => {
  const fake = await startFakeUpstream();
  const gw = await startGateway({ chains: { 10: { rpcs: [fake.url] } } });
  t.teardown(() => Promise.all([gw.close(), fake.close()]));
  const collection = await gw.request('GET', '/collection.json');
  t.is(collection.status, 200);
  t.false(collection.body.variable.some((v: { key: string }) => v.key === 'apiKey'));
  const headers = collection.body.item.flatMap((f: { item: { request: { header: { key: string }[] } }[] }) => f.item.flatMap((i) => i.request.header.map((h) => h.key)));
  t.true(headers.length > 20);
  t.true(headers.every((k: string) => k === 'Content-Type'));
});
