/**
 * The bench's own load-generator client: the raw-socket HTTP/1.1 pool omnigate used for its
 * upstreams until issue 18 (it now uses node:http, lib/upstream/transport/http.ts). Kept here,
 * unchanged, so that the generator's cost and the N=3 baseline (fanout-server.ts) stay what they
 * were measured with, and the figures of main and of this branch compare. Not shipped.
 *
 * Originally: keep-alive HTTP/1.1 connections of our own, one pool per upstream. The
 * client's body is POSTed as is (so the upstream echoes the client's ids), with the request id
 * in `X-Request-Id`. HTTP ≥ 300 (redirects are not followed), a body over the size limit, a
 * timeout or a transport error each fail the call with an UpstreamCallError.
 *
 * Why not undici or node:http. Both were used and measured here (`npm run bench`, README):
 * - undici 7.30 holds every request it puts on a reused keep-alive socket until the event
 *   loop's check phase (its fix for GHSA-35p6-xmwp-9g52). Under load a whole poll phase of
 *   client requests is parsed first, so each upstream call left that much later: 0.27 ms at
 *   the median, 0.39 ms on average at 50 connections, which was all of the closed-loop gap to
 *   http-proxy.
 * - node:http's Agent writes at once but cost 30 µs of CPU per call against undici's 17.
 * This pool writes at once, in one write, and parses with http1-response.ts. What the undici
 * fix guards against, bytes an upstream sends unasked on an idle connection, is handled by
 * closing a connection that receives any byte while idle; a connection is never shared
 * between upstreams, so such bytes could only ever be read as that upstream's own answer,
 * which the verifier judges like any other.
 */
import net from 'node:net';
import tls from 'node:tls';
import { Http1ResponseParser, type ResponseHead, type ResponseSink } from './http1-response.js';
import { nestsDeeperThan } from '../../../lib/jsonrpc/scan.js';
import {
  defaultMaxDepth,
  describeError,
  overBudget,
  tooDeep,
  UpstreamCallError,
  type Transport,
  type UpstreamRequest,
  type UpstreamResponse,
} from '../../../lib/upstream/transport/contract.js';

export interface HttpTransportOptions {
  /** Connections open at once per upstream; calls beyond wait for one. */
  connections?: number;
  /** TLS options added to the defaults (a private CA, say). */
  tls?: tls.ConnectionOptions;
  /** Our Via entry (loop.ts), sent after the request's own omnigate entries (`request.via`). */
  via?: string;
}

/** How long an idle connection is kept; a shorter `Keep-Alive: timeout` hint wins. */
const idleSocketMs = 30_000;
/** Closing this early before the server's announced idle timeout avoids racing it. */
const hintMarginMs = 1_000;
/** Error bodies up to this size are read and dropped so the connection is kept. */
const drainLimit = 64 * 1024;
/** Answers of a declared length above this are read into one buffer allocated up front. */
const preallocFrom = 64 * 1024;
/** Bodies below this are copied behind the head for a single write. */
const coalesceLimit = 16 * 1024;
const visibleAscii = /^[\x21-\x7e]*$/;

class Call {
  settled = false;
  timer: NodeJS.Timeout | undefined = undefined;
  onAbort: (() => void) | undefined = undefined;
  /** The connection the call is on; undefined while it waits for one. */
  connection: Connection | undefined = undefined;
  /** Sent again once already, after a reused connection closed before answering. */
  retried = false;
  /** Bytes charged to the request's budget account for this call's answer. */
  charged = 0;
  constructor(
    readonly request: UpstreamRequest,
    readonly resolve: (response: UpstreamResponse) => void,
    readonly reject: (err: Error) => void,
  ) {}
}

export function createHttpTransport(rawUrl: string, options: HttpTransportOptions = {}): Transport {
  const pool = new Pool(new URL(rawUrl), options);
  return { send: (request) => pool.send(request), close: async () => pool.close() };
}

class Pool {
  readonly secure: boolean;
  /** Where sockets connect: the host without IPv6 brackets. */
  readonly host: string;
  readonly port: number;
  readonly tlsOptions: tls.ConnectionOptions | undefined;
  /** The last TLS session, offered to resume on the next connection. */
  session: Buffer | undefined;
  /** Request head up to the request id; the id and the length follow per call. */
  private readonly headPrefix: string;
  private readonly via: string | undefined;
  private readonly max: number;
  /** Idle connections, the most recently used last (taken first: a hot set stays open). */
  private readonly idle: Connection[] = [];
  private readonly waiting: Call[] = [];
  private open = 0;
  private readonly live = new Set<Connection>();
  private closed = false;

  constructor(url: URL, options: HttpTransportOptions) {
    this.secure = url.protocol === 'https:';
    this.host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    this.port = Number(url.port) || (this.secure ? 443 : 80);
    this.tlsOptions = options.tls;
    this.max = options.connections ?? 128;
    this.via = options.via;
    const auth =
      url.username || url.password
        ? `Authorization: Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}\r\n`
        : '';
    this.headPrefix =
      `POST ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\nUser-Agent: omnigate\r\n` +
      `Content-Type: application/json\r\nAccept: application/json\r\n${auth}X-Request-Id: `;
  }

  send(request: UpstreamRequest): Promise<UpstreamResponse> {
    if (request.signal.aborted) return Promise.reject(new UpstreamCallError('aborted', 'call aborted'));
    if (this.closed) return Promise.reject(new UpstreamCallError('closed', 'transport closed'));
    if (request.budget?.budget.exhausted) return Promise.reject(overBudget(request.budget, 1));
    return new Promise<UpstreamResponse>((resolve, reject) => {
      const call = new Call(request, resolve, reject);
      call.timer = setTimeout(() => this.stop(call, new UpstreamCallError('timeout', `no answer within ${request.timeoutMs} ms`)), request.timeoutMs);
      call.onAbort = () => this.stop(call, new UpstreamCallError('aborted', 'call aborted'));
      request.signal.addEventListener('abort', call.onAbort, { once: true });
      this.dispatch(call);
    });
  }

  /** The bytes of a call's request: one buffer when small. */
  requestBytes(request: UpstreamRequest): Buffer | [Buffer, Buffer] {
    const body = request.payload.raw;
    // The parse stage only lets visible ASCII through; anything else would break the head.
    const id = visibleAscii.test(request.requestId) ? request.requestId : request.requestId.replace(/[^\x21-\x7e]/g, '');
    const via = this.via ? `Via: ${request.via ? `${request.via}, ` : ''}${this.via}\r\n` : '';
    const head = `${this.headPrefix}${id}\r\n${via}Content-Length: ${body.length}\r\n\r\n`;
    if (body.length >= coalesceLimit) return [Buffer.from(head, 'latin1'), body];
    const bytes = Buffer.allocUnsafe(head.length + body.length);
    bytes.write(head, 0, 'latin1');
    body.copy(bytes, head.length);
    return bytes;
  }

  /** Ends a call for its caller. The connection, if any, is the caller's to deal with. */
  settle(call: Call, err: Error | undefined, body?: Buffer): void {
    if (call.settled) return;
    call.settled = true;
    clearTimeout(call.timer);
    call.request.signal.removeEventListener('abort', call.onAbort!);
    // A failed call's bytes are dropped: they go back to the budget.
    if (err && call.charged > 0) call.request.budget?.give(call.charged);
    if (err) call.reject(err);
    else call.resolve({ body: body! });
  }

  /** Our side ends a call (timeout, abort, size): a connection mid-call cannot be reused. */
  stop(call: Call, err: UpstreamCallError): void {
    if (call.settled) return;
    this.settle(call, err);
    if (call.connection) call.connection.destroy();
    else {
      const i = this.waiting.indexOf(call);
      if (i !== -1) this.waiting.splice(i, 1);
    }
  }

  private dispatch(call: Call): void {
    for (let c = this.idle.pop(); c; c = this.idle.pop()) {
      if (!c.gone) return c.start(call);
    }
    if (this.open < this.max) return this.connect(call);
    this.waiting.push(call);
  }

  private connect(call: Call): void {
    this.open += 1;
    const c = new Connection(this);
    this.live.add(c);
    c.start(call);
  }

  /** A connection finished a call and may serve another. */
  release(c: Connection, hintMs: number): void {
    const next = this.waiting.shift();
    if (next) return c.start(next);
    const idleMs = hintMs > 0 ? Math.min(idleSocketMs, hintMs - hintMarginMs) : idleSocketMs;
    if (idleMs <= 0 || this.closed) return c.destroy();
    c.rest(idleMs);
    this.idle.push(c);
  }

  /** A connection closed; `call` was on it, unanswered. */
  lost(c: Connection, call: Call | undefined, err: Error, retriable: boolean): void {
    this.open -= 1;
    this.live.delete(c);
    const i = this.idle.indexOf(c);
    if (i !== -1) this.idle.splice(i, 1);
    if (call && !call.settled) {
      call.connection = undefined;
      if (retriable && !call.retried && !this.closed) {
        // The upstream closed a kept-alive connection as we reused it (its idle timeout): the
        // request got no byte back, so it is sent once more on a fresh connection.
        call.retried = true;
        this.connect(call);
      } else {
        this.settle(call, err instanceof UpstreamCallError ? err : new UpstreamCallError('transport', describeError(err), { cause: err }));
      }
    }
    const next = this.open < this.max && !this.closed ? this.waiting.shift() : undefined;
    if (next) this.connect(next);
  }

  close(): void {
    this.closed = true;
    for (const call of this.waiting.splice(0)) this.settle(call, new UpstreamCallError('closed', 'transport closed'));
    for (const c of this.live) c.destroy(new UpstreamCallError('closed', 'transport closed'));
  }
}

/** One keep-alive connection; at most one call on it at a time (no pipelining). */
class Connection implements ResponseSink {
  readonly socket: net.Socket;
  /** Closed, or closing. */
  gone = false;
  private readonly parser = new Http1ResponseParser(this);
  private call: Call | undefined;
  /** A call was answered on it before: it is a reused connection. */
  private used = false;
  private idleTimer: NodeJS.Timeout | undefined;
  private head: ResponseHead | undefined;
  /** The answer's bytes when its length was declared (filled as they come: no concat at the end). */
  private body: Buffer | undefined;
  private chunks: Buffer[] = [];
  private size = 0;
  /** Why it closed, when we know better than the socket. */
  private reason: Error | undefined;

  constructor(private readonly pool: Pool) {
    const { host, port } = pool;
    const socket = pool.secure
      ? tls.connect({
          host,
          port,
          servername: net.isIP(host) ? undefined : host,
          ALPNProtocols: ['http/1.1'],
          session: pool.session,
          ...pool.tlsOptions,
        })
      : net.connect({ host, port });
    if (pool.secure) socket.on('session', (session: Buffer) => (pool.session = session));
    socket.setNoDelay(true);
    socket.setKeepAlive(true, idleSocketMs);
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', (err) => (this.reason ??= err));
    socket.on('close', () => this.onClose());
    this.socket = socket;
  }

  start(call: Call): void {
    clearTimeout(this.idleTimer);
    this.socket.ref();
    this.call = call;
    call.connection = this;
    const bytes = this.pool.requestBytes(call.request);
    if (Array.isArray(bytes)) {
      this.socket.cork();
      this.socket.write(bytes[0]);
      this.socket.write(bytes[1]);
      this.socket.uncork();
    } else {
      this.socket.write(bytes);
    }
  }

  /** Idle in the pool for up to `ms`. */
  rest(ms: number): void {
    this.socket.unref();
    this.idleTimer = setTimeout(() => this.destroy(), ms);
    this.idleTimer.unref();
  }

  destroy(reason?: Error): void {
    if (this.gone) return;
    this.gone = true;
    this.reason ??= reason;
    clearTimeout(this.idleTimer);
    this.socket.destroy();
  }

  private onData(chunk: Buffer): void {
    if (this.gone) return;
    // Bytes on an idle connection answer nothing we asked: the connection is not to be trusted.
    if (!this.call) return this.destroy();
    try {
      this.parser.push(chunk);
    } catch (err) {
      const call = this.call;
      this.destroy();
      if (call) this.pool.settle(call, new UpstreamCallError('transport', `invalid HTTP response: ${(err as Error).message}`));
    }
  }

  onHead(head: ResponseHead): void {
    const call = this.call;
    if (!call) return;
    this.head = head;
    if (head.status >= 300) {
      this.pool.settle(call, new UpstreamCallError('http-status', `HTTP ${head.status}`));
      // The body is read and dropped to keep the connection, unless it is large or unbounded.
      if (head.contentLength > drainLimit || !head.keepAlive) this.destroy();
      return;
    }
    if (head.contentLength > call.request.maxBytes) {
      this.pool.stop(call, new UpstreamCallError('too-large', `response of ${head.contentLength} bytes is over the ${call.request.maxBytes}-byte limit`));
    } else if (head.contentLength > 0) {
      if (!this.charge(call, head.contentLength)) return;
      // A large answer is copied into place as it comes: no second copy (and twice the memory)
      // in a concat at its end. A small one is usually one chunk, kept as is.
      if (head.contentLength > preallocFrom) this.body = Buffer.allocUnsafe(head.contentLength);
    }
  }

  /** Charges the call's budget account; false when it stopped the call for it. */
  private charge(call: Call, bytes: number): boolean {
    const account = call.request.budget;
    if (!account) return true;
    if (!account.take(bytes)) {
      this.pool.stop(call, overBudget(account, bytes));
      return false;
    }
    call.charged += bytes;
    return true;
  }

  onBody(chunk: Buffer): void {
    const call = this.call;
    if (!call || this.gone) return;
    this.size += chunk.length;
    if (call.settled) {
      if (this.size > drainLimit) this.destroy();
    } else if (this.size > call.request.maxBytes) {
      this.pool.stop(call, new UpstreamCallError('too-large', `response over the ${call.request.maxBytes}-byte limit`));
    } else if (this.body) {
      chunk.copy(this.body, this.size - chunk.length);
    } else if (this.head!.contentLength > 0 || this.charge(call, chunk.length)) {
      this.chunks.push(chunk);
    }
  }

  onComplete(extra: Buffer | undefined): void {
    const call = this.call;
    if (!call || this.gone) return;
    const chunks = this.chunks;
    // (Settled already when it was an error status whose body was read only to keep the connection.)
    if (!call.settled) {
      const body = this.body ?? (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, this.size));
      // Refused before anything parses it: JSON.parse takes seconds on a few MB of `[[[[…]]]]`.
      const maxDepth = call.request.maxDepth ?? defaultMaxDepth;
      if (nestsDeeperThan(body, maxDepth)) this.pool.settle(call, tooDeep(maxDepth));
      else this.pool.settle(call, undefined, body);
    }
    this.call = undefined;
    call.connection = undefined;
    this.body = undefined;
    this.chunks = [];
    this.size = 0;
    this.used = true;
    this.parser.reset();
    // Bytes after the answer belong to no request of ours (we never pipeline).
    if (extra || !this.head!.keepAlive) return this.destroy();
    this.pool.release(this, this.head!.keepAliveMs);
  }

  private onClose(): void {
    this.gone = true;
    clearTimeout(this.idleTimer);
    let call = this.call;
    this.call = undefined;
    if (call && !call.settled && this.parser.readsUntilClose && !this.reason) {
      // A body without a length ends with the connection: complete, not lost.
      const body = Buffer.concat(this.chunks, this.size);
      const maxDepth = call.request.maxDepth ?? defaultMaxDepth;
      this.pool.settle(call, nestsDeeperThan(body, maxDepth) ? tooDeep(maxDepth) : undefined, body);
      call = undefined;
    }
    // Retried once: a reused connection the upstream closed before any byte of the answer came.
    const retriable = this.used && this.parser.idle && !(this.reason instanceof UpstreamCallError);
    const err = this.reason ?? new UpstreamCallError('transport', 'connection closed before the answer was complete');
    this.pool.lost(this, call, err, retriable);
  }
}
