/**
 * WebSocket upstream: one persistent connection per upstream, shared by every request, with
 * calls multiplexed by id. Each call goes out under an id of the transport's own (clients'
 * ids collide across requests) and the answer gets the client's id back before it is returned:
 * spliced into the raw bytes, which are otherwise returned as received.
 * The connection opens on first use; after it drops, the next call reconnects, and after
 * repeated failures calls fail at once until a backoff (250 ms doubling to 30 s) has passed,
 * so a dead ws upstream costs one fast failure, not a handshake timeout per request.
 * A connection that stops answering (a peer gone without a FIN: a half-open TCP connection
 * stays "open" for ever) is found by a ping every `heartbeatMs`: when neither a pong nor any
 * message came since the last ping, it is dropped, its calls fail and the next call reconnects.
 */
import WebSocket from 'ws';
import { scanJson, type JsonScan } from '../../jsonrpc/scan.js';
import type { RpcId } from '../../jsonrpc/types.js';
import type { BudgetAccount } from '../budget.js';
import {
  defaultMaxDepth,
  overBudget,
  tooDeep,
  UpstreamCallError,
  withTimeout,
  type Transport,
  type UpstreamRequest,
  type UpstreamResponse,
} from './contract.js';

/** Our ids are 1, 2, 3…: the number an id's JSON text is, if it is one of that form. */
function transportId(text: string | undefined): number | undefined {
  return text !== undefined && /^[1-9]\d{0,14}$/.test(text) ? Number(text) : undefined;
}

function preview(text: string | undefined): string {
  if (text === undefined) return 'an object or array';
  const t = text.replace(/\s+/g, ' ');
  return JSON.stringify(t.length > 40 ? `${t.slice(0, 40)}…` : t);
}

/** `: message` of a small error answer with id null (parsed only when small and shallow). */
function nullIdMessage(buf: Buffer, scan: JsonScan): string {
  if (buf.length > 64 * 1024 || scan.depth > 16) return '';
  try {
    const message = (JSON.parse(buf.toString('utf8')) as { error?: { message?: unknown } }).error?.message;
    return message === undefined ? '' : `: ${String(message).slice(0, 200)}`;
  } catch {
    return '';
  }
}

export interface WsTransportOptions {
  /** Largest message accepted from the upstream, in bytes. */
  maxBytes: number;
  /** Time allowed for the opening handshake. */
  handshakeTimeoutMs?: number;
  /** Our Via entry (loop.ts), sent on the handshake (one socket serves every request). */
  via?: string;
  /** How often an open connection is pinged; one with no pong or message since the last ping is dropped (default 15 s; 0: never). */
  heartbeatMs?: number;
}

interface Pending {
  /** The connection the call was written on (its close fails this call, not those of a newer one). */
  ws: WebSocket;
  /** Transport id → client id, for every call of this request. */
  ids: Map<number, RpcId>;
  maxDepth: number;
  budget: BudgetAccount | undefined;
  resolve(response: UpstreamResponse): void;
  reject(err: Error): void;
}

/** `promise`, or a rejection with the signal's reason once it fires (the promise runs on). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

export function createWsTransport(rawUrl: string, options: WsTransportOptions): Transport {
  let socket: WebSocket | undefined;
  let opening: Promise<WebSocket> | undefined;
  /** The connection being opened (its handshake not yet answered): close() ends it at once. */
  let handshaking: WebSocket | undefined;
  let failures = 0;
  let retryAt = 0;
  let closed = false;
  let tooLarge = false;
  let nextId = 1;
  const pending = new Map<number, Pending>();

  /** Fails every call in flight, or only those written on `on`. */
  function failAll(err: Error, on?: WebSocket): void {
    const all = new Set<Pending>();
    for (const [id, p] of pending) {
      if (on !== undefined && p.ws !== on) continue;
      all.add(p);
      pending.delete(id);
    }
    for (const p of all) p.reject(err);
  }

  /**
   * An answer arrives: the first id in it that names a call in flight decides whose it is. The
   * ids are located in the raw bytes (lib/jsonrpc/scan.ts) and the client's ids are spliced in
   * place of ours; every other byte is returned as the upstream sent it (a parse and
   * re-serialization would rewrite numbers such as 12345678901234567890, 1.0 or 1e400, and
   * overflowed the stack on deeply nested messages).
   */
  function onMessage(data: WebSocket.RawData): void {
    const buf = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
    const scan = scanJson(buf, { ids: true });
    let request: Pending | undefined;
    for (const span of scan.ids) {
      const id = transportId(span.text);
      request = id === undefined ? undefined : pending.get(id);
      if (request) break;
    }
    if (!request) return unmatched(buf, scan);
    for (const id of request.ids.keys()) pending.delete(id);
    deliver(request, buf, scan);
  }

  function deliver(request: Pending, buf: Buffer, scan: JsonScan): void {
    if (scan.depth > request.maxDepth) return request.reject(tooDeep(request.maxDepth));
    const seen = new Set<number>();
    for (const span of scan.ids) {
      const id = transportId(span.text);
      if (id === undefined || !request.ids.has(id)) {
        return request.reject(new UpstreamCallError('transport', `answer with id ${preview(span.text)}, which was not asked`));
      }
      if (seen.has(span.member)) return request.reject(new UpstreamCallError('transport', 'an answer object with "id" twice'));
      seen.add(span.member);
    }
    if (request.budget && !request.budget.take(buf.length)) return request.reject(overBudget(request.budget, buf.length));
    const parts: Buffer[] = [];
    let at = 0;
    for (const span of scan.ids) {
      parts.push(buf.subarray(at, span.start), Buffer.from(JSON.stringify(request.ids.get(transportId(span.text)!))));
      at = span.end;
    }
    parts.push(buf.subarray(at));
    request.resolve({ body: parts.length === 1 ? buf : Buffer.concat(parts) });
  }

  /**
   * A message that names no call in flight. Ignored: a message without an id (a notification)
   * and an answer under an id of ours whose call was given up on (aborted, timed out). Anything
   * else (an id we never sent: a string, null, another number; a message that is not a JSON-RPC
   * object) says the upstream is not answering our calls, and it cannot say which call it
   * answers: every call in flight on this connection fails at once (each is asked elsewhere)
   * rather than wait for its timeout.
   */
  function unmatched(buf: Buffer, scan: JsonScan): void {
    if (pending.size === 0) return;
    const first = scan.ids[0];
    if (!first) {
      if (scan.kind === 'object' && !scan.truncated) return;
      const what = scan.kind === 'other' || scan.truncated ? 'not JSON' : `a JSON ${scan.kind} without an id`;
      return failAll(new UpstreamCallError('transport', `message that is not a JSON-RPC answer (${what}): ${preview(buf.toString('utf8', 0, 80))}`));
    }
    const id = transportId(first.text);
    if (id !== undefined && id < nextId) return;
    failAll(
      new UpstreamCallError(
        'transport',
        first.text === 'null' ? `upstream error with id null${nullIdMessage(buf, scan)}` : `answer with id ${preview(first.text)}, which matches no call in flight`,
      ),
    );
  }

  function connect(): Promise<WebSocket> {
    if (socket?.readyState === WebSocket.OPEN) return Promise.resolve(socket);
    if (opening) return opening;
    if (Date.now() < retryAt) {
      return Promise.reject(new UpstreamCallError('closed', `connection down, next attempt in ${retryAt - Date.now()} ms`, { sent: false }));
    }
    opening = new Promise<WebSocket>((resolve, reject) => {
      const ws = new WebSocket(rawUrl, {
        maxPayload: options.maxBytes,
        handshakeTimeout: options.handshakeTimeoutMs ?? 5_000,
        perMessageDeflate: false,
        ...(options.via ? { headers: { Via: options.via } } : {}),
      });
      handshaking = ws;
      // Whether a pong or a message came since the last ping; whether the heartbeat dropped it.
      let alive = true;
      let dropped = false;
      let heartbeat: NodeJS.Timeout | undefined;
      ws.on('open', () => {
        if (handshaking === ws) handshaking = undefined;
        failures = 0;
        socket = ws;
        opening = undefined;
        const every = options.heartbeatMs ?? 15_000;
        if (every > 0) {
          heartbeat = setInterval(() => {
            if (!alive) {
              dropped = true;
              return void ws.terminate(); // 'close' follows: its calls fail
            }
            alive = false;
            ws.ping();
          }, every);
          heartbeat.unref();
        }
        resolve(ws);
      });
      ws.on('pong', () => (alive = true));
      ws.on('message', (data) => {
        alive = true;
        // Nothing an upstream sends may throw out of an event handler (that ends the process).
        try {
          onMessage(data);
        } catch (err) {
          failAll(new UpstreamCallError('transport', `unreadable message: ${(err as Error).message}`));
        }
      });
      ws.on('error', (err: Error & { code?: string }) => {
        if (err.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') tooLarge = true;
        if (socket !== ws) {
          if (handshaking === ws) handshaking = undefined;
          failures += 1;
          retryAt = Date.now() + Math.min(250 * 2 ** (failures - 1), 30_000);
          opening = undefined;
          // The handshake failed: no call was written on this connection.
          reject(new UpstreamCallError('transport', `websocket: ${err.message}`, { sent: false }));
        }
      });
      ws.on('close', (code) => {
        clearInterval(heartbeat);
        if (socket === ws) socket = undefined;
        // ws drops the connection (1009, or 1006 as seen here) when a message is over maxPayload.
        const overLimit = tooLarge || code === 1009;
        tooLarge = false;
        // Only the calls written on this connection: a newer one may already carry others.
        failAll(
          overLimit
            ? new UpstreamCallError('too-large', `answer over the ${options.maxBytes}-byte limit (the connection is reopened)`)
            : new UpstreamCallError('closed', dropped ? `websocket dropped: no pong nor message for ${options.heartbeatMs ?? 15_000} ms` : `websocket closed (code ${code})`),
          ws,
        );
      });
    });
    return opening;
  }

  async function send(request: UpstreamRequest): Promise<UpstreamResponse> {
    if (closed) throw new UpstreamCallError('closed', 'transport closed', { sent: false });
    if (request.budget?.budget.exhausted) throw overBudget(request.budget, 1, false);
    return withTimeout(request.signal, request.timeoutMs, async (signal, state) => {
      // The timeout and the caller's abort apply to the handshake too: a call given up on while
      // the connection opens is never sent (its abort would otherwise go unheard, and it would
      // wait for an answer for as long as the upstream keeps it).
      const ws = await untilAborted(connect(), signal);
      // An abort that came after the connection was ready and before this line was heard by no
      // one (the listener below would never fire): the call is not written, and not waited for.
      if (signal.aborted) throw signal.reason as Error;
      const ids = new Map<number, RpcId>();
      const outgoing = request.payload.calls.map((call) => {
        const id = nextId++;
        ids.set(id, call.id);
        return { jsonrpc: '2.0', id, method: call.method, params: call.params };
      });
      return new Promise<UpstreamResponse>((resolve, reject) => {
        const entry: Pending = { ws, ids, maxDepth: request.maxDepth ?? defaultMaxDepth, budget: request.budget, resolve, reject };
        for (const id of ids.keys()) pending.set(id, entry);
        signal.addEventListener(
          'abort',
          () => {
            for (const id of ids.keys()) pending.delete(id);
            reject(signal.reason as Error);
          },
          { once: true },
        );
        const message = JSON.stringify(request.payload.batch ? outgoing : outgoing[0]);
        // From here the upstream may receive the call (ws refuses to write on a socket not open).
        state.sent = ws.readyState === WebSocket.OPEN;
        ws.send(message, (err) => {
          if (err) {
            for (const id of ids.keys()) pending.delete(id);
            reject(new UpstreamCallError('transport', `websocket send: ${err.message}`, { sent: state.sent }));
          }
        });
      });
    });
  }

  async function close(): Promise<void> {
    closed = true;
    failAll(new UpstreamCallError('closed', 'transport closed'));
    // A handshake in progress is abandoned: waiting for it held close() for up to the handshake
    // timeout (an upstream that accepts TCP and never answers), and a call waiting for it was
    // written once it opened, after close().
    handshaking?.terminate();
    const ws = socket ?? (await opening?.catch(() => undefined));
    if (!ws || ws.readyState === WebSocket.CLOSED) return;
    await new Promise<void>((resolve) => {
      ws.once('close', () => resolve());
      ws.close();
      setTimeout(() => {
        ws.terminate();
        resolve();
      }, 1_000).unref();
    });
  }

  return { send, close };
}
