import test from 'ava';
import { DatabaseUnavailableError, InvalidParameterError, NotFoundError } from '../../../../../lib/errors.js';
import { toProblem } from '../../../../../lib/indexer/http/problem.js';

test('invalid parameter: 400 naming it, not logged', (t) => {
  const p = toProblem(new InvalidParameterError('limit', 'must be ≤ 1000'), { dev: false, instance: '/api/disputes' });
  t.is(p.status, 400);
  t.is(p.severity, 'none');
  t.deepEqual(p.body, {
    type: 'urn:omnigate:problem:invalid-parameter', title: 'Invalid parameter', status: 400,
    detail: 'Invalid parameter "limit": must be ≤ 1000', instance: '/api/disputes', code: 'INVALID_PARAMETER',
    parameter: 'limit', invalidParams: [{ name: 'limit', reason: 'must be ≤ 1000' }],
  });
});

test('not found: 404', (t) => {
  const p = toProblem(new NotFoundError('no such route'), { dev: false });
  t.like(p, { status: 404, severity: 'none', body: { code: 'NOT_FOUND', title: 'Not found', detail: 'no such route' } });
  t.false('instance' in p.body);
});

test('raw database outages become 503 with Retry-After, detail only in development', (t) => {
  const raw = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
  const prod = toProblem(raw, { dev: false });
  t.is(prod.status, 503);
  t.is(prod.severity, 'warn');
  t.deepEqual(prod.headers, { 'Retry-After': '5' });
  t.is(prod.body.code, 'DATABASE_UNAVAILABLE');
  t.is(prod.body.debug, undefined);
  const dev = toProblem(raw, { dev: true });
  t.is(dev.body.debug?.message, 'connect ECONNREFUSED 127.0.0.1:5432');
  t.is(toProblem(new DatabaseUnavailableError(raw), { dev: false }).status, 503);
});

test('unexpected errors are masked in production and detailed in development', (t) => {
  const boom = new Error('secret internals at postgres://u:pw@h/db');
  const prod = toProblem(boom, { dev: false });
  t.is(prod.status, 500);
  t.is(prod.severity, 'error');
  t.is(prod.body.detail, 'An unexpected error occurred; it has been logged.');
  t.false(JSON.stringify(prod.body).includes('secret'));
  const dev = toProblem(boom, { dev: true });
  t.is(dev.body.detail, 'secret internals at postgres://u:***@h/db');
  t.truthy(dev.body.debug?.stack);
  // The stack opens with the message: masked too.
  t.false(JSON.stringify(dev.body).includes(':pw@'), JSON.stringify(dev.body));
  t.regex(dev.body.debug!.stack!, /^Error: secret internals at postgres:\/\/u:\*\*\*@h\/db\n/);
  t.is(toProblem('a string', { dev: false }).status, 500);
});

test('missing tables point at the migrate command in development', (t) => {
  const missing = Object.assign(new Error('relation "BridgeRequestEvents" does not exist'), { code: '42P01' });
  t.like(toProblem(missing, { dev: true }).body, { code: 'SCHEMA_MISSING', status: 500 });
  t.regex(toProblem(missing, { dev: true }).body.detail, /omnigate db migrate/);
  t.is(toProblem(missing, { dev: false }).body.detail, 'An unexpected error occurred; it has been logged.');
});

test('a missing column is SCHEMA_MISMATCH naming it, never INTERNAL', (t) => {
  const missing = Object.assign(new Error('column r.transactionId does not exist'), { code: '42703' });
  const p = toProblem(missing, { dev: false });
  t.like(p.body, { code: 'SCHEMA_MISMATCH', status: 500 });
  t.is(p.body.detail, "The indexer's tables lack a column the API reads: column r.transactionId does not exist");
  t.is(p.body.debug, undefined);
});
