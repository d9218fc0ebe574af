/**
 * WebSocket upstream: one persistent connection per upstream, shared by every request, with
 * calls multiplexed by id. Each call goes out under an id of the transport's own (clients'
 * ids collide across requests) and the answer gets the client's id back before it is returned.
 * The connection opens on first use; after it drops, the next call reconnects, and after
 * repeated failures calls fail at once until a backoff (250 ms doubling to 30 s) has passed,
 * so a dead ws upstream costs one fast failure, not a handshake timeout per request.
 */
import WebSocket from 'ws';
import type { RpcId } from '../jsonrpc/types.js';
import { UpstreamCallError, withTimeout, type Transport, type UpstreamRequest, type UpstreamResponse } from './transport.js';

export interface WsTransportOptions {
  /** Largest message accepted from the upstream, in bytes. */
  maxBytes: number;
  /** Time allowed for the opening handshake. */
  handshakeTimeoutMs?: number;
  /** Our Via entry (loop.ts), sent on the handshake (one socket serves every request). */
  via?: string;
}

interface Pending {
  /** Transport id → client id, for every call of this request. */
  ids: Map<number, RpcId>;
  resolve(response: UpstreamResponse): void;
  reject(err: Error): void;
}

export function createWsTransport(rawUrl: string, options: WsTransportOptions): Transport {
  let socket: WebSocket | undefined;
  let opening: Promise<WebSocket> | undefined;
  let failures = 0;
  let retryAt = 0;
  let closed = false;
  let tooLarge = false;
  let nextId = 1;
  const pending = new Map<number, Pending>();

  function failAll(err: Error): void {
    const all = new Set(pending.values());
    pending.clear();
    for (const p of all) p.reject(err);
  }

  function onMessage(data: WebSocket.RawData): void {
    let value: unknown;
    try {
      value = JSON.parse(data.toString());
    } catch {
      return; // not an answer we can match: ignore rather than guess
    }
    const members = Array.isArray(value) ? value : [value];
    const first = members.find((m) => m !== null && typeof m === 'object' && typeof (m as { id?: unknown }).id === 'number');
    const request = first ? pending.get((first as { id: number }).id) : undefined;
    if (!request) {
      // An error with id null answers a message the upstream could not read; it cannot say which,
      // so every call in flight fails (and is asked elsewhere) rather than wait for its timeout.
      const orphan = members[0] as { id?: unknown; error?: { message?: unknown } } | undefined;
      if (!Array.isArray(value) && orphan?.id === null && orphan.error) {
        failAll(new UpstreamCallError('transport', `upstream error with id null: ${String(orphan.error.message ?? '')}`));
      }
      return; // otherwise a subscription notification or an answer to a call already given up
    }
    for (const id of request.ids.keys()) pending.delete(id);
    for (const m of members) {
      if (m !== null && typeof m === 'object') {
        const member = m as { id?: unknown };
        if (typeof member.id === 'number' && request.ids.has(member.id)) member.id = request.ids.get(member.id);
      }
    }
    request.resolve({ body: Buffer.from(JSON.stringify(value)) });
  }

  function connect(): Promise<WebSocket> {
    if (socket?.readyState === WebSocket.OPEN) return Promise.resolve(socket);
    if (opening) return opening;
    if (Date.now() < retryAt) {
      return Promise.reject(new UpstreamCallError('closed', `connection down, next attempt in ${retryAt - Date.now()} ms`));
    }
    opening = new Promise<WebSocket>((resolve, reject) => {
      const ws = new WebSocket(rawUrl, {
        maxPayload: options.maxBytes,
        handshakeTimeout: options.handshakeTimeoutMs ?? 5_000,
        perMessageDeflate: false,
        ...(options.via ? { headers: { Via: options.via } } : {}),
      });
      ws.on('open', () => {
        failures = 0;
        socket = ws;
        opening = undefined;
        resolve(ws);
      });
      ws.on('message', onMessage);
      ws.on('error', (err: Error & { code?: string }) => {
        if (err.code === 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH') tooLarge = true;
        if (socket !== ws) {
          failures += 1;
          retryAt = Date.now() + Math.min(250 * 2 ** (failures - 1), 30_000);
          opening = undefined;
          reject(new UpstreamCallError('transport', `websocket: ${err.message}`));
        }
      });
      ws.on('close', (code) => {
        if (socket === ws) socket = undefined;
        // ws drops the connection (1009, or 1006 as seen here) when a message is over maxPayload.
        const overLimit = tooLarge || code === 1009;
        tooLarge = false;
        failAll(
          overLimit
            ? new UpstreamCallError('too-large', `answer over the ${options.maxBytes}-byte limit (the connection is reopened)`)
            : new UpstreamCallError('closed', `websocket closed (code ${code})`),
        );
      });
    });
    return opening;
  }

  async function send(request: UpstreamRequest): Promise<UpstreamResponse> {
    if (closed) throw new UpstreamCallError('closed', 'transport closed');
    return withTimeout(request.signal, request.timeoutMs, async (signal) => {
      const ws = await connect();
      const ids = new Map<number, RpcId>();
      const outgoing = request.payload.calls.map((call) => {
        const id = nextId++;
        ids.set(id, call.id);
        return { jsonrpc: '2.0', id, method: call.method, params: call.params };
      });
      return new Promise<UpstreamResponse>((resolve, reject) => {
        const entry: Pending = { ids, resolve, reject };
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
        ws.send(message, (err) => {
          if (err) {
            for (const id of ids.keys()) pending.delete(id);
            reject(new UpstreamCallError('transport', `websocket send: ${err.message}`));
          }
        });
      });
    });
  }

  async function close(): Promise<void> {
    closed = true;
    failAll(new UpstreamCallError('closed', 'transport closed'));
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
