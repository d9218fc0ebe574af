/**
 * Issue 16, "Crash" and "Bounded resources", on the wire: a ws upstream cannot crash the process
 * or have its numbers rewritten, a ws answer with an id never sent fails at once, JSON nesting is
 * bounded (client bodies and answers), the global budget of buffered upstream bytes (-32013),
 * server timers (408 at about headersTimeoutMs, SIGTERM with a half-sent head exits 0), bounded
 * probe concurrency, a bounded X-Checked-URLS, and a client leaving mid-body is not an error.
 */
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import net, { type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test, { type ExecutionContext } from 'ava';
import { WebSocketServer } from 'ws';
import type { Logger, LogFn } from '../../../lib/log.js';
import { probeChain } from '../../../lib/health/probe.js';
import { distinctLabels } from '../../../lib/upstream/registry.js';
import { createRegistry } from '../../../lib/upstream/registry.js';
import { silentLogger } from '../../../lib/log.js';
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream.js';
import { makeConfig, rpc, send, startGateway } from '../../support/gateway.js';
import { listeningPort, logLines, runCli, type Run } from '../../support/cli.js';

const pinned = (id: unknown = 1) => rpc('eth_getBalance', ['0x1111111111111111111111111111111111111111', '0x10'], id);

async function configFile(t: ExecutionContext, yaml: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'omnigate-bounds-'));
  t.teardown(() => rm(dir, { recursive: true }));
  const file = join(dir, 'omnigate.yaml');
  await writeFile(file, yaml);
  return file;
}

function cli(t: ExecutionContext, file: string): Run {
  const r = runCli(['serve', '--config', file, '--port', '0', '--no-indexer']);
  t.teardown(() => {
    if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill('SIGKILL');
  });
  return r;
}

/**
 * A ws upstream answering every message with `answer(message text, transport id)`; counts messages.
 */
async function wsUpstream(t: ExecutionContext, answer: (text: string, id: unknown) => string) {
  const server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await once(server, 'listening');
  const state = { calls: 0, url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}/` };
  server.on('connection', (socket) => {
    socket.on('message', (data) => {
      state.calls += 1;
      const text = data.toString();
      const message = JSON.parse(text) as { id: unknown } | { id: unknown }[];
      socket.send(answer(text, Array.isArray(message) ? message[0]!.id : message.id));
    });
  });
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        server.clients.forEach((c) => c.terminate());
        server.close(() => resolve());
      }),
  );
  return state;
}

async function fake(t: ExecutionContext, options: Parameters<typeof startFakeUpstream>[0] = {}): Promise<FakeUpstream> {
  const f = await startFakeUpstream(options);
  t.teardown(() => f.close());
  return f;
}

async function gateway(t: ExecutionContext, raw: Record<string, unknown>, options: Parameters<typeof startGateway>[1] = {}) {
  const gw = await startGateway(raw, options);
  t.teardown(() => gw.close());
  return gw;
}

// ---------------------------------------------------------------------------------------------
// ws upstreams

test('a ws upstream answering 16 KB of nested brackets fails its calls; the process stays up and answers from another upstream', async (t) => {
  const nested = `${'['.repeat(8192)}${']'.repeat(8192)}`;
  const bad = await wsUpstream(t, () => nested);
  const good = await fake(t);
  const file = await configFile(t, ['refreshInterval: 1', 'timeouts:', '  hedgeMs: 0', 'chains:', '  1337:', '    rpcs:', `      - ${bad.url}`, `      - ${good.url}`, ''].join('\n'));
  const r = cli(t, file);
  const port = await listeningPort(r);
  // the start-up probe reached the ws upstream (and was answered with the brackets)
  while (bad.calls < 2) await new Promise((resolve) => setTimeout(resolve, 20));
  const answer = await send(`http://127.0.0.1:${port}`, 'POST', '/rpc/1337', JSON.stringify(rpc('eth_blockNumber', [], 7)), { 'content-type': 'application/json' });
  t.is(answer.status, 200, answer.text);
  t.deepEqual(answer.body, { jsonrpc: '2.0', id: 7, result: '0x10' });
  t.is(r.child.exitCode, null, 'the process is still running');
  t.false(r.err.join('').includes('RangeError'), r.err.join(''));
  r.child.kill('SIGTERM');
  t.is(await r.exited, 0);
});

test('a ws answer with a string id fails the call at once: the next upstream answers (no wait for the call timeout)', async (t) => {
  const bad = await wsUpstream(t, () => '{"jsonrpc":"2.0","id":"1","result":"0xbad"}');
  const good = await fake(t);
  // a 60 s call timeout and no hedging: a call waiting for its timeout would outlast the test
  t.timeout(20_000);
  const gw = await gateway(t, { timeouts: { upstreamMs: 60_000, requestMs: 120_000, hedgeMs: 0 }, chains: { 1: { rpcs: [bad.url, good.url] } } });
  const r = await gw.post('/rpc/1', rpc('eth_blockNumber', [], 1));
  t.is(r.status, 200, r.text);
  t.deepEqual(r.body, { jsonrpc: '2.0', id: 1, result: '0x10' });
  t.is(r.headers['x-forwarded-from'], good.url);
  t.is(bad.calls, 1);
  t.is(good.calls, 1, 'asked after the ws upstream failed');
});

test('a ws answer is relayed byte-exact but for the id (12345678901234567890, 1.0, 1e400)', async (t) => {
  const ws = await wsUpstream(t, (_text, id) => `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"big":12345678901234567890,"one":1.0,"huge":1e400}}`);
  const gw = await gateway(t, { chains: { 1: { rpcs: [ws.url] } } });
  const r = await gw.post('/rpc/1', rpc('eth_blockNumber', [], 'client-id'));
  t.is(r.status, 200, r.text);
  t.is(r.text, '{"jsonrpc":"2.0","id":"client-id","result":{"big":12345678901234567890,"one":1.0,"huge":1e400}}');
});

// ---------------------------------------------------------------------------------------------
// JSON nesting depth

test('a 5 MB request body of nested brackets is refused before parsing (-32600), no upstream is called', async (t) => {
  const up = await fake(t);
  const gw = await gateway(t, { chains: { 1: { rpcs: [up.url] } } });
  const depth = 2_500_000;
  const r = await gw.request('POST', '/rpc/1', `${'['.repeat(depth)}${']'.repeat(depth)}`, { 'content-type': 'application/json' });
  t.is(r.status, 400, r.text);
  t.is(r.body.error.code, -32600);
  t.regex(r.body.error.message, /deeper than 256 levels \(limits\.jsonDepth\)/);
  t.is(up.calls, 0);
});

test('a request nested deeper than limits.jsonDepth echoes its id; one within it goes through', async (t) => {
  const up = await fake(t);
  const gw = await gateway(t, { limits: { jsonDepth: 8 }, chains: { 1: { rpcs: [up.url] } } });
  const deep = await gw.post('/rpc/1', rpc('eth_call', [{ a: [[[[[[[[1]]]]]]]] }, 'latest'], 'deep-1'));
  t.is(deep.status, 400, deep.text);
  t.is(deep.body.id, 'deep-1');
  t.regex(deep.body.error.message, /deeper than 8 levels/);
  const ok = await gw.post('/rpc/1', rpc('eth_blockNumber', [], 2));
  t.is(ok.status, 200, ok.text);
});

test('an HTTP answer nested deeper than limits.jsonDepth is a failed call; the next upstream answers', async (t) => {
  const nested = await fake(t, { answer: () => ({ result: JSON.parse(`${'['.repeat(300)}${']'.repeat(300)}`) as unknown }) });
  const good = await fake(t);
  const gw = await gateway(t, { timeouts: { hedgeMs: 0 }, chains: { 1: { rpcs: [nested.url, good.url] } } });
  const r = await gw.post('/rpc/1', rpc('eth_blockNumber', [], 3));
  t.is(r.status, 200, r.text);
  t.is(r.headers['x-forwarded-from'], good.url);
  t.is(nested.calls, 1);
  const alone = await gateway(t, { chains: { 1: { rpcs: [nested.url] } } });
  const failed = await alone.post('/rpc/1', rpc('eth_blockNumber', [], 4));
  t.is(failed.status, 502, failed.text);
  t.regex(failed.body.error.data.failures[0].reason, /nested deeper than 256 levels/);
});

// ---------------------------------------------------------------------------------------------
// The budget of buffered upstream bytes

/**
 * An HTTP upstream answering `bytes` of valid JSON-RPC: the head and 64 KiB at once, the rest
 * when release() is called.
 */
async function bigUpstream(t: ExecutionContext, bytes: number) {
  const held: (() => void)[] = [];
  const state = {
    calls: 0,
    url: '',
    release() {
      for (const go of held.splice(0)) go();
    },
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      state.calls += 1;
      const { id } = JSON.parse(Buffer.concat(chunks).toString()) as { id: unknown };
      const head = `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":"0x`;
      const body = Buffer.alloc(bytes, 0x61);
      body.write(head);
      body.write('"}', bytes - 2);
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': bytes });
      res.write(body.subarray(0, 65_536));
      held.push(() => res.end(body.subarray(65_536)));
    });
  });
  server.on('connection', (s: Socket) => t.teardown(() => void s.destroy()));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return state;
}

test('limits.bufferedBytes: a call that would pass it gets -32013 (503), a small request still succeeds, and a big one once idle', async (t) => {
  const MiB = 1 << 20;
  const big = await bigUpstream(t, 3 * MiB);
  const small = await fake(t);
  const gw = await gateway(t, {
    limits: { responseBytes: 4 * MiB, bufferedBytes: 8 * MiB },
    timeouts: { hedgeMs: 0 },
    chains: { 1: { rpcs: [big.url] }, 2: { rpcs: [small.url] } },
  });
  // three 3 MiB answers at once: two fit in 8 MiB, the third is refused
  const answers = [1, 2, 3].map((id) => gw.post('/rpc/1', rpc('eth_blockNumber', [], id)));
  const first = await Promise.race(answers);
  t.is(first.status, 503, first.text);
  t.is(first.body.error.code, -32013);
  t.regex(first.body.error.message, /budget exhausted/);
  t.is(first.body.error.data.bufferedBytes, 8 * MiB);
  t.is(first.headers['retry-after'], '1');
  const meanwhile = await gw.post('/rpc/2', rpc('eth_blockNumber', [], 'small'));
  t.is(meanwhile.status, 200, meanwhile.text);
  big.release();
  const all = await Promise.all(answers);
  t.deepEqual(all.map((a) => a.status).sort(), [200, 200, 503]);
  for (const a of all.filter((x) => x.status === 200)) t.is(a.text.length, 3 * MiB);
  // idle again: one answer under responseBytes is read
  const later = gw.post('/rpc/1', rpc('eth_blockNumber', [], 4));
  while (big.calls < 4) await new Promise((resolve) => setTimeout(resolve, 10));
  big.release();
  t.is((await later).status, 200);
});

test('limits.bufferedBytes: while the answers in flight hold all of it, a new request gets -32013 before any upstream is called', async (t) => {
  const MiB = 1 << 20;
  const big = await bigUpstream(t, 2 * MiB);
  const small = await fake(t);
  const gw = await gateway(t, {
    limits: { responseBytes: 2 * MiB, bufferedBytes: 4 * MiB },
    chains: { 1: { rpcs: [big.url] }, 2: { rpcs: [small.url] } },
  });
  const held = [1, 2].map((id) => gw.post('/rpc/1', rpc('eth_blockNumber', [], id)));
  while (big.calls < 2) await new Promise((resolve) => setTimeout(resolve, 10));
  // the heads are charged as they arrive: wait until the budget is full (a refused request)
  let refused;
  for (;;) {
    refused = await gw.post('/rpc/2', rpc('eth_blockNumber', [], 'x'));
    if (refused.status === 503) break;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  t.is(refused.body.error.code, -32013);
  t.deepEqual(refused.body.error.data, { bufferedBytes: 4 * MiB, inUse: 4 * MiB });
  const callsBefore = small.calls;
  t.is((await gw.post('/rpc/2', rpc('eth_blockNumber', [], 'y'))).status, 503);
  t.is(small.calls, callsBefore, 'no upstream is called for a refused request');
  big.release();
  t.deepEqual((await Promise.all(held)).map((a) => a.status), [200, 200]);
  t.is((await gw.post('/rpc/2', rpc('eth_blockNumber', [], 'z'))).status, 200, 'the budget is given back when the requests end');
});

// ---------------------------------------------------------------------------------------------
// Server timers and shutdown (the real CLI)

async function halfHead(port: number): Promise<Socket> {
  const socket = net.connect(port, '127.0.0.1');
  await once(socket, 'connect');
  socket.write('POST /rpc/1 HTTP/1.1\r\nHost: localhost\r\nContent-Type: appl');
  return socket;
}

test('a half-sent request head gets a 408 at about server.headersTimeoutMs (not at node\'s 30 s sweep)', async (t) => {
  t.timeout(15_000);
  const up = await fake(t);
  const file = await configFile(t, ['server:', '  headersTimeoutMs: 1000', 'chains:', '  1:', '    rpcs:', `      - ${up.url}`, ''].join('\n'));
  const r = cli(t, file);
  const port = await listeningPort(r);
  const socket = await halfHead(port);
  t.teardown(() => void socket.destroy());
  const chunks: Buffer[] = [];
  socket.on('data', (c: Buffer) => chunks.push(c));
  await once(socket, 'close');
  const text = Buffer.concat(chunks).toString();
  t.regex(text, /^HTTP\/1\.1 408 /);
  t.regex(text, /"code":-32600/);
  r.child.kill('SIGTERM');
  t.is(await r.exited, 0);
});

test('SIGTERM with a half-sent request head open exits 0 without waiting for shutdownMs', async (t) => {
  t.timeout(30_000); // shutdownMs is 60 s: a shutdown held by the socket would outlast the test
  const up = await fake(t);
  const file = await configFile(t, ['server:', '  headersTimeoutMs: 60000', '  shutdownMs: 60000', 'chains:', '  1337:', '    rpcs:', `      - ${up.url}`, ''].join('\n'));
  const r = cli(t, file);
  const port = await listeningPort(r);
  const socket = await halfHead(port);
  t.teardown(() => void socket.destroy());
  socket.on('error', () => {});
  // a whole request on another connection first: the server reads what it is sent in order
  const ok = await send(`http://127.0.0.1:${port}`, 'POST', '/rpc/1337', JSON.stringify(rpc('eth_blockNumber')), { 'content-type': 'application/json' });
  t.is(ok.status, 200, ok.text);
  r.child.kill('SIGTERM');
  t.is(await r.exited, 0);
  t.true(logLines(r).some((l) => l.msg === 'shutting down'));
});

// ---------------------------------------------------------------------------------------------
// Probe concurrency

test('limits.probeConcurrency bounds the upstreams probed at once (100 upstreams, limit 5)', async (t) => {
  // One server per upstream: 100 origins. Under one origin, the transport's per-origin socket
  // cap kept the calls in flight low whatever the probe round did, and the test could not fail.
  // Each server holds its answers 20 ms: a round that asked more than 5 upstreams at once has them
  // all in flight together, seen at the servers.
  let most = 0;
  const busy = new Set<number>();
  const servers = await Promise.all(
    Array.from({ length: 100 }, async (_, i) => {
      const methods: string[] = [];
      let inFlight = 0;
      const server = http.createServer((req, res) => {
        inFlight += 1;
        busy.add(i);
        most = Math.max(most, busy.size);
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          const { id, method } = JSON.parse(Buffer.concat(chunks).toString()) as { id: unknown; method: string };
          methods.push(method);
          setTimeout(() => {
            inFlight -= 1;
            if (inFlight === 0) busy.delete(i);
            res.writeHead(200, { 'content-type': 'application/json' });
            res.end(JSON.stringify({ jsonrpc: '2.0', id, result: method === 'eth_chainId' ? '0x1' : '0x10' }));
          }, 20);
        });
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      t.teardown(() => new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }));
      return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, methods };
    }),
  );
  const config = makeConfig({ limits: { probeConcurrency: 5 }, chains: { 1: { rpcs: servers.map((s) => s.url) } } });
  const registry = createRegistry(config);
  t.teardown(() => registry.close());
  const round = await probeChain(registry.chains.get('1')!, 5_000, silentLogger, config.limits.probeConcurrency);
  const unprobed = servers.flatMap((s, i) => (s.methods.slice().sort().join() === 'eth_blockNumber,eth_chainId' ? [] : [`u${i}: ${s.methods.join() || 'nothing'}`]));
  t.deepEqual(unprobed, [], 'every upstream was asked eth_chainId and eth_blockNumber once');
  t.true(most <= 5, `${most} upstreams were probed at once`);
  t.true(most >= 2, 'probed in parallel');
  // (which upstreams have no head, and what their probe met: a failure says why, not just false)
  const missing = registry.chains.get('1')!.upstreams.flatMap((u, i) => (u.health.head === 16n ? [] : [`u${i}: ${JSON.stringify(round.results[i])}`]));
  t.deepEqual(missing, []);
});

// ---------------------------------------------------------------------------------------------
// X-Checked-URLS at N=300

test('X-Checked-URLS stays bounded at N=300: the first URLs, then ...(+M more)', async (t) => {
  const fakes = await Promise.all([fake(t), fake(t), fake(t)]);
  // 300 voters need 300 providers: three servers, each upstream under its own provider label.
  const urls = Array.from({ length: 300 }, (_, i) => `${fakes[i % 3]!.url}/path/to/an/upstream/${i}`);
  const rpcs = urls.map((url, i) => ({ url, provider: `p${i}` }));
  // 300 calls over three servers in this process: on a loaded machine some wait past the default
  // 10 s for their turn (one did, failing the agreement); the timeouts are not what this checks.
  const gw = await gateway(t, { timeouts: { upstreamMs: 60_000, requestMs: 90_000 }, chains: { 1: { rpcs, confirmations: 300 } } });
  const r = await gw.post('/rpc/1', pinned());
  t.is(r.status, 200, r.text.slice(0, 2000));
  t.is(r.headers['x-required-confirmations'], '300');
  const value = String(r.headers['x-checked-urls']);
  t.true(value.length <= 4096 + 20, `${value.length} bytes`);
  const match = /,\.\.\.\(\+(\d+) more\)$/.exec(value);
  t.truthy(match, value.slice(-80));
  const listed = value.slice(0, match!.index).split(',');
  t.is(listed.length + Number(match![1]), 300);
  const shown = new Set(distinctLabels(urls)); // headers name upstreams by their labels (redactHeaders: true)
  for (const u of listed) t.true(shown.has(u), u);
});

// ---------------------------------------------------------------------------------------------
// Client aborts

test('a client that leaves mid-body is logged at info without a stack, not as an internal error', async (t) => {
  const up = await fake(t);
  const lines: { level: string; obj: unknown; msg?: string }[] = [];
  const at = (level: string) => ((obj: unknown, msg?: string) => lines.push({ level, obj, msg })) as LogFn;
  const logger: Logger = { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error'), child: () => logger };
  const gw = await gateway(t, { chains: { 1: { rpcs: [up.url] } } }, { logger });
  const socket = net.connect(Number(new URL(gw.url).port), '127.0.0.1');
  await once(socket, 'connect');
  socket.write('POST /rpc/1 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"jsonrpc":"2.0",');
  // the server has the head (its request started) once it reads it; then the client leaves
  while (!lines.length) {
    await new Promise((resolve) => setTimeout(resolve, 20));
    if (!socket.destroyed) socket.destroy();
  }
  t.is(lines.filter((l) => l.level === 'error').length, 0, JSON.stringify(lines));
  const refused = lines.find((l) => l.msg === 'request refused');
  t.truthy(refused, JSON.stringify(lines));
  t.regex(String((refused!.obj as { message?: string }).message), /client closed the connection/);
  t.false('err' in (refused!.obj as object), 'no error object (stack) in the log line');
  t.is(up.calls, 0);
});
