/**
 * The one error catalogue of omnigate, both halves. Every error answered to a client is an
 * `OmnigateError`: `code` (a stable string for programs and logs), `status` (the HTTP status; named
 * `status` so connect's and express's finalhandler honour it when a host app has no error handler
 * of its own), `expose` (whether the message may be shown to the client), `headers` (extra response
 * headers, which finalhandler copies too) and `cause`. Two families share that shape, each with
 * its own rendering:
 *
 * - the balancer's `GatewayError`s add `rpcCode`, the JSON-RPC number sent to the client, and are
 *   answered as JSON-RPC errors (`errorText`, middleware/error-handler.ts);
 * - the indexer's `IndexerError`s are answered as RFC 9457 problem+json (lib/indexer/http/problem.ts).
 *
 * This module imports nothing from lib/indexer: the indexer depends on the catalogue, not the reverse.
 */
import { RpcCode } from './jsonrpc/codes.js';
import type { RpcErrorObject } from './jsonrpc/types.js';
import type { Logger } from './log.js';

/** What every error answered to a client carries, whichever half answers it. */
export interface OmnigateErrorInit {
  /** A stable string for programs and logs (the balancer's `OMNI_ERR_…`, the indexer's `NOT_FOUND`…). */
  code: string;
  status: number;
  expose: boolean;
  headers?: Record<string, string> | undefined;
  cause?: unknown;
}

/** The base shape of both families; not thrown as such. */
export abstract class OmnigateError extends Error {
  readonly code: string;
  readonly status: number;
  /** Whether `message` may be shown to the client. */
  readonly expose: boolean;
  /** Extra response headers (finalhandler copies `err.headers` too). */
  readonly headers: Record<string, string> | undefined;

  constructor(message: string, init: OmnigateErrorInit) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = new.target.name;
    this.code = init.code;
    this.status = init.status;
    this.expose = init.expose;
    this.headers = init.headers;
  }
}

// ── The balancer: JSON-RPC errors ────────────────────────────────────────────────────────────

export interface GatewayErrorOptions {
  /** The client's JSON-RPC id, when the error is about a request whose id could be read. */
  id?: string | number | null;
  /** That id's JSON text as the client wrote it (`1.0`), echoed instead of `id`'s; only with `id`. */
  idText?: string;
  data?: unknown;
  headers?: Record<string, string>;
  cause?: unknown;
}

/** A balancer error: the base shape plus its JSON-RPC code, answered as a JSON-RPC error. */
export class GatewayError extends OmnigateError {
  readonly rpcCode: number;
  /** Sent to the client as `error.data`. Never holds an unredacted URL. */
  readonly data: unknown;
  /** The client's id to echo (undefined: the error handler works it out from the request). */
  readonly rpcId: string | number | null | undefined;
  /** `rpcId` as the client wrote it, when known (undefined: JSON.stringify(rpcId) is echoed). */
  readonly rpcIdText: string | undefined;

  constructor(code: string, rpcCode: number, status: number, message: string, options: GatewayErrorOptions = {}) {
    // Every message is shown but an internal error's.
    super(message, { code, status, expose: status < 500 || rpcCode !== RpcCode.InternalError, headers: options.headers, cause: options.cause });
    this.rpcCode = rpcCode;
    this.data = options.data;
    this.rpcId = options.id;
    this.rpcIdText = options.id === undefined || options.id === null ? undefined : options.idText;
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
// The balancer's 405 (-32004); the indexer's 405 is IndexerMethodNotAllowedError below.
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
/** Proof mode (lib/prove): every provider's answer failed its proof against the agreed header; `data` says what failed, never the answer. */
export const ProofFailedError = define('ProofFailedError', 'OMNI_ERR_PROOF_FAILED', RpcCode.ProofFailed, 502);
// 504: no answer came from the upstream (a timeout, or a connection lost after the write), as for -32012.
export const WriteOutcomeUnknownError = define('WriteOutcomeUnknownError', 'OMNI_ERR_WRITE_OUTCOME_UNKNOWN', RpcCode.WriteOutcomeUnknown, 504);
// The door (lib/access): 401 carries `WWW-Authenticate: Bearer`; neither ever holds the presented key.
export const UnauthorizedError = define('UnauthorizedError', 'OMNI_ERR_UNAUTHORIZED', RpcCode.Unauthorized, 401);
export const ForbiddenError = define('ForbiddenError', 'OMNI_ERR_FORBIDDEN', RpcCode.Forbidden, 403);
// A key's budget in credits (lib/access/budget.ts): 429 with Retry-After and the X-Credits headers.
export const BudgetExceededError = define('BudgetExceededError', 'OMNI_ERR_BUDGET_EXCEEDED', RpcCode.BudgetExceeded, 429);
export const InternalError = define('InternalError', 'OMNI_ERR_INTERNAL', RpcCode.InternalError, 500);

/** A config file problem list; thrown once with every problem found. Not an OmnigateError: never answered to a client. */
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

// ── The indexer: problem+json errors ─────────────────────────────────────────────────────────

/**
 * An indexer error: the base shape, answered as RFC 9457 problem details (lib/indexer/http/problem.ts
 * turns `code` into the problem's `type`, `title` and `code`). Its codes are plain (`NOT_FOUND`).
 */
export class IndexerError extends OmnigateError {
  constructor(
    message: string,
    init: { status: number; code: string; expose: boolean; headers?: Record<string, string>; cause?: unknown },
  ) {
    super(message, init);
  }
}

/** A query or path parameter that cannot be used; `parameter` names it. */
export class InvalidParameterError extends IndexerError {
  readonly parameter: string;
  readonly reason: string;
  constructor(parameter: string, reason: string) {
    super(`Invalid parameter "${parameter}": ${reason}`, { status: 400, code: 'INVALID_PARAMETER', expose: true });
    this.parameter = parameter;
    this.reason = reason;
  }
}

export class NotFoundError extends IndexerError {
  constructor(message: string) {
    super(message, { status: 404, code: 'NOT_FOUND', expose: true });
  }
}

/**
 * The indexer's 405 (problem+json, code `METHOD_NOT_ALLOWED`, `Allow`). Not the balancer's
 * `MethodNotAllowedError` (-32004, code `OMNI_ERR_METHOD_NOT_ALLOWED`): the two differ in their
 * program code and their constructor, so one class cannot be both a GatewayError and an IndexerError.
 */
export class IndexerMethodNotAllowedError extends IndexerError {
  constructor(method: string, allow: string) {
    super(`Method ${method} is not allowed here; use ${allow}`, {
      status: 405, code: 'METHOD_NOT_ALLOWED', expose: true, headers: { Allow: allow },
    });
  }
}

/** The database refused, dropped, or timed out: the client may retry later. */
export class DatabaseUnavailableError extends IndexerError {
  constructor(cause: unknown) {
    super('The database is unavailable or did not answer in time', {
      status: 503, code: 'DATABASE_UNAVAILABLE', expose: true, headers: { 'Retry-After': '5' }, cause,
    });
  }
}

/** The indexer's tables are not there (yet): Ponder has not started, or is re-creating them. */
export class IndexNotReadyError extends IndexerError {
  constructor(message: string) {
    super(message, { status: 503, code: 'INDEX_NOT_READY', expose: true, headers: { 'Retry-After': '10' } });
  }
}

/** Tables or columns are there but not as any known Ponder layout writes them. */
export class LayoutMismatchError extends IndexerError {
  constructor(message: string) {
    super(message, { status: 500, code: 'SCHEMA_MISMATCH', expose: true });
  }
}
