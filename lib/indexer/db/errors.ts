/**
 * Which database failures mean "unavailable, try again later" (503) rather than a bug (500).
 * One pure function over the shapes node-postgres and pg-promise produce, table-tested.
 */

/** Node socket errors seen when the server is down, unreachable or drops us. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE', 'ECONNABORTED',
]);

/** SQLSTATEs (or classes, by their first two characters) that mean the server cannot serve now. */
const UNAVAILABLE_SQLSTATES = new Set([
  '57014', // query_canceled: our statement_timeout fired
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now (starting up, shutting down, recovery)
  '53300', // too_many_connections
  '55P03', // lock_not_available (lock_timeout)
  '3D000', // invalid_catalog_name: the configured database does not exist
]);
const UNAVAILABLE_CLASSES = new Set(['08', '28']); // connection exception, invalid authorization

/** Messages node-postgres and pg-promise use for client-side timeouts and broken connections. */
const UNAVAILABLE_MESSAGES = [
  /timeout exceeded when trying to connect/i,
  /connection terminated/i,
  /query read timeout/i,
  /connection timeout/i,
  /has encountered a connection error/i,
  /connection pool of the database object has been destroyed/i,
  /cannot use a pool after calling end/i,
];

export function isDatabaseUnavailable(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const { code, message, errors } = err as { code?: unknown; message?: unknown; errors?: unknown };
  if (typeof code === 'string') {
    if (NETWORK_CODES.has(code)) return true;
    if (/^[0-9A-Z]{5}$/.test(code) && (UNAVAILABLE_SQLSTATES.has(code) || UNAVAILABLE_CLASSES.has(code.slice(0, 2)))) return true;
  }
  if (typeof message === 'string' && UNAVAILABLE_MESSAGES.some((re) => re.test(message))) return true;
  // Node reports "localhost" resolving to both ::1 and 127.0.0.1 as one AggregateError.
  if (Array.isArray(errors) && errors.length > 0 && errors.every(isDatabaseUnavailable)) return true;
  return false;
}

/** undefined_table: the schema is missing (migrations not applied to this database). */
export function isMissingTable(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === '42P01';
}
