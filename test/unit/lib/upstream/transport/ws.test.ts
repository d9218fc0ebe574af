import { once } from 'node:events';
import net, { type AddressInfo } from 'node:net';
import test from 'ava';
import { WebSocketServer, type WebSocket } from 'ws';
import type { RpcCall, RpcPayload } from '../../../../../lib/jsonrpc/types.js';
import { Cancellation, UpstreamCallError, type Transport, type UpstreamRequest } from '../../../../../lib/upstream/transport/contract.js';
import { createWsTransport } from '../../../../../lib/upstream/transport/ws.js';

interface Msg {
  jsonrpc: string;
  id: number;
  method: string;
  params: unknown[];
}

/**
 * A WebSocket JSON-RPC upstream on port 0. By default it answers every call at once with
 * `{result: {method, params}}`; with `hold`, messages wait in `held` until the test answers them.
 */
async function wsUpstream(options: { hold?: boolean } = {}) {
  const server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await once(server, 'listening');
  const received: (Msg | Msg[])[] = [];
  const held: { socket: WebSocket; message: Msg | Msg[] }[] = [];
  let connections = 0;
  let pings = 0;
  server.on('connection', (socket) => {
    connections += 1;
    socket.on('ping', () => (pings += 1));
    socket.on('message', (data) => {
      const message = JSON.parse(data.toString()) as Msg | Msg[];
      received.push(message);
      if (options.hold) held.push({ socket, message });
      else socket.send(JSON.stringify(reply(message)));
    });
  });
  return {
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}/ws/KEY`,
    server,
    received,
    held,
    get connections() {
      return connections;
    },
    /** Pings received (each answered at once: ws answers them itself). */
    get pings() {
      return pings;
    },
    /** Drops every client connection without a closing handshake. */
    drop: () => server.clients.forEach((c) => c.terminate()),
    close: () =>
      new Promise<void>((resolve) => {
        server.clients.forEach((c) => c.terminate());
        server.close(() => resolve());
      }),
  };
}
const answer1 = (m: Msg) => ({ jsonrpc: '2.0', id: m.id, result: { method: m.method, params: m.params } });
const reply = (message: Msg | Msg[]) => (Array.isArray(message) ? message.map(answer1) : answer1(message));

const payload = (calls: RpcCall[], batch = calls.length > 1): RpcPayload => ({
  calls,
  batch,
  raw: Buffer.from(JSON.stringify(batch ? calls : calls[0])),
});
const request = (calls: RpcCall[], overrides: Partial<UpstreamRequest> = {}): UpstreamRequest => ({
  payload: payload(calls),
  requestId: 'req-1',
  signal: new AbortController().signal,
  // (far longer than any stall of a loaded machine: a test about the timeout sets its own)
  timeoutMs: 30_000,
  maxBytes: 1_000_000,
  ...overrides,
});
const call = (id: string | number, method = 'eth_chainId', params: unknown[] = []): RpcCall => ({ id, method, params });
const json = (body: Buffer) => JSON.parse(body.toString()) as unknown;
const failure = async (promise: Promise<unknown>): Promise<UpstreamCallError> => {
  try {
    await promise;
  } catch (err) {
    if (err instanceof UpstreamCallError) return err;
    throw err;
  }
  throw new Error('the call succeeded');
};
const until = async (check: () => boolean, ms = 20_000) => {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
};

async function withWs(options: { hold?: boolean }, fn: (transport: Transport, up: Awaited<ReturnType<typeof wsUpstream>>) => Promise<void>) {
  const up = await wsUpstream(options);
  const transport = createWsTransport(up.url, { maxBytes: 1_000_000, handshakeTimeoutMs: 30_000 });
  try {
    await fn(transport, up);
  } finally {
    await transport.close();
    await up.close();
  }
}

const ids: [string, string | number][] = [
  ['a number', 7],
  ['a string', 'abc-1'],
  ['zero', 0],
  ['an empty string', ''],
];
for (const [name, id] of ids) {
  test(`should put back the client's id when it is ${name}`, async (t) => {
    await withWs({}, async (transport, up) => {
      const response = await transport.send(request([call(id, 'eth_getBalance', ['0xabc', '0x1'])]));
      t.deepEqual(json(response.body), { jsonrpc: '2.0', id, result: { method: 'eth_getBalance', params: ['0xabc', '0x1'] } });
      const sent = up.received[0] as Msg;
      t.is(typeof sent.id, 'number', 'the upstream sees the transport\'s own id');
      t.deepEqual({ ...sent, id: 0 }, { jsonrpc: '2.0', id: 0, method: 'eth_getBalance', params: ['0xabc', '0x1'] });
    });
  });
}

test('should send a batch as an array and put back every member\'s id, whatever the answer order', async (t) => {
  await withWs({ hold: true }, async (transport, up) => {
    const pending = transport.send(request([call(1, 'eth_chainId'), call('two', 'eth_blockNumber'), call(3, 'net_version')]));
    await until(() => up.held.length === 1);
    const { socket, message } = up.held[0]!;
    t.true(Array.isArray(message));
    const members = message as Msg[];
    t.is(new Set(members.map((m) => m.id)).size, 3);
    socket.send(JSON.stringify([...members].reverse().map(answer1)));
    const body = json((await pending).body) as { id: unknown; result: { method: string } }[];
    t.deepEqual(
      body.map((m) => [m.id, m.result.method]),
      [
        [3, 'net_version'],
        ['two', 'eth_blockNumber'],
        [1, 'eth_chainId'],
      ],
    );
  });
});

test('should send a one-member batch as an array', async (t) => {
  await withWs({}, async (transport, up) => {
    const response = await transport.send({ ...request([call(5)]), payload: payload([call(5)], true) });
    t.true(Array.isArray(up.received[0]));
    t.deepEqual(json(response.body), [{ jsonrpc: '2.0', id: 5, result: { method: 'eth_chainId', params: [] } }]);
  });
});

test('should multiplex concurrent calls on one connection and match answers that come out of order', async (t) => {
  await withWs({ hold: true }, async (transport, up) => {
    // Every request uses the client id 1, as independent clients do.
    const calls = Array.from({ length: 5 }, (_, i) => transport.send(request([call(1, 'eth_getBalance', [`0x${i}`, '0x1'])])));
    await until(() => up.held.length === 5);
    for (const { socket, message } of [...up.held].reverse()) socket.send(JSON.stringify(reply(message)));
    const bodies = (await Promise.all(calls)).map((r) => json(r.body) as { id: unknown; result: { params: string[] } });
    t.deepEqual(
      bodies.map((b) => [b.id, b.result.params[0]]),
      [0, 1, 2, 3, 4].map((i) => [1, `0x${i}`]),
    );
    t.is(up.connections, 1);
  });
});

test('should ignore notifications and late answers to calls given up on', async (t) => {
  await withWs({ hold: true }, async (transport, up) => {
    const controller = new AbortController();
    const given = transport.send(request([call('gone')], { signal: controller.signal }));
    await until(() => up.held.length === 1);
    controller.abort();
    t.is((await failure(given)).kind, 'aborted');
    const pending = transport.send(request([call('x')]));
    await until(() => up.held.length === 2);
    const { socket, message } = up.held[1]!;
    socket.send(JSON.stringify({ jsonrpc: '2.0', method: 'eth_subscription', params: { subscription: '0x1', result: {} } }));
    socket.send(JSON.stringify(reply(up.held[0]!.message)));
    socket.send(JSON.stringify(reply(message)));
    t.is((json((await pending).body) as { id: unknown }).id, 'x');
  });
});

for (const [what, text] of [
  ['not JSON', 'not json'],
  ['a string id', '{"jsonrpc":"2.0","id":"1","result":"0x1"}'],
  ['an id never sent', '{"jsonrpc":"2.0","id":999999,"result":"0x1"}'],
  ['nested brackets', `${'['.repeat(20_000)}${']'.repeat(20_000)}`],
] as const) {
  test(`should fail the call in flight at once on a message it cannot match: ${what}`, async (t) => {
    await withWs({ hold: true }, async (transport, up) => {
      const pending = transport.send(request([call('x')], { timeoutMs: 60_000 }));
      await until(() => up.held.length === 1);
      up.held[0]!.socket.send(text);
      const err = await failure(pending);
      t.is(err.kind, 'transport');
      t.regex(err.message, /not a JSON-RPC answer|matches no call in flight/);
    });
  });
}

test('should return the answer bytes unchanged but for the id (big integers, 1.0, 1e400, spacing)', async (t) => {
  await withWs({ hold: true }, async (transport, up) => {
    const pending = transport.send(request([call('x')]));
    await until(() => up.held.length === 1);
    const { socket, message } = up.held[0]!;
    const id = (message as Msg).id;
    socket.send(`{ "jsonrpc" : "2.0", "result" : [12345678901234567890, 1.0, 1e400, "\u00e9"], "id" : ${id} }`);
    t.is((await pending).body.toString(), '{ "jsonrpc" : "2.0", "result" : [12345678901234567890, 1.0, 1e400, "\u00e9"], "id" : "x" }');
  });
});

test('should fail a call whose answer nests deeper than maxDepth', async (t) => {
  await withWs({ hold: true }, async (transport, up) => {
    const pending = transport.send(request([call(1)], { maxDepth: 8 }));
    await until(() => up.held.length === 1);
    const { socket, message } = up.held[0]!;
    socket.send(`{"jsonrpc":"2.0","id":${(message as Msg).id},"result":${'['.repeat(9)}${']'.repeat(9)}}`);
    t.is((await failure(pending)).kind, 'too-deep');
  });
});

test('should time out within the limit and ignore the late answer', async (t) => {
  await withWs({ hold: true }, async (transport, up) => {
    // The connection is open first (under load a handshake can outlast 150 ms: the call would
    // then time out unsent, see 'while the connection is still opening' below).
    const warm = transport.send(request([call(0)]));
    await until(() => up.held.length === 1);
    up.held[0]!.socket.send(JSON.stringify(reply(up.held[0]!.message)));
    await warm;
    const started = Date.now();
    const err = await failure(transport.send(request([call(1)], { timeoutMs: 150 })));
    const elapsed = Date.now() - started;
    t.is(err.kind, 'timeout');
    t.regex(err.message, /150 ms/);
    t.true(err.sent, 'the upstream held the call');
    // Slack for a loaded machine: this tells "ended by the limit" from "left hanging", not speed.
    t.true(elapsed >= 140, `not before the limit: ${elapsed} ms`);
    t.true(elapsed < 150 + 5_000, `ended by the limit, not left hanging: ${elapsed} ms`);
    // The late answer arrives; the next call still gets its own answer.
    await until(() => up.held.length === 2);
    const { socket, message } = up.held[1]!;
    socket.send(JSON.stringify(reply(message)));
    const next = transport.send(request([call(2, 'eth_blockNumber')]));
    await until(() => up.held.length === 3);
    up.held[2]!.socket.send(JSON.stringify(reply(up.held[2]!.message)));
    t.deepEqual(json((await next).body), { jsonrpc: '2.0', id: 2, result: { method: 'eth_blockNumber', params: [] } });
  });
});

test('should fail with kind aborted when the caller aborts', async (t) => {
  await withWs({ hold: true }, async (transport, up) => {
    const controller = new AbortController();
    const pending = transport.send(request([call(1)], { signal: controller.signal }));
    await until(() => up.held.length === 1);
    controller.abort();
    const err = await failure(pending);
    t.is(err.kind, 'aborted');
    t.true(err.sent);
  });
});

test('should fail the calls in flight when the server drops, and reconnect on the next call', async (t) => {
  await withWs({ hold: true }, async (transport, up) => {
    const a = transport.send(request([call(1)]));
    const b = transport.send(request([call(2)]));
    await until(() => up.held.length === 2);
    up.drop();
    const [ea, eb] = await Promise.all([failure(a), failure(b)]);
    t.is(ea.kind, 'closed');
    t.is(eb.kind, 'closed');
    t.true(ea.sent && eb.sent, 'both were written before the drop');
    const next = transport.send(request([call(3)]));
    await until(() => up.held.length === 3);
    up.held[2]!.socket.send(JSON.stringify(reply(up.held[2]!.message)));
    t.is((json((await next).body) as { id: unknown }).id, 3);
    t.is(up.connections, 2);
  });
});

test('should fail fast with kind transport when the upstream is not there, then back off', async (t) => {
  const up = await wsUpstream();
  await up.close();
  // A back-off of a minute (the default 250 ms can pass on a loaded machine before the second call).
  const transport = createWsTransport(up.url, { maxBytes: 1_000, handshakeTimeoutMs: 1_000, backoffMs: 60_000 });
  // Once the first attempt failed, the port listens again and counts who connects: during the
  // back-off, a call fails without a new attempt.
  let attempts = 0;
  const listener = net.createServer((socket) => {
    attempts += 1;
    socket.destroy();
  });
  try {
    const first = await failure(transport.send(request([call(1)])));
    t.is(first.kind, 'transport');
    t.false(first.sent, 'the handshake failed: nothing was written');
    t.false(first.message.includes('KEY'), 'no provider key in the message');
    listener.listen(Number(new URL(up.url).port), '127.0.0.1');
    await once(listener, 'listening');
    const second = await failure(transport.send(request([call(2)])));
    t.is(second.kind, 'closed');
    t.false(second.sent);
    t.regex(second.message, /next attempt in \d+ ms/);
    t.is(attempts, 0, 'no connection attempted during the back-off');
  } finally {
    await transport.close();
    if (listener.listening) await new Promise((resolve) => listener.close(resolve));
  }
});

test('should try again once the back-off has passed: a call then opens a connection', async (t) => {
  const up = await wsUpstream();
  await up.close();
  const transport = createWsTransport(up.url, { maxBytes: 1_000, handshakeTimeoutMs: 1_000, backoffMs: 20 });
  let attempts = 0;
  const listener = net.createServer((socket) => {
    attempts += 1;
    socket.destroy();
  });
  try {
    t.is((await failure(transport.send(request([call(1)])))).kind, 'transport');
    listener.listen(Number(new URL(up.url).port), '127.0.0.1');
    await once(listener, 'listening');
    // Calls fail at once ('closed') until the back-off has passed; then one attempts a handshake,
    // which this listener cuts ('transport').
    let last = await failure(transport.send(request([call(2)])));
    for (let i = 0; last.kind === 'closed' && i < 1_000; i += 1) {
      await new Promise((r) => setTimeout(r, 5));
      last = await failure(transport.send(request([call(3 + i)])));
    }
    t.is(last.kind, 'transport');
    t.is(attempts, 1);
  } finally {
    await transport.close();
    if (listener.listening) await new Promise((resolve) => listener.close(resolve));
  }
});

test('should close: fail the calls in flight, refuse new ones and close the socket', async (t) => {
  const up = await wsUpstream({ hold: true });
  const transport = createWsTransport(up.url, { maxBytes: 1_000_000 });
  try {
    const pending = transport.send(request([call(1)]));
    await until(() => up.held.length === 1);
    const serverSide = up.held[0]!.socket;
    const closed = once(serverSide, 'close');
    await transport.close();
    t.is((await failure(pending)).kind, 'closed');
    await closed;
    const after = await failure(transport.send(request([call(2)])));
    t.is(after.kind, 'closed');
    t.false(after.sent);
    t.is(after.message, 'transport closed');
  } finally {
    await up.close();
  }
});

test('should close cleanly when it never connected', async (t) => {
  const transport = createWsTransport('ws://127.0.0.1:9/', { maxBytes: 1_000 });
  await t.notThrowsAsync(transport.close());
});

// The HTTP transport reports an oversized answer as 'too-large'; the fetch stage and /chains
// should read the same kind for a ws upstream.
test('should fail with kind too-large when an answer is over maxBytes', async (t) => {
  const up = await wsUpstream({ hold: true });
  const transport = createWsTransport(up.url, { maxBytes: 1_000 });
  try {
    const pending = transport.send(request([call(1)]));
    await until(() => up.held.length === 1);
    const { socket, message } = up.held[0]!;
    socket.send(JSON.stringify({ ...answer1(message as Msg), result: 'x'.repeat(5_000) }));
    const err = await failure(pending);
    t.is(err.kind, 'too-large', `kind ${err.kind}: ${err.message}`);
  } finally {
    await transport.close();
    await up.close();
  }
});

// Over HTTP an upstream's `{"id":null,"error":…}` (batch too large, parse error) comes back as the
// body and the verifier names the reason at once. Over ws it matches no pending id and the call
// waits for its timeout (10 s by default) before the next upstream is asked.
test('should not wait for the timeout when the upstream answers a batch with one id-less error', async (t) => {
  await withWs({ hold: true }, async (transport, up) => {
    // (the timeout, 30 s, is not waited for: the error settles the call, or it fails as a timeout)
    const pending = transport.send(request([call(1), call(2)]));
    await until(() => up.held.length === 1);
    up.held[0]!.socket.send(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'batch too large' } }));
    const outcome = await pending.then(
      (r) => `body ${r.body.toString()}`,
      (err: UpstreamCallError) => `${err.kind}: ${err.message}`,
    );
    // Settled by the error, which it names, not by the timeout (kind timeout).
    t.is(outcome, 'transport: upstream error with id null: batch too large');
  });
});

/**
 * A ws upstream whose handshake waits until `open()` is called: the HTTP upgrade request is held.
 */
async function slowHandshake() {
  const http = await import('node:http');
  const wss = new WebSocketServer({ noServer: true });
  const received: unknown[] = [];
  wss.on('connection', (socket) => {
    socket.on('message', (data) => {
      const message = JSON.parse(data.toString()) as Msg;
      received.push(message);
      socket.send(JSON.stringify(reply(message)));
    });
  });
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  let upgrades = 0;
  const server = http.createServer();
  server.on('upgrade', (req, socket, head) => {
    upgrades += 1;
    void opened.then(() => wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req)));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}/ws/KEY`,
    received,
    get upgrades() {
      return upgrades;
    },
    open,
    close: () =>
      new Promise<void>((resolve) => {
        wss.clients.forEach((c) => c.terminate());
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

test('should time out a call while the connection is still opening, and never send it', async (t) => {
  const up = await slowHandshake();
  t.teardown(() => up.close());
  // A handshake allowed far longer than the call: the call's own timeout must end it.
  const transport = createWsTransport(up.url, { maxBytes: 1_000_000, handshakeTimeoutMs: 600_000 });
  t.teardown(() => transport.close());
  const err = await failure(transport.send(request([call(1)], { timeoutMs: 150 })));
  t.is(err.kind, 'timeout');
  // (on a loaded machine the call may time out before the upgrade request reaches the upstream)
  await until(() => up.upgrades >= 1);
  t.is(up.upgrades, 1);
  // The connection opens later: the next call goes out on it, the timed-out one never does.
  up.open();
  const next = await transport.send(request([call(2, 'eth_blockNumber')]));
  t.deepEqual(json(next.body), { jsonrpc: '2.0', id: 2, result: { method: 'eth_blockNumber', params: [] } });
  t.deepEqual(
    up.received.map((m) => (m as Msg).method),
    ['eth_blockNumber'],
  );
});

test('should fail with kind aborted when the caller aborts while the connection opens', async (t) => {
  const up = await slowHandshake();
  t.teardown(() => up.close());
  const transport = createWsTransport(up.url, { maxBytes: 1_000_000, handshakeTimeoutMs: 600_000 });
  t.teardown(() => transport.close());
  const controller = new AbortController();
  const pending = transport.send(request([call(1)], { signal: controller.signal, timeoutMs: 600_000 }));
  await until(() => up.upgrades === 1);
  controller.abort();
  t.is((await failure(pending)).kind, 'aborted');
  up.open();
  const next = await transport.send(request([call(2, 'eth_blockNumber')]));
  t.deepEqual(json(next.body), { jsonrpc: '2.0', id: 2, result: { method: 'eth_blockNumber', params: [] } });
  t.deepEqual(
    up.received.map((m) => (m as Msg).method),
    ['eth_blockNumber'],
    'the aborted call was never sent',
  );
});

test('should never send a call aborted between the connection being ready and the write, nor wait for it', async (t) => {
  await withWs({ hold: true }, async (transport, up) => {
    const first = transport.send(request([call(1)]));
    await until(() => up.held.length === 1);
    up.held[0]!.socket.send(JSON.stringify(reply(up.held[0]!.message)));
    await first;
    // The socket is open: the connection is ready a microtask later, and the abort comes right then.
    const cancellation = new Cancellation();
    const pending = transport.send(request([call(2, 'eth_sendRawTransaction', ['0x01'])], { signal: cancellation, timeoutMs: 600_000 }));
    queueMicrotask(() => cancellation.abort(new Error('decided elsewhere')));
    // (bounded far below its 600 s timeout, far above any stall of a loaded machine)
    let bound: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([failure(pending), new Promise<'hung'>((resolve) => (bound = setTimeout(() => resolve('hung'), 20_000)))]);
    clearTimeout(bound);
    t.not(outcome, 'hung', 'the aborted call settles');
    t.is((outcome as UpstreamCallError).kind, 'aborted');
    // A call after it on the same connection: had the aborted one been written, it came first.
    const after = transport.send(request([call(3)]));
    await until(() => up.held.length === 2);
    up.held[1]!.socket.send(JSON.stringify(reply(up.held[1]!.message)));
    await after;
    t.deepEqual(
      up.received.map((m) => (m as Msg).method),
      ['eth_chainId', 'eth_chainId'],
      'the aborted call was never written',
    );
    t.is(up.connections, 1);
  });
});

test('should drop a connection that answers no ping (a half-open one), fail its calls and reconnect on the next call', async (t) => {
  // autoPong off: the upstream reads calls but never answers a ping, as a peer gone without a FIN.
  const server = new WebSocketServer({ port: 0, host: '127.0.0.1', autoPong: false });
  await once(server, 'listening');
  let connections = 0;
  const held: WebSocket[] = [];
  server.on('connection', (socket) => {
    connections += 1;
    socket.on('message', () => held.push(socket));
  });
  const transport = createWsTransport(`ws://127.0.0.1:${(server.address() as AddressInfo).port}/`, { maxBytes: 1_000, heartbeatMs: 100 });
  t.teardown(async () => {
    await transport.close();
    server.clients.forEach((c) => c.terminate());
    await new Promise((resolve) => server.close(resolve));
  });
  const stuck = transport.send(request([call(1)], { timeoutMs: 10_000 }));
  const err = await failure(stuck);
  t.is(err.kind, 'closed');
  t.regex(err.message, /no pong nor message for 100 ms/);
  t.true(err.sent, 'it was written: a write would not be sent again');
  // The next call opens a new connection.
  const next = transport.send(request([call(2)], { timeoutMs: 10_000 }));
  await until(() => held.length === 2);
  t.is(connections, 2);
  held[1]!.send(JSON.stringify({ jsonrpc: '2.0', id: 2, result: '0x1' }));
  t.is((json((await next).body) as { id: unknown }).id, 2);
});

test('should keep a connection that answers its pings, however long it is idle', async (t) => {
  const up = await wsUpstream();
  // A period far above the stalls of a loaded machine (this process is also the upstream);
  // a pong read late, the event loop held past the period, is ws-connection.test's.
  const transport = createWsTransport(up.url, { maxBytes: 1_000_000, heartbeatMs: 2_000 });
  t.teardown(async () => {
    await transport.close();
    await up.close();
  });
  await transport.send(request([call(1)]));
  // Idle through three pings: the second and third were sent because a pong alone kept it.
  await until(() => up.pings >= 3);
  await transport.send(request([call(2)]));
  t.is(up.connections, 1, 'one connection for both calls');
});

test('a health call another follows (keepOpen) leaves the connection open for it; the last one closes it', async (t) => {
  await withWs({}, async (transport, up) => {
    const open = () => [...up.server.clients].filter((c) => c.readyState === c.OPEN).length;
    await transport.send(request([call(1)], { background: true, keepOpen: true }));
    await transport.send(request([call(2, 'eth_blockNumber')], { background: true }));
    await until(() => open() === 0);
    t.is(up.connections, 1, 'both calls on one connection');
  });
});

test('a health call another was to follow (keepOpen) lets the connection go when that one will not come (releaseKept)', async (t) => {
  await withWs({}, async (transport, up) => {
    const open = () => [...up.server.clients].filter((c) => c.readyState === c.OPEN).length;
    await transport.send(request([call(1)], { background: true, keepOpen: true }));
    t.is(open(), 1, 'kept for the next call');
    transport.releaseKept!();
    await until(() => open() === 0);
    t.is(up.connections, 1);
  });
});

test('a health call on an upstream without traffic closes the connection once nothing is in flight; with traffic since the last one it stays', async (t) => {
  await withWs({}, async (transport, up) => {
    const open = () => [...up.server.clients].filter((c) => c.readyState === c.OPEN).length;
    // A probe: two health calls at once on one connection; the last to end closes it.
    await Promise.all([transport.send(request([call(1)], { background: true })), transport.send(request([call(2, 'eth_blockNumber')], { background: true }))]);
    await until(() => open() === 0);
    t.is(up.connections, 1);
    await transport.send(request([call(3, 'eth_getBalance', ['0xabc', '0x1'])]));
    await transport.send(request([call(4)], { background: true }));
    // (a connection being closed is not open to a call: the next one would open another)
    await transport.send(request([call(5)]));
    t.is(open(), 1, 'traffic since the last health call: the connection stays');
    t.is(up.connections, 2, 'the traffic call opened a new connection, which carried the rest');
  });
});
