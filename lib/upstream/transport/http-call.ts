/**
 * One call to an HTTP(S) upstream on node:http (lib/upstream/transport/http.ts owns the client
 * that admits and queues them): its request, its timer and its answer's bytes, read into one
 * buffer, checked against the size limit, the byte budget and the nesting limit. The request's
 * and answer's event handlers are shared functions that find their call on the request, not
 * closures made per call. Under the gateway's cap on upstream sockets (sockets.ts, when the
 * client has a part of it) a call that may open a socket beyond the cap waits there for one.
 */
import http from 'node:http';
import https from 'node:https';
import type { Duplex } from 'node:stream';
import { nestsDeeperThan } from '../../jsonrpc/scan.js';
import { defaultMaxDepth, describeError, overBudget, statusError, tooDeep, UpstreamCallError, type UpstreamRequest, type UpstreamResponse } from './contract.js';
import { closeWhenFree, type SocketPool, type SocketSlot, type SocketWaiter } from './sockets.js';

/** What a call needs of the client that made it (http.ts). */
export interface CallOwner {
  /** The first of the calls in flight (a list linked through the calls). */
  live: Call | undefined;
  readonly secure: boolean;
  /** Starts the call now, or queues it until a request is free. */
  admit(call: Call): void;
  /** The call leaves the queue without having started. */
  unqueue(call: Call): void;
  /** A started call ended: its request is free for the next in the queue. */
  release(): void;
  /** The request options of a call. */
  options(request: UpstreamRequest): http.RequestOptions;
  /** The client's part of the gateway's socket cap, and that cap (none: a caller's agent, or no cap). */
  readonly slot: SocketSlot | undefined;
  readonly pool: SocketPool | undefined;
  /** Calls other than health calls (`request.background`) made, and that count at the last health call's end. */
  traffic: number;
  trafficSeen: number;
}

/** Error bodies up to this size are read and dropped so the socket is kept. */
const drainLimit = 64 * 1024;
/** Answers of a declared length above this are read into one buffer allocated up front. */
const preallocFrom = 64 * 1024;

/** A network error as a failed call; an answer node's parser refused says so first. */
function transportError(err: Error, sent: boolean): UpstreamCallError {
  const { code, reason } = err as Error & { code?: string; reason?: string };
  if (code?.startsWith('HPE_')) return new UpstreamCallError('transport', `invalid HTTP response: ${reason ?? err.message} (${code})`, { cause: err, sent: true });
  return new UpstreamCallError('transport', describeError(err), { cause: err, sent });
}

/** The Call of a ClientRequest (the handlers below are shared, not closures per call). */
const kCall = Symbol('omnigate.call');
type CallRequest = http.ClientRequest & { [kCall]: Call };
type CallResponse = http.IncomingMessage & { req: CallRequest };

type AnySocket = Duplex & { connecting?: boolean; encrypted?: boolean; getPeerCertificate?: () => object | null };

function onSocket(this: CallRequest, socket: AnySocket): void {
  const call = this[kCall];
  // The request has its socket: a new one is counted open by now, the reservation ends.
  if (call.reserved) call.client.pool!.release(call);
  // A socket that cannot be written: https-proxy-agent's stand-in replaying a proxy's refusal
  // of the tunnel. Nothing reaches the upstream.
  if (socket.writable === false) return;
  // A reused kept-alive socket is connected: the head is written at once. A new one holds the
  // bytes until it connects (TCP), or until its handshake ends (TLS): a failure before that
  // means nothing reached the upstream.
  // (A TLS socket a user's agent hands over already established shows the server's certificate.)
  if (this.reusedSocket) call.sent = true;
  else if (socket.encrypted) {
    if (Object.keys(socket.getPeerCertificate?.() ?? {}).length > 0) call.sent = true;
    else socket.once('secureConnect', () => (call.sent = true));
  } else if (socket.connecting) socket.once('connect', () => (call.sent = true));
  else call.sent = true;
}
function onRequestError(this: CallRequest, err: Error): void {
  this[kCall].onError(err);
}
function onResponse(this: CallRequest, res: http.IncomingMessage): void {
  this[kCall].onResponse(res);
}
function onData(this: CallResponse, chunk: Buffer): void {
  this.req[kCall].onData(chunk);
}
function onEnd(this: CallResponse): void {
  this.req[kCall].onEnd();
}
function onResponseError(this: CallResponse, err: Error): void {
  this.req[kCall].onError(err);
}
function onTimeout(call: Call): void {
  call.fail(new UpstreamCallError('timeout', `no answer within ${call.request.timeoutMs} ms`, { sent: call.sent }));
}

/** One upstream call: its request, its timer and its answer's bytes. */
export class Call implements SocketWaiter {
  /** Whether the request's bytes may have reached the upstream (UpstreamCallError.sent). */
  sent = false;
  private settled = false;
  private readonly timer: NodeJS.Timeout;
  /** The call's request; undefined while it waits in the client's queue. */
  private req: CallRequest | undefined = undefined;
  private res: http.IncomingMessage | undefined;
  /** The answer's bytes when its length was declared large (filled as they come). */
  private body: Buffer | undefined;
  private chunks: Buffer[] = [];
  private size = 0;
  /** Bytes charged to the request's budget account for this answer. */
  private charged = 0;
  private declared = -1;
  /** Neighbours in the client's list of calls in flight. */
  prev: Call | undefined = undefined;
  next: Call | undefined = undefined;
  /** Whether it was admitted (counted in the client's `active`). */
  private started = false;
  /** Whether it waits in the client's queue for a request, and its neighbours there. */
  waiting = false;
  qprev: Call | undefined = undefined;
  qnext: Call | undefined = undefined;
  /** Whether it holds a reservation of the socket cap (it may open a socket). */
  reserved = false;
  /** Whether it waits in the socket cap's queue, and its neighbours there. */
  pooled = false;
  pprev: SocketWaiter | undefined = undefined;
  pnext: SocketWaiter | undefined = undefined;

  constructor(
    readonly client: CallOwner,
    readonly request: UpstreamRequest,
    private readonly resolve: (response: UpstreamResponse) => void,
    private readonly reject: (err: Error) => void,
  ) {
    this.next = client.live;
    if (client.live) client.live.prev = this;
    client.live = this;
    this.timer = setTimeout(onTimeout, request.timeoutMs, this);
    request.signal.addEventListener('abort', this.onAbort, { once: true });
    if (request.background !== true) client.traffic += 1;
    client.admit(this);
  }

  get slot(): SocketSlot {
    return this.client.slot!;
  }

  /** The client admitted it: it goes when the socket cap lets it (at once, nearly always). */
  start(): void {
    this.started = true;
    const pool = this.client.pool;
    if (pool !== undefined) {
      if (pool.open + pool.pending < pool.cap && pool.head === undefined) {
        pool.pending += 1;
        this.reserved = true;
      } else if (!pool.admit(this)) return;
    }
    this.go();
  }

  /** Creates and sends the call's request. */
  go(): void {
    const { client, request } = this;
    const mod = client.secure ? https : http;
    let req: CallRequest;
    try {
      // Looked up on the module at each call (not a bound import): what nock and OpenTelemetry patch.
      req = mod.request(client.options(request)) as CallRequest;
    } catch (err) {
      // (A call started for another one that ended must not throw into that one's ending.)
      return this.onError(err as Error);
    }
    req[kCall] = this;
    this.req = req;
    req.on('socket', onSocket);
    req.on('response', onResponse);
    req.on('error', onRequestError);
    // node writes the head and the body together when the socket is assigned (one writev; a
    // single write measured the same: the syscall is the cost) and never writes them twice.
    req.end(request.payload.raw);
  }

  private readonly onAbort = () => this.fail(new UpstreamCallError('aborted', 'call aborted', { sent: this.sent }));

  onError(err: Error): void {
    this.fail(err instanceof UpstreamCallError ? err : transportError(err, this.sent));
  }

  onResponse(res: http.IncomingMessage): void {
    this.res = res;
    const status = res.statusCode ?? 0;
    if (!this.sent && res.socket?.writable === false) {
      // The proxy's answer to CONNECT, replayed (see onSocket): the call never left.
      return this.fail(new UpstreamCallError('transport', `the proxy refused the tunnel: HTTP ${status}`, { sent: false }));
    }
    this.sent = true;
    const length = res.headers['content-length'];
    this.declared = length === undefined ? -1 : Number(length);
    if (status >= 300 || status < 200) {
      const retryAfter = res.headers['retry-after'];
      this.finish(statusError(status, typeof retryAfter === 'string' ? retryAfter : undefined));
      // The body is read and dropped to keep the socket, unless it is large or unbounded.
      if (this.declared >= 0 && this.declared <= drainLimit) res.resume();
      else this.req!.destroy();
      return;
    }
    const { maxBytes, budget } = this.request;
    if (this.declared > maxBytes) {
      return this.fail(new UpstreamCallError('too-large', `response of ${this.declared} bytes is over the ${maxBytes}-byte limit`));
    }
    if (this.declared > 0) {
      if (budget && !this.charge(this.declared)) return;
      // A large answer is copied into place as it comes: no second copy in a concat at its end.
      if (this.declared > preallocFrom) this.body = Buffer.allocUnsafe(this.declared);
    }
    res.on('data', onData);
    res.on('end', onEnd);
    res.on('error', onResponseError);
  }

  onData(chunk: Buffer): void {
    if (this.settled) return;
    this.size += chunk.length;
    if (this.size > this.request.maxBytes || (this.declared >= 0 && this.size > this.declared)) {
      this.fail(new UpstreamCallError('too-large', `response over the ${this.request.maxBytes}-byte limit`));
    } else if (this.body) {
      chunk.copy(this.body, this.size - chunk.length);
    } else if (this.declared > 0 || !this.request.budget || this.charge(chunk.length)) {
      this.chunks.push(chunk);
    }
  }

  onEnd(): void {
    if (this.settled) return;
    if (!this.res!.complete) return this.fail(new UpstreamCallError('transport', 'connection closed before the answer was complete'));
    const chunks = this.chunks;
    const body = this.body ?? (chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, this.size));
    // Refused before anything parses it: JSON.parse takes seconds on a few MB of `[[[[…]]]]`.
    const maxDepth = this.request.maxDepth ?? defaultMaxDepth;
    if (nestsDeeperThan(body, maxDepth)) return this.finish(tooDeep(maxDepth));
    this.finish(undefined, body);
  }

  /** Charges the request's budget account; false when it failed the call for it. */
  private charge(bytes: number): boolean {
    const account = this.request.budget!;
    if (!account.take(bytes)) {
      this.fail(overBudget(account, bytes));
      return false;
    }
    this.charged += bytes;
    return true;
  }

  /** Our side ends the call (timeout, abort, size, budget, close): its socket is not reused. */
  fail(err: UpstreamCallError): void {
    if (this.settled) return;
    this.finish(err);
    this.req?.destroy();
  }

  /** Ends the call for its caller; the socket is the caller's to deal with. */
  private finish(err: UpstreamCallError | undefined, body?: Buffer): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.request.signal.removeEventListener('abort', this.onAbort);
    const { prev, next } = this;
    if (prev) prev.next = next;
    else this.client.live = next;
    if (next) next.prev = prev;
    this.prev = this.next = undefined;
    const client = this.client;
    if (client.pool !== undefined) {
      if (this.pooled) client.pool.unqueue(this);
      if (this.reserved) client.pool.release(this);
      // A health call on an upstream that carried no traffic since the last one: its socket is
      // closed, not kept alive (a probe round of many upstreams holds the sockets in flight only).
      if (this.request.background === true) {
        if (client.traffic === client.trafficSeen) closeWhenFree(this.req?.socket);
        client.trafficSeen = client.traffic;
      }
    }
    if (this.waiting) client.unqueue(this);
    else if (this.started) client.release();
    if (err) {
      // A failed call's bytes are dropped: they go back to the budget.
      if (this.charged > 0) this.request.budget?.give(this.charged);
      this.reject(err);
    } else {
      this.resolve({ body: body! });
    }
  }
}
