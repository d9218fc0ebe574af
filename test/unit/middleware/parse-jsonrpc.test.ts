/**
 * Stage 1, parse, on the wire (node:http on port 0): the request id, the bounded body, the
 * payload and the route written to the context; each refusal with its JSON-RPC code; a request
 * carrying the gateway's own Via token refused before its body is read.
 */
import { EventEmitter } from 'node:events';
import http from 'node:http';
import test from 'ava';
import { GatewayError } from '../../../lib/errors.js';
import { getContext } from '../../../lib/pipeline/context.js';
import type { Registry } from '../../../lib/upstream/registry.js';
import { parseJsonRpc, pickRequestId, type ParseJsonRpcOptions } from '../../../middleware/parse-jsonrpc.js';
import { rpc, send } from '../../support/gateway.js';
import { runStage, serveHandler, testChain, testUpstream } from '../../support/stage.js';

const ours = testUpstream(0);
const registry: Registry = {
  chains: new Map([['1', testChain([ours, testUpstream(1)])]]),
  loopThrough: (tokens) => (tokens.includes(ours.hopToken) ? ours : undefined),
  close: async () => {},
};

/** What the stage passed on: its error's code, status and headers, or what it wrote to the context. */
async function parse(method: string, path: string, body?: string, headers: Record<string, string> = {}, options: Partial<ParseJsonRpcOptions> = {}, prepare?: (req: http.IncomingMessage) => void) {
  const server = await serveHandler((req, res) => {
    prepare?.(req);
    parseJsonRpc({ registry, bodyLimit: 200, maxBatchSize: 3, ...options })(req, res, (err) => {
      const ctx = getContext(req);
      const seen = err instanceof GatewayError
        ? { rpcCode: err.rpcCode, status: err.status, headers: err.headers, message: err.message }
        : { requestId: ctx.requestId, chain: ctx.chain?.id, override: ctx.confirmationsOverride, via: ctx.via, calls: ctx.payload?.calls, batch: ctx.payload?.batch, raw: ctx.payload?.raw.toString() };
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(seen));
    });
  });
  try {
    return (await send(server.url, method, path, body, headers)).body;
  } finally {
    await server.close();
  }
}

const balance = JSON.stringify(rpc('eth_getBalance', ['0x1', '0x10'], 5));

test('should write the payload, the chain and the client\'s request id', async (t) => {
  const seen = await parse('POST', '/rpc/1', balance, { 'x-request-id': 'client-id-1' });
  t.deepEqual(seen, { requestId: 'client-id-1', chain: '1', calls: [{ id: 5, method: 'eth_getBalance', params: ['0x1', '0x10'] }], batch: false, raw: balance });
});

test('should read <n> from a confirmations route', async (t) => {
  const seen = await parse('POST', '/confirmations/2/rpc/01', balance);
  t.like(seen, { chain: '1', override: 2 });
});

test('should keep only a request id of 1–200 visible ASCII characters', (t) => {
  t.is(pickRequestId('abc-1'), 'abc-1');
  t.is(pickRequestId(['first', 'second']), 'first');
  const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
  for (const bad of [undefined, '', 'has space', 'x'.repeat(201), 'é']) t.regex(pickRequestId(bad), uuid, String(bad));
});

const refusals: [string, string, string, string | undefined, Record<string, string>, number, number][] = [
  ['a GET', 'GET', '/rpc/1', undefined, {}, -32004, 405],
  ['a body that is not JSON', 'POST', '/rpc/1', '{oops', {}, -32700, 400],
  ['a compressed body', 'POST', '/rpc/1', balance, { 'content-encoding': 'gzip' }, -32700, 415],
  ['a compressed body over the limit', 'POST', '/rpc/1', 'x'.repeat(201), { 'content-encoding': 'br' }, -32700, 415],
  ['a request without jsonrpc', 'POST', '/rpc/1', '{"id":1,"method":"eth_chainId","params":[]}', {}, -32600, 400],
  ['a declared body over the limit', 'POST', '/rpc/1', 'x'.repeat(201), {}, -32006, 413],
  ['a chain id that is not a number', 'POST', '/rpc/abc', balance, {}, -32009, 400],
  ['a chain not configured', 'POST', '/rpc/5', balance, {}, -32001, 404],
  ['confirmations of 0', 'POST', '/confirmations/0/rpc/1', balance, {}, -32002, 400],
  ['a path that is no RPC route', 'POST', '/other', balance, {}, -32008, 404],
];
for (const [what, method, path, body, headers, rpcCode, status] of refusals) {
  test(`should refuse ${what} with ${rpcCode} (${status})`, async (t) => {
    t.like(await parse(method, path, body, headers), { rpcCode, status });
  });
}

test('should refuse a batch over maxBatchSize with -32007 (400)', async (t) => {
  const batch = JSON.stringify([1, 2, 3, 4].map((id) => rpc('eth_chainId', [], id)));
  t.like(await parse('POST', '/rpc/1', batch, {}, { bodyLimit: 1000 }), { rpcCode: -32007, status: 400 });
  t.like(await parse('POST', '/rpc/1', JSON.stringify([1, 2, 3].map((id) => rpc('eth_chainId', [], id))), {}, { bodyLimit: 1000 }), { batch: true, chain: '1' });
});

test('should say Allow: POST, OPTIONS when refusing a GET, and Connection: close on a body too large', async (t) => {
  t.like(await parse('GET', '/rpc/1'), { headers: { Allow: 'POST, OPTIONS' } });
  t.like(await parse('POST', '/rpc/1', 'x'.repeat(201)), { headers: { Connection: 'close' } });
});

test('should refuse a chunked body once it passes the limit', async (t) => {
  const server = await serveHandler((req, res) => {
    parseJsonRpc({ registry, bodyLimit: 100, maxBatchSize: 3 })(req, res, (err) => res.end(JSON.stringify({ rpcCode: (err as GatewayError | undefined)?.rpcCode })));
  });
  try {
    const reply = await new Promise<string>((resolve, reject) => {
      const req = http.request(`${server.url}/rpc/1`, { method: 'POST', agent: false }, (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c));
        res.on('end', () => resolve(text));
      });
      req.on('error', reject);
      req.write('x'.repeat(60));
      req.end('x'.repeat(60));
    });
    t.deepEqual(JSON.parse(reply), { rpcCode: -32006 });
  } finally {
    await server.close();
  }
});

test('should refuse a request carrying one of its own Via tokens with -32014 and take that upstream out of rotation', async (t) => {
  t.false(ours.health.loop);
  t.like(await parse('POST', '/rpc/1', balance, { via: `1.1 other-proxy, 1.1 omnigate-${ours.hopToken}` }), { rpcCode: -32014, status: 508 });
  t.true(ours.health.loop);
});

test('should pass on the Via entries of other gateways', async (t) => {
  t.like(await parse('POST', '/rpc/1', balance, { via: '1.1 omnigate-abc, 1.1 squid' }), { via: '1.1 omnigate-abc', chain: '1' });
});

test('should read a body a host app already parsed, re-serialized, and bound its size', async (t) => {
  const parsed = (body: unknown) =>
    Object.assign(new EventEmitter(), { headers: {}, method: 'POST', url: '/rpc/1', readableEnded: true, body, resume() {} }) as unknown as http.IncomingMessage;
  const res = new EventEmitter() as unknown as http.ServerResponse;
  const req = parsed({ jsonrpc: '2.0', id: 9, method: 'eth_chainId', params: [] });
  const { err } = await runStage(parseJsonRpc({ registry, bodyLimit: 200, maxBatchSize: 3 }), req, res);
  t.is(err, undefined);
  t.deepEqual(getContext(req).payload!.calls, [{ id: 9, method: 'eth_chainId', params: [] }]);
  t.is(getContext(req).payload!.raw.toString(), '{"jsonrpc":"2.0","id":9,"method":"eth_chainId","params":[]}');
  const big = await runStage(parseJsonRpc({ registry, bodyLimit: 40, maxBatchSize: 3 }), parsed({ jsonrpc: '2.0', id: 9, method: 'eth_chainId', params: [] }), res);
  t.like(big.err, { rpcCode: -32006 });
});

test('should refuse a bodyLimit that is not positive', (t) => {
  t.throws(() => parseJsonRpc({ registry, bodyLimit: 0, maxBatchSize: 1 }), { instanceOf: TypeError });
});
