/**
 * middleware/README.md "Testing your gateway with nock": a user's gateway (rpcPipeline in a plain
 * http.createServer) tested with nock standing in for the providers, as a user would write it.
 * Upstream calls go through node:http, so nock answers them; nothing reaches DNS.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import nock from 'nock';
import { validateConfig } from '../../../config/schema.js';
import { rpcPipeline } from '../../../middleware/index.js';
import { send } from '../../support/gateway.js';

// Each ava file runs in its own process: nock's interception stays in this one. nock's scopes
// are global to the process, so the tests run one at a time (ava runs a file's tests at once).
test.before(() => {
  nock.disableNetConnect(); // a call nock does not expect fails instead of leaving the machine
  nock.enableNetConnect('127.0.0.1'); // the test's own requests to the gateway
});
test.afterEach.always(() => nock.cleanAll());
test.after.always(() => nock.enableNetConnect());

/** The user's gateway: rpcPipeline for `rpcs` in a plain http.createServer, on port 0. */
async function gateway(t: import('ava').ExecutionContext, rpcs: string[], chain: Record<string, unknown> = {}) {
  const result = validateConfig({ chains: { 1: { rpcs, ...chain } } });
  if ('problems' in result) throw new Error(JSON.stringify(result.problems));
  const rpc = rpcPipeline(result.config);
  const server = http.createServer((req, res) =>
    rpc(req, res, () => {
      res.statusCode = 404;
      res.end();
    }),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await rpc.close();
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return (path: string, body: unknown) => send(url, 'POST', path, JSON.stringify(body), { 'content-type': 'application/json' });
}

const balance = { jsonrpc: '2.0', id: 1, method: 'eth_getBalance', params: ['0x00000000219ab540356cbb839cbe05303d7705fa', '0x10'] };
/** A nock reply that echoes the request's id, as a provider does. */
const result = (value: string) => (_uri: string, body: nock.Body) => ({ jsonrpc: '2.0', id: (body as { id: unknown }).id, result: value });

test.serial('N=1: the only upstream is answered from a nock scope', async (t) => {
  const provider = nock('https://rpc-a.provider.test').post('/v2/KEY').reply(200, result('0x3635c9adc5dea00000'));
  const post = await gateway(t, ['https://rpc-a.provider.test/v2/KEY']);

  const reply = await post('/rpc/1', balance);

  t.is(reply.status, 200);
  t.deepEqual(reply.body, { jsonrpc: '2.0', id: 1, result: '0x3635c9adc5dea00000' });
  t.true(provider.isDone());
});

test.serial('N=2: two providers, each answered from its own scope, agree', async (t) => {
  const a = nock('https://rpc-a.provider.test').post('/v2/KEY').reply(200, result('0x1'));
  const b = nock('https://eth.other-provider.test').post('/v1/KEY2').reply(200, result('0x1'));
  const post = await gateway(t, ['https://rpc-a.provider.test/v2/KEY', 'https://eth.other-provider.test/v1/KEY2']);

  const reply = await post('/confirmations/2/rpc/1', balance);

  t.is(reply.status, 200);
  t.deepEqual(reply.body, { jsonrpc: '2.0', id: 1, result: '0x1' });
  t.true(a.isDone());
  t.true(b.isDone());
});

test.serial('a scope replying 500 is skipped for another upstream', async (t) => {
  const failing = nock('https://rpc-a.provider.test').post('/v2/KEY').reply(500, 'upstream trouble');
  const working = nock('https://eth.other-provider.test').post('/v1/KEY2').reply(200, result('0x2'));
  // priority: the first upstream in list order is asked first, so the failing scope is reached.
  const post = await gateway(t, ['https://rpc-a.provider.test/v2/KEY', 'https://eth.other-provider.test/v1/KEY2'], { strategy: 'priority' });

  const reply = await post('/rpc/1', balance);

  t.is(reply.status, 200, JSON.stringify(reply.body));
  t.deepEqual(reply.body, { jsonrpc: '2.0', id: 1, result: '0x2' });
  t.true(failing.isDone());
  t.true(working.isDone());
});

test.serial('the request nock receives carries the request id and JSON headers', async (t) => {
  let headers: Record<string, string | string[]> = {};
  const provider = nock('https://rpc-a.provider.test')
    .post('/v2/KEY')
    .reply(200, function (this: nock.ReplyFnContext, _uri, body) {
      headers = this.req.headers;
      return { jsonrpc: '2.0', id: (body as { id: unknown }).id, result: '0x0' };
    });
  const post = await gateway(t, ['https://rpc-a.provider.test/v2/KEY']);

  const reply = await post('/rpc/1', balance);

  t.is(reply.status, 200);
  t.true(provider.isDone());
  t.is(headers['content-type'], 'application/json');
  t.is(headers.accept, 'application/json');
  t.truthy(headers['x-request-id']);
  t.regex(String(headers.via), /^1\.1 omnigate-[A-Za-z0-9_-]+$/);
});
