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
import { UpstreamCallError, type CallSink, type UpstreamRequest } from './contract.js';
import { quietSinceHealthCall, transportError, UpstreamCall, type CallOwner as AnyCallOwner } from './call.js';
import { closeWhenFree, type SocketPool, type SocketSlot, type SocketWaiter } from './sockets.js';

/** What a call needs of the client that made it (http.ts). */
export interface CallOwner extends AnyCallOwner {
  readonly secure: boolean;
  /** The request options of a call. */
  options(request: UpstreamRequest): http.RequestOptions;
  /** The client's part of the gateway's socket cap, and that cap (none: a caller's agent, or no cap). */
  readonly slot: SocketSlot | undefined;
  readonly pool: SocketPool | undefined;
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
/** One upstream call on node:http: its request, and its place under the socket cap (call.ts has the rest). */
export class Call extends UpstreamCall implements SocketWaiter {
  declare readonly client: CallOwner;
  /** The call's request; undefined while it waits in the client's queue. */
  private req: CallRequest | undefined = undefined;
  private res: http.IncomingMessage | undefined = undefined;
  /** Whether it holds a reservation of the socket cap (it may open a socket). */
  reserved = false;
  /** Whether it waits in the socket cap's queue, and its neighbours there. */
  pooled = false;
  pprev: SocketWaiter | undefined = undefined;
  pnext: SocketWaiter | undefined = undefined;

  constructor(client: CallOwner, request: UpstreamRequest, sink: CallSink) {
    super(client, request, sink);
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
    const retryAfter = res.headers['retry-after'];
    if (!this.head(status, typeof retryAfter === 'string' ? retryAfter : undefined)) {
      // An error answer small enough is read and dropped (the socket is kept); otherwise the
      // request is destroyed by now and nothing flows.
      res.resume();
      return;
    }
    res.on('data', onData);
    res.on('end', onEnd);
    res.on('error', onResponseError);
  }

  onData(chunk: Buffer): void {
    this.take(chunk);
  }

  onEnd(): void {
    if (this.settled) return;
    if (!this.res!.complete) return this.fail(new UpstreamCallError('transport', 'connection closed before the answer was complete'));
    this.complete();
  }

  /** Destroys the request and its socket. */
  protected drop(): void {
    this.req?.destroy();
  }

  /** Ends its part of the socket cap. */
  protected ended(): void {
    const client = this.client;
    const pool = client.pool;
    if (pool === undefined) return;
    if (this.pooled) pool.unqueue(this);
    if (this.reserved) pool.release(this);
    // A health call on an upstream that carried no traffic since the last one: its socket is
    // closed, not kept alive (a probe round of many upstreams holds the sockets in flight only).
    if (this.request.background === true && this.request.keepOpen !== true && quietSinceHealthCall(client)) closeWhenFree(this.req?.socket);
  }
}
