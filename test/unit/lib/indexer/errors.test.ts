import test from 'ava';
import {
  DatabaseUnavailableError, GatewayError, IndexerError, IndexerMethodNotAllowedError, IndexNotReadyError, InvalidParameterError,
  LayoutMismatchError, NotFoundError, OmnigateError,
} from '../../../../lib/errors.js';

const CASES: [IndexerError, string, number, boolean][] = [
  [new InvalidParameterError('limit', 'too big'), 'INVALID_PARAMETER', 400, true],
  [new NotFoundError('nope'), 'NOT_FOUND', 404, true],
  [new IndexerMethodNotAllowedError('POST', 'GET, HEAD'), 'METHOD_NOT_ALLOWED', 405, true],
  [new DatabaseUnavailableError(new Error('ECONNREFUSED')), 'DATABASE_UNAVAILABLE', 503, true],
  [new IndexNotReadyError('no tables'), 'INDEX_NOT_READY', 503, true],
  [new LayoutMismatchError('no column'), 'SCHEMA_MISMATCH', 500, true],
];

for (const [error, code, status, expose] of CASES) {
  test(`${error.name}: code ${code}, status ${status}`, (t) => {
    t.true(error instanceof IndexerError);
    t.true(error instanceof OmnigateError);
    t.false(error instanceof GatewayError);
    t.true(error instanceof Error);
    t.is(error.code, code);
    t.is(error.status, status);
    t.is(error.expose, expose);
    t.is(error.name, error.constructor.name);
  });
}

test('headers and cause are carried', (t) => {
  t.deepEqual(new IndexerMethodNotAllowedError('PUT', 'GET, HEAD').headers, { Allow: 'GET, HEAD' });
  const cause = new Error('down');
  const e = new DatabaseUnavailableError(cause);
  t.is(e.cause, cause);
  t.deepEqual(e.headers, { 'Retry-After': '5' });
  const p = new InvalidParameterError('since', 'must be an integer');
  t.is(p.message, 'Invalid parameter "since": must be an integer');
  t.is(p.parameter, 'since');
  t.is(p.reason, 'must be an integer');
});

test('Retry-After of the index not being ready; no headers where none are sent', (t) => {
  t.deepEqual(new IndexNotReadyError('x').headers, { 'Retry-After': '10' });
  t.is(new NotFoundError('x').headers, undefined);
  t.false('cause' in new NotFoundError('x'));
});
