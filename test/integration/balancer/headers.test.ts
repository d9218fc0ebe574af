/** The seven seed headers on every success, and the request id's round trip (spec 2.4). */
import http from 'node:http';
import test from 'ava';
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream.js';
import { rpc, startGateway, type Gateway } from '../../support/gateway.js';

let fakes: FakeUpstream[];
let gw: Gateway;
const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

test.before(async () => {
  fakes = await Promise.all([startFakeUpstream(), startFakeUpstream()]);
  gw = await startGateway({ chains: { 5: { rpcs: fakes.map((f) => f.url), confirmations: 2 } } });
});
test.after.always(async () => {
  await gw.close();
  await Promise.all(fakes.map((f) => f.close()));
});

for (const [title, body] of [
  ['confirmable', rpc('eth_getBalance', ['0x1111111111111111111111111111111111111111', '0x1'])],
  ['not confirmable', rpc('eth_blockNumber')],
  ['a batch', [rpc('eth_chainId', [], 1), rpc('eth_blockNumber', [], 2)]],
] as const) {
  test.serial(`should send all seven headers on a success (${title})`, async (t) => {
    const r = await gw.post('/rpc/5', body);
    t.is(r.status, 200);
    t.is(r.headers['content-type'], 'application/json');
    for (const h of ['x-checked-urls', 'x-confirmable', 'x-forwarded-from', 'x-json-hash', 'x-request-id', 'x-required-confirmations']) {
      t.truthy(r.headers[h], `${h} missing`);
    }
    t.regex(r.headers['x-json-hash'] as string, /^[0-9a-f]{64}$/);
    // a batch names each member's forwarding upstream (comma-separated): every one of them was checked
    const checked = (r.headers['x-checked-urls'] as string).split(',');
    for (const from of (r.headers['x-forwarded-from'] as string).split(',')) t.true(checked.includes(from), `${from} in X-Checked-URLS`);
    t.regex(r.headers['x-request-id'] as string, uuid);
  });
}

test.serial('should spell the headers as the spec does on the wire', async (t) => {
  const { rawHeaders } = await new Promise<http.IncomingMessage>((resolve, reject) => {
    const req = http.request(`${gw.url}/rpc/5`, { method: 'POST', agent: false, headers: { 'content-type': 'application/json' } }, resolve);
    req.on('error', reject);
    req.end(JSON.stringify(rpc('eth_blockNumber')));
  });
  for (const name of ['X-Checked-URLS', 'X-Confirmable', 'X-Forwarded-From', 'X-Json-Hash', 'X-Request-Id', 'X-Required-Confirmations', 'Content-Type']) {
    t.true(rawHeaders.includes(name), `${name} not spelled as in the spec`);
  }
});

test.serial('should echo the client X-Request-Id and send it to every upstream called', async (t) => {
  const before = fakes.map((f) => f.requests.length);
  const r = await gw.post('/rpc/5', rpc('eth_getBalance', ['0x1111111111111111111111111111111111111111', '0x1']), { 'X-Request-ID': 'abc-123' });
  t.is(r.headers['x-request-id'], 'abc-123');
  const sent = fakes.flatMap((f, i) => f.requests.slice(before[i]).map((q) => q.headers['x-request-id']));
  t.deepEqual(sent, ['abc-123', 'abc-123']);
});

test.serial('should make a fresh UUID per request when the client sends none, and send it upstream', async (t) => {
  const a = await gw.post('/rpc/5', rpc('eth_blockNumber'));
  const b = await gw.post('/rpc/5', rpc('eth_blockNumber'));
  t.regex(a.headers['x-request-id'] as string, uuid);
  t.not(a.headers['x-request-id'], b.headers['x-request-id']);
  const last = fakes.flatMap((f) => f.requests).map((q) => q.headers['x-request-id']);
  t.true(last.includes(b.headers['x-request-id'] as string));
});

test.serial('should replace an unusable X-Request-Id (too long) with a UUID', async (t) => {
  const r = await gw.post('/rpc/5', rpc('eth_blockNumber'), { 'X-Request-Id': 'x'.repeat(300) });
  t.regex(r.headers['x-request-id'] as string, uuid);
});

test.serial('should put X-Request-Id on errors too', async (t) => {
  const r = await gw.post('/rpc/5', 'nope', { 'X-Request-Id': 'err-1' });
  t.is(r.status, 400);
  t.is(r.headers['x-request-id'], 'err-1');
});

test.serial('should put the CORS headers only on answers to a request with an Origin (success and error)', async (t) => {
  for (const [body, status] of [[rpc('eth_blockNumber'), 200], ['nope', 400]] as const) {
    const plain = await gw.post('/rpc/5', body);
    t.is(plain.status, status);
    t.is(plain.headers['access-control-allow-origin'], undefined, `no CORS for a client without Origin (${status})`);
    t.is(plain.headers['access-control-expose-headers'], undefined);
    const browser = await gw.post('/rpc/5', body, { Origin: 'https://app.example' });
    t.is(browser.status, status);
    t.is(browser.headers['access-control-allow-origin'], '*');
    t.regex(browser.headers['access-control-expose-headers'] as string, /X-Request-Id/);
  }
});

test.serial('should answer a CORS preflight and expose the headers to browsers', async (t) => {
  const pre = await gw.request('OPTIONS', '/rpc/5', undefined, { Origin: 'https://app.example', 'Access-Control-Request-Method': 'POST' });
  t.is(pre.status, 204);
  t.is(pre.headers['access-control-allow-origin'], '*');
  const r = await gw.post('/rpc/5', rpc('eth_blockNumber'), { Origin: 'https://app.example' });
  t.regex(r.headers['access-control-expose-headers'] as string, /X-Json-Hash/);
});
