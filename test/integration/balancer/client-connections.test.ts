/**
 * The client side of HTTP: what a client's connection does to the budget of buffered upstream
 * bytes (limits.bufferedBytes) and to the answers. A pipelined request whose connection closes
 * before its turn gives its bytes back; a client that stops reading its answer is disconnected
 * after timeouts.sendMs instead of holding the answer (and its share of the budget) for ever;
 * pipelined requests are answered in order, each with its own id. Requests Node itself would
 * answer bare (no Host, an unknown Expect, a CONNECT) get JSON-RPC errors.
 */
import { once } from 'node:events';
import http from 'node:http';
import net, { type AddressInfo, type Socket } from 'node:net';
import test, { type ExecutionContext } from 'ava';
import { startServer } from '../../../lib/server/app.js';
import { servedPerConnection } from '../../../lib/server/turns.js';
import { startFakeUpstream, type FakeOptions, type FakeUpstream } from '../../support/fake-upstream.js';
import { makeConfig, rpc, send, startGateway, type Gateway, type Reply } from '../../support/gateway.js';
import { exchange as rawExchange } from '../../support/raw-http.js';
import { until as waitUntil } from '../../support/wait.js';

const MiB = 1 << 20;

async function fake(t: ExecutionContext, options: FakeOptions = {}): Promise<FakeUpstream> {
  const f = await startFakeUpstream(options);
  t.teardown(() => f.close());
  return f;
}

async function gateway(t: ExecutionContext, raw: Record<string, unknown>): Promise<Gateway> {
  const gw = await startGateway(raw);
  t.teardown(() => gw.close());
  return gw;
}

/** An upstream whose every answer is `bytes` long (a hex string result). */
const bigAnswer = (bytes: number): FakeOptions => ({
  raw: (call) => {
    const head = `{"jsonrpc":"2.0","id":${JSON.stringify(call.id)},"result":"0x`;
    return `${head}${'a'.repeat(bytes - head.length - 2)}"}`;
  },
});

/** A raw connection to the gateway that writes `text`; its reading is paused unless `read`. */
async function connection(t: ExecutionContext, gw: Gateway, text: string, read = true): Promise<{ socket: Socket; received: () => string }> {
  const socket = net.connect(Number(new URL(gw.url).port), '127.0.0.1');
  t.teardown(() => void socket.destroy());
  socket.on('error', () => {});
  await once(socket, 'connect');
  const chunks: Buffer[] = [];
  if (read) socket.on('data', (c: Buffer) => chunks.push(c));
  else socket.pause();
  socket.write(text);
  return { socket, received: () => Buffer.concat(chunks).toString() };
}

const post = (path: string, body: unknown, close = false) => {
  const text = JSON.stringify(body);
  return `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\n${close ? 'Connection: close\r\n' : ''}\r\n${text}`;
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Posts a small call to `path` until the answer's status is `status` and `also` holds for it (at
 * most 200 times, 100 ms apart); returns the last answer. While the budget is exhausted
 * (limits.bufferedBytes held to the byte) it is refused before any upstream is called (-32013).
 */
async function until(gw: Gateway, path: string, status: number, also: (r: Reply) => boolean = () => true) {
  let last = await gw.post(path, rpc('eth_blockNumber', [], 'probe'));
  for (let i = 1; i < 200 && !(last.status === status && also(last)); i++) {
    await sleep(100);
    last = await gw.post(path, rpc('eth_blockNumber', [], 'probe'));
  }
  return last;
}

test('a pipelined request whose connection closes before its turn gives its buffered bytes back', async (t) => {
  t.timeout(60_000);
  const big = await fake(t, bigAnswer(3 * MiB));
  const slow = await fake(t, { delayMs: 10_000 });
  const small = await fake(t);
  const gw = await gateway(t, {
    limits: { responseBytes: 3 * MiB, bufferedBytes: 3 * MiB },
    timeouts: { hedgeMs: 0 },
    chains: { 1337: { rpcs: [slow.url] }, 1: { rpcs: [big.url] }, 2: { rpcs: [small.url] } },
  });
  // the first request waits on the slow upstream; the second's 3 MiB answer waits for its turn
  const { socket } = await connection(t, gw, post('/rpc/1337', rpc('eth_blockNumber', [], 'first')) + post('/rpc/1', rpc('eth_blockNumber', [], 'second')));
  await waitUntil(() => big.calls >= 1);
  // Its 3 MiB are held (once read) until its turn, 10 s away: the budget is full. (A call admitted
  // in the instant before they were charged is refused too, later, with its upstream's failure:
  // asked again until one is refused at admission, which says what is in use.)
  const held = await until(gw, '/rpc/2', 503, (r) => r.body?.error?.data?.inUse !== undefined);
  t.is(held.body?.error?.code, -32013, held.text);
  t.is(held.body?.error?.data?.inUse, 3 * MiB, held.text);
  socket.destroy();
  // both requests are gone with their connection: the budget is whole again
  const after = await until(gw, '/rpc/2', 200);
  t.is(after.status, 200, after.text);
  // (the fake sees its connection closed a moment after the gateway gave the bytes back)
  await waitUntil(() => slow.aborted >= 1).catch(() => undefined);
  t.is(slow.aborted, 1, 'the first request\'s upstream call was aborted');
});

test('request bodies being read are held to limits.bufferedBytes, all connections together: one that would pass it gets -32013 (503); the bytes come back with the connections', async (t) => {
  const up = await fake(t);
  const gw = await gateway(t, {
    limits: { bodyBytes: 2 * MiB, responseBytes: MiB, bufferedBytes: 3 * MiB },
    timeouts: { hedgeMs: 0 },
    chains: { 1337: { rpcs: [up.url] } },
  });
  // Four bodies of 1 MiB (the whole but their last byte sent), on four connections: 3 MiB hold three.
  const size = MiB;
  const held: { socket: Socket; received: () => string }[] = [];
  for (let i = 0; i < 4; i++) held.push(await connection(t, gw, `POST /rpc/1337 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${size}\r\n\r\n${' '.repeat(size - 1)}`));
  await waitUntil(() => held.some((c) => c.received() !== ''));
  // One is refused. That none of the other three is answered too (each waits for its last byte)
  // can only be seen by giving a wrong answer a moment more to arrive.
  await sleep(300);
  const answered = held.filter((c) => c.received() !== '');
  t.is(answered.length, 1, 'one body past the budget is refused, the others wait for their last byte');
  const refused = answered[0]!.received();
  t.regex(refused, /^HTTP\/1\.1 503 /);
  t.regex(refused, /\r\nRetry-After: 1\r\n/i);
  const json = JSON.parse(refused.slice(refused.indexOf('\r\n\r\n') + 4)) as { id: unknown; error: { code: number; message: string; data: { bufferedBytes: number } } };
  t.like(json, { id: null, error: { code: -32013, data: { bufferedBytes: 3 * MiB } } });
  t.regex(json.error.message, /request bodies/);
  // A declared body that cannot fit now is refused before it is read.
  const declared = await gw.post('/rpc/1337', ' '.repeat(size) + JSON.stringify(rpc('eth_chainId', [], 'late')));
  t.is(declared.status, 503, declared.text);
  for (const { socket } of held) socket.destroy();
  // The connections gone, their bytes are back: a body as large is read and answered.
  let after = await gw.post('/rpc/1337', ' '.repeat(size) + JSON.stringify(rpc('eth_chainId', [], 'after')));
  for (const end = Date.now() + 20_000; after.status === 503 && Date.now() < end; ) {
    await sleep(50);
    after = await gw.post('/rpc/1337', ' '.repeat(size) + JSON.stringify(rpc('eth_chainId', [], 'after')));
  }
  t.is(after.status, 200, after.text);
  t.is(after.body.id, 'after');
  // and answered requests give theirs back too: many in a row, each within the budget alone
  for (let i = 0; i < 8; i++) t.is((await gw.post('/rpc/1337', ' '.repeat(size) + JSON.stringify(rpc('eth_chainId', [], i)))).status, 200);
});

test('a client that reads none of a large answer is disconnected after timeouts.sendMs: its buffered bytes are given back', async (t) => {
  t.timeout(60_000);
  const big = await fake(t, bigAnswer(24 * MiB));
  const small = await fake(t);
  const gw = await gateway(t, {
    limits: { responseBytes: 24 * MiB, bufferedBytes: 24 * MiB },
    // sendMs long enough for the probes below to see the budget held on a loaded machine: from
    // the upstream answer's first bytes until sendMs after the answer was written.
    timeouts: { hedgeMs: 0, sendMs: 10_000 },
    chains: { 1: { rpcs: [big.url] }, 2: { rpcs: [small.url] } },
  });
  const stuck = await connection(t, gw, post('/rpc/1', rpc('eth_blockNumber', [], 'never-read')), false);
  await waitUntil(() => big.calls >= 1);
  const held = await until(gw, '/rpc/2', 503);
  t.is(held.body?.error?.code, -32013, held.text);
  const after = await until(gw, '/rpc/2', 200);
  t.is(after.status, 200, after.text);
  // the whole budget is free again: a 24 MiB answer is read
  const again = await gw.post('/rpc/1', rpc('eth_blockNumber', [], 'again'));
  t.is(again.status, 200, again.text.slice(0, 300));
  t.is(again.text.length, 24 * MiB);
  t.true(stuck.socket.readableLength < 24 * MiB, 'the stuck client did not get all of its answer');
});

test('pipelined requests are answered in order, each with its own id; an answer waiting for its turn is not cut by timeouts.sendMs', async (t) => {
  t.timeout(60_000);
  const slow = await fake(t, { delayMs: 2000 });
  const quick = await fake(t);
  const gw = await gateway(t, { timeouts: { hedgeMs: 0, sendMs: 1000 }, chains: { 1337: { rpcs: [slow.url] }, 1: { rpcs: [quick.url] } } });
  const conn = await connection(
    t,
    gw,
    post('/rpc/1337', rpc('eth_blockNumber', [], 'a')) + post('/rpc/1', rpc('eth_chainId', [], 'b')) + post('/rpc/abc', rpc('eth_chainId', [], 'c')) + post('/rpc/1', rpc('eth_blockNumber', [], 4), true),
  );
  await once(conn.socket, 'close');
  const answers = conn.received().split(/(?=HTTP\/1\.1 )/);
  t.deepEqual(answers.map((a) => a.slice(0, 12)), ['HTTP/1.1 200', 'HTTP/1.1 200', 'HTTP/1.1 400', 'HTTP/1.1 200'], conn.received());
  t.deepEqual(
    answers.map((a) => (JSON.parse(a.slice(a.indexOf('\r\n\r\n') + 4)) as { id: unknown }).id),
    ['a', 'b', 'c', 4],
  );
});

test('omnigate serve: an HTTP/1.1 request without a Host header gets a JSON-RPC error (400), not a bare 400', async (t) => {
  const up = await fake(t);
  const server = await startServer(makeConfig({ chains: { 1337: { rpcs: [up.url] } } }), 0, { headTracking: false });
  t.teardown(() => server.close());
  const body = JSON.stringify(rpc('eth_blockNumber', [], 5));
  const answer = await rawExchange(t, server.port, `POST /rpc/1337 HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
  t.is(answer.status, 400);
  t.regex(answer.head, /\r\nContent-Type: application\/json(\r\n|$)/i);
  const json = answer.json as { id: unknown; error: { code: number; message: string } };
  t.is(json.error.code, -32600);
  t.regex(json.error.message, /Host/);
  t.is(json.id, null);
  t.false(up.requests.some((r) => (r.body as { id?: unknown } | undefined)?.id === 5), 'not forwarded');
});

test('omnigate serve: an Expect other than 100-continue gets a JSON-RPC 417, a CONNECT a JSON-RPC 405 (not a bare 417, not a silent close); it keeps serving', async (t) => {
  const up = await fake(t);
  const server = await startServer(makeConfig({ chains: { 1337: { rpcs: [up.url] } } }), 0, { headTracking: false });
  t.teardown(() => server.close());
  const exchange = (text: string) => rawExchange(t, server.port, text);
  const body = JSON.stringify(rpc('eth_blockNumber', [], 5));
  const expect = await exchange(`POST /rpc/1337 HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
  t.regex(expect.head, /^HTTP\/1\.1 417 /);
  t.regex(expect.head, /\r\nContent-Type: application\/json\r\n/i);
  t.like(expect.json, { id: null, error: { code: -32600 } });
  t.regex(expect.json.error.message, /Expect: 100-continue/);
  const tunnel = await exchange(`CONNECT ${new URL(up.url).host} HTTP/1.1\r\nHost: ${new URL(up.url).host}\r\n\r\n`);
  t.regex(tunnel.head, /^HTTP\/1\.1 405 /);
  t.regex(tunnel.head, /\r\nAllow: POST, OPTIONS\r\n/i);
  t.like(tunnel.json, { id: null, error: { code: -32004 } });
  t.false(up.requests.some((r) => (r.body as { id?: unknown } | undefined)?.id === 5), 'not forwarded');
  const ok = await send(`http://127.0.0.1:${server.port}`, 'POST', '/rpc/1337', body, { 'content-type': 'application/json' });
  t.is(ok.status, 200, ok.text);
  t.is(ok.body.id, 5);
});

test('omnigate serve: Expect: 100-continue with a declared body over limits.bodyBytes gets its 413 at once, no 100 Continue; a body within it gets 100 Continue and its answer', async (t) => {
  const up = await fake(t);
  const server = await startServer(makeConfig({ limits: { bodyBytes: 1024 }, chains: { 1337: { rpcs: [up.url] } } }), 0, { headTracking: false, healthChecks: false });
  t.teardown(() => server.close());
  // (the body is never sent: the client waits for 100 Continue, as curl does)
  const refused = await rawExchange(t, server.port, `POST /rpc/1337 HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Type: application/json\r\nContent-Length: ${10 * MiB}\r\n\r\n`);
  t.is(refused.status, 413, refused.head);
  t.false(refused.head.includes('100 Continue'), 'no 100 Continue for a body that would be refused');
  t.like(refused.json, { id: null, error: { code: -32006 } });
  // Within the limit: 100 Continue, then the body, then the answer.
  const ok = net.connect(server.port, '127.0.0.1');
  t.teardown(() => void ok.destroy());
  await once(ok, 'connect');
  const got: Buffer[] = [];
  ok.on('data', (c: Buffer) => got.push(c));
  const body = JSON.stringify(rpc('eth_chainId', [], 5));
  ok.write(`POST /rpc/1337 HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n`);
  await once(ok, 'data');
  t.regex(Buffer.concat(got).toString(), /^HTTP\/1\.1 100 Continue\r\n\r\n$/);
  ok.write(body);
  await once(ok, 'close');
  const answer = Buffer.concat(got).toString();
  t.regex(answer, /\r\n\r\nHTTP\/1\.1 200 /);
  t.like(JSON.parse(answer.slice(answer.lastIndexOf('\r\n\r\n') + 4)), { id: 5, result: '0x539' });
});

test('omnigate serve: what the HTTP parser refuses after pipelined requests is answered after their answers, not in place of the first', async (t) => {
  const slow = await fake(t, { delayMs: 300 });
  const server = await startServer(makeConfig({ timeouts: { hedgeMs: 0 }, chains: { 1337: { rpcs: [slow.url] } } }), 0, { headTracking: false, healthChecks: false });
  t.teardown(() => server.close());
  const socket = net.connect(server.port, '127.0.0.1');
  t.teardown(() => void socket.destroy());
  await once(socket, 'connect');
  const chunks: Buffer[] = [];
  socket.on('data', (c: Buffer) => chunks.push(c));
  // Two calls, then a head Node's parser refuses (Transfer-Encoding and Content-Length together).
  socket.write(
    post('/rpc/1337', rpc('eth_blockNumber', [], 'first')) +
      post('/rpc/1337', rpc('eth_chainId', [], 'second')) +
      'POST /rpc/1337 HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n',
  );
  await once(socket, 'close');
  const answers = Buffer.concat(chunks).toString().split(/(?=HTTP\/1\.1 )/);
  t.deepEqual(answers.map((a) => a.slice(0, 12)), ['HTTP/1.1 200', 'HTTP/1.1 200', 'HTTP/1.1 400'], answers.join('\n'));
  t.deepEqual(
    answers.map((a) => (JSON.parse(a.slice(a.indexOf('\r\n\r\n') + 4)) as { id: unknown }).id),
    ['first', 'second', null],
  );
  t.regex(answers[2]!, /HPE_INVALID_TRANSFER_ENCODING/);
});

test('omnigate serve: a body promised by Content-Length but never sent, and one dribbled a byte at a time, get a JSON-RPC 408 at server.requestTimeoutMs; no upstream is called', async (t) => {
  const up = await fake(t);
  const server = await startServer(makeConfig({ server: { headersTimeoutMs: 1_000, requestTimeoutMs: 1_000 }, chains: { 1337: { rpcs: [up.url] } } }), 0, { headTracking: false });
  t.teardown(() => server.close());
  const body = JSON.stringify(rpc('eth_blockNumber', [], 6));
  const head = `POST /rpc/1337 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n`;
  const attack = async (dribble: boolean) => {
    const socket = net.connect(server.port, '127.0.0.1');
    t.teardown(() => void socket.destroy());
    await once(socket, 'connect');
    const chunks: Buffer[] = [];
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.write(`${head}${body.slice(0, 10)}`);
    // One more byte every 100 ms (the whole body would take 4 s), or nothing more at all.
    let at = 10;
    const timer = dribble ? setInterval(() => socket.writable && at < body.length && socket.write(body[at++]!), 100) : undefined;
    await once(socket, 'close');
    clearInterval(timer);
    const text = Buffer.concat(chunks).toString();
    t.regex(text, /^HTTP\/1\.1 408 /, text);
    t.like(JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)), { id: null, error: { code: -32600 } });
    t.true(at < body.length, 'cut before the body was whole');
  };
  await Promise.all([attack(false), attack(true)]);
  t.false(up.requests.some((r) => (r.body as { id?: unknown } | undefined)?.id === 6), 'nothing forwarded');
  const ok = await send(`http://127.0.0.1:${server.port}`, 'POST', '/rpc/1337', body, { 'content-type': 'application/json' });
  t.is(ok.status, 200, ok.text);
});

test('omnigate serve: 400 requests pipelined in one write enter the app 32 at a time (servedPerConnection): answered in order, another client served meanwhile', async (t) => {
  t.timeout(60_000);
  // An upstream that answers after 20 ms and counts its calls in flight.
  let inFlight = 0;
  let most = 0;
  let calls = 0;
  const upstream = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const call = JSON.parse(Buffer.concat(chunks).toString()) as { id: unknown };
      calls += 1;
      inFlight += 1;
      most = Math.max(most, inFlight);
      setTimeout(() => {
        inFlight -= 1;
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id: call.id, result: '0x10' }));
      }, 20);
    });
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => (upstream.closeAllConnections(), upstream.close(() => resolve()))));
  const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}/`;
  // Sockets enough for every call at once: what bounds them is the connection's turns.
  const server = await startServer(
    makeConfig({ timeouts: { hedgeMs: 0 }, limits: { upstreamSockets: 1000 }, upstreams: { maxSockets: 1000 }, chains: { 1337: { rpcs: [url] } } }),
    0,
    { headTracking: false, healthChecks: false },
  );
  t.teardown(() => server.close());
  const count = 400;
  const socket = net.connect(server.port, '127.0.0.1');
  t.teardown(() => void socket.destroy());
  await once(socket, 'connect');
  const chunks: Buffer[] = [];
  socket.on('data', (c: Buffer) => chunks.push(c));
  socket.write(Array.from({ length: count }, (_, i) => post('/rpc/1337', rpc('eth_blockNumber', [], i), i === count - 1)).join(''));
  while (calls < 40) await sleep(10);
  const other = await send(`http://127.0.0.1:${server.port}`, 'POST', '/rpc/1337', JSON.stringify(rpc('eth_blockNumber', [], 'other')), { 'content-type': 'application/json' });
  t.is(other.status, 200, other.text);
  t.is(other.body.id, 'other');
  await once(socket, 'close');
  const answers = Buffer.concat(chunks).toString().split(/(?=HTTP\/1\.1 )/);
  t.is(answers.length, count);
  t.deepEqual(
    answers.map((a) => (JSON.parse(a.slice(a.indexOf('\r\n\r\n') + 4)) as { id: unknown }).id),
    Array.from({ length: count }, (_, i) => i),
  );
  t.true(most <= servedPerConnection + 1, `${most} calls in flight at once`);
  t.true(most >= servedPerConnection / 2, `${most} calls in flight at once: the turns still overlap`);

  // Bodies of 40 KB: the connection is paused and read again in the middle of a waiting request's
  // body, which is whole once its turn comes.
  const padded = (i: number) => post('/rpc/1337', { ...rpc('eth_blockNumber', [], `p${i}`), pad: ' '.repeat(40_000) }, i === 99);
  const big = net.connect(server.port, '127.0.0.1');
  t.teardown(() => void big.destroy());
  await once(big, 'connect');
  const bigChunks: Buffer[] = [];
  big.on('data', (c: Buffer) => bigChunks.push(c));
  big.write(Array.from({ length: 100 }, (_, i) => padded(i)).join(''));
  await once(big, 'close');
  const bigAnswers = Buffer.concat(bigChunks).toString().split(/(?=HTTP\/1\.1 )/);
  t.deepEqual(
    bigAnswers.map((a) => (JSON.parse(a.slice(a.indexOf('\r\n\r\n') + 4)) as { id: unknown }).id),
    Array.from({ length: 100 }, (_, i) => `p${i}`),
  );
});

test('omnigate serve, shutting down: a request in flight on a keep-alive connection is answered with Connection: close, and the connection does not hold the shutdown', async (t) => {
  t.timeout(90_000);
  const up = await fake(t, { delayMs: 1000 });
  // a 60 s keep-alive: a connection left open after its answer would hold close() that long
  const server = await startServer(makeConfig({ timeouts: { hedgeMs: 0 }, server: { keepAliveTimeoutMs: 60_000 }, chains: { 1337: { rpcs: [up.url] } } }), 0, { headTracking: false });
  const socket = net.connect(server.port, '127.0.0.1');
  t.teardown(() => void socket.destroy());
  await once(socket, 'connect');
  const chunks: Buffer[] = [];
  socket.on('data', (c: Buffer) => chunks.push(c));
  const closed = once(socket, 'close');
  const body = JSON.stringify(rpc('eth_blockNumber', [], 'in-flight'));
  socket.write(`POST /rpc/1337 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
  while (!up.requests.some((r) => (r.body as { id?: unknown } | undefined)?.id === 'in-flight')) await sleep(20);
  const stopped = server.close().then(() => 'stopped');
  t.is(await Promise.race([stopped, sleep(30_000).then(() => 'still open')]), 'stopped');
  await closed;
  const text = Buffer.concat(chunks).toString();
  t.regex(text, /^HTTP\/1\.1 200 /);
  t.regex(text, /\r\nConnection: close\r\n/i);
  t.regex(text, /"id":"in-flight","result":"0x10"/);
});

test('omnigate serve, shutting down: a request written on an idle kept-alive connection in the instant of the shutdown is answered (Connection: close), not reset', async (t) => {
  t.timeout(60_000);
  const up = await fake(t, {});
  const server = await startServer(makeConfig({ timeouts: { hedgeMs: 0 }, server: { keepAliveTimeoutMs: 60_000 }, chains: { 1337: { rpcs: [up.url] } } }), 0, { headTracking: false });
  const socket = net.connect(server.port, '127.0.0.1');
  t.teardown(() => void socket.destroy());
  await once(socket, 'connect');
  const chunks: Buffer[] = [];
  socket.on('data', (c: Buffer) => chunks.push(c));
  const closed = once(socket, 'close');
  const ask = (id: string) => {
    const body = JSON.stringify(rpc('eth_blockNumber', [], id));
    socket.write(`POST /rpc/1337 HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
  };
  ask('before');
  while (!Buffer.concat(chunks).toString().includes('"id":"before"')) await sleep(10);
  // The connection is idle and kept alive; the shutdown begins, and a load balancer writes on it.
  const stopped = server.close().then(() => 'stopped');
  ask('during');
  t.is(await Promise.race([stopped, sleep(20_000).then(() => 'still open')]), 'stopped');
  await closed;
  const text = Buffer.concat(chunks).toString();
  const answers = text.split(/(?=HTTP\/1\.1 )/);
  t.is(answers.length, 2, text);
  t.regex(answers[1]!, /^HTTP\/1\.1 200 /);
  t.regex(answers[1]!, /\r\nConnection: close\r\n/i);
  t.regex(answers[1]!, /"id":"during","result":"0x10"/);
  // A new connection is refused at once.
  const refused = await new Promise<boolean>((resolve) => {
    const s = net.connect(server.port, '127.0.0.1', () => (s.destroy(), resolve(false)));
    s.on('error', () => resolve(true));
  });
  t.true(refused);
});
