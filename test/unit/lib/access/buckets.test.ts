import test from 'ava';
import { MemoryCreditStore, secondsToMidnight, utcDay } from '../../../../lib/access/buckets.js';

/** A clock the test moves by hand. */
function clock(start = Date.UTC(2026, 10, 28, 12, 0, 0)) {
  const c = { now: start, advance: (ms: number) => (c.now += ms), read: () => c.now };
  return c;
}

test('the per-second bucket admits its burst at once, then refuses with the wait for the refill', async (t) => {
  const c = clock();
  const store = new MemoryCreditStore({ now: c.read });
  const limits = { perSecond: 10, burst: 30 };
  for (let i = 0; i < 3; i++) t.true((await store.take('k', limits, 10)).allowed, `take ${i}`);
  const refused = await store.take('k', limits, 10);
  t.false(refused.allowed);
  t.is(refused.refusal, 'second');
  t.is(refused.retryAfterSeconds, 1);
  t.is(refused.remainingSecond, 0);
  t.is(refused.reservation, undefined);
  c.advance(500);
  t.false((await store.take('k', limits, 10)).allowed, 'half refilled: 5 of 10');
  c.advance(500);
  const again = await store.take('k', limits, 10);
  t.true(again.allowed);
  t.is(again.remainingSecond, 0);
  t.is(again.remainingDay, Infinity, 'no day limit: nothing to say');
});

test('a refusal takes nothing: another key, and the same key after the wait, are unaffected', async (t) => {
  const c = clock();
  const store = new MemoryCreditStore({ now: c.read });
  const limits = { perSecond: 10 };
  t.true((await store.take('a', limits, 10)).allowed);
  for (let i = 0; i < 5; i++) t.false((await store.take('a', limits, 10)).allowed);
  t.true((await store.take('b', limits, 10)).allowed, 'keys have their own buckets');
  c.advance(1000);
  t.true((await store.take('a', limits, 10)).allowed, 'the refused takes did not dig the bucket deeper');
});

test('an estimate above the burst is admitted from a full bucket, and the debt is repaid before the next', async (t) => {
  const c = clock();
  const store = new MemoryCreditStore({ now: c.read });
  const limits = { perSecond: 10 };
  const big = await store.take('k', limits, 40);
  t.true(big.allowed);
  t.is(big.remainingSecond, 0);
  c.advance(3000);
  const refused = await store.take('k', limits, 10);
  t.false(refused.allowed, 'at -30 + 30 = 0 credits');
  t.is(refused.retryAfterSeconds, 1);
  c.advance(1000);
  t.true((await store.take('k', limits, 10)).allowed);
});

test('the day budget admits what fits whole, refuses the rest until 00:00 UTC, then starts again', async (t) => {
  const c = clock(Date.UTC(2026, 10, 28, 23, 0, 0));
  const store = new MemoryCreditStore({ now: c.read });
  const limits = { perDay: 100 };
  t.true((await store.take('k', limits, 60)).allowed);
  const refused = await store.take('k', limits, 60);
  t.false(refused.allowed);
  t.is(refused.refusal, 'day');
  t.is(refused.retryAfterSeconds, 3600, 'the time to midnight UTC');
  t.is(refused.remainingDay, 40);
  const fits = await store.take('k', limits, 40);
  t.true(fits.allowed);
  t.is(fits.remainingDay, 0);
  c.advance(3600 * 1000);
  const next = await store.take('k', limits, 60);
  t.true(next.allowed, 'a new UTC day');
  t.is(next.remainingDay, 40);
});

test('settle refunds what the answer cost less than its estimate and charges what it cost more', async (t) => {
  const c = clock();
  const store = new MemoryCreditStore({ now: c.read });
  const limits = { perSecond: 100, perDay: 1000 };
  const a = await store.take('k', limits, 60);
  t.is(a.remainingSecond, 40);
  t.is(a.remainingDay, 940);
  const refunded = await store.settle(a.reservation!, 1);
  t.is(refunded.remainingSecond, 99);
  t.is(refunded.remainingDay, 999);
  const b = await store.take('k', limits, 20);
  const charged = await store.settle(b.reservation!, 50);
  t.is(charged.remainingSecond, 49);
  t.is(charged.remainingDay, 949);
  const c2 = await store.take('k', limits, 10);
  const capped = await store.settle(c2.reservation!, 0);
  t.is(capped.remainingSecond, 49, 'a refund never fills the bucket above its capacity');
});

test('a settle after midnight leaves the new day alone', async (t) => {
  const c = clock(Date.UTC(2026, 10, 28, 23, 59, 59));
  const store = new MemoryCreditStore({ now: c.read });
  const limits = { perDay: 100 };
  const r = await store.take('k', limits, 50);
  c.advance(2000);
  const left = await store.settle(r.reservation!, 80);
  t.is(left.remainingDay, 100);
});

test('concurrency: a key holds at most `concurrent` requests; a settle frees a slot', async (t) => {
  const store = new MemoryCreditStore({ now: clock().read });
  const limits = { concurrent: 2 };
  const a = await store.take('k', limits, 1);
  const b = await store.take('k', limits, 1);
  t.true(a.allowed && b.allowed);
  const refused = await store.take('k', limits, 1);
  t.false(refused.allowed);
  t.is(refused.refusal, 'concurrent');
  t.is(refused.retryAfterSeconds, 1);
  await store.settle(a.reservation!, 1);
  t.true((await store.take('k', limits, 1)).allowed);
});

test('several limits refusing: the verdict names the longest wait', async (t) => {
  const c = clock(Date.UTC(2026, 10, 28, 22, 0, 0));
  const store = new MemoryCreditStore({ now: c.read });
  const limits = { perSecond: 10, perDay: 15, concurrent: 1 };
  t.true((await store.take('k', limits, 10)).allowed);
  const refused = await store.take('k', limits, 10);
  t.is(refused.refusal, 'day');
  t.is(refused.retryAfterSeconds, 7200);
});

test('the UTC day and the seconds to its end', (t) => {
  t.is(utcDay(Date.UTC(1970, 0, 2, 0, 0, 0)), 1);
  t.is(secondsToMidnight(Date.UTC(2026, 10, 28, 23, 59, 59, 500)), 1);
  t.is(secondsToMidnight(Date.UTC(2026, 10, 28, 0, 0, 0)), 86_400);
});

test("the memory store forgets keys whose state is a fresh key's, and keeps the others", async (t) => {
  const c = clock(Date.UTC(2026, 10, 28, 23, 0, 0));
  const store = new MemoryCreditStore({ now: c.read });
  const second = { perSecond: 10 };
  const refilling = await store.take('refilling', second, 10);
  await store.settle(refilling.reservation!, 10);
  const held = await store.take('in-flight', { concurrent: 5 }, 1);
  const spent = await store.take('spent-today', { perDay: 100 }, 30);
  await store.settle(spent.reservation!, 30);
  t.is(store.size, 3);
  c.advance(500);
  store.sweep();
  t.is(store.size, 3, 'a bucket still refilling, a request in flight, credits spent today: kept');
  c.advance(3600 * 1000);
  store.sweep();
  t.is(store.size, 1, 'refilled, and a new UTC day: forgotten');
  await store.settle(held.reservation!, 1);
  store.sweep();
  t.is(store.size, 0);
  t.true((await store.take('spent-today', { perDay: 100 }, 100)).allowed, 'a forgotten key starts as a new one');
});
