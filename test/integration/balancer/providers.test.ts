/**
 * Independent voters on the wire (issue 16): N agreeing answers come from N providers. URL
 * variants of one upstream are one config entry (an error, not three voters), a node's http and
 * ws endpoints on one port are one provider, and upstreams sharing a `provider:` label vote once:
 * two of them lying alike cannot form N=2.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { WebSocketServer } from 'ws';
import { defaultAnswer, render, startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream.js';
import { runCli } from '../../support/cli.js';
import { rpc, startGateway } from '../../support/gateway.js';

const pinnedBalance = rpc('eth_getBalance', ['0x1111111111111111111111111111111111111111', '0x10']);
const calls = (fakes: FakeUpstream[]) => fakes.map((f) => f.calls);

async function fakes(t: import('ava').ExecutionContext, profiles: Parameters<typeof startFakeUpstream>[0][]) {
  const list = await Promise.all(profiles.map((p) => startFakeUpstream(p)));
  t.teardown(() => Promise.all(list.map((f) => f.close())));
  return list;
}

async function gateway(t: import('ava').ExecutionContext, raw: Record<string, unknown>) {
  const gw = await startGateway(raw);
  t.teardown(() => gw.close());
  return gw;
}

test('should refuse one upstream listed as https://x/, https://x/#b and https://x/? (one voter, not three)', async (t) => {
  const [f] = await fakes(t, [{}]);
  const err = await t.throwsAsync(gateway(t, { chains: { 1: { rpcs: [f!.url, `${f!.url}#b`, `${f!.url}?`] } } }));
  t.regex(err!.message, /chains\.1\.rpcs\[1\]/);
  t.regex(err!.message, /chains\.1\.rpcs\[2\]/);
  t.regex(err!.message, /listed twice \(the same URL as chains\.1\.rpcs\[0\] once the case, default port, fragment and empty query are ignored\)/);
  t.is(f!.calls, 0);
});

test('should exit 2 on URL variants of one upstream and a bad provider label, naming the YAML path and line', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'omnigate-providers-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'variants.yaml');
  const yaml = ['chains:', '  1:', '    rpcs:', '      - https://x.example/v2/KEY', '      - https://X.example:443/v2/KEY#b', '      - url: https://y.example/', '        provider: [a]', ''];
  await writeFile(file, yaml.join('\n'));
  const r = runCli(['serve', '--config', file]);
  t.teardown(() => void r.child.kill());
  t.is(await r.exited, 2);
  const err = r.err.join('');
  t.regex(err, /chains\.1\.rpcs\[1\] \(line 5\): "https:\/\/x\.example\/v2\/KEY" is listed twice \(the same URL as chains\.1\.rpcs\[0\]/);
  t.regex(err, /chains\.1\.rpcs\[2\]\.provider \(line 7\): \["a"\] is not a provider label/);
});

test('should never send the fragment of an upstream URL', async (t) => {
  const [f] = await fakes(t, [{ path: '/v2/KEY' }]);
  const gw = await gateway(t, { chains: { 1: { rpcs: [`${f!.url}#fragment`] } } });
  const r = await gw.post('/rpc/1', pinnedBalance);
  t.is(r.status, 200, r.text);
  t.is(f!.requests[0]!.path, '/v2/KEY');
});

test('should not let two lying upstreams of one provider form N=2', async (t) => {
  // Without one vote per provider, the two liars (asked first) would agree and be returned.
  const list = await fakes(t, [{ profile: 'liar' }, { profile: 'liar' }, {}]);
  const [l1, l2, honest] = list;
  const gw = await gateway(t, {
    chains: { 1: { rpcs: [{ url: l1!.url, provider: 'shady' }, { url: l2!.url, provider: 'shady' }, honest!.url] } },
  });
  const r = await gw.post('/confirmations/2/rpc/1', pinnedBalance);
  t.is(r.status, 502, r.text);
  t.is(r.body.error.code, -32010, r.text);
  t.deepEqual(calls(list), [1, 1, 1], 'the best upstream of each provider first, then the second one of "shady"');
  t.deepEqual(
    r.body.error.data.groups.map((g: { upstreams: string[] }) => g.upstreams.length).sort(),
    [1, 2],
    'the liars agree with each other, as one provider',
  );
});

test('should confirm with the first upstream of each provider, skipping a second one of the same provider', async (t) => {
  const list = await fakes(t, [{}, {}, {}]);
  const [a1, a2, b] = list;
  const gw = await gateway(t, { chains: { 1: { rpcs: [{ url: a1!.url, provider: 'a' }, { url: a2!.url, provider: 'a' }, { url: b!.url, provider: 'b' }] } } });
  const r = await gw.post('/confirmations/2/rpc/1', pinnedBalance);
  t.is(r.status, 200, r.text);
  t.deepEqual(calls(list), [1, 0, 1]);
  t.deepEqual(String(r.headers['x-checked-urls']).split(','), [a1!.url, b!.url]);
});

test('should ask a provider\'s second upstream when its first failed, and count it as that provider\'s vote', async (t) => {
  const list = await fakes(t, [{ profile: 'error500' }, {}, {}]);
  const [a1, a2, b] = list;
  const gw = await gateway(t, { chains: { 1: { rpcs: [{ url: a1!.url, provider: 'a' }, { url: a2!.url, provider: 'a' }, { url: b!.url, provider: 'b' }] } } });
  const r = await gw.post('/confirmations/2/rpc/1', pinnedBalance);
  t.is(r.status, 200, r.text);
  t.deepEqual(calls(list), [1, 1, 1]);
  t.deepEqual(String(r.headers['x-checked-urls']).split(',').sort(), [a2!.url, b!.url].sort());
});

test('should answer -32003 when <n> exceeds the distinct usable providers, naming both counts', async (t) => {
  const list = await fakes(t, [{}, {}, {}]);
  const gw = await gateway(t, { chains: { 1: { rpcs: [{ url: list[0]!.url, provider: 'a' }, { url: list[1]!.url, provider: 'a' }, list[2]!.url] } } });
  const r = await gw.post('/confirmations/3/rpc/1', pinnedBalance);
  t.is(r.status, 400, r.text);
  t.is(r.body.error.code, -32003);
  t.deepEqual(r.body.error.data, { required: 3, usable: 2, usableUpstreams: 3 });
  t.regex(r.body.error.message, /chain 1 has 2 usable providers \(3 usable upstreams; upstreams of one provider vote once\)/);
  t.deepEqual(calls(list), [0, 0, 0]);
});

/** One node serving JSON-RPC over http and ws on one port, as geth, anvil and most providers do. */
async function dualNode(t: import('ava').ExecutionContext) {
  const node = { calls: 0 };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      node.calls += 1;
      res.writeHead(200, { 'content-type': 'application/json' }).end(render('honest', JSON.parse(Buffer.concat(chunks).toString()), defaultAnswer));
    });
  });
  const wss = new WebSocketServer({ server });
  wss.on('connection', (ws) =>
    ws.on('message', (data) => {
      node.calls += 1;
      ws.send(render('honest', JSON.parse(data.toString()), defaultAnswer));
    }),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        for (const c of wss.clients) c.terminate();
        wss.close();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  const { port } = server.address() as AddressInfo;
  return { node, http: `http://127.0.0.1:${port}`, ws: `ws://127.0.0.1:${port}` };
}

test('should count one node\'s http and ws endpoints as one provider', async (t) => {
  const dual = await dualNode(t);
  const [other] = await fakes(t, [{}]);
  const gw = await gateway(t, { chains: { 1: { rpcs: [dual.http, dual.ws, other!.url] } } });
  const r = await gw.post('/confirmations/2/rpc/1', pinnedBalance);
  t.is(r.status, 200, r.text);
  t.deepEqual(String(r.headers['x-checked-urls']).split(','), [dual.http, other!.url]);
  t.is(dual.node.calls, 1, 'the ws endpoint of the same node was not asked for a second vote');
  const three = await gw.post('/confirmations/3/rpc/1', pinnedBalance);
  t.is(three.status, 400, three.text);
  t.deepEqual(three.body.error.data, { required: 3, usable: 2, usableUpstreams: 3 });
});

test('should count one node reached at 127.0.0.1 and at 0.0.0.0 (this host) as one provider: the node alone cannot confirm', async (t) => {
  const [node] = await fakes(t, [{}]);
  const port = new URL(node!.url).port;
  const gw = await gateway(t, { chains: { 1: { rpcs: [node!.url, `http://0.0.0.0:${port}`] } } });
  const r = await gw.post('/confirmations/2/rpc/1', pinnedBalance);
  t.is(r.status, 400, r.text);
  t.is(r.body.error.code, -32003);
  t.deepEqual(r.body.error.data, { required: 2, usable: 1, usableUpstreams: 2 });
  t.is(node!.calls, 0);
});

test('should show each upstream\'s provider and the chain\'s provider count in /chains', async (t) => {
  const list = await fakes(t, [{}, {}, {}]);
  const gw = await gateway(t, {
    chains: { 1: { rpcs: [{ url: list[0]!.url, provider: 'acme' }, { url: list[1]!.url, provider: 'acme' }, `${list[2]!.url}#x`] } },
  });
  const r = await gw.request('GET', '/chains');
  t.is(r.status, 200);
  const chain = r.body[0];
  t.is(chain.providers, 2);
  t.deepEqual(
    chain.upstreams.map((u: { provider: string; url: string }) => [u.provider, u.url]),
    [['acme', list[0]!.url.replace(/\/$/, '')], ['acme', list[1]!.url.replace(/\/$/, '')], [new URL(list[2]!.url).host, list[2]!.url.replace(/\/$/, '')]],
  );
});
