/**
 * The bench's fixed service time (test/bench/precise-delay.ts): every callback runs, none before
 * its deadline (less the documented 0.02 ms of batching), in deadline order even when deadlines
 * are added out of order, and a full ring of unread deadlines refuses the next one. Lower bounds and
 * order only: how late a callback runs depends on this machine's load and is not asserted.
 */
import test from 'ava';
import { preciseDelay } from '../../bench/precise-delay.js';

const now = () => performance.timeOrigin + performance.now();
const earlyMs = 0.02;

/** A delay whose worker thread is up (it takes tens of ms to start, and every deadline passes meanwhile). */
async function started(t: { teardown(fn: () => Promise<void>): void }) {
  const delay = preciseDelay();
  t.teardown(() => delay.close());
  await new Promise<void>((resolve) => delay.after(1, resolve));
  return delay;
}

test('callbacks run once each, never before their deadline, in deadline order', async (t) => {
  const delay = await started(t);
  // Mixed delays, added out of order, some sharing a deadline window, some after an idle gap.
  const delays = [3, 1, 2, 0.5, 2, 0.05, 4, 1.5, 1, 0.2, ...Array.from({ length: 200 }, (_, i) => (i * 7) % 13 / 4)];
  // A deadline is taken inside after(): it lies between now() + ms just before the call and just
  // after it (a pause of the process between the two would otherwise pass for a wrong order).
  const fired: { i: number; ran: number }[] = [];
  const before: number[] = [];
  const after: number[] = [];
  await new Promise<void>((resolve) => {
    delays.forEach((ms, i) => {
      before[i] = now() + ms;
      delay.after(ms, () => {
        fired.push({ i, ran: now() });
        if (fired.length === delays.length) resolve();
      });
      after[i] = now() + ms;
    });
  });
  t.is(new Set(fired.map((f) => f.i)).size, delays.length, 'each callback ran exactly once');
  for (const f of fired) t.true(f.ran >= before[f.i]! - earlyMs, `callback ${f.i} ran ${(before[f.i]! - f.ran).toFixed(3)} ms early`);
  for (let k = 1; k < fired.length; k += 1) {
    const [a, b] = [fired[k - 1]!.i, fired[k]!.i];
    t.true(after[b]! >= before[a]!, `callback ${b} ran after ${a}, whose deadline is later`);
  }
});

test('a second burst after the worker went idle is timed too', async (t) => {
  const delay = await started(t);
  for (let round = 0; round < 3; round += 1) {
    const at = now() + 1;
    const ran = await new Promise<number>((resolve) => delay.after(1, () => resolve(now())));
    t.true(ran >= at - earlyMs - 0.005, `round ${round}: ran ${(at - ran).toFixed(3)} ms early`);
    await new Promise((r) => setTimeout(r, 5)); // the worker sleeps with nothing to wait for
  }
});

test('a full ring of unread deadlines refuses the next one, not overwriting any, and takes more once read', async (t) => {
  // Held: the worker reads nothing until released, so the ring is full after exactly 4.
  const delay = preciseDelay({ ringSize: 4, held: true });
  t.teardown(() => delay.close());
  const ran: number[] = [];
  let allRan!: () => void;
  const done = new Promise<void>((resolve) => (allRan = resolve));
  for (let i = 0; i < 4; i += 1) delay.after(1 + i * 0.1, () => ran.push(i) === 4 && allRan());
  t.throws(() => delay.after(1, () => ran.push(99)), { message: /more than 4 deadlines not yet read/ });
  delay.release();
  await done; // each ran after the worker read it from the ring
  await new Promise((r) => setTimeout(r, 5)); // the refused one would have run by now
  t.deepEqual(ran, [0, 1, 2, 3], 'the four accepted callbacks ran, in order; the refused one never did');
  // All four were read: the ring takes a full ring's worth again.
  await Promise.all(Array.from({ length: 4 }, (_, i) => new Promise<void>((resolve) => delay.after(i * 0.1, resolve))));
  t.pass();
});

test('a ring size that is not a power of two is refused', (t) => {
  t.throws(() => preciseDelay({ ringSize: 3 }), { instanceOf: RangeError, message: /power of two/ });
});
