import test from 'ava';
import { encodeCursor } from '../../../../../lib/indexer/read/cursor.js';
import { InvalidParameterError } from '../../../../../lib/errors.js';
import {
  DEFAULT_LIMIT, MAX_LIMIT, listParamsFromQuery, noQueryParams, parseListParams, parseTransactionKey,
} from '../../../../../lib/indexer/read/params.js';

test('defaults: limit 100, no filters', (t) => {
  t.deepEqual(parseListParams({}), { limit: DEFAULT_LIMIT });
  t.is(DEFAULT_LIMIT, 100);
  t.is(MAX_LIMIT, 1000);
});

test('accepts query-string text and GraphQL numbers alike', (t) => {
  const cursor = encodeCursor({ ts: 5, id: '0xab' });
  const fromText = parseListParams({ limit: '25', cursor, originChainId: '42161', destChainId: '8453', since: '0', until: '1700000000' });
  const fromNumbers = parseListParams({ limit: 25, cursor, originChainId: 42161, destChainId: 8453, since: 0, until: 1700000000 });
  t.deepEqual(fromText, { limit: 25, cursor: { ts: 5, id: '0xab' }, originChainId: 42161, destChainId: 8453, since: 0, until: 1700000000 });
  t.deepEqual(fromNumbers, fromText);
  t.deepEqual(parseListParams({ limit: null, cursor: null }), { limit: 100 });
});

const INVALID: [Record<string, string | number>, string][] = [
  [{ limit: '0' }, 'limit'], [{ limit: 0 }, 'limit'], [{ limit: '1001' }, 'limit'], [{ limit: 1001 }, 'limit'],
  [{ limit: '1e2' }, 'limit'], [{ limit: ' 5' }, 'limit'], [{ limit: '+5' }, 'limit'], [{ limit: 2.5 }, 'limit'],
  [{ cursor: '' }, 'cursor'], [{ cursor: 'abc' }, 'cursor'], [{ originChainId: '0' }, 'originChainId'],
  [{ originChainId: '2147483648' }, 'originChainId'], [{ destChainId: 'base' }, 'destChainId'], [{ since: -1 }, 'since'],
  [{ until: '12345678901' }, 'until'], [{ since: '10', until: '10' }, 'until'],
];

for (const [raw, parameter] of INVALID) {
  test(`rejects ${JSON.stringify(raw)} naming ${parameter}`, (t) => {
    const err = t.throws(() => parseListParams(raw), { instanceOf: InvalidParameterError });
    t.is(err?.parameter, parameter);
    t.is(err?.status, 400);
    t.is(err?.code, 'INVALID_PARAMETER');
  });
}

test('a custom maximum applies', (t) => {
  t.is(parseListParams({ limit: '50' }, { defaultLimit: 10, maxLimit: 50 }).limit, 50);
  t.is(parseListParams({}, { defaultLimit: 10, maxLimit: 50 }).limit, 10);
  t.throws(() => parseListParams({ limit: '51' }, { defaultLimit: 10, maxLimit: 50 }), { message: /1 to 50/ });
});

test('query strings: unknown and repeated keys are errors', (t) => {
  t.deepEqual(listParamsFromQuery('limit=5&since=1'), { limit: '5', since: '1' });
  t.deepEqual(listParamsFromQuery(''), {});
  t.is(t.throws(() => listParamsFromQuery('origin=1'), { instanceOf: InvalidParameterError })?.parameter, 'origin');
  t.is(t.throws(() => listParamsFromQuery('since=1&since=2'), { instanceOf: InvalidParameterError })?.parameter, 'since');
  t.notThrows(() => noQueryParams(''));
  t.is(t.throws(() => noQueryParams('x=1'), { instanceOf: InvalidParameterError })?.parameter, 'x');
});

test('transaction keys are bytes32 hex, 0x optional, returned with 0x in lower case', (t) => {
  const id = `0x${'AB'.repeat(32)}`;
  for (const spelling of [id, id.slice(2), `0X${id.slice(2)}`, id.toLowerCase().slice(2)]) t.is(parseTransactionKey('id', spelling), id.toLowerCase());
  for (const bad of ['', '0x', `0x${'ab'.repeat(31)}`, `${'ab'.repeat(31)}a`, `0x${'zz'.repeat(32)}`, `0x${'ab'.repeat(33)}`, `x${'ab'.repeat(32)}`, null, undefined]) {
    t.is(t.throws(() => parseTransactionKey('id', bad), { instanceOf: InvalidParameterError })?.parameter, 'id');
  }
});
