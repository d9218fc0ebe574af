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
 * The agent: the caller's (`agent`: rpcPipeline's `agents`/`agent`), else agent.ts createAgent,
 * whose sockets count in the gateway's cap on upstream sockets (`sockets`, sockets.ts) when one
 * is given: a call that may need a new socket beyond the cap waits for one (within its timeout).
 */
import type http from 'node:http';
import { createAgent, defaultMaxSockets, type AgentSettings } from './agent.js';
import { UpstreamCallError, type CallSink, type Transport, type UpstreamRequest, type UpstreamResponse } from './contract.js';
import { basicAuth, promiseSink, quietSinceHealthCall, refusal, requestIdHeader, type UpstreamCall } from './call.js';
import { Admission } from './admission.js';
import { Call, type CallOwner } from './http-call.js';
import type { SocketPool, SocketSlot } from './sockets.js';

export interface HttpTransportOptions extends AgentSettings {
  /** The agent to use, as is (the caller sizes and closes it). */
  agent?: http.Agent;
  /** Our Via entry (loop.ts), sent after the request's own omnigate entries (`request.via`). */
  via?: string;
  /** The gateway's cap on upstream sockets (`limits.upstreamSockets`); not applied to a caller's `agent`. */
  sockets?: SocketPool;
  /**
   * The upstream's share of that cap (registry.ts shareOfCap): calls above it, up to
   * `maxSockets`, go only on room the cap lends (admission.ts), and its sockets beyond it are
   * reclaimed first. Without it, `maxSockets` calls.
   */
  share?: number;
}


export function createHttpTransport(rawUrl: string, options: HttpTransportOptions = {}): Transport {
  const url = new URL(rawUrl);
  const own = options.agent === undefined;
  const agent = options.agent ?? createAgent(url, options);
  const slot = own && options.sockets ? options.sockets.attach(agent, options.share) : undefined;
  const client = new Client(url, agent, options.maxSockets ?? (own ? defaultMaxSockets : agent.maxSockets), options, slot);
  if (slot !== undefined) slot.borrower = client;
  return {
    send: (request) => client.send(request),
    call: (request, sink) => client.call(request, sink),
    releaseKept: () => {
      if (slot !== undefined && quietSinceHealthCall(client)) slot.pool.closeIdleOf(slot);
    },
    close: async () => {
      client.closed = true;
      for (let call = client.live; call; call = client.live) call.fail(new UpstreamCallError('closed', 'transport closed', { sent: call.sent }));
      if (own) agent.destroy();
    },
  };
}

class Client extends Admission<Call> implements CallOwner {
  /**
   * The calls in flight, as a list linked through the calls (close() fails them). Not a Set: a
   * Set that every call enters and leaves made its calls, and all they hold (request, answer,
   * socket buffers), survive young GCs into the old generation: more CPU per call and more full
   * GCs (figures in test/bench/README.md, "N=1 path").
   */
  live: UpstreamCall | undefined = undefined;
  /**
   * Calls that hold a ClientRequest, at most `limit`; the others wait in the queue below, as a
   * Call and nothing more. Queued in node's Agent instead, each waiting call held a ClientRequest
   * with its head and body for as long as it waited, long enough under load to be promoted into
   * the old generation: more CPU per call and more memory (figures in test/bench/README.md,
   * "RSS at 500 connections").
   */
  readonly secure: boolean;
  readonly requestOptions: http.RequestOptions;
  /** This upstream's part of the gateway's socket cap (none: a caller's agent, or no cap). */
  readonly slot: SocketSlot | undefined;
  readonly pool: SocketPool | undefined;
  /** Calls other than health calls (`request.background`) made, and that count at the last health call's end. */
  traffic = 0;
  trafficSeen = 0;
  private readonly via: string | undefined;
  private readonly auth: string | undefined;
  /** Whether requestOptions carries TLS options (then it is spread into each request's options). */
  private readonly tls: boolean;

  constructor(url: URL, agent: http.Agent, limit: number, options: HttpTransportOptions, slot: SocketSlot | undefined) {
    super(limit, options.share, slot?.pool);
    this.secure = url.protocol === 'https:';
    this.slot = slot;
    this.pool = slot?.pool;
    this.via = options.via;
    this.tls = this.secure && options.tls !== undefined;
    this.auth = basicAuth(url);
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
    const headers: http.OutgoingHttpHeaders = {
      'User-Agent': 'omnigate',
      'Content-Type': 'application/json',
      Accept: 'application/json',
      'X-Request-Id': requestIdHeader(request.requestId),
      'Content-Length': request.payload.raw.length,
    };
    if (this.auth) headers.Authorization = this.auth;
    if (this.via) headers.Via = request.via ? `${request.via}, ${this.via}` : this.via;
    return headers;
  }
}
