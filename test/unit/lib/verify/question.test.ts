/** The real clock and timers the agreement loop uses when a policy brings none. */
import test from 'ava';
import { realTimers } from '../../../../lib/verify/question.js';

test('realTimers should run a timer, cancel a cleared one, and read a monotonic clock', async (t) => {
  const before = realTimers.now();
  const fired: string[] = [];
  const cleared = realTimers.setTimeout(() => fired.push('cleared'), 0);
  realTimers.clearTimeout(cleared);
  await new Promise<void>((resolve) => realTimers.setTimeout(() => {
    fired.push('ran');
    resolve();
  }, 1));
  await new Promise((resolve) => setImmediate(resolve));
  t.deepEqual(fired, ['ran']);
  t.true(realTimers.now() >= before);
});
