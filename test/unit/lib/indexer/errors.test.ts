import test from 'ava';
import {
  DatabaseUnavailableError, IndexerError, InvalidParameterError, MethodNotAllowedError, NotFoundError,
} from '../../../../lib/indexer/errors.js';

const CASES: [IndexerError, string, number, boolean][] = [
  [new InvalidParameterError('limit', 'too big'), 'INVALID_PARAMETER', 400, true],
  [new NotFoundError('nope'), 'NOT_FOUND', 404, true],
  [new MethodNotAllowedError('POST', 'GET, HEAD'), 'METHOD_NOT_ALLOWED', 405, true],
  [new DatabaseUnavailableError(new Error('ECONNREFUSED')), 'DATABASE_UNAVAILABLE', 503, true],
];

for (const [error, code, status, expose] of CASES) {
  test(`${error.name}: code ${code}, status ${status}`, (t) => {
    t.true(error instanceof IndexerError);
    t.true(error instanceof Error);
    t.is(error.code, code);
    t.is(error.status, status);
    t.is(error.expose, expose);
    t.is(error.name, error.constructor.name);
  });
}

test('headers and cause are carried', (t) => {
  t.deepEqual(new MethodNotAllowedError('PUT', 'GET, HEAD').headers, { Allow: 'GET, HEAD' });
  const cause = new Error('down');
  const e = new DatabaseUnavailableError(cause);
  t.is(e.cause, cause);
  t.deepEqual(e.headers, { 'Retry-After': '5' });
  const p = new InvalidParameterError('since', 'must be an integer');
  t.is(p.message, 'Invalid parameter "since": must be an integer');
  t.is(p.parameter, 'since');
  t.is(p.reason, 'must be an integer');
});
