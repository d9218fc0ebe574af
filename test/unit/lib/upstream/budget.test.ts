/**
 * The global budget of buffered answer bytes: accounts charge it, give back a failed call's
 * bytes, return everything on close, and refuse what would pass the limit.
 */
import test from 'ava';
import { ByteBudget } from '../../../../lib/upstream/budget.js';

test('should charge accounts against one limit and refuse a charge that would pass it', (t) => {
  const budget = new ByteBudget(100);
  const a = budget.open();
  const b = budget.open();
  t.true(a.take(60));
  t.false(b.take(41), 'nothing is charged for a refused take');
  t.is(budget.used, 60);
  t.true(b.take(40));
  t.true(budget.exhausted);
  t.is(a.limit, 100);
  t.deepEqual([a.held, b.held, budget.used], [60, 40, 100]);
});

test('should give back at most what an account holds', (t) => {
  const budget = new ByteBudget(100);
  const a = budget.open();
  const b = budget.open();
  a.take(30);
  b.take(20);
  a.give(10);
  t.deepEqual([a.held, budget.used], [20, 40]);
  a.give(1000);
  t.deepEqual([a.held, b.held, budget.used], [0, 20, 20], 'another account\'s bytes are not given back');
});

test('should return everything on close, once, and refuse later charges', (t) => {
  const budget = new ByteBudget(100);
  const a = budget.open();
  a.take(70);
  a.close();
  t.is(budget.used, 0);
  t.false(budget.exhausted);
  a.close();
  t.is(budget.used, 0);
  t.false(a.take(1));
  t.is(budget.used, 0);
});

test('should refuse a limit that is not a positive number', (t) => {
  for (const limit of [0, -1, Number.NaN]) t.throws(() => new ByteBudget(limit), { instanceOf: TypeError });
});
