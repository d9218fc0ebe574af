import test from 'ava';
import { decodeCursor, encodeCursor } from '../../../../../lib/indexer/read/cursor.js';

test('round-trips and is URL-safe', (t) => {
  const cursor = { ts: 1760000000, id: `0x${'f'.repeat(64)}` };
  const text = encodeCursor(cursor);
  t.regex(text, /^[A-Za-z0-9_-]+$/);
  t.deepEqual(decodeCursor(text), cursor);
});

const b64 = (s: string) => Buffer.from(s).toString('base64url');
for (const [name, text] of [
  ['empty', ''], ['not base64url', 'a+b/c='], ['not JSON', b64('{{')], ['object', b64('{"ts":1,"id":"x"}')],
  ['three items', b64('[1,"x",2]')], ['string ts', b64('["1","x"]')], ['negative ts', b64('[-1,"x"]')],
  ['fractional ts', b64('[1.5,"x"]')], ['empty id', b64('[1,""]')], ['numeric id', b64('[1,2]')],
  ['huge id', b64(`[1,"${'x'.repeat(201)}"]`)], ['too long', 'a'.repeat(401)],
  ['ts beyond a PostgreSQL integer', b64('[2147483648,"x"]')], ['ts at 2^53', b64('[9007199254740991,"x"]')],
  ['NUL in id', b64('[1,"0x\\u0000"]')],
] as const) {
  test(`rejects ${name}`, (t) => {
    t.is(decodeCursor(text), undefined);
  });
}

test('accepts the largest timestamp a PostgreSQL integer holds', (t) => {
  t.deepEqual(decodeCursor(encodeCursor({ ts: 2147483647, id: 'x' })), { ts: 2147483647, id: 'x' });
});
