import test from 'ava';
import { newRequestId } from '../../../../lib/pipeline/request-id.js';

const v4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

test('newRequestId makes version 4 UUIDs, as crypto.randomUUID spells them, never the same twice (across several refills of its random bytes)', (t) => {
  const seen = new Set<string>();
  const digits = new Set<string>();
  for (let i = 0; i < 5_000; i++) {
    const id = newRequestId();
    t.true(v4.test(id), id);
    seen.add(id);
    for (const c of id.replace(/-/g, '')) digits.add(c);
  }
  t.is(seen.size, 5_000);
  t.is(digits.size, 16, 'every hex digit shows up');
});

test('newRequestId returns a string of its own each time (not a view of a buffer written again)', (t) => {
  const first = newRequestId();
  const copy = `${first}`;
  newRequestId();
  t.is(first, copy);
});
