/**
 * The indexer's error catalogue. Each error carries its HTTP `status` (the name `finalhandler`
 * honours), a string `code` for programs, and `expose`: whether its message is safe to show a
 * client in production. `problem.ts` turns any of them into RFC 9457 problem details.
 */
export class IndexerError extends Error {
  readonly status: number;
  readonly code: string;
  readonly expose: boolean;
  readonly headers?: Record<string, string>;

  constructor(
    message: string,
    init: { status: number; code: string; expose: boolean; headers?: Record<string, string>; cause?: unknown },
  ) {
    super(message, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = new.target.name;
    this.status = init.status;
    this.code = init.code;
    this.expose = init.expose;
    if (init.headers) this.headers = init.headers;
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

export class MethodNotAllowedError extends IndexerError {
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
