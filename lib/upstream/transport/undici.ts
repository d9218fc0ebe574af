/**
 * HTTP(S) upstream on undici (the client inside Node's own `fetch`), chosen by config
 * `upstreams.client` (choose.ts: `undici`, or `auto` while nothing intercepts node:http): a Pool
 * of kept-alive connections per upstream, or undici's
 * ProxyAgent when `upstreams.proxy` or the environment names a proxy (agent.ts proxyFor, NO_PROXY
 * applied). The same contract as http.ts, rule for rule: the client's body is POSTed as is and
 * the answer's bytes returned as received; HTTP ≥ 300 (redirects are never followed), an answer
 * over the size limit or the byte budget or nested too deep, a timeout, an abort or a transport
 * error each fail the call with an UpstreamCallError; a call our side ends destroys its socket.
 *
 * Not node:http: nock does not see these calls, nor does OpenTelemetry's http instrumentation
 * (undici has its own), and an agent handed in by an embedding program cannot carry them (the
 * registry uses http.ts then).
 *
 * A request is written at most once: undici never sends a POST again and nothing here does.
 * `sent` turns true when undici hands the request a connected socket (onConnect, after the TCP
 * connect, the TLS handshake or the proxy's tunnel), right before it writes. Bytes an upstream
 * sends while a connection is idle, or after an answer in the same packet, make undici destroy
 * that connection (no request is running on it). Informational answers (1xx) other than
 * 100 Continue are skipped; undici refuses an unasked 100 Continue as a bad response. undici
 * writes on a connection freed by an answer only from the next turn of the event loop: a call
 * started in the same turn takes another connection (within the pool's size). The calls within
 * the upstream's share of the socket cap go to a pool of the share's size, which thus never
 * holds more; those above it (on room the cap lends, admission.ts) to a second pool.
 *
 * Under the gateway's cap on upstream sockets (`sockets`, sockets.ts) each connection of the
 * pool connects through the cap: one beyond it waits there (the call bound to it waits within its
 * own timeout), and the cap learns from each call's end when the upstream's connections may be
 * idle or, after a health call on an upstream without traffic, are to be closed; the
 * connections of the pool above the share it closes once cold (idle a second or so), so that
 * their room may be lent to another upstream.
 */
import { createRequire } from 'node:module';
import type { buildConnector, Dispatcher } from 'undici';

/** undici, loaded on the first undici upstream (a gateway on node:http never loads it). */
const undici = (): typeof import('undici') => createRequire(import.meta.url)('undici') as typeof import('undici');
import { defaultKeepAliveMs, defaultMaxSockets, proxyFor, type AgentSettings } from './agent.js';
import { Admission } from './admission.js';
import { basicAuth, promiseSink, quietSinceHealthCall, refusal, requestIdHeader, transportError, UpstreamCall } from './call.js';
import { ConnectionSlot, type Connect, type ConnectionClient, type SocketPool } from './sockets.js';
import { UpstreamCallError, type CallSink, type Transport, type UpstreamRequest, type UpstreamResponse } from './contract.js';

export interface UndiciTransportOptions extends AgentSettings {
  /** Our Via entry (loop.ts), sent after the request's own omnigate entries (`request.via`). */
  via?: string;
  /** The gateway's cap on upstream sockets (`limits.upstreamSockets`), shared with node:http's agents. */
  sockets?: SocketPool;
  /**
   * The upstream's share of that cap (registry.ts shareOfCap): calls up to it go to a pool of
   * that size; calls above it, up to `maxSockets`, go to a second pool, only on room the cap
   * lends (admission.ts). Without it (or through a proxy), `maxSockets` calls and one pool.
   */
  share?: number;
}

export function createUndiciTransport(rawUrl: string, options: UndiciTransportOptions = {}): Transport {
  const url = new URL(rawUrl);
  const client = new Client(url, options);
  return {
    send: (request) => client.send(request),
    call: (request, sink) => client.call(request, sink),
    releaseKept: () => {
      if (client.slot !== undefined && quietSinceHealthCall(client)) client.slot.pool.closeWhenIdle(client.slot);
    },
    close: async () => {
      client.closed = true;
      for (let call = client.live; call; call = client.live) call.fail(new UpstreamCallError('closed', 'transport closed', { sent: call.sent }));
      await Promise.all([client.dispatcher.destroy(), client.lentDispatcher?.destroy()]);
    },
  };
}

/**
 * The dispatcher of one upstream: a Pool to it, or a ProxyAgent when a proxy carries its calls;
 * with a part of the socket cap (`slot`), its connections are made by the cap's connector.
 */
function createDispatcher(url: URL, limit: number, options: UndiciTransportOptions, slot: ConnectionSlot | undefined): Dispatcher {
  const secure = url.protocol === 'https:';
  const tls = secure ? options.tls : undefined;
  // Idle connections kept keepAliveMs, or 1 s less than the upstream's Keep-Alive hint when that
  // is shorter (as node's agent does; a longer hint does not lengthen it). The cap closes those of
  // the calls above the share sooner, once cold (sockets.ts).
  const keepAliveMs = options.keepAliveMs ?? defaultKeepAliveMs;
  const keep = { keepAliveTimeout: keepAliveMs, keepAliveMaxTimeout: keepAliveMs, keepAliveTimeoutThreshold: 1_000 };
  const proxy = proxyFor(url.href, options.proxy);
  // The call's own timer (timeoutMs) bounds every wait: undici's header timer is off, its body
  // timer set per request (Call.start).
  if (proxy) {
    // An https upstream through a CONNECT tunnel; an http one as absolute-form requests to the
    // proxy, as node's http-proxy-agent does.
    // (The pool of the upstream's connections, tunnels or to the proxy, is made by `factory`.)
    const factory = slot && ((origin: string | URL, opts: object) => new (undici().Pool)(origin, { ...opts, factory: clients(slot, undefined) }));
    return new (undici().ProxyAgent)({ uri: proxy, requestTls: tls, proxyTunnel: secure, connections: limit, pipelining: 1, ...keep, headersTimeout: 0, bodyTimeout: 0, factory });
  }
  const factory = secure || slot ? clients(slot, secure ? { session: undefined } : undefined) : undefined;
  return new (undici().Pool)(url.origin, { connections: limit, pipelining: 1, ...keep, headersTimeout: 0, bodyTimeout: 0, connect: tls ? { ...tls } : undefined, factory });
}

/**
 * The TLS session last issued to one pool's connections, held. undici's session cache holds a
 * session only weakly (a WeakRef): newer V8 (Node 26) collects it between two connections, and
 * each new connection to the upstream then pays a full handshake. Held here, the same object
 * stays in undici's cache for the next connection to resume.
 */
interface HeldSession {
  session: Buffer | undefined;
}

/**
 * The factory of a pool's Clients (one connection each), with the pool's connect function:
 * under the socket cap (`slot`) each connects through it (sockets.ts); with `held`, the TLS
 * sessions its connections are issued are kept there.
 */
function clients(slot: ConnectionSlot | undefined, held: HeldSession | undefined): (origin: string | URL, opts: object) => Dispatcher {
  return (origin, opts) => {
    const pooled = (opts as { connect: Connect }).connect;
    const inner = held ? holdingSessions(pooled, held) : pooled;
    const connect: Connect = slot ? (options, callback) => slot.pool.connect(slot, client, inner, options, callback) : inner;
    const client: Dispatcher & ConnectionClient = new (undici().Client)(origin, { ...opts, connect: connect as unknown as buildConnector.connector });
    return client;
  };
}

/** `connect`, whose connections' TLS sessions (TLS 1.3: issued after the handshake) are kept in `held`. */
function holdingSessions(connect: Connect, held: HeldSession): Connect {
  const keep = (session: Buffer) => {
    held.session = session;
  };
  return (options, callback) =>
    connect(options, (err, socket) => {
      socket?.on('session', keep);
      callback(err, socket);
    });
}

class Client extends Admission<Call> {
  /** The calls in flight, as a list linked through the calls (close() fails them). */
  live: UpstreamCall | undefined = undefined;
  /**
   * Calls handed to undici, at most `limit` (the connections of the pool); the others wait in
   * the queue below as a Call and nothing more, so a call that ends while it waits never
   * reaches undici.
   */
  readonly dispatcher: Dispatcher;
  readonly origin: string;
  readonly path: string;
  private readonly via: string | undefined;
  private readonly auth: string | undefined;

  /** This upstream's part of the gateway's socket cap (none: no cap given), and its part for the calls above its share. */
  readonly slot: ConnectionSlot | undefined;
  readonly lentSlot: ConnectionSlot | undefined;
  /** The pool of the calls above the share (none: no call goes above it). */
  readonly lentDispatcher: Dispatcher | undefined;
  /** Calls other than health calls (`request.background`) made, and that count at the last health call's end. */
  traffic = 0;
  trafficSeen = 0;

  constructor(url: URL, options: UndiciTransportOptions) {
    const pool = options.sockets;
    // Through a proxy, one pool of the share (ProxyAgent makes its pools itself): nothing above it.
    const limit = options.maxSockets ?? defaultMaxSockets;
    const lends = pool !== undefined && options.share !== undefined && proxyFor(url.href, options.proxy) === undefined;
    super(lends || options.share === undefined ? limit : Math.min(limit, options.share), lends ? options.share : undefined, lends ? pool : undefined);
    this.slot = pool && new ConnectionSlot(pool);
    this.via = options.via;
    this.auth = basicAuth(url);
    this.origin = url.origin;
    this.path = `${url.pathname}${url.search}`;
    // Two pools when calls may go above the share: undici opens a connection for a call started in
    // the turn another's is freed (first lines of this file), so a pool sized to the share never
    // holds more than the share, and the connections beyond it are all in the second pool.
    this.dispatcher = createDispatcher(url, Number.isFinite(this.share) ? this.share : 0, options, this.slot);
    if (this.share < this.limit) {
      this.lentSlot = new ConnectionSlot(pool!, true);
      this.lentSlot.twin = this.slot;
      this.lentSlot.borrower = this;
      this.slot!.twin = this.lentSlot;
      this.lentDispatcher = createDispatcher(url, Number.isFinite(this.limit) ? this.limit - this.share : 0, options, this.lentSlot);
    } else {
      this.lentSlot = undefined;
      this.lentDispatcher = undefined;
    }
  }

  send(request: UpstreamRequest): Promise<UpstreamResponse> {
    const refused = refusal(request, this.closed);
    if (refused) return Promise.reject(refused);
    return new Promise<UpstreamResponse>((resolve, reject) => new Call(this, request, promiseSink(resolve, reject)));
  }

  /** `send` with its end told to `sink` (Transport.call). */
  call(request: UpstreamRequest, sink: CallSink): void {
    const refused = refusal(request, this.closed);
    if (refused) return sink.failed(refused);
    new Call(this, request, sink);
  }


  /** The request's headers, as undici's flat list of names and values (it adds Host and Content-Length). */
  headers(request: UpstreamRequest): string[] {
    const headers = ['User-Agent', 'omnigate', 'Content-Type', 'application/json', 'Accept', 'application/json', 'X-Request-Id', requestIdHeader(request.requestId)];
    if (this.auth) headers.push('Authorization', this.auth);
    if (this.via) headers.push('Via', request.via ? `${request.via}, ${this.via}` : this.via);
    return headers;
  }
}

/** Whether a raw header name (undici hands them as bytes) is Content-Length, in any case. */
function isContentLength(name: Buffer | string): boolean {
  if (name.length !== 14) return false;
  return (typeof name === 'string' ? name : name.toString('latin1')).toLowerCase() === 'content-length';
}

/** Whether a raw header name is Retry-After, in any case. */
function isRetryAfter(name: Buffer | string): boolean {
  if (name.length !== 11) return false;
  return (typeof name === 'string' ? name : name.toString('latin1')).toLowerCase() === 'retry-after';
}

/**
 * One upstream call on undici: undici's handler for it (the methods below, on the prototype: no
 * closures per call); call.ts has the rest.
 */
class Call extends UpstreamCall implements Dispatcher.DispatchHandler {
  declare readonly client: Client;
  /** undici's abort of the request, once it has a connection. */
  private abortRequest: ((err?: Error) => void) | undefined = undefined;
  /** Whether undici has the request (it must be aborted when our side ends the call). */
  private dispatched = false;

  constructor(client: Client, request: UpstreamRequest, sink: CallSink) {
    super(client, request, sink);
    client.admit(this);
  }

  /** Hands the request to undici (the client admitted it). */
  start(): void {
    this.started = true;
    const { client, request } = this;
    const slot = this.borrowed ? client.lentSlot : client.slot;
    if (slot !== undefined) slot.busy += 1;
    this.dispatched = true;
    try {
      // (bodyTimeout bounds only what outlives the call: an error answer's body drained after it ended.)
      const options = { origin: client.origin, path: client.path, method: 'POST', headers: client.headers(request), body: request.payload.raw, bodyTimeout: request.timeoutMs };
      (this.borrowed ? client.lentDispatcher! : client.dispatcher).dispatch(options, this);
    } catch (err) {
      // (A call started for another one that ended must not throw into that one's ending.)
      this.onError(err as Error);
    }
  }

  // ---- undici's handler ----

  onConnect(abort: (err?: Error) => void): void {
    // Our side ended the call while undici connected: it is dropped before a byte is written.
    if (this.settled) return abort();
    this.abortRequest = abort;
    this.sent = true;
  }

  onHeaders(statusCode: number, headers: (Buffer | string)[] | null, _resume: () => void): boolean {
    if (this.settled) return true; // an error answer being drained
    if (statusCode < 200) return true; // informational: the final answer follows
    let retryAfter: string | undefined;
    if (headers) {
      for (let i = 0; i < headers.length; i += 2) {
        if (isContentLength(headers[i]!)) this.declared = Number(headers[i + 1]!.toString());
        else if (statusCode >= 300 && isRetryAfter(headers[i]!)) retryAfter = headers[i + 1]!.toString();
      }
    }
    this.head(statusCode, retryAfter);
    return true;
  }

  onData(chunk: Buffer): boolean {
    this.take(chunk);
    return true;
  }

  onComplete(): void {
    this.dispatched = false;
    this.complete();
  }

  onError(err: Error): void {
    this.dispatched = false;
    if (this.settled) return;
    this.finish(err instanceof UpstreamCallError ? err : transportError(err, this.sent));
  }

  /** Before undici connected, onConnect aborts it; after, the abort destroys the connection. */
  protected drop(err?: UpstreamCallError): void {
    if (this.dispatched) this.abortRequest?.(err);
  }

  /** Ends its part of the socket cap. */
  protected ended(): void {
    const client = this.client;
    const slot = this.borrowed ? client.lentSlot : client.slot;
    if (slot === undefined) return;
    // A health call on an upstream that carried no traffic since the last one: the upstream's
    // connections (both pools') are closed once no call is in flight (a probe round holds only its own).
    if (this.request.background === true && this.request.keepOpen !== true && quietSinceHealthCall(client)) {
      slot.closeWhenIdle = true;
      if (slot.twin !== undefined) slot.twin.closeWhenIdle = true;
    }
    if (this.started) {
      slot.busy -= 1;
      slot.pool.callEnded(slot);
    }
  }
}
