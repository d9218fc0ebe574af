import test from 'ava';
import { defaultProbeConcurrency, mapLimited } from '../../../../lib/health/limited.js';

/** A task per item that waits until released; counts how many run at once. */
function gate() {
  let running = 0;
  let most = 0;
  const waiting: (() => void)[] = [];
  const fn = (item: number) =>
    new Promise<number>((resolve) => {
      running += 1;
      most = Math.max(most, running);
      waiting.push(() => {
        running -= 1;
        resolve(item * 10);
      });
    });
  return { fn, most: () => most, running: () => running, release: () => waiting.shift()?.() };
}

test('should run at most `limit` at once and return the results in the order of the items', async (t) => {
  const g = gate();
  const all = mapLimited([1, 2, 3, 4, 5], 2, g.fn);
  await Promise.resolve();
  t.is(g.running(), 2);
  while (g.running() > 0) {
    g.release();
    await new Promise((resolve) => setImmediate(resolve));
  }
  t.deepEqual(await all, [10, 20, 30, 40, 50]);
  t.is(g.most(), 2);
});

test('should start every item at once when the limit is above their number, and handle none', async (t) => {
  const g = gate();
  const all = mapLimited([1, 2, 3], 10, g.fn);
  await Promise.resolve();
  t.is(g.running(), 3);
  g.release();
  g.release();
  g.release();
  t.deepEqual(await all, [10, 20, 30]);
  t.deepEqual(await mapLimited([], 4, g.fn), []);
});

test('should reject with the first failure', async (t) => {
  await t.throwsAsync(mapLimited([1, 2], 1, (i) => (i === 2 ? Promise.reject(new Error('two')) : Promise.resolve(i))), { message: 'two' });
});

test('the default concurrency should be the config default of limits.probeConcurrency', (t) => {
  t.is(defaultProbeConcurrency, 32);
});
