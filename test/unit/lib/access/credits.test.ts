import test from 'ava';
import { MemoryCreditStore } from '../../../../lib/access/buckets.js';
import { CreditEngine, costOf, creditHeaders, defaultWeights, estimateOf, weightOf } from '../../../../lib/access/credits.js';

test('a heavier method weighs more: eth_getLogs above eth_call above eth_blockNumber above eth_chainId', (t) => {
  t.true(weightOf('eth_getLogs') > weightOf('eth_call'));
  t.true(weightOf('eth_call') > weightOf('eth_blockNumber'));
  t.true(weightOf('eth_blockNumber') > weightOf('eth_chainId'));
  t.true(Object.values(defaultWeights).every((w) => Number.isInteger(w) && w >= 1), 'every default weight is a whole credit or more');
});

test('an answer costs its weight × the upstream calls it took: N=3 costs three times N=1', (t) => {
  const one = costOf('eth_getBalance', 1, false);
  t.is(one, weightOf('eth_getBalance'));
  t.is(costOf('eth_getBalance', 3, false), 3 * one);
  t.is(costOf('eth_getBalance', 4, false), 4 * one, 'a missing vote or a hedge adds its call');
});

test('a cache hit costs what the operator sets, whatever the method; 1 by default', (t) => {
  t.is(costOf('eth_getLogs', 0, true), 1);
  t.is(costOf('eth_getLogs', 0, true, { cacheHit: 5 }), 5);
  t.is(costOf('eth_getLogs', 0, true, { cacheHit: 0 }), 0);
});

test('the operator overrides weights, the weight of unknown methods and the minimum', (t) => {
  t.is(weightOf('eth_call', { weights: { eth_call: 3 } }), 3);
  t.is(weightOf('eth_getBalance', { weights: { eth_call: 3 } }), weightOf('eth_getBalance'), 'the other defaults stay');
  t.is(weightOf('vendor_fancy'), 20);
  t.is(weightOf('vendor_fancy', { defaultWeight: 7 }), 7);
  t.is(weightOf('toString'), 20, 'an Object.prototype name is not a weight');
  t.is(costOf('eth_call', 0, false), 1, 'an answer without an upstream call costs the minimum');
  t.is(costOf('eth_call', 0, false, { minimum: 0 }), 0);
  t.is(costOf('eth_chainId', 1, false, { weights: { eth_chainId: 0 }, minimum: 0 }), 0);
});

test('the estimate is weight × N, summed over a batch', (t) => {
  t.is(estimateOf('eth_call', 2), 2 * weightOf('eth_call'));
  t.is(estimateOf(['eth_call', 'eth_getLogs'], 3), 3 * (weightOf('eth_call') + weightOf('eth_getLogs')));
  t.is(estimateOf('eth_call', 0), weightOf('eth_call'), 'N is at least 1');
});

test('the engine reserves the estimate and settles the real cost: a cache hit is refunded', async (t) => {
  const now = Date.UTC(2026, 10, 28, 12);
  const engine = new CreditEngine(new MemoryCreditStore({ now: () => now }), { cacheHit: 2 });
  const limits = { perDay: 1000 };
  const verdict = await engine.reserve('k', limits, 'eth_getLogs', 3);
  t.true(verdict.allowed);
  t.is(verdict.remainingDay, 1000 - 180);
  const settled = await engine.settle(verdict.reservation!, [{ method: 'eth_getLogs', upstreamCalls: 0, cacheHit: true }]);
  t.is(settled.credits, 2);
  t.is(settled.remainingDay, 998);
  const more = await engine.reserve('k', limits, ['eth_call', 'eth_call'], 1);
  const spent = await engine.settle(more.reservation!, [
    { method: 'eth_call', upstreamCalls: 1, cacheHit: false },
    { method: 'eth_call', upstreamCalls: 2, cacheHit: false },
  ]);
  t.is(spent.credits, 3 * 26, "a hedge's extra call is charged at the settle");
  t.is(spent.remainingDay, 998 - 78);
});

test('the headers say the cost, what is left of each limit set, and Retry-After on a refusal', (t) => {
  t.deepEqual(creditHeaders(52, { remainingSecond: 48.7, remainingDay: 900 }), [
    ['X-Credits', '52'],
    ['X-Credits-Remaining-Second', '48'],
    ['X-Credits-Remaining-Day', '900'],
  ]);
  t.deepEqual(creditHeaders(0, { remainingSecond: Infinity, remainingDay: 0 }, 3600), [
    ['X-Credits', '0'],
    ['X-Credits-Remaining-Day', '0'],
    ['Retry-After', '3600'],
  ]);
  t.deepEqual(creditHeaders(1, { remainingSecond: NaN, remainingDay: NaN }), [['X-Credits', '1']], 'not known: left out');
});
