/**
 * HTTP(S) upstream on node's own client: `http.request`/`https.request` through a keep-alive
 * Agent per upstream. Being node:http, it is what nock intercepts, what OpenTelemetry's http
 * instrumentation traces and what a proxy agent can carry. The client's body is POSTed as is (so
 * the upstream echoes the client's ids) and the answer's bytes are returned as received.
 * HTTP ≥ 300 (redirects are never followed), an answer over the size limit or the byte budget or
 * nested too deep, a timeout, an abort or a transport error each fail the call with an
 * UpstreamCallError; a call over the size limit destroys its socket.
 *
 * A request is written at most once: node's client never sends it again and nothing here does
 * (a kept-alive socket closed after the write fails the call). Bytes an upstream sends after an
 * answer never become the next call's answer: in the answer's own packet node's client sees a
 * double response and destroys the socket; on an idle socket of omnigate's own agents the guard
 * below destroys it (node would drop them and keep the socket). What HTTP/1.1 cannot tell apart
 * is a stray answer arriving after the next request was written and before its answer.
 *
 * The agent: the caller's (`agent`: rpcPipeline's `agents`/`agent`), else agent.ts createAgent.
 */
import http from 'node:http';
import https from 'node:https';
import type { Duplex } from 'node:stream';
import type tls from 'node:tls';
import { nestsDeeperThan } from '../../jsonrpc/scan.js';
import { createAgent, defaultMaxSockets, type AgentSettings } from './agent.js';
import {
  defaultMaxDepth,
  describeError,
  overBudget,
  tooDeep,
  UpstreamCallError,
  type Transport,
  type UpstreamRequest,
  type UpstreamResponse,
} from './contract.js';

export interface HttpTransportOptions extends AgentSettings {
  /** The agent to use, as is (the caller sizes and closes it). */
  agent?: http.Agent;
  /** Our Via entry (loop.ts), sent after the request's own omnigate entries (`request.via`). */
  via?: string;
}


/** Error bodies up to this size are read and dropped so the socket is kept. */
const drainLimit = 64 * 1024;
/** Answers of a declared length above this are read into one buffer allocated up front. */
const preallocFrom = 64 * 1024;
const visibleAscii = /^[\x21-\x7e]*$/;

/** A network error as a failed call; an answer node's parser refused says so first. */
function transportError(err: Error, sent: boolean): UpstreamCallError {
  const { code, reason } = err as Error & { code?: string; reason?: string };
  if (code?.startsWith('HPE_')) return new UpstreamCallError('transport', `invalid HTTP response: ${reason ?? err.message} (${code})`, { cause: err, sent: true });
  return new UpstreamCallError('transport', describeError(err), { cause: err, sent });
}

export function createHttpTransport(rawUrl: string, options: HttpTransportOptions = {}): Transport {
  const url = new URL(rawUrl);
  const own = options.agent === undefined;
  const agent = options.agent ?? createAgent(url, options);
  const client = new Client(url, agent, options.maxSockets ?? (own ? defaultMaxSockets : agent.maxSockets), options);
  return {
    send: (request) => client.send(request),
    close: async () => {
      client.closed = true;
      for (let call = client.live; call; call = client.live) call.fail(new UpstreamCallError('closed', 'transport closed', { sent: call.sent }));
      if (own) agent.destroy();
    },
  };
}

class Client {
  closed = false;
  /**
   * The calls in flight, as a list linked through the calls (close() fails them). Not a Set: a
   * Set that every call enters and leaves made its calls, and all they hold (request, answer,
   * socket buffers), survive young GCs into the old generation: more CPU per call and more full
   * GCs (figures in test/bench/README.md, "N=1 path").
   */
  live: Call | undefined = undefined;
  /**
   * Calls that hold a ClientRequest, at most `limit`; the others wait in the queue below, as a
   * Call and nothing more. Queued in node's Agent instead, each waiting call held a ClientRequest
   * with its head and body for as long as it waited, long enough under load to be promoted into
   * the old generation: more CPU per call and more memory (figures in test/bench/README.md,
   * "RSS at 500 connections").
   */
  active = 0;
  readonly limit: number;
  /** The calls waiting for one of the `limit` requests, oldest first (linked through the calls). */
  private waitHead: Call | undefined = undefined;
  private waitTail: Call | undefined = undefined;
  readonly secure: boolean;
  readonly requestOptions: http.RequestOptions;
  private readonly via: string | undefined;
  private readonly auth: string | undefined;
  /** Whether requestOptions carries TLS options (then it is spread into each request's options). */
  private readonly tls: boolean;

  constructor(url: URL, agent: http.Agent, limit: number, options: HttpTransportOptions) {
    this.secure = url.protocol === 'https:';
    this.limit = limit > 0 ? limit : Infinity;
    this.via = options.via;
    this.tls = this.secure && options.tls !== undefined;
    this.auth =
      url.username || url.password
        ? `Basic ${Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64')}`
        : undefined;
    this.requestOptions = {
      agent,
      method: 'POST',
      protocol: url.protocol,
      hostname: url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname,
      port: Number(url.port) || (this.secure ? 443 : 80),
      path: `${url.pathname}${url.search}`,
      // TLS options for the upstream's own handshake (a proxy agent takes them from the request);
      // without any, https verifies the certificate against the system CAs.
      ...(this.secure && options.tls ? options.tls : {}),
    };
  }

  send(request: UpstreamRequest): Promise<UpstreamResponse> {
    if (request.signal.aborted) return Promise.reject(new UpstreamCallError('aborted', 'call aborted', { sent: false }));
    if (this.closed) return Promise.reject(new UpstreamCallError('closed', 'transport closed', { sent: false }));
    if (request.budget?.budget.exhausted) return Promise.reject(overBudget(request.budget, 1, false));
    return new Promise<UpstreamResponse>((resolve, reject) => new Call(this, request, resolve, reject));
  }

  /** Starts the call now if fewer than `limit` calls hold a request, else queues it. */
  admit(call: Call): void {
    if (this.active < this.limit && !this.waitHead) {
      this.active += 1;
      call.start();
      return;
    }
    call.waiting = true;
    call.qprev = this.waitTail;
    if (this.waitTail) this.waitTail.qnext = call;
    else this.waitHead = call;
    this.waitTail = call;
  }

  /** Takes a call out of the queue (it started, or it ended while it waited). */
  unqueue(call: Call): void {
    const { qprev, qnext } = call;
    if (qprev) qprev.qnext = qnext;
    else this.waitHead = qnext;
    if (qnext) qnext.qprev = qprev;
    else this.waitTail = qprev;
    call.qprev = call.qnext = undefined;
    call.waiting = false;
  }

  /**
   * A call that held a request ended: the oldest waiting call starts in its place. Its request
   * waits in the agent until the ended call's socket is free (node frees it right after the
   * answer's end) or, when that socket was destroyed, until the agent opens another.
   */
  release(): void {
    this.active -= 1;
    if (this.closed) return; // close() fails the waiting calls next
    while (this.active < this.limit && this.waitHead) {
      const next = this.waitHead;
      this.unqueue(next);
      this.active += 1;
      next.start();
    }
  }

  /**
   * The options of one call's request, built as one literal of a fixed shape. node copies them
   * three times per request (ClientRequest twice, the agent once with its own options); the
   * spread of requestOptions this replaces was a fourth copy, measurably slower per call
   * (test/bench/README.md, 2026-11-27). With TLS options they are spread in as before.
   */
  options(request: UpstreamRequest): http.RequestOptions {
    const o = this.requestOptions;
    if (this.tls) return { ...o, headers: this.headers(request) };
    return { agent: o.agent, method: 'POST', protocol: o.protocol, hostname: o.hostname, port: o.port, path: o.path, headers: this.headers(request) };
  }

  /**
   * The request's headers, as an object: node, nock, OpenTelemetry (which copies and adds to
   * them) and proxy agents (which regenerate the head) all read them that way (node adds Host).
   */
  headers(request: UpstreamRequest): http.OutgoingHttpHeaders {
    // The parse stage only lets visible ASCII through; anything else would be refused by node.
    const id = visibleAscii.test(request.requestId) ? request.requestId : request.requestId.replace(/[^\x21-\x7e]/g, '');
    const headers: http.OutgoingHttpHeaders = {
      'User-Agent': 'omnigate',
      'Content-Type': 'application/json',
      Accept: 'application/json',
      'X-Request-Id': id,
      'Content-Length': request.payload.raw.length,
    };
    if (this.auth) headers.Authorization = this.auth;
    if (this.via) headers.Via = request.via ? `${request.via}, ${this.via}` : this.via;
    return headers;
  }
}

/** The Call of a ClientRequest (the handlers below are shared, not closures per call). */
const kCall = Symbol('omnigate.call');
type CallRequest = http.ClientRequest & { [kCall]: Call };
type CallResponse = http.IncomingMessage & { req: CallRequest };

type AnySocket = Duplex & { connecting?: boolean; encrypted?: boolean; getPeerCertificate?: () => object | null };

function onSocket(this: CallRequest, socket: AnySocket): void {
  const call = this[kCall];
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
class Call {
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

  constructor(
    private readonly client: Client,
    readonly request: UpstreamRequest,
    private readonly resolve: (response: UpstreamResponse) => void,
    private readonly reject: (err: Error) => void,
  ) {
    this.next = client.live;
    if (client.live) client.live.prev = this;
    client.live = this;
    this.timer = setTimeout(onTimeout, request.timeoutMs, this);
    request.signal.addEventListener('abort', this.onAbort, { once: true });
    client.admit(this);
  }

  /** Creates and sends the call's request (the client admitted it). */
  start(): void {
    this.started = true;
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
      this.finish(new UpstreamCallError('http-status', `HTTP ${status}`));
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
    if (this.waiting) this.client.unqueue(this);
    else if (this.started) this.client.release();
    if (err) {
      // A failed call's bytes are dropped: they go back to the budget.
      if (this.charged > 0) this.request.budget?.give(this.charged);
      this.reject(err);
    } else {
      this.resolve({ body: body! });
    }
  }
}
