/**
 * The JSON-RPC error handler: any error → `{"jsonrpc":"2.0","id":…,"error":{code,message,data?}}`
 * with the error's HTTP status (200 for the errors a node sends itself, -32602 and -32601;
 * 4xx/5xx for what only a gateway says), Content-Type application/json, X-Request-Id and (for a request
 * that reached the pipeline) the CORS headers. The id is the client's when it could be read (a
 * batch's error has id null). An error that is not one of ours is logged with its stack and answered as a -32603 internal error without internals.
 * A body parser's error (express.json(), body-parser: `err.type` 'entity.parse.failed',
 * 'entity.too.large', …) is a client's mistake, answered -32700, -32006 or -32600 with its
 * status: mount the handler on the RPC paths after your routes, `app.use('/gateway', rpcErrorHandler())`.
 * Exactly four parameters: connect and express pick error handlers by arity.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Next } from '../lib/pipeline/compose.js';
import { findContext } from '../lib/pipeline/context.js';
import { newRequestId } from '../lib/pipeline/request-id.js';
import { asGatewayError, BodyTooLargeError, errorText, GatewayError, ParseError } from '../lib/errors.js';
import { corsHeaders, Header, wantsCors } from '../lib/pipeline/headers.js';
import { RpcCode } from '../lib/jsonrpc/codes.js';
import type { RpcId } from '../lib/jsonrpc/types.js';
import { silentLogger, type Logger } from '../lib/log.js';

export type ErrorMiddleware = (err: unknown, req: IncomingMessage, res: ServerResponse, next: Next) => void;

export function rpcErrorHandler(options: { logger?: Logger } = {}): ErrorMiddleware {
  const logger = options.logger ?? silentLogger;
  return function rpcErrorHandler(err, req, res, next) {
    if (res.headersSent) return next(err);
    const ctx = findContext(req);
    const log = ctx?.log ?? logger;
    const fromParser = err instanceof GatewayError ? undefined : bodyParserError(err, req);
    const error = fromParser ?? asGatewayError(err, log);
    if (fromParser) log.info({ code: error.code, status: error.status, message: error.message }, 'request refused');
    if (ctx) ctx.errorCode = error.code;
    const single = ctx?.payload && !ctx.payload.batch ? ctx.payload.calls[0] : undefined;
    // A batch refused as a whole (too large, an unknown chain, …) has no one id to echo.
    const id: RpcId | null = ctx?.payload?.batch ? null : (error.rpcId ?? single?.id ?? null);
    // The call's id as the client wrote it (`1.0` stays `1.0`): from the call, or from the error
    // when the refusal came before there was a call (a body nested too deep).
    const written = single?.idText !== undefined && id === single.id ? single.idText
      : error.rpcIdText !== undefined && id === error.rpcId ? error.rpcIdText : undefined;
    const text = errorText(error, written ?? JSON.stringify(id));
    res.statusCode = error.status;
    // An answer of the balancer (the request reached the pipeline): readable from a browser too.
    if ((ctx || fromParser) && wantsCors(req)) for (let i = 0; i < corsHeaders.length; i += 2) res.setHeader(corsHeaders[i]!, corsHeaders[i + 1]!);
    for (const [name, value] of Object.entries(error.headers ?? {})) res.setHeader(name, value);
    res.setHeader('Content-Type', 'application/json');
    res.setHeader('Content-Length', Buffer.byteLength(text));
    res.setHeader(Header.RequestId, ctx?.requestId ?? newRequestId());
    if (error.status < 300) {
      // An error a node would send itself (-32602, -32601), with 200 as a node sends it:
      // an answer nothing confirmed, so X-Required-Confirmations is 1, as it always is when X-Confirmable is false.
      res.setHeader(Header.Confirmable, 'false');
      res.setHeader(Header.RequiredConfirmations, '1');
    } else {
      if (ctx?.confirmable !== undefined) res.setHeader(Header.Confirmable, String(ctx.confirmable));
      if (ctx?.required !== undefined) res.setHeader(Header.RequiredConfirmations, String(ctx.required));
    }
    res.end(text);
  };
}

/**
 * The JSON-RPC error for an error of a body parser that ran before the pipeline (body-parser's
 * http-errors carry a string `type` and a 4xx `status`); undefined for any other error.
 */
function bodyParserError(err: unknown, req: IncomingMessage): GatewayError | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const { type, status, message, limit } = err as { type?: unknown; status?: unknown; message?: unknown; limit?: unknown };
  if (typeof type !== 'string' || typeof status !== 'number' || status < 400 || status > 499) return undefined;
  const detail = typeof message === 'string' ? message : type;
  if (type === 'entity.parse.failed') return new ParseError(`Parse error: the body is not valid JSON (${detail})`, { id: null, cause: err });
  if (type === 'entity.too.large') {
    req.resume(); // drain what the client still sends, so it can read the 413
    const bytes = typeof limit === 'number' ? ` of ${limit} bytes` : '';
    return new BodyTooLargeError(`Request body too large: over the body parser's limit${bytes} (e.g. express.json({ limit }))`, {
      headers: { Connection: 'close' },
      id: null,
      cause: err,
    });
  }
  return new GatewayError('OMNI_ERR_INVALID_REQUEST', RpcCode.InvalidRequest, status, `Invalid request: ${detail}`, { id: null, cause: err });
}
