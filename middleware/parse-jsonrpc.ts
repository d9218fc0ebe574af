/**
 * Stage 1, parse. Gives the request its id, reads the body (bounded), parses and validates the
 * JSON-RPC payload, then checks the route parameters (chain id, `<n>`) so that their errors
 * can already echo the client's id. With `access:`, the client's key is resolved in between
 * (options.identify), so that a client refused for its key learns nothing of the chains.
 * A request that carries one of the gateway's own Via tokens is its own upstream call come back:
 * it is refused at once (lib/upstream/loop.ts).
 * Reads: req   Writes: ctx.requestId, ctx.log, ctx.via, ctx.payload, ctx.chain, ctx.confirmationsOverride, ctx.finalizedRoute (ctx.access, through options.identify)
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Middleware, Next } from '../lib/pipeline/compose.js';
import { initContext, type RpcContext } from '../lib/pipeline/context.js';
import {
  BodyTooLargeError,
  InvalidRequestError,
  InvalidChainIdError,
  InvalidConfirmationsError,
  MethodNotAllowedError,
  NotEnoughUpstreamsError,
  GatewayError,
  RouteNotFoundError,
  UnknownChainError,
  UpstreamBudgetError,
} from '../lib/errors.js';
import { ByteBudget, type BudgetAccount } from '../lib/upstream/budget.js';
import { RpcCode } from '../lib/jsonrpc/codes.js';
import { parsePayload } from '../lib/jsonrpc/parse.js';
import { lazyChild, silentLogger, type Logger } from '../lib/log.js';
import { newRequestId } from '../lib/pipeline/request-id.js';
import { canonicalChainId, parseConfirmations, routeOf, shownPath, shownRouteValue } from '../lib/pipeline/route.js';
import { hopTokens, loopError, viaEntry } from '../lib/upstream/loop.js';
import type { Registry } from '../lib/upstream/registry.js';

export interface ParseJsonRpcOptions {
  registry: Registry;
  bodyLimit: number;
  maxBatchSize: number;
  /** Deepest JSON nesting accepted in a body (limits.jsonDepth; default 256). */
  maxDepth?: number;
  logger?: Logger;
  /**
   * Request body bytes held at once by all requests of this stage (the pipeline: as many as
   * `limits.bufferedBytes`, a budget apart from the upstream answers'): each body is charged as it
   * arrives and given back when its answer is done (it is forwarded upstream until then). A body
   * that would pass it is refused, -32013 (503). Absent: no limit but `bodyLimit` per request.
   */
  bodyBudget?: number;
  /**
   * Who the client is (middleware/authorize.ts identifyClient, with `access:`): called once the
   * payload is read, before the route's chain and `<n>` are checked, so that a client without a
   * valid key learns nothing of the chains; its refusal (401) echoes the client's id.
   */
  identify?: (req: IncomingMessage, ctx: RpcContext) => Error | undefined;
}

/** A client's X-Request-Id is kept when it is 1–200 visible ASCII characters; else a UUID is made. */
export function pickRequestId(header: string | string[] | undefined): string {
  const value = Array.isArray(header) ? header[0] : header;
  return value && /^[\x21-\x7e]{1,200}$/.test(value) ? value : newRequestId();
}

export function parseJsonRpc(options: ParseJsonRpcOptions): Middleware {
  if (!(options.bodyLimit > 0)) throw new TypeError('parseJsonRpc: bodyLimit must be a positive number of bytes');
  const logger = options.logger ?? silentLogger;
  const budget = options.bodyBudget === undefined ? undefined : new ByteBudget(options.bodyBudget);
  // Callbacks rather than async/await: this runs for every request, and the promises showed in
  // the N=1 profile.
  return function parseJsonRpc(req, res, next) {
    const requestId = pickRequestId(req.headers['x-request-id']);
    const ctx = initContext(req, requestId, lazyChild(logger, { reqId: requestId }));
    const hops = hopTokens(req.headers.via);
    if (hops.length > 0) {
      // Our own call come back (or a long gateway chain): refused before the body is read.
      const loop = loopError(hops, options.registry, logger);
      if (loop) {
        req.resume(); // the body is not read: drained, so the caller reads the 508
        return next(loop);
      }
      ctx.via = hops.map(viaEntry).join(', ');
    }
    if (req.method !== 'POST') {
      // (a WebSocket handshake: a wallet's wss:// setting pointed here)
      const ws = req.headers.upgrade !== undefined && /websocket/i.test(req.headers.upgrade) ? ' (omnigate serves no WebSocket: calls over HTTP only)' : '';
      return next(
        new MethodNotAllowedError(`Method not allowed: ${req.method} ${shownPath(req)}; JSON-RPC calls are POSTed${ws}`, {
          headers: { Allow: 'POST, OPTIONS' },
          id: null,
        }),
      );
    }
    readBody(req, res, ctx, options, budget, next);
  };
}

/** The body read: the payload parsed, the client identified, the route read; then `next`. (A function shared by every request.) */
function bodyRead(req: IncomingMessage, ctx: RpcContext, options: ParseJsonRpcOptions, next: Next, raw: Buffer): void {
  let refused: Error | undefined;
  try {
    ctx.payload = parsePayload(raw, { maxBatchSize: options.maxBatchSize, maxDepth: options.maxDepth });
    refused = options.identify?.(req, ctx);
    if (refused === undefined) readRoute(req, ctx, options.registry);
  } catch (e) {
    return next(e);
  }
  next(refused);
}

/** The route's chain id and `<n>`, checked after the body so that their errors echo the client's id. */
function readRoute(req: IncomingMessage, ctx: RpcContext, registry: Registry): void {
  const route = routeOf(req);
  if (!route) throw new RouteNotFoundError(`No route for ${shownPath(req)}`);
  const chainId = canonicalChainId(route.chainId);
  if (chainId === undefined) {
    throw new InvalidChainIdError(`Invalid chain id ${shownRouteValue(route.chainId)}: use a non-negative decimal integer, as in /rpc/1`);
  }
  if (route.confirmations !== undefined) {
    const n = parseConfirmations(route.confirmations);
    if (n === undefined) {
      throw new InvalidConfirmationsError(
        `Invalid confirmations ${shownRouteValue(route.confirmations)}: use a positive decimal integer, as in /confirmations/2/rpc/${chainId.length <= 12 ? chainId : '1'}`,
      );
    }
    ctx.confirmationsOverride = n;
  }
  if (route.finalized) ctx.finalizedRoute = true;
  const chain = registry.chains.get(chainId);
  if (!chain) {
    throw new UnknownChainError(`Unknown chain ${chainId.length <= 12 ? chainId : shownRouteValue(chainId)}: configured chains are ${[...registry.chains.keys()].join(', ')}`);
  }
  // An `<n>` longer than any count of upstreams may be a key written in its place: refused here,
  // never shown, nor kept as the count asked (which the -32003 message, its data, the
  // X-Required-Confirmations header and the access log would show, rounded).
  if (route.confirmations !== undefined && route.confirmations.length > 12) {
    ctx.confirmationsOverride = undefined;
    throw new NotEnoughUpstreamsError(`Not enough upstreams: ${shownRouteValue(route.confirmations)} confirmations asked, `
      + `chain ${chain.id} has ${chain.providerCount} provider${chain.providerCount === 1 ? '' : 's'}`);
  }
  ctx.chain = chain;
}

/**
 * Reads the body, refusing more than `options.bodyLimit` bytes, then hands it to bodyRead (or an
 * error to `next`), exactly once. A host app that already parsed JSON (express.json()) leaves
 * `req.body`; it is re-serialized then, since the bytes are gone (and with them the exact digits
 * of a number beyond 2^53 in params), and the limit applies to the re-serialized bytes.
 */
function readBody(req: IncomingMessage, res: ServerResponse, ctx: RpcContext, options: ParseJsonRpcOptions, budget: ByteBudget | undefined, next: Next): void {
  const limit = options.bodyLimit;
  const parsed = (req as { body?: unknown }).body;
  if (parsed !== undefined && req.readableEnded) {
    const bytes = Buffer.isBuffer(parsed) ? parsed : Buffer.from(typeof parsed === 'string' ? parsed : JSON.stringify(parsed));
    return bytes.length > limit ? next(tooLarge(req, limit)) : bodyRead(req, ctx, options, next, bytes);
  }
  // (checked here, on the bytes as sent: a host app's parser, express.json(), decodes gzip itself)
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') return next(compressed(req, encoding));
  const declared = Number(req.headers['content-length']);
  if (declared > limit) return next(tooLarge(req, limit));
  let account: BudgetAccount | undefined;
  // (a client already gone: its answer's 'close' has come, and would not give back what is charged)
  if (budget !== undefined && req.socket?.destroyed !== true) {
    // A declared body that cannot fit is refused before it is read; any body is charged as it comes.
    if (budget.used + (declared > 0 ? declared : 0) > budget.limit) return next(noRoom(req, budget));
    account = budget.open();
    (res as Charged)[kAccount] = account;
    res.on('close', bodyGiven);
  }
  // Events rather than for-await: leaving a for-await early destroys the socket, and the client
  // would never read the 413. The listeners are shared functions (this: the request) reading
  // the request's reader, rather than closures made for each request.
  (req as Reading)[kReader] = { limit, ctx, options, next, chunks: [], size: 0, account };
  req.on('data', onBodyData);
  req.on('end', onBodyEnd);
  req.on('error', onBodyError);
  req.on('aborted', onBodyError);
}

/** One body being read: what readBody's listeners share, and what bodyRead then needs. */
interface BodyReader {
  limit: number;
  ctx: RpcContext;
  options: ParseJsonRpcOptions;
  next: Next;
  chunks: Buffer[];
  size: number;
  /** The body's charge to the stage's budget of body bytes, when there is one. */
  account: BudgetAccount | undefined;
}
const kReader = Symbol('omnigate.bodyReader');
type Reading = IncomingMessage & { [kReader]?: BodyReader };

/** The answer of a request whose body is charged: its account, closed when the answer is done. */
const kAccount = Symbol('omnigate.bodyAccount');
type Charged = ServerResponse & { [kAccount]?: BudgetAccount };

/** An answer done (written, or its client gone): its request's body bytes go back to the budget. */
function bodyGiven(this: Charged): void {
  this[kAccount]?.close();
}

/** The bodies being read and held fill the budget: refused (drained), 503 with Retry-After. */
function noRoom(req: IncomingMessage, budget: ByteBudget): Error {
  req.resume();
  return new UpstreamBudgetError('Byte budget exhausted: the request bodies held by the requests in flight reach limits.bufferedBytes; try again shortly', {
    data: { bufferedBytes: budget.limit, inUse: budget.used },
    headers: { 'Retry-After': '1', Connection: 'close' },
    id: null,
  });
}

/** A body sent compressed: refused before it is read (drained), 415 saying which encoding is read (RFC 9110 15.5.16). */
function compressed(req: IncomingMessage, encoding: string): Error {
  req.resume();
  return new GatewayError('OMNI_ERR_PARSE', RpcCode.ParseError, 415, `Parse error: the body is sent with Content-Encoding ${JSON.stringify(encoding.slice(0, 40))}; omnigate reads JSON sent as is (no compression)`, {
    id: null,
    headers: { 'Accept-Encoding': 'identity' },
  });
}

function tooLarge(req: IncomingMessage, limit: number): Error {
  req.resume(); // drain what the client still sends, so it can read the 413
  return new BodyTooLargeError(`Request body too large: the limit is ${limit} bytes (limits.bodyBytes)`, {
    headers: { Connection: 'close' },
    id: null,
  });
}

/**
 * The body read or refused: the reader is taken off the request, so that bodyRead or `next` is
 * called once. The listeners stay (a request read to its end has no more 'data' or 'end' to give,
 * and each listener does nothing once its request's reader is gone): four removals per request
 * saved. A refused body's 'data' listener goes, so that what the client still sends is drained,
 * not buffered.
 */
function finishBody(req: Reading): BodyReader | undefined {
  const reader = req[kReader];
  req[kReader] = undefined;
  return reader;
}

function onBodyData(this: Reading, chunk: Buffer): void {
  const reader = this[kReader];
  if (reader === undefined) return;
  reader.size += chunk.length;
  if (reader.size > reader.limit) {
    finishBody(this);
    this.off('data', onBodyData);
    reader.next(tooLarge(this, reader.limit));
  } else if (reader.account !== undefined && !reader.account.take(chunk.length)) {
    finishBody(this);
    this.off('data', onBodyData);
    reader.next(noRoom(this, reader.account.budget));
  } else reader.chunks.push(chunk);
}

function onBodyEnd(this: Reading): void {
  const reader = finishBody(this);
  if (reader === undefined) return;
  const { chunks, size } = reader;
  bodyRead(this, reader.ctx, reader.options, reader.next, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
}

// The client went away mid-body (an 'aborted' event, or an 'error' ECONNRESET): a refused
// request (logged at info, no stack), not an internal error; nobody reads the answer.
function onBodyError(this: Reading): void {
  finishBody(this)?.next(new InvalidRequestError('Invalid request: the client closed the connection while sending the body', { id: null }));
}
