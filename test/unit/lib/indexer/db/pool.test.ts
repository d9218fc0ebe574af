import test from 'ava';
import pgPromise from 'pg-promise';
import { MAX_PREPARED_STATEMENTS, prepared, SqlBuilder, statement } from '../../../../../lib/indexer/db/pool.js';

// One test: prepared() keeps a process-wide registry of names, which concurrent tests would share.
test('prepared: only statements without parameters get a name, one per text, and at most MAX_PREPARED_STATEMENTS', (t) => {
  const withValue = prepared(statement('SELECT $1::integer AS n', [1]));
  t.true(withValue instanceof pgPromise.ParameterizedQuery, 'a statement with parameters runs unnamed (planned for its values)');

  const a = prepared(statement('SELECT 1 AS n'));
  t.true(a instanceof pgPromise.PreparedStatement);
  const again = prepared(statement('SELECT 1 AS n')) as pgPromise.PreparedStatement;
  const b = prepared(statement('SELECT 2 AS n')) as pgPromise.PreparedStatement;
  t.is(again.name, (a as pgPromise.PreparedStatement).name, 'the same text keeps its name');
  t.not(b.name, again.name, 'another text gets another name');
  t.regex(b.name, /^omnigate_q\d+$/);

  for (let i = 3; i <= MAX_PREPARED_STATEMENTS; i += 1) {
    t.true(prepared(statement(`SELECT ${i} AS n`)) instanceof pgPromise.PreparedStatement);
  }
  t.true(prepared(statement('SELECT 0 AS overflow')) instanceof pgPromise.ParameterizedQuery, 'past the cap, new texts run unnamed');
  t.is((prepared(statement('SELECT 2 AS n')) as pgPromise.PreparedStatement).name, b.name, 'known texts keep their name');
});

test('SqlBuilder.integer writes safe integers and refuses anything else', (t) => {
  const s = new SqlBuilder();
  t.is(s.integer(101), '101');
  t.is(s.integer(0), '0');
  for (const bad of [1.5, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 53, '1; DROP TABLE x' as unknown as number]) {
    t.throws(() => s.integer(bad), { instanceOf: TypeError });
  }
  t.deepEqual(s.values, [], 'nothing is bound');
});
