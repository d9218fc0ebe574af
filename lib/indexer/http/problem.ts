/**
 * RFC 9457 problem details for every error the indexer answers with. `toProblem` is pure (error
 * → status, headers, body); `sendProblem` writes it with `Content-Type: application/problem+json`.
 * In production an unexpected error's message never leaves the server; with `dev` the body adds
 * a `debug` member with the message, stack and cause.
 */
import type { ServerResponse } from 'node:http';
import { isDatabaseUnavailable, isMissingTable } from '../db/errors.js';
import { redactCredentials } from '../../upstream/redact.js';
import { DatabaseUnavailableError, IndexerError, InvalidParameterError } from '../../errors.js';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance?: string;
  code: string;
  /** For 400: the parameter at fault (also listed in `invalidParams`). */
  parameter?: string;
  invalidParams?: { name: string; reason: string }[];
  debug?: { name: string; message: string; stack?: string; cause?: string };
}

export interface Problem {
  status: number;
  headers: Record<string, string>;
  body: ProblemBody;
  /** How loudly the server should log this: client mistakes are not logged. */
  severity: 'none' | 'warn' | 'error';
}

const TITLES: Record<string, string> = {
  INVALID_PARAMETER: 'Invalid parameter',
  NOT_FOUND: 'Not found',
  METHOD_NOT_ALLOWED: 'Method not allowed',
  DATABASE_UNAVAILABLE: 'Database unavailable',
  SCHEMA_MISSING: 'Database schema missing',
  INDEX_NOT_READY: 'Indexer tables not created yet',
  SCHEMA_MISMATCH: 'Indexer tables do not match a known Ponder layout',
  INTERNAL: 'Internal server error',
};

function typeUri(code: string): string {
  return `urn:omnigate:problem:${code.toLowerCase().replace(/_/g, '-')}`;
}

function describe(err: unknown): { name: string; message: string; stack?: string; cause?: string } {
  if (err instanceof Error) {
    const cause = err.cause instanceof Error ? err.cause.message : err.cause === undefined ? undefined : String(err.cause);
    return {
      name: err.name,
      message: redactCredentials(err.message),
      ...(err.stack ? { stack: redactCredentials(err.stack) } : {}),
      ...(cause ? { cause: redactCredentials(cause) } : {}),
    };
  }
  return { name: typeof err, message: String(err) };
}

/** Maps any thrown value to a problem; database outages become 503 whatever wrapped them. */
export function toProblem(err: unknown, options: { dev: boolean; instance?: string }): Problem {
  let error: unknown = err;
  if (!(error instanceof IndexerError) && isDatabaseUnavailable(error)) error = new DatabaseUnavailableError(error);

  const base = options.instance === undefined ? {} : { instance: options.instance };
  if (error instanceof IndexerError) {
    const body: ProblemBody = {
      type: typeUri(error.code),
      title: TITLES[error.code] ?? error.code,
      status: error.status,
      detail: error.expose || options.dev ? error.message : TITLES.INTERNAL!,
      ...base,
      code: error.code,
    };
    if (error instanceof InvalidParameterError) {
      body.parameter = error.parameter;
      body.invalidParams = [{ name: error.parameter, reason: error.reason }];
    }
    if (options.dev && error.status >= 500) body.debug = describe(error.cause ?? error);
    return {
      status: error.status,
      headers: { ...(error.headers ?? {}) },
      body,
      severity: error.status >= 500 ? (error.status === 503 ? 'warn' : 'error') : 'none',
    };
  }

  // A column that does not exist (42703): the tables are not as this layout reads them.
  if (typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '42703') {
    const body: ProblemBody = {
      type: typeUri('SCHEMA_MISMATCH'), title: TITLES.SCHEMA_MISMATCH!, status: 500,
      detail: `The indexer's tables lack a column the API reads: ${describe(error).message}`, ...base, code: 'SCHEMA_MISMATCH',
    };
    if (options.dev) body.debug = describe(error);
    return { status: 500, headers: {}, body, severity: 'error' };
  }
  const missing = isMissingTable(error);
  const code = missing ? 'SCHEMA_MISSING' : 'INTERNAL';
  const body: ProblemBody = {
    type: typeUri(code),
    title: TITLES[code]!,
    status: 500,
    detail: !options.dev
      ? 'An unexpected error occurred; it has been logged.'
      : missing
        ? `${describe(error).message}. Apply the migrations: omnigate db migrate`
        : describe(error).message,
    ...base,
    code,
  };
  if (options.dev) body.debug = describe(error);
  return { status: 500, headers: {}, body, severity: 'error' };
}

export function sendProblem(res: ServerResponse, problem: Problem): void {
  const payload = JSON.stringify(problem.body);
  res.statusCode = problem.status;
  for (const [name, value] of Object.entries(problem.headers)) res.setHeader(name, value);
  res.setHeader('Content-Type', PROBLEM_CONTENT_TYPE);
  res.setHeader('Content-Length', Buffer.byteLength(payload));
  res.setHeader('Cache-Control', 'no-store');
  res.end(payload);
}
