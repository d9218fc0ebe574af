import test from 'ava';
import { isDatabaseUnavailable, isMissingTable } from '../../../../../lib/indexer/db/errors.js';

const err = (props: Record<string, unknown>) => Object.assign(new Error(String(props.message ?? 'x')), props);

const UNAVAILABLE: [string, unknown][] = [
  ['connection refused', err({ code: 'ECONNREFUSED' })],
  ['reset', err({ code: 'ECONNRESET' })],
  ['dns', err({ code: 'ENOTFOUND' })],
  ['statement timeout (57014)', err({ code: '57014', message: 'canceling statement due to statement timeout' })],
  ['admin shutdown (57P01)', err({ code: '57P01' })],
  ['starting up (57P03)', err({ code: '57P03' })],
  ['too many connections', err({ code: '53300' })],
  ['connection exception class 08', err({ code: '08006' })],
  ['bad password class 28', err({ code: '28P01' })],
  ['database missing', err({ code: '3D000' })],
  ['pool connect timeout', new Error('timeout exceeded when trying to connect')],
  ['connection terminated', new Error('Connection terminated unexpectedly')],
  ['client query timeout', new Error('Query read timeout')],
  ['aggregate of refusals', Object.assign(new Error(''), { errors: [err({ code: 'ECONNREFUSED' }), err({ code: 'ECONNREFUSED' })] })],
];
const OTHER: [string, unknown][] = [
  ['syntax error', err({ code: '42601' })],
  ['missing table', err({ code: '42P01' })],
  ['plain error', new Error('boom')],
  ['string', 'ECONNREFUSED'],
  ['null', null],
  ['mixed aggregate', Object.assign(new Error(''), { errors: [err({ code: 'ECONNREFUSED' }), new Error('boom')] })],
];

for (const [name, e] of UNAVAILABLE) test(`unavailable: ${name}`, (t) => t.true(isDatabaseUnavailable(e)));
for (const [name, e] of OTHER) test(`not unavailable: ${name}`, (t) => t.false(isDatabaseUnavailable(e)));

test('missing table is 42P01', (t) => {
  t.true(isMissingTable(err({ code: '42P01' })));
  t.false(isMissingTable(err({ code: '42601' })));
});

