/**
 * The cap on open upstream sockets (lib/upstream/transport/sockets.ts) with both HTTP transports
 * (node:http, undici), against a real local server on port 0 that holds its answers until the test releases them and
 * counts the connections open on its side: a call beyond the cap waits (it reaches the server
 * only when a socket is free), its abort or timeout ends it while it waits, an idle socket of
 * another upstream is reclaimed for it, an idle socket of its own upstream is reused, a
 * health call on an upstream without traffic closes its socket, and above its share of the cap
 * an upstream borrows only room the cap has, its borrowed sockets the first reclaimed and closed
 * once idle for a while (never while their call runs).
 */
import { once } from 'node:events';
import { Agent, createServer, type ServerResponse } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import test, { type ExecutionContext } from 'ava';
import { createHttpTransport } from '../../../../../lib/upstream/transport/http.js';
import { createUndiciTransport } from '../../../../../lib/upstream/transport/undici.js';
import { UpstreamCallError, type Transport, type UpstreamRequest } from '../../../../../lib/upstream/transport/contract.js';
import { SocketPool } from '../../../../../lib/upstream/transport/sockets.js';
import { until } from '../../../../support/wait.js';

/** A server whose answers wait in `held` (by path) until released; it counts open connections. */
async function holdingServer(t: ExecutionContext) {
  const held: { path: string; res: ServerResponse }[] = [];
  const paths: string[] = [];
  let open = 0;
  let most = 0;
  let connections = 0;
  const sockets = new Set<Socket>();
  const closed: (() => void)[] = [];
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      paths.push(req.url!);
      held.push({ path: req.url!, res });
      arrived.splice(0).forEach((f) => f());
    });
  });
  const arrived: (() => void)[] = [];
  server.on('connection', (s: Socket) => {
    connections += 1;
    open += 1;
    most = Math.max(most, open);
    sockets.add(s);
    // Counted down at the client's FIN ('end'), which the server reads before a connection the
    // client opens after it; 'close' comes a loop phase later.
    let counted = true;
    const gone = () => {
      if (!counted) return;
      counted = false;
      open -= 1;
      sockets.delete(s);
      closed.splice(0).forEach((f) => f());
    };
    s.on('end', gone);
    s.on('close', gone);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => {
    for (const s of sockets) s.destroy();
    server.close();
  });
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const s = {
    origin,
    paths,
    get open() {
      return open;
    },
    get most() {
      return most;
    },
    get connections() {
      return connections;
    },
    /** Answers the oldest held request (of `path` if given). */
    release(path?: string) {
      const i = path === undefined ? 0 : held.findIndex((h) => h.path === path);
      const [h] = held.splice(i, 1);
      h!.res.writeHead(200, { 'content-type': 'application/json' });
      h!.res.end('{"jsonrpc":"2.0","id":1,"result":"0x1"}');
    },
    /** Resolves once `n` requests reached the server. */
    async requests(n: number) {
      while (paths.length < n) await new Promise<void>((resolve) => arrived.push(resolve));
    },
    /** Resolves once at most `n` connections are open on the server's side. */
    async openAtMost(n: number) {
      while (open > n) await new Promise<void>((resolve) => closed.push(resolve));
    },
  };
  return s;
}

/** One call of `transport` answered at once by `server` (the calls before it answered too). */
async function roundTrip(server: { paths: string[]; requests(n: number): Promise<void>; release(): void }, transport: Transport, req: UpstreamRequest): Promise<void> {
  const call = transport.send(req);
  await server.requests(server.paths.length + 1);
  server.release();
  await call;
}

const request = (overrides: Partial<UpstreamRequest> = {}): UpstreamRequest => ({
  payload: { calls: [{ id: 1, method: 'eth_chainId', params: [] }], batch: false, raw: Buffer.from('{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}') },
  requestId: 'req-1',
  signal: new AbortController().signal,
  timeoutMs: 10_000,
  maxBytes: 1_000_000,
  ...overrides,
});

type Create = (url: string, options: { sockets: SocketPool; maxSockets?: number; share?: number }) => Transport;
const clients: [name: 'node' | 'undici', create: Create][] = [
  ['node', createHttpTransport],
  ['undici', (url, options) => nextTurn(createUndiciTransport(url, options))],
];

/**
 * undici takes a connection freed by an answer back into its pool one turn of the event loop
 * later (node's agent at once): a call started in the same turn opens another, which at the cap
 * closes an idle one for it. The tests' calls on undici start a turn later, so that the counts
 * below read what the cap does and not that turn.
 */
function nextTurn(transport: Transport): Transport {
  return {
    send: async (request) => {
      await new Promise((r) => setImmediate(r));
      return transport.send(request);
    },
    releaseKept: () => transport.releaseKept?.(),
    close: () => transport.close(),
  };
}

/** A test run once on each client (`create` makes its transports). */
function both(title: string, fn: (t: ExecutionContext, create: Create) => Promise<void>) {
  for (const [name, create] of clients) test(`${name}: ${title}`, (t) => fn(t, create));
}

function transports(t: ExecutionContext, create: Create, origin: string, pool: SocketPool, names: string[], sizes: { maxSockets?: number; share?: number } = {}): Transport[] {
  const list = names.map((n) => create(`${origin}/${n}`, { sockets: pool, ...sizes }));
  t.teardown(() => Promise.all(list.map((x) => x.close())));
  return list;
}

const failure = async (promise: Promise<unknown>): Promise<UpstreamCallError> => {
  try {
    await promise;
  } catch (err) {
    if (err instanceof UpstreamCallError) return err;
    throw err;
  }
  throw new Error('the call did not fail');
};

/** Lets node's client and the server exchange what they have queued. */
const settle = () => new Promise<void>((resolve) => setTimeout(resolve, 30));

both('a call beyond the cap waits for a socket; an idle socket of another upstream is reclaimed for it', async (t, create) => {
  const server = await holdingServer(t);
  const pool = new SocketPool(2);
  const [a, b] = transports(t, create, server.origin, pool, ['a', 'b']);
  const a1 = a!.send(request());
  const a2 = a!.send(request());
  await server.requests(2);
  const b1 = b!.send(request());
  await settle();
  t.deepEqual(server.paths, ['/a', '/a'], 'the third call waits: two sockets are open, both busy');
  t.is(pool.open, 2);
  t.not(pool.head, undefined);
  server.release('/a');
  t.is((await a1).body.toString(), '{"jsonrpc":"2.0","id":1,"result":"0x1"}');
  await server.requests(3);
  t.deepEqual(server.paths, ['/a', '/a', '/b'], "a's idle socket was closed for b's call");
  server.release();
  server.release();
  await Promise.all([a2, b1]);
  t.true(server.most <= 2, `${server.most} connections at once`);
  t.true(pool.peak <= 2, `${pool.peak} sockets at once (pool)`);
  t.is(pool.head, undefined);
  t.is(pool.pending, 0);
});

both('a waiting call ends on its abort or its timeout without reaching the upstream', async (t, create) => {
  const server = await holdingServer(t);
  const pool = new SocketPool(1);
  const [a, b] = transports(t, create, server.origin, pool, ['a', 'b']);
  const a1 = a!.send(request());
  await server.requests(1);
  const abort = new AbortController();
  const aborted = failure(b!.send(request({ signal: abort.signal })));
  const timedOut = failure(b!.send(request({ timeoutMs: 50 })));
  await settle();
  abort.abort();
  const e1 = await aborted;
  t.is(e1.kind, 'aborted');
  t.false(e1.sent);
  const e2 = await timedOut;
  t.is(e2.kind, 'timeout');
  t.false(e2.sent);
  t.is(pool.head, undefined, 'nobody waits');
  server.release();
  await a1;
  t.deepEqual(server.paths, ['/a'], 'neither waiting call was sent');
  t.is(pool.pending, 0);
  // The cap still works: the next call of b reclaims a's idle socket.
  await roundTrip(server, b!, request());
  t.is(server.connections, 2);
  t.is(server.most, 1);
});

both("at the cap, a call takes its own upstream's idle socket", async (t, create) => {
  const server = await holdingServer(t);
  const pool = new SocketPool(1);
  const [a] = transports(t, create, server.origin, pool, ['a']);
  for (let i = 1; i <= 3; i += 1) {
    await roundTrip(server, a!, request());
  }
  t.is(server.connections, 1, 'one socket, kept alive and reused');
  t.is(pool.open, 1);
});

both('a health call on an upstream without traffic closes its socket; with traffic since the last one it is kept', async (t, create) => {
  const server = await holdingServer(t);
  const pool = new SocketPool(8);
  const [a] = transports(t, create, server.origin, pool, ['a']);
  await roundTrip(server, a!, request({ background: true }));
  await server.openAtMost(0);
  t.is(pool.open, 0, 'closed after the answer');
  await roundTrip(server, a!, request());
  await roundTrip(server, a!, request({ background: true }));
  await settle();
  t.is(server.open, 1, 'traffic since the last health call: the socket stays');
  t.is(pool.open, 1);
  t.is(server.connections, 2);
});

both('a health call another follows (keepOpen) leaves its socket to that one, which closes it on an upstream without traffic', async (t, create) => {
  const server = await holdingServer(t);
  const pool = new SocketPool(8);
  const [a] = transports(t, create, server.origin, pool, ['a']);
  // The probe: its chain id kept open for the head's call, which then finds a warm socket.
  await roundTrip(server, a!, request({ background: true, keepOpen: true }));
  await settle();
  t.is(server.open, 1, 'kept for the next call');
  await roundTrip(server, a!, request({ background: true }));
  await server.openAtMost(0);
  t.is(server.connections, 1, 'both calls on one connection');
  t.is(pool.open, 0, 'closed after the last call');
});

both('a health call another was to follow (keepOpen) lets its socket go when that one will not come, on an upstream without traffic', async (t, create) => {
  const server = await holdingServer(t);
  const pool = new SocketPool(8);
  const [a] = transports(t, create, server.origin, pool, ['a']);
  // The probe's chain id, kept open for the head's call; the probe then stops (a wrong answer).
  await roundTrip(server, a!, request({ background: true, keepOpen: true }));
  await settle();
  t.is(server.open, 1, 'kept for the next call');
  a!.releaseKept!();
  await server.openAtMost(0);
  t.is(pool.open, 0, 'uncounted');
  // The next call opens a connection of its own, counted again.
  await roundTrip(server, a!, request());
  t.is(server.connections, 2);
  t.is(pool.open, 1);
});

both('an upstream with traffic since its last health call keeps its socket when a kept one is let go', async (t, create) => {
  const server = await holdingServer(t);
  const pool = new SocketPool(8);
  const [a] = transports(t, create, server.origin, pool, ['a']);
  await roundTrip(server, a!, request());
  await roundTrip(server, a!, request({ background: true, keepOpen: true }));
  await settle();
  a!.releaseKept!();
  await settle();
  t.is(server.open, 1, 'traffic keeps it alive');
  t.is(pool.open, 1);
  // The next health call, with no traffic since the last decision, closes it.
  await roundTrip(server, a!, request({ background: true }));
  await server.openAtMost(0);
  t.is(server.connections, 1, 'one connection throughout');
});

test("a caller's agent is not counted", async (t) => {
  const server = await holdingServer(t);
  const pool = new SocketPool(1);
  const agent = new Agent({ keepAlive: true });
  t.teardown(() => agent.destroy());
  const own = createHttpTransport(`${server.origin}/x`, { sockets: pool, agent });
  t.teardown(() => own.close());
  const calls = [own.send(request()), own.send(request())];
  await server.requests(2);
  server.release();
  server.release();
  await Promise.all(calls);
  t.is(pool.open, 0);
  t.is(server.most, 2, 'two sockets at once, above the cap of 1');
});

both('the cap holds with many upstreams and many calls; every call is answered', async (t, create) => {
  const server = await holdingServer(t);
  const pool = new SocketPool(5);
  const list = transports(t, create, server.origin, pool, Array.from({ length: 40 }, (_, i) => `u${i}`));
  const calls = list.flatMap((x) => [x.send(request()), x.send(request())]);
  let answered = 0;
  while (answered < calls.length) {
    await server.requests(answered + 1);
    server.release();
    answered += 1;
  }
  const bodies = await Promise.all(calls);
  t.is(bodies.length, 80);
  t.true(server.most <= 5, `${server.most} connections at once`);
  t.true(pool.peak <= 5);
  t.is(new Set(server.paths).size, 40);
});

both('above its share an upstream borrows only room the cap has; its borrowed sockets are reclaimed first, an idle one within its share is kept', async (t, create) => {
  const server = await holdingServer(t);
  const pool = new SocketPool(4);
  const [a, b, c, d] = transports(t, create, server.origin, pool, ['a', 'b', 'c', 'd'], { maxSockets: 4, share: 1 });
  // b: one call; its socket, within b's share, stays idle from here on.
  const b1 = b!.send(request());
  await server.requests(1);
  server.release('/b');
  await b1;
  // a: one call within its share, one on room lent (1 open + 1 within + 1 lent, counted twice, < 4 at
  // each step), and a third that waits: nothing more is lent.
  const calls = [a!.send(request()), a!.send(request()), a!.send(request())];
  await server.requests(3);
  await settle();
  t.deepEqual(server.paths, ['/b', '/a', '/a'], "a's third call waits for a's own calls");
  t.is(pool.borrowed, 1);
  server.release('/a');
  server.release('/a');
  await server.requests(4);
  server.release('/a');
  await Promise.all(calls);
  await until(() => pool.borrowed === 0); // the lent room given back
  t.is(pool.borrowed, 0, 'the lent room given back');
  // (node may have opened one more for a's third call, started as the first ended: the cap had room.)
  t.true(pool.open >= 3, "b's idle socket and a's");
  const before = server.connections;
  // d's call and c's (each within its share) fill the cap: a's idle sockets (above a's share) are
  // the ones closed for them, not b's, the oldest idle one.
  const d1 = d!.send(request());
  await server.requests(server.paths.length + 1);
  const c1 = c!.send(request());
  await server.requests(server.paths.length + 1);
  server.release('/c');
  server.release('/d');
  await Promise.all([c1, d1]);
  const b2 = b!.send(request());
  await server.requests(server.paths.length + 1);
  server.release('/b');
  await b2;
  t.is(server.connections, before + 2, "b's socket was kept: two connections opened, for c and d");
  t.true(pool.peak <= 4, `${pool.peak} sockets at once`);
  t.true(server.most <= 4, `${server.most} connections at once`);
});

both('a borrowed socket is closed once idle for borrowedIdleMs, not while its call runs; the share is kept', async (t, create) => {
  const server = await holdingServer(t);
  const pool = new SocketPool(4, 50);
  const [a] = transports(t, create, server.origin, pool, ['a'], { maxSockets: 4, share: 1 });
  // One call within the share, one on lent room: two sockets, held well past two sweep rounds.
  const calls = [a!.send(request()), a!.send(request())];
  await server.requests(2);
  t.is(pool.borrowed, 1);
  await new Promise((resolve) => setTimeout(resolve, 250));
  t.is(server.open, 2, 'both sockets open while their calls run');
  server.release();
  server.release();
  const bodies = await Promise.all(calls);
  t.true(bodies.every((b) => b.body.toString() === '{"jsonrpc":"2.0","id":1,"result":"0x1"}'));
  // Idle now: the borrowed one is closed, the share's kept alive (an upstream's keep-alive, 4 s
  // here, would close both).
  await server.openAtMost(1);
  await settle();
  t.is(server.open, 1, "the share's socket kept alive");
  t.is(pool.open, 1);
  t.is(pool.aboveShare, 0);
  t.is(pool.borrowed, 0);
  // The next call reuses the kept socket.
  await roundTrip(server, a!, request());
  t.is(server.connections, 2, 'no connection opened for it');
});

both('a call ended while its close-delimited answer is read, on an upstream its health calls mark to be closed, closes its connection and the process goes on', async (t, create) => {
  // A raw upstream: health calls (X-Request-Id: health) get a kept-alive answer; the traffic call
  // gets the head of an answer delimited by the connection's close (no length: HTTP/1.0 or
  // Connection: close) and the start of its body, then nothing.
  let trafficArrived: () => void;
  const arrived = new Promise<void>((resolve) => (trafficArrived = resolve));
  let trafficClosed: () => void;
  const closed = new Promise<void>((resolve) => (trafficClosed = resolve));
  const sockets = new Set<Socket>();
  const server = createNetServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => {});
    socket.on('close', () => sockets.delete(socket));
    socket.on('data', (bytes) => {
      if (/x-request-id: health/i.test(bytes.toString('latin1'))) {
        socket.write('HTTP/1.1 200 OK\r\nContent-Length: 39\r\n\r\n{"jsonrpc":"2.0","id":1,"result":"0x1"}');
        return;
      }
      socket.write('HTTP/1.0 200 OK\r\nContent-Type: application/json\r\n\r\n{"jsonrpc":"2.0",');
      socket.on('close', () => trafficClosed());
      trafficArrived();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => {
    for (const s of sockets) s.destroy();
    server.close();
  });
  const pool = new SocketPool(8);
  const [a] = transports(t, create, `http://127.0.0.1:${(server.address() as AddressInfo).port}`, pool, ['a']);
  const abort = new AbortController();
  const traffic = failure(a!.send(request({ signal: abort.signal })));
  await arrived;
  // Two health calls while it runs: the second finds no traffic since the first, so the
  // upstream's connections are to be closed once no call is in flight, the traffic call's too.
  for (let i = 0; i < 2; i += 1) await a!.send(request({ requestId: 'health', background: true }));
  abort.abort();
  const err = await traffic;
  t.is(err.kind, 'aborted');
  t.true(err.sent);
  // Its connection closed: undici read that close as the end of an answer to a request it had
  // aborted, and threw out of the socket's close event (the process died), before the fix.
  await closed;
  const after = await a!.send(request({ requestId: 'health', background: true }));
  t.is(after.body.toString(), '{"jsonrpc":"2.0","id":1,"result":"0x1"}');
});
