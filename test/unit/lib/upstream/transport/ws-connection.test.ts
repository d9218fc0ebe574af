/**
 * The one connection of a ws upstream against a real ws server on port 0: opened once and shared,
 * its Via header, messages passed on (a throwing reader reported as unreadable), a close failing
 * the calls written on it and the next call reconnecting, an answer over maxBytes, a peer that
 * stops answering pings dropped (and one whose pong is read late kept), a refused connection backed off, close() during a handshake.
 */
import net, { type AddressInfo } from 'node:net';
import test from 'ava';
import WebSocket, { WebSocketServer } from 'ws';
import { UpstreamCallError } from '../../../../../lib/upstream/transport/contract.js';
import { WsConnection, type WsConnectionEvents } from '../../../../../lib/upstream/transport/ws-connection.js';

async function server(options: { autoPong?: boolean } = {}) {
  const wss = new WebSocketServer({ port: 0, host: '127.0.0.1', autoPong: options.autoPong ?? true });
  await new Promise((resolve) => wss.once('listening', resolve));
  const sockets: WebSocket[] = [];
  const heads: (string | undefined)[] = [];
  wss.on('connection', (ws, req) => {
    sockets.push(ws);
    heads.push(req.headers.via as string | undefined);
  });
  return {
    url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`,
    sockets,
    heads,
    close: () => new Promise<void>((resolve) => {
      for (const ws of wss.clients) ws.terminate();
      wss.close(() => resolve());
    }),
  };
}

function recorder() {
  const seen: string[] = [];
  let onClosed: ((err: UpstreamCallError) => void) | undefined;
  const closed = () => new Promise<UpstreamCallError>((resolve) => (onClosed = resolve));
  const events: WsConnectionEvents = {
    message: (data) => {
      const text = data.toString();
      if (text === 'throw') throw new Error('bad bytes');
      seen.push(`message ${text}`);
    },
    unreadable: (err) => seen.push(`unreadable ${err.message}`),
    closed: (err) => {
      seen.push(`closed ${err.kind}`);
      onClosed?.(err);
    },
  };
  return { seen, events, closed };
}

test('should open one connection on first use, share it, send Via, and pass messages on', async (t) => {
  const s = await server();
  const r = recorder();
  const conn = new WsConnection(s.url, { maxBytes: 1000, via: '1.1 omnigate-abc' }, r.events);
  try {
    const [a, b] = await Promise.all([conn.connect(), conn.connect()]);
    t.is(a, b);
    t.is(await conn.connect(), a);
    t.is(s.sockets.length, 1);
    t.deepEqual(s.heads, ['1.1 omnigate-abc']);
    const got = new Promise((resolve) => a.once('message', resolve));
    s.sockets[0]!.send('hello');
    await got;
    t.deepEqual(r.seen, ['message hello']);
    const unreadable = new Promise((resolve) => a.once('message', resolve));
    s.sockets[0]!.send('throw');
    await unreadable;
    t.deepEqual(r.seen, ['message hello', 'unreadable unreadable message: bad bytes']);
  } finally {
    await conn.close();
    await s.close();
  }
});

test('should report a close to the calls written on it, and reconnect on the next call', async (t) => {
  const s = await server();
  const r = recorder();
  const conn = new WsConnection(s.url, { maxBytes: 1000 }, r.events);
  try {
    const first = await conn.connect();
    const closed = r.closed();
    s.sockets[0]!.close(4000, 'bye');
    const err = await closed;
    t.like(err, { kind: 'closed', message: 'websocket closed (code 4000)' });
    const second = await conn.connect();
    t.not(second, first);
    t.is(s.sockets.length, 2);
  } finally {
    await conn.close();
    await s.close();
  }
});

test('should fail the calls with too-large when an answer is over maxBytes', async (t) => {
  const s = await server();
  const r = recorder();
  const conn = new WsConnection(s.url, { maxBytes: 10 }, r.events);
  try {
    await conn.connect();
    const closed = r.closed();
    s.sockets[0]!.send('x'.repeat(100));
    t.like(await closed, { kind: 'too-large', message: 'answer over the 10-byte limit (the connection is reopened)' });
  } finally {
    await conn.close();
    await s.close();
  }
});

test('should drop a connection whose peer answers no ping', async (t) => {
  const s = await server({ autoPong: false });
  const r = recorder();
  const conn = new WsConnection(s.url, { maxBytes: 1000, heartbeatMs: 20 }, r.events);
  try {
    await conn.connect();
    t.like(await r.closed(), { kind: 'closed', message: 'websocket dropped: no pong nor message for 20 ms' });
  } finally {
    await conn.close();
    await s.close();
  }
});

// A busy gateway reads its sockets late: when its event loop was held past the heartbeat, the
// pong already in its socket is still unread when the next ping's timer fires. That connection is
// healthy and must stay (a drop fails every call written on it).
test('should keep a connection whose pong came while the event loop was held past the heartbeat', async (t) => {
  const s = await server();
  const r = recorder();
  const conn = new WsConnection(s.url, { maxBytes: 1000, heartbeatMs: 200 }, r.events);
  try {
    await conn.connect();
    let pings = 0;
    // The second ping comes after the first tick past the hold: the tick that found the first
    // pong unread. (A drop would come first: that tick's verdict.)
    const second = new Promise<string[]>((resolve) => {
      s.sockets[0]!.on('ping', () => {
        pings += 1;
        // The server's pong is written: hold this thread, as a loaded machine would, for five
        // periods, so that the pong is read only after the next tick's timer fired.
        if (pings === 1) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 1_000);
        if (pings === 2) resolve([...r.seen]);
      });
    });
    const dropped = r.closed();
    const outcome = await Promise.race([second.then((seen) => `second ping, seen ${JSON.stringify(seen)}`), dropped.then((err) => `closed: ${err.message}`)]);
    t.is(outcome, 'second ping, seen []');
  } finally {
    await conn.close();
    await s.close();
  }
});

test('should reject a refused connection as not sent, then fail at once until the backoff passed', async (t) => {
  const s = await server();
  const url = s.url;
  await s.close();
  const conn = new WsConnection(url, { maxBytes: 1000 }, recorder().events);
  const err = await t.throwsAsync(conn.connect());
  t.like(err, { kind: 'transport', sent: false });
  const next = await t.throwsAsync(conn.connect());
  t.like(next, { kind: 'closed', sent: false });
  t.regex(next!.message, /^connection down, next attempt in \d+ ms$/);
});

test('close() should end a handshake that gets no answer at once', async (t) => {
  const sockets: net.Socket[] = [];
  const silent = net.createServer((socket) => sockets.push(socket));
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const conn = new WsConnection(`ws://127.0.0.1:${(silent.address() as AddressInfo).port}`, { maxBytes: 1000, handshakeTimeoutMs: 600_000 }, recorder().events);
  try {
    const opening = conn.connect().catch((e: unknown) => e);
    await new Promise<void>((resolve) => silent.once('connection', () => resolve()));
    await conn.close();
    t.like(await opening, { sent: false });
  } finally {
    for (const s of sockets) s.destroy();
    await new Promise((resolve) => silent.close(resolve));
  }
});
