/**
 * Every bad input of spec B5 gets a JSON-RPC error object with the client's id (or null), the
 * right HTTP status and code, reaches no upstream, and the server keeps serving. Params no node
 * would accept get -32602 with HTTP 200, as a node sends it; what only a gateway says, a 4xx.
 */
import { gzipSync } from 'node:zlib';
import test from 'ava';
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream.js';
import { rpc, startGateway, type Gateway } from '../../support/gateway.js';

let fakes: FakeUpstream[];
let gw: Gateway;

test.before(async () => {
  fakes = await Promise.all([startFakeUpstream(), startFakeUpstream()]);
  gw = await startGateway({ limits: { bodyBytes: 64 * 1024, batchSize: 3 }, chains: { 1: { rpcs: fakes.map((f) => f.url) } } });
});
test.after.always(async () => {
  await gw.close();
  await Promise.all(fakes.map((f) => f.close()));
});

const upstreamCalls = () => fakes.reduce((n, f) => n + f.calls, 0);
const balance = (id: unknown) => rpc('eth_getBalance', ['0x1111111111111111111111111111111111111111', '0x1'], id);

interface Case {
  title: string;
  method?: string;
  path?: string;
  body: string | Buffer;
  status: number;
  code: number;
  id: unknown;
  message?: RegExp;
  headers?: Record<string, string>;
  /** Request headers besides Content-Type. */
  sent?: Record<string, string>;
}

const cases: Case[] = [
  { title: 'non-JSON body', body: '{"jsonrpc":"2.0",', status: 400, code: -32700, id: null, message: /not valid JSON/ },
  { title: 'empty body', body: '', status: 400, code: -32700, id: null, message: /empty/ },
  // RFC 9110 15.5.16: an unsupported content coding is a 415 that says which one is read.
  { title: 'a gzip-encoded body', body: gzipSync(JSON.stringify(balance(3))), sent: { 'content-encoding': 'gzip' }, status: 415, code: -32700, id: null, message: /Content-Encoding "gzip"/, headers: { 'accept-encoding': 'identity' } },
  // An id that is not UTF-8 would come back as U+FFFD, not as sent, and nodes read such bytes each their way.
  { title: 'a body that is not UTF-8', body: Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":"a'), Buffer.from([0xff, 0xfe]), Buffer.from('b","method":"eth_chainId"}')]), status: 400, code: -32700, id: null, message: /not UTF-8/ },
  { title: 'empty batch', body: '[]', status: 400, code: -32600, id: null, message: /empty batch/ },
  { title: 'a JSON string', body: '"hello"', status: 400, code: -32600, id: null },
  { title: 'a string id is fine but a missing method is not', body: JSON.stringify({ jsonrpc: '2.0', id: 'a-1', params: [] }), status: 400, code: -32600, id: 'a-1', message: /method/ },
  { title: 'wrong jsonrpc version', body: JSON.stringify({ jsonrpc: '1.0', id: 4, method: 'eth_chainId' }), status: 400, code: -32600, id: 4, message: /jsonrpc/ },
  { title: 'params as an object', body: JSON.stringify({ jsonrpc: '2.0', id: 'obj', method: 'eth_getBalance', params: { address: '0x1' } }), status: 400, code: -32600, id: 'obj', message: /params/ },
  { title: 'a float id', body: JSON.stringify({ jsonrpc: '2.0', id: 1.5, method: 'eth_chainId' }), status: 400, code: -32600, id: null, message: /id/ },
  { title: 'no id (a notification)', body: JSON.stringify({ jsonrpc: '2.0', method: 'eth_chainId' }), status: 400, code: -32600, id: null, message: /id/ },
  { title: 'one-element params where two are needed (eth_getBlockByNumber without the flag)', body: JSON.stringify(rpc('eth_getBlockByNumber', ['0x1'], 9)), status: 200, code: -32602, id: 9, message: /params\[1\]/ },
  { title: 'eth_getBalance without an address', body: JSON.stringify(rpc('eth_getBalance', [], 10)), status: 200, code: -32602, id: 10, message: /address/ },
  { title: 'a decimal block number', body: JSON.stringify(rpc('eth_getBalance', ['0x1111111111111111111111111111111111111111', '16'], 11)), status: 200, code: -32602, id: 11 },
  { title: 'eth_getLogs with blockHash and fromBlock', body: JSON.stringify(rpc('eth_getLogs', [{ blockHash: `0x${'1'.repeat(64)}`, fromBlock: '0x1' }], 12)), status: 200, code: -32602, id: 12 },
  { title: 'a batch over limits.batchSize', body: JSON.stringify([balance(1), balance(2), balance(3), balance(4)]), status: 400, code: -32007, id: null },
  { title: '/rpc/abc', path: '/rpc/abc', body: JSON.stringify(balance(20)), status: 400, code: -32009, id: 20, message: /chain id/ },
  { title: '/rpc/-1 (no wrap-around)', path: '/rpc/-1', body: JSON.stringify(balance(21)), status: 400, code: -32009, id: 21 },
  { title: 'an unknown chain', path: '/rpc/4294967297', body: JSON.stringify(balance(22)), status: 404, code: -32001, id: 22, message: /Unknown chain 4294967297/ },
  { title: '/confirmations/0/', path: '/confirmations/0/rpc/1', body: JSON.stringify(balance(23)), status: 400, code: -32002, id: 23 },
  { title: '/confirmations/-1/', path: '/confirmations/-1/rpc/1', body: JSON.stringify(balance(24)), status: 400, code: -32002, id: 24 },
  { title: '/confirmations/1.5/', path: '/confirmations/1.5/rpc/1', body: JSON.stringify(balance(25)), status: 400, code: -32002, id: 25 },
  { title: '/confirmations/abc/', path: '/confirmations/abc/rpc/1', body: JSON.stringify(balance(26)), status: 400, code: -32002, id: 26 },
  { title: 'N above the chain upstreams', path: '/confirmations/3/rpc/1', body: JSON.stringify(balance('n3')), status: 400, code: -32003, id: 'n3', message: /2 usable upstreams/ },
  { title: 'GET on an RPC route', method: 'GET', body: '', status: 405, code: -32004, id: null, headers: { allow: 'POST, OPTIONS' } },
  { title: 'PUT on an RPC route', method: 'PUT', body: JSON.stringify(balance(1)), status: 405, code: -32004, id: null },
  // A WebSocket client (a wallet's wss:// setting pointed at the gateway): told that omnigate serves none.
  { title: 'a WebSocket handshake on an RPC route', method: 'GET', body: '', sent: { connection: 'Upgrade', upgrade: 'websocket', 'sec-websocket-version': '13', 'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==' }, status: 405, code: -32004, id: null, message: /no WebSocket/, headers: { allow: 'POST, OPTIONS' } },
  { title: 'an oversized body', body: Buffer.alloc(200 * 1024, 'a'), status: 413, code: -32006, id: null, message: /limit is 65536 bytes/ },
];

for (const c of cases) {
  test.serial(`should refuse ${c.title}`, async (t) => {
    const before = upstreamCalls();
    const r = await gw.request(c.method ?? 'POST', c.path ?? '/rpc/1', c.body, { 'content-type': 'application/json', ...c.sent });
    t.is(r.status, c.status, r.text);
    t.is(r.headers['content-type'], 'application/json');
    t.truthy(r.headers['x-request-id']);
    t.is(r.body?.jsonrpc, '2.0');
    t.deepEqual(r.body.id, c.id);
    t.is(r.body.error.code, c.code);
    t.is(typeof r.body.error.message, 'string');
    if (c.message) t.regex(r.body.error.message, c.message);
    for (const [k, v] of Object.entries(c.headers ?? {})) t.is(r.headers[k], v);
    if (c.status === 200) {
      // an error a node sends itself (spec B5), answered as a node does: HTTP 200, not confirmed
      t.is(r.headers['x-confirmable'], 'false');
      t.is(r.headers['x-required-confirmations'], '1');
    }
    t.is(upstreamCalls(), before, 'no upstream was called');
    // the server keeps serving
    const ok = await gw.post('/rpc/1', rpc('eth_blockNumber', [], 'after'));
    t.is(ok.status, 200);
    t.is(ok.body.id, 'after');
  });
}

// Batches are answered per member (issue 25; more in batches.test.ts): a member refused gets its own error and id.
test.serial('should refuse a batch member with a bad block on its own, with its id, and answer the others', async (t) => {
  const before = upstreamCalls();
  const r = await gw.post('/rpc/1', [balance(1), rpc('eth_getBalance', ['0x1', 7], 2)]);
  t.is(r.status, 200, r.text);
  t.is(r.body.length, 2);
  t.is(r.body[0].id, 1);
  t.is(typeof r.body[0].result, 'string');
  t.is(r.body[1].id, 2);
  t.is(r.body[1].error.code, -32602);
  t.regex(r.body[1].error.message, /params\[1\]/);
  t.is(upstreamCalls() - before, 1);
  t.is(r.headers['x-confirmable'], 'false', 'one member refused: the array as a whole is not confirmed');
  t.is(r.headers['x-required-confirmations'], '1');
});

test.serial('should answer each member of a batch with repeated ids, in order', async (t) => {
  const r = await gw.post('/rpc/1', [balance(1), rpc('eth_chainId', [], 1)]);
  t.is(r.status, 200, r.text);
  t.deepEqual(r.body.map((m: { id: unknown }) => m.id), [1, 1]);
  t.is(typeof r.body[0].result, 'string');
  t.is(typeof r.body[1].result, 'string');
});

test.serial('should leave unknown paths to the host app (the pipeline calls next)', async (t) => {
  const r = await gw.request('POST', '/not-rpc', '{}');
  t.is(r.status, 404);
});

test.serial('should forward a method named like an Object member (constructor, __proto__) as an unknown method', async (t) => {
  for (const method of ['constructor', '__proto__', 'hasOwnProperty', 'toString']) {
    const r = await gw.post('/rpc/1', rpc(method, [], method));
    t.is(r.status, 200, `${method}: ${r.text}`);
    t.is(r.body.id, method);
    t.is(r.headers['x-confirmable'], 'false');
  }
});

test.serial('should refuse a block parameter nested thousands of levels deep with -32600 (limits.jsonDepth), not crash', async (t) => {
  const deep = `${'['.repeat(5_000)}${']'.repeat(5_000)}`;
  const r = await gw.post('/rpc/1', `{"jsonrpc":"2.0","id":"deep","method":"eth_getBlockTransactionCountByNumber","params":[${deep}]}`);
  t.is(r.status, 400, r.text);
  t.is(r.body.id, 'deep');
  t.is(r.body.error.code, -32600);
  t.regex(r.body.error.message, /deeper than 256 levels/);
});

test.serial('should never show a digit-only key written as <n>: not in the -32003 message, its data or a header', async (t) => {
  const key = '73194027561937465021';
  const before = upstreamCalls();
  for (const path of [`/confirmations/${key}/rpc/1`, `/confirmations/${key}/finalized/rpc/1`, `/confirmations/0${key}/rpc/1/`]) {
    const r = await gw.post(path, balance(33));
    t.is(r.status, 400, r.text);
    t.is(r.body.error.code, -32003);
    t.is(r.body.id, 33);
    // Neither the digits nor their rounding (7.3194027561937465e19) nor any long run of them.
    const shown = `${r.text}\n${JSON.stringify(r.headers)}`;
    t.false(shown.includes(key.slice(0, 12)), shown);
    t.false(shown.includes(String(Number(key)).slice(0, 12)), shown);
    t.regex(r.body.error.message, /\(2[01] characters, not shown/);
    t.is(r.headers['x-required-confirmations'], undefined);
  }
  t.is(upstreamCalls(), before);
});

test.serial('should echo the id of a body nested too deep as the client wrote it (1.0 stays 1.0)', async (t) => {
  const deep = `${'['.repeat(300)}${']'.repeat(300)}`;
  for (const written of ['1.0', '1e0', '-0', '"a\\u0062"']) {
    const r = await gw.post('/rpc/1', `{"jsonrpc":"2.0","id":${written},"method":"eth_getBlockTransactionCountByNumber","params":[${deep}]}`);
    t.is(r.status, 400, r.text);
    t.is(r.body.error.code, -32600);
    t.true(r.text.startsWith(`{"jsonrpc":"2.0","id":${written},"error":`), r.text);
  }
  // An id that is no valid id (not an integer) is null, as for any call.
  const r = await gw.post('/rpc/1', `{"jsonrpc":"2.0","id":1.5,"method":"eth_getBlockTransactionCountByNumber","params":[${deep}]}`);
  t.true(r.text.startsWith('{"jsonrpc":"2.0","id":null,"error":'), r.text);
});

test.serial('should refuse a block parameter nested within limits.jsonDepth but not a block with -32602', async (t) => {
  const deep = `${'['.repeat(200)}${']'.repeat(200)}`;
  const r = await gw.post('/rpc/1', `{"jsonrpc":"2.0","id":"deep","method":"eth_getBlockTransactionCountByNumber","params":[${deep}]}`);
  t.is(r.status, 200, r.text); // as a node sends its -32602
  t.is(r.body.id, 'deep');
  t.is(r.body.error.code, -32602);
});

test.serial('should refuse <n> above the upstreams however many digits it has with -32003', async (t) => {
  const r = await gw.post('/confirmations/18446744073709551617/rpc/1', balance(31));
  t.is(r.status, 400);
  t.is(r.body.error.code, -32003);
  t.is(r.body.id, 31);
  const chain = await gw.post(`/rpc/${'9'.repeat(40)}`, balance(32));
  t.is(chain.status, 404);
  t.is(chain.body.error.code, -32001);
});
