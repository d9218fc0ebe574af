/**
 * The HTTP transport against real local servers on port 0: node:http and node:https servers for
 * what upstreams normally do, raw TCP servers that write exact bytes for what they rarely do
 * (chunked and close-delimited answers, dead keep-alive connections, unasked bytes, malformed
 * answers). The contract's tests run on both HTTP clients (`both`: node:http, http.ts, which nock
 * sees: test/integration/balancer/nock.test.ts; and undici, undici.ts); real servers here, because
 * what is tested is what each client and omnigate do with real sockets.
 * test/fixtures/tls holds a self-signed certificate for localhost and 127.0.0.1 (100 years).
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { EventEmitter, once } from 'node:events';
import { readFile } from 'node:fs/promises';
import { Agent, createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createNetServer, type AddressInfo, type Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { gzipSync } from 'node:zlib';
import test, { type ExecutionContext } from 'ava';
import type { RpcPayload } from '../../../../../lib/jsonrpc/types.js';
import { createHttpTransport } from '../../../../../lib/upstream/transport/http.js';
import { UpstreamCallError, type Transport, type UpstreamRequest } from '../../../../../lib/upstream/transport/contract.js';
import { createUndiciTransport } from '../../../../../lib/upstream/transport/undici.js';
import { deadUrl } from '../../../../support/fake-upstream.js';
import { urlFromRoot } from '../../../../support/paths.js';

/** A transport to `url` on one of the two HTTP clients (config `upstreams.client`). */
type Create = (url: string, options?: { maxSockets?: number; tls?: { ca: Buffer } }) => Transport;
const clients: [name: 'node' | 'undici', create: Create][] = [
  ['node', createHttpTransport],
  ['undici', (url, options) => nextTurn(createUndiciTransport(url, options))],
];

/**
 * undici takes a connection freed by an answer back into its pool one turn of the event loop
 * later (node's agent at once): a call started in the same turn opens another. The tests' calls
 * on undici start a turn later, so that the connection counts below read what the contract says
 * (kept, or dropped) and not that turn.
 */
function nextTurn(transport: Transport): Transport {
  return {
    send: async (request) => {
      await new Promise((r) => setImmediate(r));
      return transport.send(request);
    },
    close: () => transport.close(),
  };
}

/** A test of the transport contract, run once on each client. */
function both(title: string, fn: (t: ExecutionContext, create: Create, client: 'node' | 'undici') => Promise<void>) {
  for (const [name, create] of clients) test(`${name}: ${title}`, (t) => fn(t, create, name));
}

interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** A local upstream: `handler` answers; every request and connection is recorded. */
async function upstream(handler: (req: IncomingMessage, res: ServerResponse, body: Buffer) => void) {
  const received: Received[] = [];
  const sockets = new Set<Socket>();
  let connections = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      received.push({ method: req.method!, url: req.url!, headers: req.headers, body });
      handler(req, res, body);
    });
  });
  server.on('connection', (s: Socket) => {
    connections += 1;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    received,
    get connections() {
      return connections;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}

const payload = (raw: Buffer | string): RpcPayload => ({
  calls: [{ id: 1, method: 'eth_chainId', params: [] }],
  batch: false,
  raw: Buffer.isBuffer(raw) ? raw : Buffer.from(raw),
});
/**
 * A call's request. Its timeout is long: every test of this file runs at once in one process, and
 * on a loaded machine the event loop may be held for seconds; a timer due by then runs before the
 * answer or the refusal already read from the socket is handled, and a call that is not about
 * time would fail as a timeout. The tests of timeouts set theirs.
 */
const request = (overrides: Partial<UpstreamRequest> = {}): UpstreamRequest => ({
  payload: payload('{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}'),
  requestId: 'req-123',
  signal: new AbortController().signal,
  timeoutMs: 30_000,
  maxBytes: 1_000_000,
  ...overrides,
});
const answer = (status: number, body: string | Buffer, headers: Record<string, string> = { 'content-type': 'application/json' }) =>
  (_req: IncomingMessage, res: ServerResponse) => {
    res.writeHead(status, headers);
    res.end(body);
  };

/** Runs `fn` with a transport to a fresh upstream and closes both. */
async function withUpstream(
  create: Create,
  handler: Parameters<typeof upstream>[0],
  fn: (transport: Transport, up: Awaited<ReturnType<typeof upstream>>) => Promise<void>,
  path = '/',
) {
  const up = await upstream(handler);
  const transport = create(`${up.origin}${path}`);
  try {
    await fn(transport, up);
  } finally {
    await transport.close();
    await up.close();
  }
}

/**
 * Resolves when the first client socket (either client's: both connect with node:net) connected
 * to `origin` from now on has closed on our side: the client has read the upstream's close.
 */
function clientClose(origin: string): Promise<void> {
  const port = Number(new URL(origin).port);
  return new Promise((resolve) => {
    const onSocket = (message: unknown) => {
      const socket = (message as { socket: Socket }).socket;
      socket.once('connect', () => {
        if (socket.remotePort !== port) return;
        unsubscribe('net.client.socket', onSocket);
        socket.once('close', () => resolve());
      });
    };
    subscribe('net.client.socket', onSocket);
  });
}

const failure = async (promise: Promise<unknown>): Promise<UpstreamCallError> => {
  try {
    await promise;
  } catch (err) {
    if (err instanceof UpstreamCallError) return err;
    throw err;
  }
  throw new Error('the call succeeded');
};

both('should POST the body byte for byte and return the answer byte for byte', async (t, create) => {
  const reply = '{\n  "jsonrpc": "2.0",\n  "id": 1,\n  "result": "0x539"\n}\n';
  await withUpstream(create, answer(200, reply), async (transport, up) => {
    const raw = Buffer.concat([Buffer.from('{"jsonrpc":"2.0", "id":1,"method":"x","params":["é\u2028"]}  '), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff])]);
    const response = await transport.send(request({ payload: payload(raw) }));
    t.is(response.body.toString(), reply);
    t.is(up.received.length, 1);
    t.is(up.received[0]!.method, 'POST');
    t.true(up.received[0]!.body.equals(raw));
  });
});

both('should send the request id in X-Request-Id and JSON content headers', async (t, create) => {
  await withUpstream(create, answer(200, '{}'), async (transport, up) => {
    await transport.send(request({ requestId: 'trace-abc-42' }));
    const headers = up.received[0]!.headers;
    t.is(headers['x-request-id'], 'trace-abc-42');
    t.is(headers['content-type'], 'application/json');
    t.is(headers.accept, 'application/json');
  });
});

both('should send the provider key path and query as configured', async (t, create) => {
  await withUpstream(create, 
    answer(200, '{}'),
    async (transport, up) => {
      await transport.send(request());
      t.is(up.received[0]!.url, '/v3/9aa3d95b3bc440fa88ea12eaa4456161?apikey=SECRET');
    },
    '/v3/9aa3d95b3bc440fa88ea12eaa4456161?apikey=SECRET',
  );
});

both('should send user-info as Basic authorization', async (t, create) => {
  const up = await upstream(answer(200, '{}'));
  const transport = create(up.origin.replace('http://', 'http://alice:p%40ss@') + '/rpc');
  try {
    await transport.send(request());
    t.is(up.received[0]!.headers.authorization, `Basic ${Buffer.from('alice:p@ss').toString('base64')}`);
    t.is(up.received[0]!.url, '/rpc');
  } finally {
    await transport.close();
    await up.close();
  }
});

both('should reuse keep-alive connections for consecutive calls', async (t, create) => {
  await withUpstream(create, answer(200, '{}'), async (transport, up) => {
    for (let i = 0; i < 10; i++) await transport.send(request());
    t.is(up.received.length, 10);
    t.is(up.connections, 1, `${up.connections} connections for 10 calls`);
  });
});

const statuses = [400, 401, 404, 500, 502, 503];
for (const status of statuses) {
  both(`should fail with kind http-status on HTTP ${status}`, async (t, create) => {
    await withUpstream(create, answer(status, '<html>error</html>', { 'content-type': 'text/html' }), async (transport) => {
      const err = await failure(transport.send(request()));
      t.is(err.kind, 'http-status');
      t.is(err.message, `HTTP ${status}`);
    });
  });
}

both('should fail with kind rate-limited on HTTP 429, with its Retry-After, and on a 503 with one', async (t, create) => {
  await withUpstream(create, answer(429, 'slow down', { 'retry-after': '3' }), async (transport) => {
    const err = await failure(transport.send(request()));
    t.is(err.kind, 'rate-limited');
    t.is(err.message, 'HTTP 429');
    t.is(err.retryAfterMs, 3000);
  });
  await withUpstream(create, answer(429, 'slow down'), async (transport) => {
    const err = await failure(transport.send(request()));
    t.is(err.kind, 'rate-limited');
    t.is(err.retryAfterMs, undefined);
  });
  await withUpstream(create, answer(503, 'busy', { 'Retry-After': '5' }), async (transport) => {
    const err = await failure(transport.send(request()));
    t.is(err.kind, 'rate-limited');
    t.is(err.message, 'HTTP 503');
    t.is(err.retryAfterMs, 5000);
  });
});

both('should return a 200 answer whatever its body, for the verifier to judge', async (t, create) => {
  await withUpstream(create, answer(200, '<html>ok</html>', { 'content-type': 'text/html' }), async (transport) => {
    t.is((await transport.send(request())).body.toString(), '<html>ok</html>');
  });
});

for (const status of [301, 302, 307, 308]) {
  both(`should not follow a ${status} redirect`, async (t, create) => {
    let followed = 0;
    const target = await upstream((_req, res) => {
      followed += 1;
      res.end('{}');
    });
    await withUpstream(create, answer(status, '', { location: `${target.origin}/elsewhere` }), async (transport, up) => {
      const err = await failure(transport.send(request()));
      t.is(err.kind, 'http-status');
      t.is(err.message, `HTTP ${status}`);
      t.is(up.received.length, 1);
    });
    await target.close();
    t.is(followed, 0);
  });
}

/**
 * Slack on top of a timeout when a test checks that a call ends by it rather than hangs: wide, for
 * a shared machine under load. Not a speed bound; the timeout's own length is read from the error.
 */
const slackMs = 5_000;

both('should time out within the limit when the upstream never answers', async (t, create) => {
  await withUpstream(create, () => {}, async (transport) => {
    const started = Date.now();
    const err = await failure(transport.send(request({ timeoutMs: 150 })));
    const elapsed = Date.now() - started;
    t.is(err.kind, 'timeout');
    t.regex(err.message, /150 ms/);
    t.true(elapsed >= 140, `not before the limit: ${elapsed} ms`);
    t.true(elapsed < 150 + slackMs, `ended by the limit, not left hanging: ${elapsed} ms`);
  });
});

both('should time out when the headers come but the body stalls', async (t, create) => {
  await withUpstream(create, 
    (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"jsonrpc":"2.0",');
    },
    async (transport) => {
      const started = Date.now();
      const err = await failure(transport.send(request({ timeoutMs: 150 })));
      t.is(err.kind, 'timeout');
      t.regex(err.message, /150 ms/);
      t.true(Date.now() - started < 150 + slackMs, 'ended by the limit, not left hanging');
    },
  );
});

both('should say sent: true when a call the upstream read fails (aborted here)', async (t, create) => {
  await withUpstream(create, () => {}, async (transport, up) => {
    const controller = new AbortController();
    const pending = failure(transport.send(request({ signal: controller.signal, timeoutMs: 10_000 })));
    while (up.received.length < 1) await new Promise((r) => setTimeout(r, 5));
    controller.abort();
    const err = await pending;
    t.is(err.kind, 'aborted');
    t.true(err.sent);
  });
});

both('should fail with kind aborted when the caller aborts', async (t, create) => {
  await withUpstream(create, () => {}, async (transport) => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('decided elsewhere')), 50);
    // Kind aborted, not timeout: the abort ended the call, not its limit (far off, for a loaded machine).
    const err = await failure(transport.send(request({ signal: controller.signal })));
    t.is(err.kind, 'aborted');
  });
});

both('should fail with kind aborted at once when the signal is already aborted', async (t, create) => {
  await withUpstream(create, answer(200, '{}'), async (transport) => {
    const controller = new AbortController();
    controller.abort();
    const err = await failure(transport.send(request({ signal: controller.signal })));
    t.is(err.kind, 'aborted');
    t.false(err.sent);
  });
});

both('should fail with kind too-large when the declared length is over maxBytes', async (t, create) => {
  await withUpstream(create, answer(200, 'x'.repeat(2_000), { 'content-length': '2000' }), async (transport) => {
    const err = await failure(transport.send(request({ maxBytes: 1_000 })));
    t.is(err.kind, 'too-large');
    t.regex(err.message, /2000 bytes is over the 1000-byte limit/);
  });
});

both('should fail with kind too-large when a chunked body grows over maxBytes', async (t, create) => {
  await withUpstream(create, 
    (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      for (let i = 0; i < 10; i++) res.write('y'.repeat(500));
      res.end();
    },
    async (transport) => {
      const err = await failure(transport.send(request({ maxBytes: 1_000 })));
      t.is(err.kind, 'too-large');
    },
  );
});

/** Writes `pieces` one at a time, a few ms apart (each its own chunk on the wire), with a declared length or chunked. */
const inPieces = (pieces: string[], declared: boolean) => (_req: IncomingMessage, res: ServerResponse) => {
  const length = pieces.reduce((n, p) => n + Buffer.byteLength(p), 0);
  res.writeHead(200, declared ? { 'content-type': 'application/json', 'content-length': String(length) } : { 'content-type': 'application/json' });
  let i = 0;
  const next = () => {
    if (i === pieces.length - 1) res.end(pieces[i]);
    else {
      res.write(pieces[i++]);
      setTimeout(next, 5);
    }
  };
  next();
};

for (const declared of [true, false]) {
  both(`should scan the nesting depth across chunks (${declared ? 'declared length' : 'chunked'}): brackets and quotes in strings cut anywhere do not count, a deep answer fails as too-deep and keeps its connection`, async (t, create) => {
    // Strings cut inside, right after a backslash, and between an escaped backslash and the quote that closes the string.
    const shallow = ['{"jsonrpc":"2.0","id":1,"result":["[[[[\\', '"[[[[', '\\', '\\', '",{"a":"\\\\', '"}]', '}'];
    const deep = ['{"jsonrpc":"2.0","id":1,"result":["\\\\', '",[[[', '[', '[]]]]]]}'];
    let nth = 0;
    const pieces = [shallow, deep, shallow];
    await withUpstream(create, (req, res) => inPieces(pieces[nth++]!, declared)(req, res), async (transport, up) => {
      const ok = await transport.send(request({ maxDepth: 4 }));
      t.is(ok.body.toString(), shallow.join(''));
      t.deepEqual(JSON.parse(ok.body.toString()).result, ['[[[["[[[[\\', { a: '\\' }]);
      const err = await failure(transport.send(request({ maxDepth: 4 })));
      t.is(err.kind, 'too-deep');
      t.is(err.message, 'answer nested deeper than 4 levels (limits.jsonDepth)');
      t.is((await transport.send(request({ maxDepth: 4 }))).body.toString(), shallow.join(''));
      t.is(up.connections, 1, 'the too-deep answer was read whole: its connection was kept');
    });
  });
}

both('should accept a body of exactly maxBytes', async (t, create) => {
  await withUpstream(create, answer(200, 'z'.repeat(1_000)), async (transport) => {
    t.is((await transport.send(request({ maxBytes: 1_000 }))).body.length, 1_000);
  });
});

both('should fail with kind transport when the connection is refused', async (t, create) => {
  // (Not the port of a server just closed: another test's server may take it meanwhile.)
  const transport = create(`${await deadUrl()}v2/KEYKEYKEYKEY`);
  try {
    const err = await failure(transport.send(request()));
    t.is(err.kind, 'transport');
    t.false(err.sent, 'a refused connection carried nothing');
    t.regex(err.message, /ECONNREFUSED/);
    t.false(err.message.includes('KEYKEYKEYKEY'), 'the provider key stays out of the message');
  } finally {
    await transport.close();
  }
});

both('should fail with kind transport when the upstream drops the connection', async (t, create) => {
  await withUpstream(create, 
    (req) => req.socket.destroy(),
    async (transport) => {
      const err = await failure(transport.send(request()));
      t.is(err.kind, 'transport');
    },
  );
});

both('should serve concurrent calls', async (t, create) => {
  await withUpstream(create, 
    (_req, res, body) => setTimeout(() => res.end(body), 20),
    async (transport) => {
      const bodies = Array.from({ length: 10 }, (_, i) => `{"id":${i}}`);
      const answers = await Promise.all(bodies.map((b) => transport.send(request({ payload: payload(b) }))));
      t.deepEqual(answers.map((a) => a.body.toString()), bodies);
    },
  );
});

both('should fail a call aborted while it waits for a pool connection, and never send it', async (t, create) => {
  const up = await upstream(() => {}); // never answers: the one connection stays busy
  const transport = create(`${up.origin}/`, { maxSockets: 1 });
  t.teardown(async () => {
    await transport.close().catch(() => {});
    await up.close();
  });
  const first = new AbortController();
  const busy = failure(transport.send(request({ signal: first.signal, timeoutMs: 10_000 })));
  const queued = new AbortController();
  const waiting = failure(transport.send(request({ signal: queued.signal, timeoutMs: 10_000, payload: payload('{"queued":true}') })));
  // The first call reached the upstream (it holds it); the second waits for its socket.
  while (up.received.length < 1) await new Promise((r) => setTimeout(r, 5));
  queued.abort();
  const err = await waiting;
  t.is(err.kind, 'aborted');
  t.false(err.sent, 'aborted while it waited for a socket');
  first.abort();
  const sent = await busy;
  t.is(sent.kind, 'aborted');
  t.true(sent.sent, 'aborted while the upstream held it');
  // The socket is free again: a queued call wrongly kept would be sent on it now, before a call
  // made after it.
  const last = new AbortController();
  const after = failure(transport.send(request({ signal: last.signal, timeoutMs: 10_000, payload: payload('{"after":true}') })));
  while (up.received.length < 2) await new Promise((r) => setTimeout(r, 5));
  last.abort();
  t.is((await after).kind, 'aborted');
  t.is(up.received[1]!.body.toString(), '{"after":true}', 'the queued call was never sent');
});

test('node: should hold calls over the socket limit itself, never as requests queued in the agent, and start them in order as calls end', async (t) => {
  const held: ServerResponse[] = [];
  const up = await upstream((_req, res) => held.push(res)); // answers when told
  const agent = new Agent({ keepAlive: true, maxSockets: 2 });
  const transport = createHttpTransport(`${up.origin}/`, { agent }); // the caller's agent: its maxSockets is the limit
  t.teardown(async () => {
    await transport.close().catch(() => {});
    agent.destroy();
    await up.close();
  });
  const bodies = Array.from({ length: 6 }, (_, i) => `{"id":${i}}`);
  const aborted = new AbortController();
  const calls = bodies.map((b, i) => transport.send(request({ payload: payload(b), timeoutMs: 10_000, ...(i === 2 ? { signal: aborted.signal } : {}) })));
  const third = failure(calls[2]!);
  while (up.received.length < 2) await new Promise((r) => setTimeout(r, 5));
  t.is(Object.values(agent.requests).flat().length, 0, 'no request waits in the agent');
  aborted.abort(); // a waiting call leaves the queue and is never sent
  t.false((await third).sent);
  for (let n = 0; n < 5; n++) {
    while (held.length === 0) await new Promise((r) => setTimeout(r, 5));
    t.true(held.length <= 2, 'never more than the limit at the upstream');
    held.shift()!.end('{}');
  }
  await Promise.all(calls.filter((_, i) => i !== 2));
  t.deepEqual(up.received.map((r) => r.body.toString()), bodies.filter((_, i) => i !== 2), 'sent in order, the aborted one never');
});

both('should fail with kind http-status on a 3xx or an error status, without following redirects', async (t, create) => {
  for (const status of [302, 404, 503]) {
    await withUpstream(create, answer(status, '{"jsonrpc":"2.0","id":1,"result":"0x1"}', { location: 'http://127.0.0.1:1/', 'content-type': 'application/json' }), async (transport, up) => {
      const err = await failure(transport.send(request()));
      t.is(err.kind, 'http-status');
      t.is(err.message, `HTTP ${status}`);
      t.is(up.received.length, 1);
    });
  }
});

// ---- The connection pool and the wire, against raw TCP servers that write exact bytes ----

interface RawUpstream {
  origin: string;
  /** Connections accepted so far. */
  readonly connections: number;
  /** Requests received so far (head and body), in order. */
  readonly requests: string[];
  /** Resolves when the next connection closes. */
  nextClose(): Promise<void>;
  close(): Promise<void>;
}

/**
 * A TCP server that reads whole HTTP requests (head, then Content-Length bytes) and lets
 * `respond` write whatever bytes it likes on the socket; `index` counts requests on all
 * connections, `onConnection` sees each new socket.
 */
async function rawUpstream(
  respond: (socket: Socket, index: number) => void,
  onConnection?: (socket: Socket, connection: number) => void,
): Promise<RawUpstream> {
  const requests: string[] = [];
  const sockets = new Set<Socket>();
  let connections = 0;
  const closes = new EventEmitter();
  const server = createNetServer((socket) => {
    connections += 1;
    sockets.add(socket);
    socket.on('close', () => {
      sockets.delete(socket);
      closes.emit('close');
    });
    socket.on('error', () => {});
    onConnection?.(socket, connections);
    let buffered = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      for (;;) {
        const end = buffered.indexOf('\r\n\r\n');
        if (end === -1) return;
        const head = buffered.toString('latin1', 0, end);
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
        if (buffered.length < end + 4 + length) return;
        requests.push(buffered.toString('latin1', 0, end + 4 + length));
        buffered = buffered.subarray(end + 4 + length);
        respond(socket, requests.length - 1);
      }
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get connections() {
      return connections;
    },
    requests,
    nextClose: async () => {
      await once(closes, 'close');
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}

const okBytes = (body: string, extraHeaders = '') =>
  `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${extraHeaders}\r\n${body}`;

async function withRaw(
  create: Create,
  respond: Parameters<typeof rawUpstream>[0],
  fn: (transport: Transport, up: RawUpstream) => Promise<void>,
  onConnection?: Parameters<typeof rawUpstream>[1],
) {
  const up = await rawUpstream(respond, onConnection);
  const transport = create(`${up.origin}/`);
  try {
    await fn(transport, up);
  } finally {
    await transport.close();
    await up.close();
  }
}

both('should write the request as one HTTP/1.1 message with Host, length and our headers', async (t, create) => {
  await withRaw(create, (s) => s.write(okBytes('{}')), async (transport, up) => {
    await transport.send(request({ requestId: 'id-7' }));
    const [head, body] = up.requests[0]!.split('\r\n\r\n');
    // Header names are case-insensitive (node writes `Host`, undici `host`): compared in lower case.
    const lines = head!.split('\r\n').map((l) => l.replace(/^[^:]+:/, (name) => name.toLowerCase()));
    t.is(lines[0], 'POST / HTTP/1.1');
    t.true(lines.includes(`host: ${new URL(up.origin).host}`));
    t.true(lines.includes('x-request-id: id-7'));
    t.true(lines.includes('user-agent: omnigate'));
    t.true(lines.includes('content-type: application/json'));
    t.true(lines.includes('accept: application/json'));
    t.true(lines.includes(`content-length: ${Buffer.byteLength(body!)}`));
    t.is(lines.filter((l) => l.startsWith('host:')).length, 1, 'one Host header');
    t.is(body, '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}');
  });
});

both('should read a chunked answer, extensions and trailers included', async (t, create) => {
  const chunked = 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4;x=y\r\n{"a"\r\nA\r\n:"0123456"\r\n1\r\n}\r\n0\r\nX-Trailer: 1\r\n\r\n';
  await withRaw(create, (s) => s.write(chunked), async (transport, up) => {
    t.is((await transport.send(request())).body.toString(), '{"a":"0123456"}');
    t.is((await transport.send(request())).body.toString(), '{"a":"0123456"}');
    t.is(up.connections, 1, 'a chunked answer keeps the connection');
  });
});

both('should read an answer that ends with the connection, and not reuse that connection', async (t, create) => {
  await withRaw(create, (s) => s.end('HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n{"until":"close"}'), async (transport, up) => {
    t.is((await transport.send(request())).body.toString(), '{"until":"close"}');
    t.is((await transport.send(request())).body.toString(), '{"until":"close"}');
    t.is(up.connections, 2);
  });
});

both('should skip an informational head (103 Early Hints) and read the final answer', async (t, create) => {
  await withRaw(create, (s) => s.write(`HTTP/1.1 103 Early Hints\r\nLink: </x>; rel=preload\r\n\r\n${okBytes('{"final":true}')}`), async (transport) => {
    t.is((await transport.send(request())).body.toString(), '{"final":true}');
  });
});

both('should read the final answer after a storm of 5,000 informational heads, and end an endless storm at the call\'s timeout', async (t, create) => {
  const storm = 'HTTP/1.1 102 Processing\r\n\r\n'.repeat(5_000);
  await withRaw(create, (s) => s.write(`${storm}${okBytes('{"final":true}')}`), async (transport) => {
    t.is((await transport.send(request())).body.toString(), '{"final":true}');
  });
  // 102 heads for as long as the connection is open: the call fails at its timeout, its socket is closed.
  let timer: NodeJS.Timeout | undefined;
  await withRaw(
    create,
    (s) => {
      timer = setInterval(() => s.writable && s.write('HTTP/1.1 102 Processing\r\n\r\n'.repeat(100)), 5);
      s.once('close', () => clearInterval(timer));
    },
    async (transport, up) => {
      const closed = up.nextClose();
      const err = await failure(transport.send(request({ timeoutMs: 300 })));
      t.is(err.kind, 'timeout');
      await closed;
    },
  );
  clearInterval(timer);
});

both('should return a compressed answer\'s bytes as sent, never inflated (a gzip bomb stays 100 KB)', async (t, create) => {
  const bomb = gzipSync(Buffer.alloc(100 * 1024 * 1024));
  t.true(bomb.length < 200 * 1024);
  const head = `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nContent-Length: ${bomb.length}\r\n\r\n`;
  await withRaw(create, (s) => s.write(Buffer.concat([Buffer.from(head), bomb])), async (transport, up) => {
    const body = (await transport.send(request({ maxBytes: 1_000_000 }))).body;
    t.true(body.equals(bomb), 'the bytes as received');
    t.false(/accept-encoding/i.test(up.requests[0]!), 'no compression asked for');
  });
});

test('node: should skip a 100 Continue head and read the final answer', async (t) => {
  await withRaw(createHttpTransport, (s) => s.write(`HTTP/1.1 100 Continue\r\n\r\n${okBytes('{"final":true}')}`), async (transport) => {
    t.is((await transport.send(request())).body.toString(), '{"final":true}');
  });
});

test('undici: should fail a call answered with an unasked 100 Continue, as sent (undici refuses it as a bad response)', async (t) => {
  await withRaw(createUndiciTransport, (s) => s.write(`HTTP/1.1 100 Continue\r\n\r\n${okBytes('{"final":true}')}`), async (transport) => {
    const err = await failure(transport.send(request()));
    t.is(err.kind, 'transport');
    t.true(err.sent);
  });
});

both('should reuse one connection for sequential calls and open one per concurrent call', async (t, create) => {
  await withRaw(create, (s, i) => setTimeout(() => s.write(okBytes(`{"n":${i}}`)), 20), async (transport, up) => {
    for (let i = 0; i < 5; i++) await transport.send(request());
    t.is(up.connections, 1);
    await Promise.all(Array.from({ length: 4 }, () => transport.send(request())));
    t.is(up.connections, 4, 'three more for four calls at once (the idle one is reused)');
  });
});

both('should queue calls over the connection limit and send them as connections free up', async (t, create) => {
  const up = await rawUpstream((s, i) => setTimeout(() => s.write(okBytes(`{"n":${i}}`)), 30));
  const transport = create(`${up.origin}/`, { maxSockets: 2 });
  try {
    const answers = await Promise.all(Array.from({ length: 6 }, () => transport.send(request())));
    t.is(answers.length, 6);
    t.is(up.connections, 2);
    t.is(up.requests.length, 6);
  } finally {
    await transport.close();
    await up.close();
  }
});

both('should drop a kept connection the upstream closed while it was idle', async (t, create) => {
  // The upstream answers and closes a moment later, as a server whose keep-alive timeout passed.
  await withRaw(create, 
    (s) => {
      s.write(okBytes('{"ok":1}'));
      setTimeout(() => s.destroy(), 5);
    },
    async (transport, up) => {
      const closed = up.nextClose();
      const clientClosed = clientClose(up.origin);
      t.is((await transport.send(request())).body.toString(), '{"ok":1}');
      await closed;
      // The client reads the close in a later turn of the loop (before it, node would take the
      // socket, and the call would fail as one on a connection closed after its write): the
      // next call starts once the client's socket has closed.
      await clientClosed;
      t.is((await transport.send(request())).body.toString(), '{"ok":1}');
      t.is(up.requests.length, 2);
      t.is(up.connections, 2);
    },
  );
});

both('should send a request once when a reused connection closes after the upstream read it, and fail the call', async (t, create) => {
  // The upstream reads the second request (an eth_sendRawTransaction, say) on the kept-alive
  // connection and closes it without answering: sending it again would deliver it twice.
  await withRaw(create, 
    (s, i) => (i === 1 ? s.destroy() : s.write(okBytes(`{"n":${i}}`))),
    async (transport, up) => {
      t.is((await transport.send(request())).body.toString(), '{"n":0}');
      const raw = '{"jsonrpc":"2.0","id":7,"method":"eth_sendRawTransaction","params":["0x02f8"]}';
      const err = await failure(transport.send(request({ payload: payload(raw) })));
      t.is(err.kind, 'transport');
      t.true(err.sent, 'the upstream may have acted on it');
      t.is(up.requests.length, 2);
      t.is(up.requests.filter((r) => r.includes('eth_sendRawTransaction')).length, 1);
      t.is(up.connections, 1);
      // The next call is sent on a fresh connection, once.
      t.is((await transport.send(request())).body.toString(), '{"n":2}');
      t.is(up.requests.length, 3);
    },
  );
});

both('should destroy a kept-alive socket that receives a stray answer while idle, and answer the next call on a new one', async (t, create) => {
  await withRaw(create, 
    (s, i) => {
      s.write(okBytes(`{"n":${i}}`));
      if (i === 0) setTimeout(() => s.write(okBytes('{"stray":true}')), 1);
    },
    async (transport, up) => {
      const closed = up.nextClose();
      t.is((await transport.send(request())).body.toString(), '{"n":0}');
      // Awaited on the wire: the stray reached the client, which closed that socket.
      await closed;
      t.is((await transport.send(request())).body.toString(), '{"n":1}');
      t.is(up.connections, 2);
    },
  );
});

both('should take a second answer that comes after the next request was written as that request\'s answer (HTTP/1.1 cannot tell them apart), then drop the connection', async (t, create) => {
  // What omnigate can and cannot do about stray answers on a kept-alive connection. Here the
  // upstream answers the second request twice, in one packet: node's client takes the first as
  // the answer (it came after the request was written, as an answer would) and, seeing bytes
  // after a complete answer, destroys the socket, so the extra one is never read as the third
  // call's answer. A stray arriving while the socket is idle is covered by the test before; one
  // that arrives after a request was written and before its answer cannot be told from it.
  await withRaw(create, 
    (s, i) => s.write(i === 1 ? okBytes('{"stray":true}') + okBytes('{"n":1}') : okBytes(`{"n":${i}}`)),
    async (transport, up) => {
      t.is((await transport.send(request())).body.toString(), '{"n":0}');
      t.is((await transport.send(request())).body.toString(), '{"stray":true}');
      t.is((await transport.send(request())).body.toString(), '{"n":2}');
      t.is(up.connections, 2, 'the connection that carried two answers was dropped');
    },
  );
});

both('should not send again when the first connection fails before any answer', async (t, create) => {
  await withRaw(create, 
    (s) => s.destroy(),
    async (transport, up) => {
      const err = await failure(transport.send(request()));
      t.is(err.kind, 'transport');
      t.true(err.sent, 'written on a new connection, then dropped: the upstream may have acted on it');
      t.is(up.requests.length, 1);
    },
  );
});

both('should not send again when the upstream closes mid-answer', async (t, create) => {
  await withRaw(create, 
    (s, i) => {
      if (i === 0) s.write(okBytes('{"first":1}'));
      else s.end('HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{"cut');
    },
    async (transport, up) => {
      await transport.send(request());
      const err = await failure(transport.send(request()));
      t.is(err.kind, 'transport');
      t.regex(err.message, /closed before the answer was complete|ECONNRESET/);
      t.is(up.requests.length, 2);
    },
  );
});

both('should drop a connection whose answer is followed by more bytes in the same packet', async (t, create) => {
  await withRaw(create, 
    (s, i) => s.write(i === 0 ? okBytes('{"n":0}') + okBytes('{"extra":true}') : okBytes(`{"n":${i}}`)),
    async (transport, up) => {
      t.is((await transport.send(request())).body.toString(), '{"n":0}');
      t.is((await transport.send(request())).body.toString(), '{"n":1}');
      t.is(up.connections, 2);
    },
  );
});

both('should keep the connection after an error status with a small body', async (t, create) => {
  await withRaw(create, 
    (s, i) => s.write(i === 0 ? 'HTTP/1.1 429 Too Many Requests\r\nContent-Length: 13\r\n\r\nslow down pls' : okBytes('{}')),
    async (transport, up) => {
      t.is((await failure(transport.send(request()))).kind, 'rate-limited');
      await transport.send(request());
      t.is(up.connections, 1);
    },
  );
});

both('should close the connection after an error status with a large body', async (t, create, client) => {
  const big = 'e'.repeat(100_000);
  await withRaw(create, 
    (s, i) => s.write(i === 0 ? `HTTP/1.1 503 Unavailable\r\nContent-Length: ${big.length}\r\n\r\n${big}` : okBytes('{}')),
    async (transport, up) => {
      const closed = up.nextClose();
      t.is((await failure(transport.send(request()))).message, 'HTTP 503');
      await closed;
      await transport.send(request());
      // (undici, its connection destroyed, may open one more that it closes unused.)
      if (client === 'node') t.is(up.connections, 2);
      else t.true(up.connections >= 2);
      t.is(up.requests.length, 2);
    },
  );
});

test('undici: should close a connection whose error body, read after the call failed, stalls for the call\'s timeout', async (t) => {
  await withRaw(createUndiciTransport, (s) => s.write('HTTP/1.1 503 Unavailable\r\nContent-Length: 10\r\n\r\nabc'), async (transport, up) => {
    const closed = up.nextClose();
    // The call's timeout is also the stalled body's: long enough that the status surely comes
    // first on a loaded machine (at 1 s it did not), short enough to wait for it once.
    const err = await failure(transport.send(request({ timeoutMs: 10_000 })));
    t.is(err.message, 'HTTP 503', 'the call fails at the status');
    await closed; // undici's body timer, set to the call's timeout, drops the stalled connection
    t.is(up.connections, 1);
  });
});

both('should open a new connection per call when the upstream says Connection: close', async (t, create) => {
  await withRaw(create, (s) => s.end(okBytes('{}', 'Connection: close\r\n')), async (transport, up) => {
    for (let i = 0; i < 3; i++) await transport.send(request());
    t.is(up.connections, 3);
  });
});

both('should not keep a connection whose Keep-Alive timeout is too short to reuse safely', async (t, create) => {
  await withRaw(create, (s) => s.write(okBytes('{}', 'Keep-Alive: timeout=1\r\n')), async (transport, up) => {
    await transport.send(request());
    await transport.send(request());
    t.is(up.connections, 2);
  });
});

both('should fail with kind transport on a malformed answer', async (t, create, client) => {
  for (const bytes of ['HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}', 'SSH-2.0-OpenSSH_9.6\r\n\r\n']) {
    await withRaw(create, (s) => s.write(bytes), async (transport) => {
      const err = await failure(transport.send(request()));
      t.is(err.kind, 'transport');
      // (undici reads the doubled Content-Length as one and finds the body short of it; its
      // parser's refusal of a non-HTTP answer carries no code.)
      if (client === 'node') t.regex(err.message, /^invalid HTTP response: .+ \(HPE_[A-Z_]+\)$/);
      else t.regex(err.message, /^invalid HTTP response: (Expected HTTP\/, RTSP\/ or ICE\/|.+ \(UND_ERR_RES_CONTENT_LENGTH_MISMATCH\))$/);
    });
  }
});

both('should fail running and waiting calls with kind closed on close()', async (t, create) => {
  const up = await rawUpstream(() => {}); // never answers
  const transport = create(`${up.origin}/`, { maxSockets: 1 });
  try {
    const running = failure(transport.send(request({ timeoutMs: 10_000 })));
    const waiting = failure(transport.send(request({ timeoutMs: 10_000 })));
    // the first call is at the upstream (running), the second waits for the one socket
    while (up.requests.length < 1) await new Promise((r) => setTimeout(r, 5));
    await transport.close();
    t.is((await running).kind, 'closed');
    t.is((await waiting).kind, 'closed');
    t.is((await failure(transport.send(request()))).kind, 'closed');
  } finally {
    await up.close();
  }
});

both('should reach an upstream on an IPv6 literal address', async (t, create) => {
  const server = createServer((_req, res) => res.end('{"v6":true}'));
  server.listen(0, '::1');
  await once(server, 'listening');
  const transport = create(`http://[::1]:${(server.address() as AddressInfo).port}/`);
  try {
    t.is((await transport.send(request())).body.toString(), '{"v6":true}');
  } finally {
    await transport.close();
    server.closeAllConnections();
    server.close();
  }
});

both('should call an https upstream, verify its certificate and resume the TLS session', async (t, create) => {
  const fixtures = urlFromRoot('test/fixtures/tls/');
  const cert = await readFile(new URL('localhost.crt', fixtures));
  const key = await readFile(new URL('localhost.key', fixtures));
  let handshakes = 0;
  let resumed = 0;
  const server = createHttpsServer({ cert, key }, (req, res) => {
    if (req.headers['x-close']) res.setHeader('connection', 'close');
    res.end('{"tls":true}');
  });
  server.on('secureConnection', (s: TLSSocket) => {
    handshakes += 1;
    if (s.isSessionReused()) resumed += 1;
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const origin = `https://localhost:${(server.address() as AddressInfo).port}`;
  const trusted = create(`${origin}/`, { tls: { ca: cert } });
  const untrusted = create(`${origin}/`);
  try {
    t.is((await trusted.send(request())).body.toString(), '{"tls":true}');
    t.is((await trusted.send(request())).body.toString(), '{"tls":true}');
    t.is(handshakes, 1, 'the connection is kept');
    const before = handshakes;
    const err = await failure(untrusted.send(request()));
    t.is(err.kind, 'transport');
    t.false(err.sent, 'the handshake failed before the request was written');
    t.regex(err.message, /self-signed|SELF_SIGNED/i);
    t.is(handshakes, before, 'no handshake completed, so no request reached the server');
    // A second connection resumes the first one's session.
    const other = create(`${origin}/`, { tls: { ca: cert } });
    await Promise.all([trusted.send(request()), trusted.send(request())]);
    await other.close();
    t.true(resumed >= 1, `${resumed} of ${handshakes} handshakes resumed`);
  } finally {
    await trusted.close();
    await untrusted.close();
    server.closeAllConnections();
    server.close();
  }
});

both('should keep a request id with line breaks from adding header lines', async (t, create) => {
  await withRaw(create, (s) => s.write(okBytes('{}')), async (transport, up) => {
    await transport.send(request({ requestId: 'abc\r\nX-Injected: 1' }));
    const lines = up.requests[0]!.split('\r\n\r\n')[0]!.split('\r\n');
    t.true(lines.includes('X-Request-Id: abcX-Injected:1'));
    t.false(lines.some((l) => l.startsWith('X-Injected')));
  });
});

both('should say sent: false when the host name does not resolve', async (t, create) => {
  // .invalid never resolves (RFC 6761); without DNS at all the lookup fails or times out, unsent either way.
  const transport = create('http://rpc.omnigate-test.invalid/v2/KEY');
  try {
    const err = await failure(transport.send(request({ timeoutMs: 5_000 })));
    t.false(err.sent, `${err.kind}: ${err.message}`);
  } finally {
    await transport.close();
  }
});

for (const [name, create] of [['node', createHttpTransport], ['undici', createUndiciTransport]] as const) {
  test(`${name}: call tells its sink the answer, or the failure once (a refused call before call returns), as send would settle`, async (t) => {
    const up = await upstream(answer(200, '{"jsonrpc":"2.0","id":1,"result":"0x1"}'));
    const transport = create(`${up.origin}/`);
    try {
      t.truthy(transport.call, 'an HTTP transport has call');
      const told: string[] = [];
      const ended = new Promise<void>((resolve) => {
        transport.call!(request(), {
          answered: (r) => {
            told.push(`answered ${r.body.toString()}`);
            resolve();
          },
          failed: (e) => {
            told.push(`failed ${e.message}`);
            resolve();
          },
        });
      });
      await ended;
      t.deepEqual(told, ['answered {"jsonrpc":"2.0","id":1,"result":"0x1"}']);
      const aborted = new AbortController();
      aborted.abort();
      const refused: string[] = [];
      transport.call!(request({ signal: aborted.signal }), {
        answered: () => refused.push('answered'),
        failed: (e) => refused.push(`${(e as UpstreamCallError).kind} sent=${(e as UpstreamCallError).sent}`),
      });
      t.deepEqual(refused, ['aborted sent=false'], 'told before call returned');
      t.is(up.received.length, 1, 'the refused call never reached the upstream');
    } finally {
      await transport.close();
      await up.close();
    }
  });
}

for (const declared of [true, false]) {
  both(`should leave the nesting of an answer whose length (${declared ? 'declared' : 'chunked, read so far'}) reaches depthFrom to the caller: answered whole, not scanned; a shorter one still fails as too-deep`, async (t, create) => {
    const deep = `{"jsonrpc":"2.0","id":1,"result":${'['.repeat(20)}${']'.repeat(20)}}`;
    await withUpstream(create, inPieces([deep.slice(0, 30), deep.slice(30)], declared), async (transport, up) => {
      const left = await transport.send(request({ maxDepth: 4, depthFrom: deep.length }));
      t.is(left.body.toString(), deep);
      const err = await failure(transport.send(request({ maxDepth: 4, depthFrom: deep.length + 1 })));
      t.is(err.kind, 'too-deep');
      t.is(err.message, 'answer nested deeper than 4 levels (limits.jsonDepth)');
      // (A limit below zero refuses any answer, whoever checks the rest.)
      t.is((await failure(transport.send(request({ maxDepth: -1, depthFrom: 0 })))).kind, 'too-deep');
      t.is(up.connections, 1);
    });
  });
}

both('should still refuse an answer without a declared length found too deep before it reaches depthFrom', async (t, create) => {
  const deep = `{"jsonrpc":"2.0","id":1,"result":${'['.repeat(20)}${']'.repeat(20)}}`;
  // The brackets arrive in the first piece, scanned before the answer reaches depthFrom.
  await withUpstream(create, inPieces([deep.slice(0, 50), deep.slice(50)], false), async (transport, up) => {
    const err = await failure(transport.send(request({ maxDepth: 4, depthFrom: 51 })));
    t.is(err.kind, 'too-deep');
    t.is(up.connections, 1, 'read whole: its connection was kept');
  });
});

both('should join a long answer without a declared length (read as chunks, joined a slice per turn) into its exact bytes, its connection kept', async (t, create) => {
  // 12 MiB of varied bytes, written in pieces of uneven sizes: more than one slice of the join.
  const result = Buffer.alloc(12 * 1024 * 1024);
  for (let i = 0; i < result.length; i++) result[i] = 0x61 + ((i * 7 + (i >> 13)) % 26);
  const text = `{"jsonrpc":"2.0","id":1,"result":"${result.toString('latin1')}"}`;
  const pieces: string[] = [];
  for (let at = 0, n = 1; at < text.length; n++) {
    const size = 200_000 + ((n * 7919) % 300_000);
    pieces.push(text.slice(at, at + size));
    at += size;
  }
  await withUpstream(create, inPieces(pieces, false), async (transport, up) => {
    for (let round = 0; round < 2; round++) {
      const got = await transport.send(request({ maxBytes: 64 * 1024 * 1024, timeoutMs: 20_000 }));
      t.is(got.body.length, Buffer.byteLength(text));
      t.true(got.body.equals(Buffer.from(text, 'latin1')));
    }
    t.is(up.connections, 1, 'the joined answers kept their connection');
  });
});
