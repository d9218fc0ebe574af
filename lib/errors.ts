/**
 * The one error catalogue of the balancer. Every error carries three identifiers:
 * `code` (a stable string for programs and logs), `rpcCode` (the JSON-RPC number sent to the
 * client) and `status` (the HTTP status; named `status` so connect's and express's
 * finalhandler honour it when a host app has no error handler of its own).
 */
import { RpcCode } from './jsonrpc/codes.js';
import type { RpcErrorObject } from './jsonrpc/types.js';
import type { Logger } from './log.js';

export interface GatewayErrorOptions {
  /** The client's JSON-RPC id, when the error is about a request whose id could be read. */
  id?: string | number | null;
  data?: unknown;
  headers?: Record<string, string>;
  cause?: unknown;
}

export class GatewayError extends Error {
  readonly code: string;
  readonly rpcCode: number;
  readonly status: number;
  /** Sent to the client as `error.data`. Never holds an unredacted URL. */
  readonly data: unknown;
  /** The client's id to echo (undefined: the error handler works it out from the request). */
  readonly rpcId: string | number | null | undefined;
  /** Extra response headers (finalhandler copies `err.headers` too). */
  readonly headers: Record<string, string> | undefined;
  /** Whether `message` may be shown to the client (false only for internal errors). */
  readonly expose: boolean;

  constructor(code: string, rpcCode: number, status: number, message: string, options: GatewayErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.rpcCode = rpcCode;
    this.status = status;
    this.data = options.data;
    this.rpcId = options.id;
    this.headers = options.headers;
    this.expose = status < 500 || rpcCode !== RpcCode.InternalError;
  }
}

type Sub = new (message: string, options?: GatewayErrorOptions) => GatewayError;

function define(name: string, code: string, rpcCode: number, status: number): Sub {
  const cls = class extends GatewayError {
    constructor(message: string, options?: GatewayErrorOptions) {
      super(code, rpcCode, status, message, options);
    }
  };
  Object.defineProperty(cls, 'name', { value: name });
  return cls;
}

export const ParseError = define('ParseError', 'OMNI_ERR_PARSE', RpcCode.ParseError, 400);
export const InvalidRequestError = define('InvalidRequestError', 'OMNI_ERR_INVALID_REQUEST', RpcCode.InvalidRequest, 400);
// HTTP 200: errors a node itself sends for the same request, with 200 as nodes send them
// (clients such as ethers v6 read a non-2xx answer as a transport failure and lose the code).
// Every other class is what only a gateway says, with a 4xx/5xx status. A host app's own
// finalhandler honours 4xx/5xx statuses only: these two need rpcErrorHandler() to be answered as such.
export const MethodNotFoundError = define('MethodNotFoundError', 'OMNI_ERR_METHOD_NOT_FOUND', RpcCode.MethodNotFound, 200);
export const InvalidParamsError = define('InvalidParamsError', 'OMNI_ERR_INVALID_PARAMS', RpcCode.InvalidParams, 200);
export const InvalidChainIdError = define('InvalidChainIdError', 'OMNI_ERR_INVALID_CHAIN_ID', RpcCode.InvalidChainId, 400);
export const UnknownChainError = define('UnknownChainError', 'OMNI_ERR_UNKNOWN_CHAIN', RpcCode.UnknownChain, 404);
export const InvalidConfirmationsError = define('InvalidConfirmationsError', 'OMNI_ERR_INVALID_CONFIRMATIONS', RpcCode.InvalidConfirmations, 400);
export const NotEnoughUpstreamsError = define('NotEnoughUpstreamsError', 'OMNI_ERR_NOT_ENOUGH_UPSTREAMS', RpcCode.NotEnoughUpstreams, 400);
export const MethodNotAllowedError = define('MethodNotAllowedError', 'OMNI_ERR_METHOD_NOT_ALLOWED', RpcCode.MethodNotAllowed, 405);
export const BodyTooLargeError = define('BodyTooLargeError', 'OMNI_ERR_BODY_TOO_LARGE', RpcCode.BodyTooLarge, 413);
export const BatchTooLargeError = define('BatchTooLargeError', 'OMNI_ERR_BATCH_TOO_LARGE', RpcCode.BatchTooLarge, 400);
export const RouteNotFoundError = define('RouteNotFoundError', 'OMNI_ERR_ROUTE_NOT_FOUND', RpcCode.RouteNotFound, 404);
export const NoQuorumError = define('NoQuorumError', 'OMNI_ERR_NO_QUORUM', RpcCode.NoQuorum, 502);
export const UpstreamsFailedError = define('UpstreamsFailedError', 'OMNI_ERR_UPSTREAMS_FAILED', RpcCode.UpstreamsFailed, 502);
export const DeadlineExceededError = define('DeadlineExceededError', 'OMNI_ERR_DEADLINE', RpcCode.DeadlineExceeded, 504);
export const UpstreamBudgetError = define('UpstreamBudgetError', 'OMNI_ERR_UPSTREAM_BUDGET', RpcCode.UpstreamBudget, 503);
export const LoopDetectedError = define('LoopDetectedError', 'OMNI_ERR_LOOP', RpcCode.LoopDetected, 508);
export const ShuttingDownError = define('ShuttingDownError', 'OMNI_ERR_SHUTTING_DOWN', RpcCode.ShuttingDown, 503);
export const BlockNotAvailableError = define('BlockNotAvailableError', 'OMNI_ERR_BLOCK_NOT_AVAILABLE', RpcCode.BlockNotAvailable, 503);
// 504: no answer came from the upstream (a timeout, or a connection lost after the write), as for -32012.
export const WriteOutcomeUnknownError = define('WriteOutcomeUnknownError', 'OMNI_ERR_WRITE_OUTCOME_UNKNOWN', RpcCode.WriteOutcomeUnknown, 504);
export const InternalError = define('InternalError', 'OMNI_ERR_INTERNAL', RpcCode.InternalError, 500);

/** A config file problem list; thrown once with every problem found. */
export class ConfigError extends Error {
  readonly code = 'OMNI_ERR_CONFIG';
  readonly problems: readonly string[];
  constructor(problems: readonly string[], source?: string) {
    super(`${source ? `${source}: ` : ''}invalid config:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

/**
 * Any error → a GatewayError, logged: ours at info (a refusal), any other as an unexpected error
 * with its stack, answered -32603 without internals. Also used for each refused batch member.
 */
export function asGatewayError(err: unknown, log: Logger): GatewayError {
  if (err instanceof GatewayError) {
    log.info({ code: err.code, status: err.status, message: err.message }, 'request refused');
    return err;
  }
  log.error({ err }, 'unexpected error');
  return new InternalError('Internal error', { cause: err });
}

/** The JSON-RPC error answer's text; `idText` is the id's JSON text (`null`, or the client's bytes). */
export function errorText(error: GatewayError, idText: string): string {
  const inner: RpcErrorObject = { code: error.rpcCode, message: error.message };
  if (error.data !== undefined) inner.data = error.data;
  return `{"jsonrpc":"2.0","id":${idText},"error":${JSON.stringify(inner)}}`;
}
