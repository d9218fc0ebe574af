/**
 * The request target's forms (RFC 9112 3.2) on the wire: a client behind a forward proxy writes
 * `POST http://host:port/rpc/1 HTTP/1.1` (absolute form), which a server must accept: it is
 * served as its path, by `omnigate serve` and by a pipeline mounted in a host app, with a client
 * key in its path masked wherever the path is shown. `OPTIONS *` is answered 204; any other target
 * that is not a path gets a JSON-RPC error, not connect's HTML 404.
 */
import test, { type ExecutionContext } from 'ava';
import { startServer } from '../../../lib/server/app.js';
import type { LogFn, Logger } from '../../../lib/log.js';
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream.js';
import { makeConfig, rpc, startGateway } from '../../support/gateway.js';
import { exchange } from '../../support/raw-http.js';

async function fake(t: ExecutionContext): Promise<FakeUpstream> {
  const f = await startFakeUpstream();
  t.teardown(() => f.close());
  return f;
}

function recordingLogger(lines: string[]): Logger {
  const log: LogFn = ((obj: unknown, msg?: string) => lines.push(JSON.stringify({ obj, msg }))) as LogFn;
  const logger: Logger = { debug: log, info: log, warn: log, error: log, child: (b) => (lines.push(JSON.stringify(b)), logger) };
  return logger;
}

const request = (method: string, target: string, body = '', host = 'x') =>
  `${method} ${target} HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;

test('omnigate serve: a request target in absolute form is served by its path and query; the target host stands for the Host header', async (t) => {
  const up = await fake(t);
  const server = await startServer(makeConfig({ chains: { 1337: { rpcs: [up.url] } } }), 0, { headTracking: false, healthChecks: false });
  t.teardown(() => server.close());
  const body = JSON.stringify(rpc('eth_chainId', [], 7));
  for (const target of [`http://127.0.0.1:${server.port}/rpc/1337`, `https://gw.example/confirmations/1/rpc/1337/`, `HTTP://gw.example:5000/rpc/1337?x=1`]) {
    const answer = await exchange(t, server.port, request('POST', target, body));
    t.is(answer.status, 200, `${target}: ${answer.head}\n${answer.body}`);
    t.deepEqual(answer.json, { jsonrpc: '2.0', id: 7, result: '0x539' }, target);
  }
  t.is(up.requests.filter((r) => (r.body as { id?: unknown }).id === 7).length, 3, 'each forwarded once');
  // A GET route reads the host of the target, not the Host header (RFC 9112 3.2.2).
  const collection = await exchange(t, server.port, request('GET', 'http://gw.example:8080/collection.json', '', 'other.example'));
  t.is(collection.status, 200, collection.body);
  t.true(collection.body.includes('http://gw.example:8080'), 'the base URL is the target host');
  t.false(collection.body.includes('other.example'));
  const health = await exchange(t, server.port, request('GET', 'http://gw.example/health'));
  t.is(health.status, 200);
  t.is(health.json.status, 'ok');
});

test('omnigate serve: OPTIONS * is answered 204 with the methods served; another target that is no path gets a JSON-RPC 400, not an HTML 404', async (t) => {
  const up = await fake(t);
  const server = await startServer(makeConfig({ chains: { 1337: { rpcs: [up.url] } } }), 0, { headTracking: false, healthChecks: false });
  t.teardown(() => server.close());
  const star = await exchange(t, server.port, request('OPTIONS', '*'));
  t.is(star.status, 204, star.head);
  t.regex(star.head, /\r\nAllow: GET, HEAD, POST, OPTIONS\r\n/i);
  const body = JSON.stringify(rpc('eth_chainId', [], 7));
  for (const [method, target] of [['POST', '*'], ['POST', 'rpc/1337'], ['GET', 'gw.example:5000'], ['POST', 'http:/rpc/1337']] as const) {
    const answer = await exchange(t, server.port, request(method, target, body));
    t.is(answer.status, 400, `${method} ${target}: ${answer.head}`);
    t.regex(answer.head, /\r\nContent-Type: application\/json\r\n/i);
    t.like(answer.json, { jsonrpc: '2.0', id: null, error: { code: -32600 } }, `${method} ${target}`);
  }
  t.is(up.requests.filter((r) => (r.body as { id?: unknown }).id === 7).length, 0, 'nothing forwarded');
});

test('omnigate serve with client keys: a key in an absolute-form target works, and is masked in every answer and log line', async (t) => {
  const up = await fake(t);
  const key = 'k3y-Abs0lute-Form-0123456789abcdef';
  const lines: string[] = [];
  const config = makeConfig({ access: { keys: [{ label: 'relayer', key }] }, chains: { 1337: { rpcs: [up.url] } } });
  const server = await startServer(config, 0, { headTracking: false, healthChecks: false, logger: recordingLogger(lines) });
  t.teardown(() => server.close());
  const body = JSON.stringify(rpc('eth_chainId', [], 7));
  const ok = await exchange(t, server.port, request('POST', `http://gw.example/rpc/1337/${key}`, body));
  t.is(ok.status, 200, ok.body);
  t.is(ok.json.id, 7);
  // (user-info in the target: a sender must not write it, RFC 9112 3.2.2; it is not the Host, and shown nowhere)
  const userInfo = await exchange(t, server.port, request('POST', `http://${key}@gw.example/rpc/1337/${key}`, body));
  t.is(userInfo.status, 200, userInfo.body);
  const answers = [ok, userInfo];
  for (const [method, target] of [
    ['GET', `http://gw.example/rpc/1337/${key}`],
    ['POST', `http://gw.example/rpc/1337/${key}/x`],
    ['POST', `http://gw.example/rpc/abc/${key}`],
    ['POST', `http://gw.example/RPC/1337/${key}`],
  ] as const) {
    const answer = await exchange(t, server.port, request(method, target, body));
    t.true(answer.status >= 400, `${method} ${target}: ${answer.head}`);
    t.is(answer.json.jsonrpc, '2.0');
    t.is(typeof answer.json.error.code, 'number', answer.body);
    answers.push(answer);
  }
  const shown = [...answers.map((a) => `${a.head}\n${a.body}`), ...lines].join('\n');
  t.true(shown.includes('/rpc/1337/***') || shown.includes('/***'), 'the paths are shown masked');
  t.false(shown.includes(key.slice(0, 12)), 'the key is in no answer and no log line');
});

test('a mounted pipeline serves an absolute-form target under its mount path', async (t) => {
  const up = await fake(t);
  const gw = await startGateway({ chains: { 1337: { rpcs: [up.url] } } }, { mountPath: '/gateway' });
  t.teardown(() => gw.close());
  const port = Number(new URL(gw.url).port);
  const body = JSON.stringify(rpc('eth_chainId', [], 9));
  const answer = await exchange(t, port, request('POST', `http://127.0.0.1:${port}/gateway/rpc/1337`, body));
  t.is(answer.status, 200, answer.body);
  t.deepEqual(answer.json, { jsonrpc: '2.0', id: 9, result: '0x539' });
  const collection = await exchange(t, port, request('GET', `http://127.0.0.1:${port}/gateway/collection.json`));
  t.is(collection.status, 200, collection.body);
  t.true(collection.body.includes('/gateway/rpc/{{chainId}}'), 'the mount path is read from the absolute form too');
});

test('omnigate serve: two Host lines, or a Host value no host is written with, get a JSON-RPC 400 (RFC 9112 3.2); usual hosts pass', async (t) => {
  const up = await fake(t);
  const server = await startServer(makeConfig({ chains: { 1337: { rpcs: [up.url] } } }), 0, { headTracking: false, healthChecks: false });
  t.teardown(() => server.close());
  const body = JSON.stringify(rpc('eth_chainId', [], 7));
  const head = (hosts: string[]) => `POST /rpc/1337 HTTP/1.1\r\n${hosts.map((h) => `Host: ${h}\r\n`).join('')}Content-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`;
  for (const hosts of [['a.example', 'b.example'], ['a.example', 'a.example'], ['a b'], ['a.example/x'], ['user@a.example'], ['a"<x>']]) {
    const answer = await exchange(t, server.port, head(hosts));
    t.is(answer.status, 400, `${hosts.join(' | ')}: ${answer.head}`);
    t.like(answer.json, { id: null, error: { code: -32600 } }, hosts.join(' | '));
    t.regex(answer.json.error.message, /Host/);
  }
  t.is(up.requests.filter((r) => (r.body as { id?: unknown }).id === 7).length, 0, 'none forwarded');
  for (const host of ['gw.example', 'gw.example.', '127.0.0.1:5000', '[::1]:5000', 'my_host:80', '']) {
    const answer = await exchange(t, server.port, head([host]));
    t.is(answer.status, 200, `${JSON.stringify(host)}: ${answer.body}`);
  }
  // (an absolute-form target's host is checked as the Host it stands for)
  const absolute = await exchange(t, server.port, request('POST', 'http://a"b/rpc/1337', body));
  t.is(absolute.status, 400, absolute.head);
});

test('a method name as long as the body is cut in the request log line, which does not grow with it', async (t) => {
  const up = await fake(t);
  const lines: string[] = [];
  const server = await startServer(makeConfig({ chains: { 1337: { rpcs: [up.url] } } }), 0, { headTracking: false, healthChecks: false, logger: recordingLogger(lines) });
  t.teardown(() => server.close());
  const method = `eth_${'x'.repeat(200_000)}`;
  const body = JSON.stringify([rpc(method, [], 1), rpc(method, [], 2), rpc('eth_chainId', [], 3)]);
  const answer = await exchange(t, server.port, request('POST', '/rpc/1337', body));
  t.is(answer.status, 200, answer.head);
  const line = lines.find((l) => l.includes('"rpc request"'));
  t.truthy(line, 'the request is logged');
  t.true(line!.length < 2_000, `the log line is ${line!.length} characters`);
  t.true(line!.includes('(200004 characters)'), 'it says how long the method was');
  t.true(line!.includes('eth_chainId'));
});
