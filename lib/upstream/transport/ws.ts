/**
 * WebSocket upstream: one persistent connection per upstream (ws-connection.ts: opened on first
 * use, reopened after a drop with a backoff, dropped when a heartbeat finds it silent), shared by
 * every request, with calls multiplexed by id (ws-calls.ts): each call goes out under an id of the
 * transport's own and the answer gets the client's id back, spliced into the raw bytes, which are
 * otherwise returned as received. A health call (`request.background`: probe, head poll) on an
 * upstream that carried no traffic since the last one closes the connection once no call is in
 * flight (sendBackground).
 */
import WebSocket from 'ws';
import { defaultMaxDepth, overBudget, UpstreamCallError, withTimeout, type Transport, type UpstreamRequest, type UpstreamResponse } from './contract.js';
import { WsCalls, type PendingCall } from './ws-calls.js';
import { WsConnection } from './ws-connection.js';

export interface WsTransportOptions {
  /** Largest message accepted from the upstream, in bytes. */
  maxBytes: number;
  /** Time allowed for the opening handshake. */
  handshakeTimeoutMs?: number;
  /** Our Via entry (loop.ts), sent on the handshake (one socket serves every request). */
  via?: string;
  /** How often an open connection is pinged; one with no pong or message since the last ping is dropped (default 15 s; 0: never). */
  heartbeatMs?: number;
  /** The first backoff after a failed handshake (calls fail at once until it passed), doubling to at most 30 s (default 250 ms). */
  backoffMs?: number;
  /** Hides provider keys in the upstream's text a reason quotes, before it is cut (registry.ts: every upstream's secrets). */
  scrub?: (text: string) => string;
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
  let closed = false;
  const calls = new WsCalls(options.scrub);
  const connection = new WsConnection(rawUrl, options, {
    message: (data) => calls.onMessage(data),
    unreadable: (err) => calls.failAll(err),
    closed: (err, ws) => calls.failAll(err, ws),
  });

  /** Calls other than health calls (`request.background`) made, and that count at the last health call's end. */
  let traffic = 0;
  let trafficSeen = 0;

  /**
   * A health call (probe, head poll) on an upstream that carried no traffic since the last one
   * closes the connection once nothing else is in flight: a probe round over many ws upstreams
   * does not leave one connection open per upstream. The next call opens a new one.
   */
  async function sendBackground(request: UpstreamRequest): Promise<UpstreamResponse> {
    try {
      return await sendCall(request);
    } finally {
      // (A call another follows on this connection leaves the decision to the last one.)
      if (request.keepOpen !== true) closeIfQuiet();
    }
  }

  /** The decision at a health call's end (or when the call a keepOpen one expected will not come). */
  function closeIfQuiet(): void {
    const quiet = traffic === trafficSeen;
    trafficSeen = traffic;
    if (quiet && calls.idle) connection.closeQuietly();
  }

  function send(request: UpstreamRequest): Promise<UpstreamResponse> {
    if (request.background === true) return sendBackground(request);
    traffic += 1;
    return sendCall(request);
  }

  async function sendCall(request: UpstreamRequest): Promise<UpstreamResponse> {
    if (closed) throw new UpstreamCallError('closed', 'transport closed', { sent: false });
    if (request.budget?.budget.exhausted) throw overBudget(request.budget, 1, false);
    return withTimeout(request.signal, request.timeoutMs, async (signal, state) => {
      // The timeout and the caller's abort apply to the handshake too: a call given up on while
      // the connection opens is never sent (its abort would otherwise go unheard, and it would
      // wait for an answer for as long as the upstream keeps it).
      const ws = await untilAborted(connection.connect(), signal);
      // An abort that came after the connection was ready and before this line was heard by no
      // one (the listener below would never fire): the call is not written, and not waited for.
      if (signal.aborted) throw signal.reason as Error;
      const { payload } = request;
      const ids = calls.idsFor(payload.calls);
      const outgoing: { jsonrpc: '2.0'; id: number; method: string; params: unknown }[] = [];
      let i = 0;
      for (const id of ids.keys()) {
        const call = payload.calls[i++]!;
        outgoing.push({ jsonrpc: '2.0', id, method: call.method, params: call.params });
      }
      return new Promise<UpstreamResponse>((resolve, reject) => {
        const entry: PendingCall = { ws, ids, maxDepth: request.maxDepth ?? defaultMaxDepth, budget: request.budget, resolve, reject };
        calls.add(entry);
        signal.addEventListener(
          'abort',
          () => {
            calls.remove(ids);
            reject(signal.reason as Error);
          },
          { once: true },
        );
        const message = JSON.stringify(payload.batch ? outgoing : outgoing[0]);
        // From here the upstream may receive the call (ws refuses to write on a socket not open).
        state.sent = ws.readyState === WebSocket.OPEN;
        ws.send(message, (err) => {
          if (err) {
            calls.remove(ids);
            reject(new UpstreamCallError('transport', `websocket send: ${err.message}`, { sent: state.sent }));
          }
        });
      });
    });
  }

  async function close(): Promise<void> {
    closed = true;
    calls.failAll(new UpstreamCallError('closed', 'transport closed'));
    await connection.close();
  }

  return { send, releaseKept: closeIfQuiet, close };
}
