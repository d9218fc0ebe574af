/**
 * The HTTP transport against a real local server on port 0. Not nock: nock 14 intercepts
 * node:http and the global fetch, but not the undici package's Pool this transport uses (its
 * sockets bypass both), so a nock scope is never hit and the call goes to DNS.
 */
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import test from 'ava';
import type { RpcPayload } from '../../../../lib/jsonrpc/types.js';
import { createHttpTransport } from '../../../../lib/upstream/http-transport.js';
import { UpstreamCallError, type Transport, type UpstreamRequest } from '../../../../lib/upstream/transport.js';

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
const request = (overrides: Partial<UpstreamRequest> = {}): UpstreamRequest => ({
  payload: payload('{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}'),
  requestId: 'req-123',
  signal: new AbortController().signal,
  timeoutMs: 2_000,
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
  handler: Parameters<typeof upstream>[0],
  fn: (transport: Transport, up: Awaited<ReturnType<typeof upstream>>) => Promise<void>,
  path = '/',
) {
  const up = await upstream(handler);
  const transport = createHttpTransport(`${up.origin}${path}`);
  try {
    await fn(transport, up);
  } finally {
    await transport.close();
    await up.close();
  }
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

test('should POST the body byte for byte and return the answer byte for byte', async (t) => {
  const reply = '{\n  "jsonrpc": "2.0",\n  "id": 1,\n  "result": "0x539"\n}\n';
  await withUpstream(answer(200, reply), async (transport, up) => {
    const raw = Buffer.concat([Buffer.from('{"jsonrpc":"2.0", "id":1,"method":"x","params":["é\u2028"]}  '), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff])]);
    const response = await transport.send(request({ payload: payload(raw) }));
    t.is(response.body.toString(), reply);
    t.is(up.received.length, 1);
    t.is(up.received[0]!.method, 'POST');
    t.true(up.received[0]!.body.equals(raw));
  });
});

test('should send the request id in X-Request-Id and JSON content headers', async (t) => {
  await withUpstream(answer(200, '{}'), async (transport, up) => {
    await transport.send(request({ requestId: 'trace-abc-42' }));
    const headers = up.received[0]!.headers;
    t.is(headers['x-request-id'], 'trace-abc-42');
    t.is(headers['content-type'], 'application/json');
    t.is(headers.accept, 'application/json');
  });
});

test('should send the provider key path and query as configured', async (t) => {
  await withUpstream(
    answer(200, '{}'),
    async (transport, up) => {
      await transport.send(request());
      t.is(up.received[0]!.url, '/v3/9aa3d95b3bc440fa88ea12eaa4456161?apikey=SECRET');
    },
    '/v3/9aa3d95b3bc440fa88ea12eaa4456161?apikey=SECRET',
  );
});

test('should send user-info as Basic authorization', async (t) => {
  const up = await upstream(answer(200, '{}'));
  const transport = createHttpTransport(up.origin.replace('http://', 'http://alice:p%40ss@') + '/rpc');
  try {
    await transport.send(request());
    t.is(up.received[0]!.headers.authorization, `Basic ${Buffer.from('alice:p@ss').toString('base64')}`);
    t.is(up.received[0]!.url, '/rpc');
  } finally {
    await transport.close();
    await up.close();
  }
});

test('should reuse keep-alive connections for consecutive calls', async (t) => {
  await withUpstream(answer(200, '{}'), async (transport, up) => {
    for (let i = 0; i < 10; i++) await transport.send(request());
    t.is(up.received.length, 10);
    // undici's Pool may open a second socket while the first is finishing; never one per call.
    t.true(up.connections <= 2, `${up.connections} connections for 10 calls`);
  });
});

const statuses = [400, 401, 404, 429, 500, 502, 503];
for (const status of statuses) {
  test(`should fail with kind http-status on HTTP ${status}`, async (t) => {
    await withUpstream(answer(status, '<html>error</html>', { 'content-type': 'text/html' }), async (transport) => {
      const err = await failure(transport.send(request()));
      t.is(err.kind, 'http-status');
      t.is(err.message, `HTTP ${status}`);
    });
  });
}

test('should return a 200 answer whatever its body, for the verifier to judge', async (t) => {
  await withUpstream(answer(200, '<html>ok</html>', { 'content-type': 'text/html' }), async (transport) => {
    t.is((await transport.send(request())).body.toString(), '<html>ok</html>');
  });
});

for (const status of [301, 302, 307, 308]) {
  test(`should not follow a ${status} redirect`, async (t) => {
    let followed = 0;
    const target = await upstream((_req, res) => {
      followed += 1;
      res.end('{}');
    });
    await withUpstream(answer(status, '', { location: `${target.origin}/elsewhere` }), async (transport, up) => {
      const err = await failure(transport.send(request()));
      t.is(err.kind, 'http-status');
      t.is(err.message, `HTTP ${status}`);
      t.is(up.received.length, 1);
    });
    await target.close();
    t.is(followed, 0);
  });
}

test('should time out within the limit when the upstream never answers', async (t) => {
  await withUpstream(() => {}, async (transport) => {
    const started = Date.now();
    const err = await failure(transport.send(request({ timeoutMs: 150 })));
    const elapsed = Date.now() - started;
    t.is(err.kind, 'timeout');
    t.regex(err.message, /150 ms/);
    t.true(elapsed >= 140 && elapsed < 1_000, `${elapsed} ms`);
  });
});

test('should time out when the headers come but the body stalls', async (t) => {
  await withUpstream(
    (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"jsonrpc":"2.0",');
    },
    async (transport) => {
      const started = Date.now();
      const err = await failure(transport.send(request({ timeoutMs: 150 })));
      t.is(err.kind, 'timeout');
      t.true(Date.now() - started < 1_000);
    },
  );
});

test('should fail with kind aborted when the caller aborts', async (t) => {
  await withUpstream(() => {}, async (transport) => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error('decided elsewhere')), 50);
    const started = Date.now();
    const err = await failure(transport.send(request({ signal: controller.signal, timeoutMs: 5_000 })));
    t.is(err.kind, 'aborted');
    t.true(Date.now() - started < 1_000);
  });
});

test('should fail with kind aborted at once when the signal is already aborted', async (t) => {
  await withUpstream(answer(200, '{}'), async (transport) => {
    const controller = new AbortController();
    controller.abort();
    const err = await failure(transport.send(request({ signal: controller.signal })));
    t.is(err.kind, 'aborted');
  });
});

test('should fail with kind too-large when the declared length is over maxBytes', async (t) => {
  await withUpstream(answer(200, 'x'.repeat(2_000), { 'content-length': '2000' }), async (transport) => {
    const err = await failure(transport.send(request({ maxBytes: 1_000 })));
    t.is(err.kind, 'too-large');
    t.regex(err.message, /2000 bytes is over the 1000-byte limit/);
  });
});

test('should fail with kind too-large when a chunked body grows over maxBytes', async (t) => {
  await withUpstream(
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

test('should accept a body of exactly maxBytes', async (t) => {
  await withUpstream(answer(200, 'z'.repeat(1_000)), async (transport) => {
    t.is((await transport.send(request({ maxBytes: 1_000 }))).body.length, 1_000);
  });
});

test('should fail with kind transport when the connection is refused', async (t) => {
  const up = await upstream(() => {});
  await up.close();
  const transport = createHttpTransport(`${up.origin}/v2/KEYKEYKEYKEY`);
  try {
    const err = await failure(transport.send(request()));
    t.is(err.kind, 'transport');
    t.regex(err.message, /ECONNREFUSED/);
    t.false(err.message.includes('KEYKEYKEYKEY'), 'the provider key stays out of the message');
  } finally {
    await transport.close();
  }
});

test('should fail with kind transport when the upstream drops the connection', async (t) => {
  await withUpstream(
    (req) => req.socket.destroy(),
    async (transport) => {
      const err = await failure(transport.send(request()));
      t.is(err.kind, 'transport');
    },
  );
});

test('should serve concurrent calls', async (t) => {
  await withUpstream(
    (_req, res, body) => setTimeout(() => res.end(body), 20),
    async (transport) => {
      const bodies = Array.from({ length: 10 }, (_, i) => `{"id":${i}}`);
      const answers = await Promise.all(bodies.map((b) => transport.send(request({ payload: payload(b) }))));
      t.deepEqual(answers.map((a) => a.body.toString()), bodies);
    },
  );
});

test('should fail a call aborted while it waits for a pool connection, and never send it', async (t) => {
  const up = await upstream(() => {}); // never answers: the one connection stays busy
  const transport = createHttpTransport(`${up.origin}/`, { connections: 1 });
  t.teardown(async () => {
    await transport.close().catch(() => {});
    await up.close();
  });
  const first = new AbortController();
  const busy = failure(transport.send(request({ signal: first.signal, timeoutMs: 10_000 })));
  const queued = new AbortController();
  const waiting = failure(transport.send(request({ signal: queued.signal, timeoutMs: 10_000 })));
  await new Promise((r) => setTimeout(r, 100));
  queued.abort();
  const err = await waiting;
  t.is(err.kind, 'aborted');
  first.abort();
  t.is((await busy).kind, 'aborted');
  await new Promise((r) => setTimeout(r, 100));
  t.is(up.received.length, 1, 'the queued call was never sent');
});

test('should fail with kind http-status on a 3xx or an error status, without following redirects', async (t) => {
  for (const status of [302, 404, 503]) {
    await withUpstream(answer(status, '{"jsonrpc":"2.0","id":1,"result":"0x1"}', { location: 'http://127.0.0.1:1/', 'content-type': 'application/json' }), async (transport, up) => {
      const err = await failure(transport.send(request()));
      t.is(err.kind, 'http-status');
      t.is(err.message, `HTTP ${status}`);
      t.is(up.received.length, 1);
    });
  }
});
