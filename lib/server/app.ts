/**
 * The `omnigate serve` application: one connect app with the balancer routes, GET / (an index
 * of the routes, lib/server/home.ts), the indexer API when one is given, a JSON 404 for anything else
 * and the JSON-RPC error handler, on a Node HTTP server with bounded header, request and
 * keep-alive times. With an admin listener (`server.admin`), a second server answers /health,
 * /ready, /chains and /metrics, and the main one answers /chains and /metrics 404.
 */
import http from 'node:http';
import net, { type AddressInfo, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import connect from 'connect';
import type { OmnigateConfig } from '../../config/schema.js';
import { rpcErrorHandler, rpcPipeline, type RpcPipeline, type RpcPipelineDeps } from '../../middleware/index.js';
import { routeOf, shownPath } from '../pipeline/route.js';
import { pathOf } from '../pipeline/url.js';
import type { Middleware } from '../pipeline/compose.js';
import { InvalidRequestError, RouteNotFoundError } from '../errors.js';
import { indexerNotFound } from '../indexer/http/not-found.js';
import { homeRoute } from './home.js';
import { afterAnswers, takingTurns } from './turns.js';
import { originTargets } from './target.js';
import { RpcCode } from '../jsonrpc/codes.js';
import { silentLogger, type Logger } from '../log.js';
import type { ReadinessCheck } from '../ops/readiness.js';

export interface ServeOptions {
  /** The address to listen on, over the config's `host` (absent both: every interface, Node's default). */
  host?: string;
  /** The admin listener, over the config's `server.admin` (absent both: /chains and /metrics on the main port). */
  admin?: { port: number; host: string };
  /** Poll heads on heads.intervalMs (default true); the probes record heads either way. */
  headTracking?: boolean;
  /** Probe the upstreams every refreshInterval (default true); a cluster's workers leave it to the primary. */
  healthChecks?: boolean;
  /** The finalized route's block shared with the other workers of a cluster (rpcPipeline's deps). */
  sharedFinalized?: RpcPipelineDeps['sharedFinalized'];
  /** What GET /metrics serves instead of this process's registry (a cluster's aggregated metrics). */
  metricsText?: () => Promise<string>;
  /** The loop tokens' seed shared by a cluster's processes (rpcPipeline's deps). */
  hopSeed?: Buffer;
  /** The client keys' budgets kept by a cluster's primary when no Redis keeps them (rpcPipeline's deps). */
  creditStore?: RpcPipelineDeps['creditStore'];
  logger?: Logger;
  /** Extra handlers mounted after the balancer (the indexer API). */
  extraHandlers?: Middleware[];
  /** Called on close(), after the server stopped (e.g. close the database). */
  onClose?: () => Promise<void>;
  /** Called with the registry served at GET /metrics, to add gauges to it (the indexer's: lib/indexer/ops/metrics.ts). */
  onMetricsRegistry?: (registry: RpcPipeline['metrics']['registry']) => void;
  /** Extra checks for GET /ready (the indexer's database: `watchDatabase(db)`). */
  readiness?: readonly ReadinessCheck[];
  /** List the indexer's routes at GET / (set when extraHandlers serve the indexer API). */
  indexer?: boolean;
}

export interface RunningServer {
  server: http.Server;
  rpc: RpcPipeline;
  /** The port actually bound (useful with port 0). */
  port: number;
  /** The admin listener's server and bound port, when there is one. */
  admin?: { server: http.Server; port: number };
  /** Stops accepting, ends idle keep-alive connections, closes upstreams. */
  close(): Promise<void>;
}

/** What the admin listener serves; the main port answers the last two 404 when there is one. */
const adminPaths = new Set(['/health', '/ready', '/chains', '/metrics']);
const movedPaths = new Set(['/chains', '/metrics']);
const routePath = (req: http.IncomingMessage) => pathOf(req).replace(/(.)\/$/, '$1');

/** On the main port when an admin listener serves them: /chains and /metrics are not routes here. */
const movedToAdmin: Middleware = (req, _res, next) => {
  if (!movedPaths.has(routePath(req))) return next();
  req.resume();
  next(new RouteNotFoundError(`No route for ${req.method} ${shownPath(req)}: it is served on the admin address (server.admin)`, { id: null }));
};

/** On the admin listener: its four routes, a JSON 404 for anything else (no RPC there). */
const adminOnly: Middleware = (req, _res, next) => {
  if (adminPaths.has(routePath(req))) return next();
  req.resume();
  next(new RouteNotFoundError(`No route for ${req.method} ${shownPath(req)} on the admin address (it serves /health, /ready, /chains, /metrics)`, { id: null }));
};

export function createApp(config: OmnigateConfig, options: ServeOptions = {}) {
  const logger = options.logger ?? silentLogger;
  const rpc = rpcPipeline(config, {
    logger,
    processMetrics: true,
    ...(options.readiness ? { readiness: options.readiness } : {}),
    ...(options.sharedFinalized ? { sharedFinalized: options.sharedFinalized } : {}),
    ...(options.metricsText ? { metricsText: options.metricsText } : {}),
    ...(options.hopSeed ? { hopSeed: options.hopSeed } : {}),
    ...(options.creditStore ? { creditStore: options.creditStore } : {}),
  });
  options.onMetricsRegistry?.(rpc.metrics.registry);
  const admin = options.admin ?? config.server.admin;
  const app = connect();
  app.use(hostRequired as connect.NextHandleFunction);
  if (admin) app.use(movedToAdmin as connect.NextHandleFunction);
  app.use(rpc as connect.NextHandleFunction);
  app.use(homeRoute({ chains: Object.keys(config.chains), indexer: options.indexer ?? false, admin: admin !== undefined }) as connect.NextHandleFunction);
  for (const handler of options.extraHandlers ?? []) app.use(handler as connect.NextHandleFunction);
  // The indexer passes /api paths it does not serve on (a host app may own some); here they are its 404.
  if (options.extraHandlers?.length) app.use(indexerNotFound() as connect.NextHandleFunction);
  app.use(((req, _res, next) => next(new RouteNotFoundError(`No route for ${req.method} ${shownPath(req)}`, { id: null }))) as connect.NextHandleFunction);
  app.use(rpcErrorHandler({ logger }) as connect.ErrorHandleFunction);
  // The admin listener's app: the same pipeline's service routes (the same access door), nothing else.
  let adminApp: connect.Server | undefined;
  if (admin) {
    adminApp = connect();
    adminApp.use(hostRequired as connect.NextHandleFunction);
    adminApp.use(adminOnly as connect.NextHandleFunction);
    adminApp.use(rpc as connect.NextHandleFunction);
    adminApp.use(rpcErrorHandler({ logger }) as connect.ErrorHandleFunction);
  }
  return { app, rpc, adminApp, admin };
}

export async function startServer(config: OmnigateConfig, port: number, options: ServeOptions = {}): Promise<RunningServer> {
  const { app, rpc, adminApp, admin } = createApp(config, options);
  if (options.healthChecks !== false) rpc.startHealthChecks();
  // verify: auto chains: proofs once their self-check passed (lib/prove/self-check.ts); a
  // cluster's workers get the primary's results instead.
  if (options.healthChecks !== false) rpc.startProofChecks();
  // The head tracker polls every upstream every heads.intervalMs; `omnigate chainlist` (thousands of
  // public URLs) leaves it off and relies on the probes' heads (refreshInterval).
  if (options.headTracking !== false) rpc.startHeadTracking();
  const server = httpServer(config, app);
  // Connections, and the answers in progress on each (from a request's head to the end of its
  // answer; several on a pipelined connection): a connection's set lives as long as it does.
  const sockets = new Set<Socket>();
  const inFlight = new Map<Socket, Set<http.ServerResponse>>();
  const busy = (socket: Socket): boolean => (inFlight.get(socket)?.size ?? 0) > 0;
  // One listener for every answer (its request's socket read off it), not a closure per request.
  function answerClosed(this: http.ServerResponse): void {
    inFlight.get(this.req.socket as Socket)?.delete(this);
  }
  let closing = false;
  /** How long an idle connection is kept once the server closes (see close()). */
  const idleGraceMs = Math.min(1_000, config.server.keepAliveTimeoutMs);
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => {
      sockets.delete(socket);
      inFlight.delete(socket);
    });
  });
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const socket = req.socket;
    let answers = inFlight.get(socket);
    if (!answers) inFlight.set(socket, (answers = new Set()));
    answers.add(res);
    if (closing && !res.headersSent) res.setHeader('Connection', 'close');
    // ('close' comes once: on, not once, which would wrap the listener in a closure per request)
    res.on('close', answerClosed);
  });
  await listen(server, port, options.host ?? config.host);
  const adminServer = adminApp && admin ? httpServer(config, adminApp) : undefined;
  if (adminServer && admin) {
    await listen(adminServer, admin.port, admin.host).catch((err: unknown) => {
      server.close();
      // (the CLI's message names the admin port's flag)
      throw Object.assign(err as Error, { admin: true });
    });
  }
  return {
    server,
    rpc,
    port: (server.address() as AddressInfo).port,
    ...(adminServer && { admin: { server: adminServer, port: (adminServer.address() as AddressInfo).port } }),
    /**
     * Stops accepting connections, lets in-flight requests finish, then closes upstream pools,
     * sockets and the database. A busy connection is closed once its answers are written: they
     * say `Connection: close` (Node's close() leaves a connection that turns idle later open for
     * keepAliveTimeoutMs, its answer saying keep-alive). A connection with no request in the app
     * (an idle kept-alive one, or a request head not yet complete) is given a short grace
     * (`idleGraceMs`): a request a load balancer writes on it in that instant is answered, with
     * `Connection: close`, instead of meeting a reset it cannot safely retry (a POST already
     * written); then it is closed. (Node's own server.close() closes idle connections at once:
     * the listening socket is closed first, the idle connections after the grace.)
     */
    async close() {
      closing = true;
      // The admin listener: no new scrape; one in progress ends, then its connections are closed.
      const adminClosed = adminServer && new Promise<void>((resolve) => adminServer.close(() => resolve()));
      adminServer?.closeIdleConnections();
      await new Promise<void>((resolve) => {
        // Stop accepting; resolves once every connection has ended.
        net.Server.prototype.close.call(server, () => resolve());
        for (const socket of sockets) {
          const answers = inFlight.get(socket);
          // the last answer of a pipelined connection ends it: the ones before it are written first
          if (answers && answers.size > 0) endsConnection([...answers].at(-1)!, socket, () => busy(socket));
        }
        const grace = setTimeout(() => {
          for (const socket of sockets) if (!busy(socket)) socket.destroy();
          // (Node's own close(): its connection-checking timer stops; the listening socket is closed already)
          server.close();
        }, idleGraceMs);
        grace.unref();
      });
      adminServer?.closeAllConnections();
      await adminClosed;
      await rpc.close();
      await options.onClose?.();
    },
  };
}

/**
 * A Node HTTP server for `app` with the config's header, request and keep-alive times. Node
 * checks the header and request timeouts in a sweep every connectionsCheckingInterval (30 s by
 * default), so a 2 s headersTimeoutMs acted after up to 30 s: sweep at a quarter of the shorter
 * timeout (250 ms at least), so each acts within 25 % of its configured time.
 */
function httpServer(config: OmnigateConfig, app: http.RequestListener): http.Server {
  const requestTimeout = config.server.requestTimeoutMs || config.timeouts.requestMs + 30_000;
  const server = http.createServer(
    {
      connectionsCheckingInterval: Math.min(30_000, Math.max(250, Math.floor(Math.min(config.server.headersTimeoutMs, requestTimeout) / 4))),
      // Node answers an HTTP/1.1 request without Host with a bare 400 of its own: hostRequired does, in JSON.
      requireHostHeader: false,
    },
    // Pipelined requests of one connection enter the app a few at a time (turns.ts), each with
    // its target in origin form (target.ts: an absolute-form target is served by its path).
    takingTurns(originTargets(app)),
  );
  (server as LimitedServer)[kBodyBytes] = config.limits.bodyBytes;
  server.headersTimeout = config.server.headersTimeoutMs;
  server.requestTimeout = requestTimeout;
  server.keepAliveTimeout = config.server.keepAliveTimeoutMs;
  server.on('clientError', answerClientError);
  server.on('checkExpectation', refuseExpectation);
  server.on('checkContinue', continueUnlessTooLarge);
  server.on('connect', refuseConnect);
  return server;
}

/**
 * `Expect: 100-continue` (curl sends it before a body over 1 MB): Node would say 100 Continue to
 * every such request, and a client would upload a body the parse stage then refuses (413). An
 * RPC call whose declared body is over `limits.bodyBytes` gets no 100 Continue: its 413 comes
 * first, and the client sends nothing (RFC 9110 10.1.1). Any other request is told to go on.
 */
function continueUnlessTooLarge(this: http.Server, req: http.IncomingMessage, res: http.ServerResponse): void {
  if (!(Number(req.headers['content-length']) > (this as LimitedServer)[kBodyBytes]! && routeOf(req) !== undefined)) res.writeContinue();
  this.emit('request', req, res);
}

const kBodyBytes = Symbol('omnigate.bodyBytes');
type LimitedServer = http.Server & { [kBodyBytes]?: number };

/** Listens on `port` at `host` (absent: every interface); rejects with the listen error (EADDRINUSE…). */
function listen(server: http.Server, port: number, host: string | undefined): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    const listening = () => {
      server.off('error', reject);
      resolve();
    };
    if (host === undefined) server.listen(port, listening);
    else server.listen(port, host, listening);
  });
}

/**
 * The server is closing: the answer `res`, the last in progress on `socket`, says
 * `Connection: close` when its head is still to be written; written already, the connection is
 * ended once it is done, unless `stillBusy()` (a request that came after it: it says close).
 */
function endsConnection(res: http.ServerResponse, socket: Socket, stillBusy: () => boolean): void {
  if (!res.headersSent) return void res.setHeader('Connection', 'close');
  res.once('close', () => {
    if (!stillBusy()) socket.end();
  });
}

/**
 * An HTTP/1.1 request must carry a Host header, one, with a host in it (RFC 9112, 3.2): without
 * one it is refused with a JSON-RPC error (400) and the connection closed, as Node would (with an
 * empty body); so is a request with two Host lines (Node keeps the first: a proxy in front may
 * have read the last) or with a value no host is written with.
 */
const hostRequired: Middleware = (req, _res, next) => {
  const host = req.headers.host;
  if (host === undefined ? req.httpVersionMajor !== 1 || req.httpVersionMinor < 1 : !notAHost.test(host) && hostLines(req.rawHeaders) === 1) return next();
  req.resume(); // the body is not read: drained, so the client reads the 400
  const why = host === undefined ? 'an HTTP/1.1 request needs a Host header' : hostLines(req.rawHeaders) > 1 ? 'a request has one Host header, not several' : 'the Host header holds no host';
  next(new InvalidRequestError(`Invalid request: ${why}`, { id: null, headers: { Connection: 'close' } }));
};

/** Bytes no host (a name, an IP address, `[v6]`, and a port) is written with. */
const notAHost = /[\s/?#@"<>\\{}|^`]/;

/** The request's Host header lines (Node keeps the first of several in `req.headers`). */
function hostLines(raw: readonly string[]): number {
  let n = 0;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    if (name.length === 4 && name.toLowerCase() === 'host') n++;
  }
  return n;
}

/** A raw answer with a JSON-RPC error body (id null), after which the connection is closed. */
function rawErrorAnswer(status: string, code: number, message: string, extra = ''): string {
  const body = JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } });
  return `HTTP/1.1 ${status}\r\n${extra}Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`;
}

/**
 * An `Expect:` other than `100-continue`: Node would answer a bare 417 without a body; the
 * same status with a JSON-RPC error. Its body is not read: the connection is closed after it.
 */
function refuseExpectation(req: http.IncomingMessage, res: http.ServerResponse): void {
  const body = JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: RpcCode.InvalidRequest, message: 'Invalid request: only Expect: 100-continue is understood' } });
  res.shouldKeepAlive = false;
  res.writeHead(417, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), Connection: 'close' }).end(body);
  req.socket.destroySoon();
}

/**
 * A CONNECT request (a client taking omnigate for a proxy): Node hands its socket over and,
 * with no listener, destroys it without a word; answered 405 with a JSON-RPC error instead.
 */
function refuseConnect(_req: http.IncomingMessage, socket: Duplex): void {
  socket.on('error', destroyOnError);
  socket.end(rawErrorAnswer('405 Method Not Allowed', RpcCode.MethodNotAllowed, 'Method not allowed: CONNECT; omnigate is no proxy: JSON-RPC calls are POSTed', 'Allow: POST, OPTIONS\r\n'));
}

function destroyOnError(this: Duplex): void {
  this.destroy();
}

/**
 * A request Node's HTTP parser refuses (bad bytes in the path, headers too large, a client too
 * slow to send its request) never reaches the app; Node would answer a bare 400. Answer a
 * JSON-RPC error body instead, so every answer of omnigate is JSON.
 */
function answerClientError(err: NodeJS.ErrnoException, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const status =
    err.code === 'HPE_HEADER_OVERFLOW' ? '431 Request Header Fields Too Large' : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? '408 Request Timeout' : '400 Bad Request';
  const answer = rawErrorAnswer(status, RpcCode.InvalidRequest, `Bad HTTP request (${err.code ?? 'malformed'})`);
  // After the answers of the connection's requests before it: written now, it would be read as
  // the answer to the first of them (a pipelining client matches answers by their order), whose
  // own answer would be lost with the connection.
  afterAnswers(socket as Socket, () => (socket.writable ? socket.end(answer) : socket.destroy()));
}
