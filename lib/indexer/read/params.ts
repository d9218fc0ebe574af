/**
 * Validation of everything a client can pass to a query, shared by REST (strings from the query
 * string) and GraphQL (typed arguments), so both reject the same inputs with the same message.
 * Each failure is an `InvalidParameterError` naming the parameter.
 */
import { decodeCursor, type Cursor } from './cursor.js';
import { InvalidParameterError } from '../../errors.js';

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 1000;
/** Largest value of a Postgres `integer` (chain ids and timestamps are stored as integer). */
export const MAX_INT4 = 2147483647;

/** The query parameters every list accepts. */
export const LIST_PARAMETERS = ['limit', 'cursor', 'originChainId', 'destChainId', 'since', 'until'] as const;
export type ListParameter = (typeof LIST_PARAMETERS)[number];

export interface ListFilter {
  limit: number;
  cursor?: Cursor;
  originChainId?: number;
  destChainId?: number;
  /** Inclusive lower bound on the list's sort timestamp (unix seconds). */
  since?: number;
  /** Exclusive upper bound on the list's sort timestamp (unix seconds). */
  until?: number;
}

export interface LimitSettings {
  defaultLimit: number;
  maxLimit: number;
}

export type RawValue = string | number | null | undefined;

function integer(name: string, value: RawValue, min: number, max: number): number | undefined {
  if (value === undefined || value === null) return undefined;
  let n: number;
  if (typeof value === 'number') {
    n = value;
  } else {
    if (!/^\d{1,10}$/.test(value)) throw new InvalidParameterError(name, `must be an integer from ${min} to ${max} (got "${value.slice(0, 40)}")`);
    n = Number(value);
  }
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new InvalidParameterError(name, `must be an integer from ${min} to ${max} (got ${JSON.stringify(value)})`);
  }
  return n;
}

/** Validates list parameters; values may be query-string text or GraphQL numbers. */
export function parseListParams(
  raw: Partial<Record<ListParameter, RawValue>>,
  limits: LimitSettings = { defaultLimit: DEFAULT_LIMIT, maxLimit: MAX_LIMIT },
): ListFilter {
  const filter: ListFilter = { limit: integer('limit', raw.limit, 1, limits.maxLimit) ?? limits.defaultLimit };
  if (raw.cursor !== undefined && raw.cursor !== null) {
    const cursor = decodeCursor(String(raw.cursor));
    if (!cursor) throw new InvalidParameterError('cursor', 'is not a cursor returned by this API (use the X-Next-Cursor value as is)');
    filter.cursor = cursor;
  }
  const originChainId = integer('originChainId', raw.originChainId, 1, MAX_INT4);
  if (originChainId !== undefined) filter.originChainId = originChainId;
  const destChainId = integer('destChainId', raw.destChainId, 1, MAX_INT4);
  if (destChainId !== undefined) filter.destChainId = destChainId;
  const since = integer('since', raw.since, 0, MAX_INT4);
  if (since !== undefined) filter.since = since;
  const until = integer('until', raw.until, 0, MAX_INT4);
  if (until !== undefined) filter.until = until;
  if (since !== undefined && until !== undefined && until <= since) {
    throw new InvalidParameterError('until', `must be greater than since (since=${since}, until=${until})`);
  }
  return filter;
}

/**
 * Reads a query string for a list route: every key must be a known parameter and appear at most
 * once, so a typo (`originChainID`) is an error instead of a silently ignored filter.
 */
export function listParamsFromQuery(search: string): Partial<Record<ListParameter, string>> {
  const known = new Set<string>(LIST_PARAMETERS);
  const out: Partial<Record<ListParameter, string>> = {};
  for (const [key, value] of new URLSearchParams(search)) {
    if (!known.has(key)) {
      throw new InvalidParameterError(key.slice(0, 60), `is not a parameter of this route; known parameters: ${LIST_PARAMETERS.join(', ')}`);
    }
    if (key in out) throw new InvalidParameterError(key, 'is given more than once');
    out[key as ListParameter] = value;
  }
  return out;
}

/** Rejects any query parameter (for routes that take none). */
export function noQueryParams(search: string): void {
  for (const [key] of new URLSearchParams(search)) {
    throw new InvalidParameterError(key.slice(0, 60), 'is not a parameter of this route; it takes none');
  }
}

const BYTES32 = /^(?:0x)?[0-9a-f]{64}$/i;

/**
 * A transactionId or origin transaction hash: 64 hex digits in any letter case, with or without
 * `0x` (as copied from an explorer or a log), returned as the tables hold it: `0x` and lower case.
 */
export function parseTransactionKey(name: string, value: RawValue): string {
  const text = value === undefined || value === null ? '' : String(value);
  if (!BYTES32.test(text)) {
    throw new InvalidParameterError(name, `must be a 32-byte hex string (a transactionId or an origin transaction hash, 64 hex digits after an optional 0x), got "${text.slice(0, 80)}"`);
  }
  return `0x${text.slice(-64).toLowerCase()}`;
}
