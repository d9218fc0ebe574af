/**
 * The `omnigate serve` application on port 0 against a fake upstream: an RPC call answered, a
 * JSON 404 for an unknown route (problem+json under /api with an indexer), JSON answers for what
 * Node's parser refuses (no Host, bad bytes, headers too large), and close() ending idle
 * connections and calling onClose.
 */
import net from 'node:net';
import test from 'ava';
import { startServer, type RunningServer } from '../../../../lib/server/app.js';
import { startFakeUpstream, type FakeUpstream } from '../../../support/fake-upstream.js';
import { makeConfig, send } from '../../../support/gateway.js';
import { fromRoot } from '../../../support/paths.js';

let fake: FakeUpstream;
let running: RunningServer;
let closed = 0;
let extra = 0;

test.before(async () => {
  fake = await startFakeUpstream();
  running = await startServer(makeConfig({ chains: { 1: { rpcs: [fake.url] } } }), 0, {
    headTracking: false,
    extraHandlers: [(req, _res, next) => ((extra += req.url === '/api/seen' ? 1 : 0), next())],
    onClose: async () => void (closed += 1),
  });
});
test.after.always(async () => {
  await running?.close();
  await fake?.close();
});

const base = () => `http://127.0.0.1:${running.port}`;

/** Writes raw bytes on a fresh connection; resolves with everything the server sent before closing. */
function raw(bytes: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(running.port, '127.0.0.1', () => socket.write(bytes));
    let text = '';
    socket.on('data', (c) => (text += c));
    socket.on('end', () => resolve(text));
    socket.on('error', reject);
  });
}
const bodyOf = (response: string) => JSON.parse(response.slice(response.indexOf('\r\n\r\n') + 4));

test.serial('should answer an RPC call through the pipeline', async (t) => {
  const r = await send(base(), 'POST', '/rpc/1', JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'eth_chainId', params: [] }), { 'content-type': 'application/json' });
  t.is(r.status, 200);
  t.like(r.body, { jsonrpc: '2.0', id: 3 });
  t.is(r.headers['x-required-confirmations'], '1');
});

test.serial('should answer an unknown route with -32008 in JSON, and an unknown /api path with the indexer\'s 404', async (t) => {
  const r = await send(base(), 'GET', '/nowhere');
  t.is(r.status, 404);
  t.like(r.body, { jsonrpc: '2.0', id: null, error: { code: -32008 } });
  const api = await send(base(), 'GET', '/api/seen');
  t.is(api.status, 404);
  t.regex(String(api.headers['content-type']), /^application\/problem\+json/);
  t.is(extra, 1, 'the extra handler saw the request first');
});

test.serial('should refuse an HTTP/1.1 request without Host with -32600 and close', async (t) => {
  const response = await raw('GET /health HTTP/1.1\r\n\r\n');
  t.regex(response, /^HTTP\/1\.1 400 /);
  t.regex(response, /\r\nConnection: close\r\n/i);
  t.like(bodyOf(response), { id: null, error: { code: -32600 } });
});

test.serial('should answer what Node\'s parser refuses in JSON: bad bytes 400, headers too large 431', async (t) => {
  const bad = await raw('GET /he\u0001lth HTTP/1.1\r\nHost: x\r\n\r\n');
  t.regex(bad, /^HTTP\/1\.1 400 Bad Request\r\n/);
  t.like(bodyOf(bad), { jsonrpc: '2.0', id: null, error: { code: -32600 } });
  const big = await raw(`GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`);
  t.regex(big, /^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
  t.regex(bodyOf(big).error.message, /HPE_HEADER_OVERFLOW/);
});

test.serial('close() should end idle connections and call onClose', async (t) => {
  const idle = net.connect(running.port, '127.0.0.1');
  await new Promise((resolve) => idle.once('connect', resolve));
  const ended = new Promise((resolve) => idle.once('close', resolve));
  await running.close();
  await ended;
  t.is(closed, 1);
  t.false(running.server.listening);
});

test('loading the server loads none of the indexer\'s packages (database pool, GraphQL, Redoc): a balancer without the indexer API does not carry them', async (t) => {
  const { execFile } = await import('node:child_process');
  const app = fromRoot('lib/server/app.ts');
  const script = `import { createRequire } from 'node:module';
await import(${JSON.stringify(app)});
const loaded = Object.keys(createRequire(import.meta.url).cache);
console.log(JSON.stringify(['pg-promise', 'graphql', 'express-graphql', 'redoc-express', 'connect'].filter((p) => loaded.some((f) => f.includes('/node_modules/' + p + '/')))));`;
  const out = await new Promise<string>((resolve, reject) => {
    // (killed if it ever hangs: a child left behind would outlive the test)
    execFile(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: process.cwd(), timeout: 60_000, killSignal: 'SIGKILL' }, (err, stdout) => (err ? reject(err) : resolve(stdout)));
  });
  t.deepEqual(JSON.parse(out), ['connect'], 'connect (which the server does use) shows the check sees packages loaded by import');
});
