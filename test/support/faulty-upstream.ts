/**
 * Misbehaving JSON-RPC upstreams on real sockets, for fault tests (issue 5). Each server listens on
 * 127.0.0.1, port 0, and fails in one way (its `mode`); the answer it mangles is the one an honest
 * fake (fake-upstream.ts) would give, so a gateway that ignored the fault would count it as a vote.
 *
 * HTTP modes:
 * - `honest`, `liar`            : what fake-upstream.ts serves (compact JSON), for baselines.
 * - `slow-but-valid`            : the honest answer after `delayMs` (default 3000 ms).
 * - `die-mid-response`          : headers with the full Content-Length and half the body, then the socket is destroyed.
 * - `die-mid-chunked`           : the same with chunked encoding (no Content-Length).
 * - `hangup`                    : the request is read, then the socket is closed (FIN) before any byte of an answer.
 * - `reset`                     : the socket is reset (RST, `socket.resetAndDestroy()`) as soon as the request arrives.
 * - `slowloris`                 : headers at once, then one byte of a valid body every `byteIntervalMs` (200 ms).
 * - `stall-headers`             : half a status line, then nothing.
 * - `not-http`                  : a line that is not HTTP (`SSH-2.0-…`), then FIN.
 * - `truncated-json`            : 200 with the body cut in the middle and a Content-Length that matches the cut.
 * - `trailing-garbage`          : 200 with the valid body followed by garbage (Content-Length covers both).
 * - `redirect-302|307|308`      : that status, `Location: redirectTo` (a healthy upstream) and a valid JSON-RPC body.
 * - `status-500-json`           : HTTP 500 with a valid JSON-RPC answer as its body.
 * - `wrong-id`                  : a valid answer under another id (every member of a batch).
 * - `wrong-id-type`             : the right id as a string ("1" for 1) or a number for a string.
 * - `rate-limited`              : 200 with a JSON-RPC -32005 "rate limit exceeded" error.
 * - `garbage-status`            : 200 with an HTML page.
 * - `empty`                     : 200 with an empty body.
 * - `array-for-single`          : a single call answered with a batch of one.
 * - `huge-header`               : a valid answer with a 64 KiB header (over the transport's 16 KiB limit, Node's too).
 * - `oversize` / `oversize-chunked`: a valid answer of `oversizeBytes` (default 1 MiB), with / without Content-Length.
 * - `batch-missing-id`          : a batch answer with the last member left out.
 * - `batch-foreign-id`          : a batch answer whose last member carries an id that was not asked.
 * - `batch-extra-member`        : every member answered correctly, plus one member with an id that was not asked.
 * - `batch-duplicate-id`        : a lie for the first id, then every member answered correctly (the first id twice).
 * - `batch-as-object`           : a batch answered with one error object (a provider that refuses batches).
 *   (The batch-* modes answer a single call honestly.)
 *
 * Every server counts TCP connections, HTTP requests (counted when the request line arrives),
 * requests it finished, and `aborted`: requests whose connection the client closed before the
 * server finished answering (a fault the server causes itself does not count). `openSockets`
 * is the number of connections open right now, and `openRequestSockets` the number of those that
 * carried a request (an idle connection opened ahead of need would not count).
 *
 * WebSocket modes (startFaultyWsUpstream): `ws-drop` (terminates the connection when a call
 * arrives), `ws-close-1011` (closes it with 1011), `ws-wrong-id`, `ws-not-json`,
 * `ws-batch-missing-id`, `ws-slow-but-valid`.
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { WebSocketServer } from 'ws';
import { defaultAnswer, render, type AnswerFn, type RpcCallIn } from './fake-upstream.js';

export const httpFaultModes = [
  'die-mid-response',
  'die-mid-chunked',
  'hangup',
  'reset',
  'slowloris',
  'stall-headers',
  'not-http',
  'truncated-json',
  'trailing-garbage',
  'redirect-302',
  'redirect-307',
  'redirect-308',
  'status-500-json',
  'wrong-id',
  'wrong-id-type',
  'rate-limited',
  'garbage-status',
  'empty',
  'array-for-single',
  'huge-header',
  'oversize',
  'oversize-chunked',
  'batch-missing-id',
  'batch-foreign-id',
  'batch-extra-member',
  'batch-duplicate-id',
  'batch-as-object',
] as const;

export type HttpFaultMode = (typeof httpFaultModes)[number] | 'honest' | 'liar' | 'slow-but-valid';

export const wsFaultModes = ['ws-drop', 'ws-close-1011', 'ws-wrong-id', 'ws-not-json', 'ws-batch-missing-id'] as const;
export type WsFaultMode = (typeof wsFaultModes)[number] | 'ws-honest' | 'ws-slow-but-valid';

export interface FaultyOptions {
  /** slow-but-valid, ws-slow-but-valid: delay before the answer. Default 3000 ms. */
  delayMs?: number;
  /** slowloris: time between two bytes. Default 200 ms. */
  byteIntervalMs?: number;
  /** redirect-*: where to send the client. */
  redirectTo?: string;
  /** oversize*: size of the answer. Default 1 MiB. */
  oversizeBytes?: number;
  /** Path served (the URL ends with it). Default '/rpc'. */
  path?: string;
  answer?: AnswerFn;
}

export interface FaultyUpstream {
  readonly mode: string;
  /** The URL to configure; equal to the redacted label omnigate shows (no secret in it). */
  readonly url: string;
  /** TCP connections accepted. */
  connections: number;
  /** HTTP requests (ws: messages) received. */
  requests: number;
  /** Requests this server finished answering. */
  finished: number;
  /** Requests whose connection the client closed before this server finished its answer. */
  aborted: number;
  /** Connections open right now. */
  readonly openSockets: number;
  /** Connections open right now that carried at least one request (ws: every connection). */
  readonly openRequestSockets: number;
  close(): Promise<void>;
}

const faultyId = (id: unknown) => (typeof id === 'number' ? id + 1000 : `${String(id)}-other`);

function parse(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}

type Member = { jsonrpc: '2.0'; id: unknown; result?: unknown; error?: unknown };

/** The honest answer to `body`, as objects (a single member or an array). */
function honestValue(body: unknown, answer: AnswerFn): Member | Member[] {
  return JSON.parse(render('honest', body, answer)) as Member | Member[];
}

/** The answer's text for the body-mangling modes (every mode that sends a complete HTTP answer). */
function faultyBody(mode: HttpFaultMode, body: unknown, answer: AnswerFn, oversizeBytes: number): string {
  const honest = honestValue(body, answer);
  const members = Array.isArray(honest) ? honest : [honest];
  const calls = (Array.isArray(body) ? body : [body]) as RpcCallIn[];
  // The batch-* faults mangle batch answers only: a single call gets the honest answer.
  if (mode.startsWith('batch-') && !Array.isArray(body)) return JSON.stringify(honest);
  switch (mode) {
    case 'wrong-id': {
      const out = members.map((m) => ({ ...m, id: faultyId(m.id) }));
      return JSON.stringify(Array.isArray(honest) ? out : out[0]);
    }
    case 'wrong-id-type': {
      const out = members.map((m) => ({ ...m, id: typeof m.id === 'number' ? String(m.id) : Number(m.id) || 0 }));
      return JSON.stringify(Array.isArray(honest) ? out : out[0]);
    }
    case 'rate-limited': {
      const out = calls.map((c) => ({ jsonrpc: '2.0', id: c.id, error: { code: -32005, message: 'rate limit exceeded' } }));
      return JSON.stringify(Array.isArray(body) ? out : out[0]);
    }
    case 'array-for-single':
      return JSON.stringify(members);
    case 'oversize':
    case 'oversize-chunked': {
      // Valid JSON-RPC with the right ids, only too large: a string result padded with spaces
      // inside the JSON text (whitespace between tokens), so the answer itself stays honest.
      const text = JSON.stringify(honest);
      return text + ' '.repeat(Math.max(0, oversizeBytes - text.length));
    }
    case 'batch-missing-id':
      return JSON.stringify(members.slice(0, -1));
    case 'batch-foreign-id':
      return JSON.stringify(members.map((m, i) => (i === members.length - 1 ? { ...m, id: faultyId(m.id) } : m)));
    case 'batch-extra-member':
      return JSON.stringify([...members, { jsonrpc: '2.0', id: 'not-asked-for', result: '0xbad' }]);
    case 'batch-duplicate-id': {
      const lie = JSON.parse(render('liar', calls[0], answer)) as Member;
      return JSON.stringify([lie, ...members]);
    }
    case 'batch-as-object':
      return JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'batch requests are not supported' } });
    default:
      return JSON.stringify(honest);
  }
}

type Stats = { connections: number; requests: number; finished: number; aborted: number };

/** The counters object itself (so the server's updates show), with a live `openSockets`. */
function withStats(
  stats: Stats,
  sockets: Set<Socket>,
  used: Set<Socket>,
  rest: { mode: string; url: string; close(): Promise<void> },
): FaultyUpstream {
  Object.defineProperty(stats, 'openSockets', { get: () => sockets.size, enumerable: true });
  Object.defineProperty(stats, 'openRequestSockets', { get: () => used.size, enumerable: true });
  return Object.assign(stats, rest) as Stats & typeof rest & { readonly openSockets: number; readonly openRequestSockets: number };
}

export async function startFaultyUpstream(mode: HttpFaultMode, options: FaultyOptions = {}): Promise<FaultyUpstream> {
  const answer = options.answer ?? defaultAnswer;
  const delayMs = options.delayMs ?? 3_000;
  const byteIntervalMs = options.byteIntervalMs ?? 200;
  const oversizeBytes = options.oversizeBytes ?? 1 << 20;
  const path = options.path ?? '/rpc';
  const sockets = new Set<Socket>();
  const used = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const stats = { connections: 0, requests: 0, finished: 0, aborted: 0 };

  const server = http.createServer({ maxHeaderSize: 1 << 20 }, (req, res) => {
    stats.requests += 1;
    const socket = req.socket;
    if (!socket.destroyed) used.add(socket);
    /** Set when this server ends the exchange itself (a fault), so the close is not the client's doing. */
    let selfInflicted = false;
    let done = false;
    const finish = () => {
      if (!done) {
        done = true;
        stats.finished += 1;
      }
    };
    const kill = (how: 'destroy' | 'reset' | 'end') => {
      selfInflicted = true;
      if (how === 'reset') socket.resetAndDestroy();
      else if (how === 'end') socket.end();
      else socket.destroy();
    };
    const later = (fn: () => void, ms: number) => {
      const t = setTimeout(() => {
        timers.delete(t);
        fn();
      }, ms);
      timers.add(t);
      return t;
    };
    res.on('finish', finish);
    res.on('close', () => {
      if (!done && !selfInflicted) stats.aborted += 1;
    });

    if (mode === 'reset') {
      kill('reset');
      return;
    }
    if (mode === 'stall-headers') {
      // Half a status line, then nothing: only the client's timeout ends this.
      socket.write('HTTP/1.1 2');
      return;
    }

    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (res.destroyed) return;
      const body = parse(Buffer.concat(chunks).toString('utf8'));
      const honestText = render('honest', body, answer);
      const json = { 'content-type': 'application/json' };
      switch (mode) {
        case 'honest':
        case 'liar':
          res.writeHead(200, json).end(render(mode, body, answer));
          return;
        case 'slow-but-valid':
          later(() => {
            if (!res.destroyed) res.writeHead(200, json).end(honestText);
          }, delayMs);
          return;
        case 'die-mid-response': {
          const half = honestText.slice(0, Math.floor(honestText.length / 2));
          res.writeHead(200, { ...json, 'content-length': Buffer.byteLength(honestText) });
          res.write(half, () => kill('destroy'));
          return;
        }
        case 'die-mid-chunked': {
          const half = honestText.slice(0, Math.floor(honestText.length / 2));
          res.writeHead(200, json);
          res.write(half, () => kill('destroy'));
          return;
        }
        case 'hangup':
          kill('end');
          return;
        case 'not-http':
          selfInflicted = true;
          socket.end('SSH-2.0-OpenSSH_9.6\r\n\r\n');
          return;
        case 'slowloris': {
          res.writeHead(200, { ...json, 'content-length': Buffer.byteLength(honestText) });
          res.flushHeaders();
          let i = 0;
          const drip = () => {
            if (res.destroyed) return;
            res.write(honestText[i++]!);
            if (i >= honestText.length) res.end();
            else later(drip, byteIntervalMs);
          };
          later(drip, byteIntervalMs);
          return;
        }
        case 'truncated-json': {
          const cut = honestText.slice(0, Math.floor(honestText.length / 2));
          res.writeHead(200, { ...json, 'content-length': Buffer.byteLength(cut) }).end(cut);
          return;
        }
        case 'trailing-garbage': {
          const text = `${honestText}<!-- injected by a proxy -->`;
          res.writeHead(200, { ...json, 'content-length': Buffer.byteLength(text) }).end(text);
          return;
        }
        case 'redirect-302':
        case 'redirect-307':
        case 'redirect-308':
          res.writeHead(Number(mode.slice(-3)), { ...json, location: options.redirectTo ?? 'http://127.0.0.1:9/' }).end(honestText);
          return;
        case 'status-500-json':
          res.writeHead(500, json).end(honestText);
          return;
        case 'garbage-status':
          res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><html><body><h1>Welcome to nginx!</h1></body></html>');
          return;
        case 'empty':
          res.writeHead(200, { ...json, 'content-length': 0 }).end();
          return;
        case 'huge-header':
          res.writeHead(200, { ...json, 'x-junk': 'j'.repeat(64 * 1024) }).end(honestText);
          return;
        case 'oversize': {
          const text = faultyBody(mode, body, answer, oversizeBytes);
          res.writeHead(200, { ...json, 'content-length': Buffer.byteLength(text) }).end(text);
          return;
        }
        case 'oversize-chunked': {
          const text = faultyBody(mode, body, answer, oversizeBytes);
          res.writeHead(200, json);
          for (let at = 0; at < text.length; at += 16_384) res.write(text.slice(at, at + 16_384));
          res.end();
          return;
        }
        default:
          res.writeHead(200, json).end(faultyBody(mode, body, answer, oversizeBytes));
      }
    });
  });
  server.on('connection', (s: Socket) => {
    stats.connections += 1;
    sockets.add(s);
    s.on('close', () => {
      sockets.delete(s);
      used.delete(s);
    });
  });
  server.on('clientError', (_err, s) => s.destroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}${path}`;
  return withStats(stats, sockets, used, {
    mode,
    url,
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t);
        timers.clear();
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  });
}

/** A WebSocket upstream that misbehaves when a call arrives. */
export async function startFaultyWsUpstream(mode: WsFaultMode, options: FaultyOptions = {}): Promise<FaultyUpstream> {
  const answer = options.answer ?? defaultAnswer;
  const delayMs = options.delayMs ?? 3_000;
  const path = options.path ?? '/rpc';
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const stats = { connections: 0, requests: 0, finished: 0, aborted: 0 };
  const server = http.createServer((_req, res) => res.writeHead(426).end());
  server.on('connection', (s: Socket) => {
    stats.connections += 1;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  const wss = new WebSocketServer({ server });
  wss.on('connection', (ws) => {
    let answering = 0;
    ws.on('close', () => {
      if (answering > 0) stats.aborted += answering;
      answering = 0;
    });
    ws.on('message', (data) => {
      stats.requests += 1;
      const body = parse(data.toString());
      const honest = honestValue(body, answer);
      const members = Array.isArray(honest) ? honest : [honest];
      const reply = (text: string) => {
        ws.send(text);
        stats.finished += 1;
      };
      switch (mode) {
        case 'ws-drop':
          ws.terminate();
          return;
        case 'ws-close-1011':
          ws.close(1011, 'internal error');
          return;
        case 'ws-wrong-id': {
          const out = members.map((m) => ({ ...m, id: faultyId(m.id) }));
          reply(JSON.stringify(Array.isArray(honest) ? out : out[0]));
          return;
        }
        case 'ws-not-json':
          reply('<html>502 Bad Gateway</html>');
          return;
        case 'ws-batch-missing-id':
          reply(JSON.stringify(Array.isArray(honest) ? members.slice(0, -1) : honest));
          return;
        case 'ws-slow-but-valid': {
          answering += 1;
          const t = setTimeout(() => {
            timers.delete(t);
            answering -= 1;
            if (ws.readyState === ws.OPEN) reply(JSON.stringify(honest));
          }, delayMs);
          timers.add(t);
          return;
        }
        default:
          reply(JSON.stringify(honest));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return withStats(stats, sockets, sockets, {
    mode,
    url: `ws://127.0.0.1:${port}${path}`,
    close: () =>
      new Promise<void>((resolve) => {
        for (const t of timers) clearTimeout(t);
        timers.clear();
        for (const c of wss.clients) c.terminate();
        wss.close();
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  });
}
