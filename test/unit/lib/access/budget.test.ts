/**
 * The budgets applied to requests (lib/access/budget.ts): a plan only for a grant with a budget
 * field, its limits and prices; with the memory store a reservation is synchronous; a refusal is
 * a 429 (-32020) with the client's id, Retry-After and the credit headers, counted by label and
 * reason; a settle is applied once; where the budgets are kept (access.redis over cache.redis).
 */
import test from 'ava';
import { Budgets, budgetRedis, hasBudgets, pushCreditHeaders, type Charge } from '../../../../lib/access/budget.js';
import { buildKeyring, keyDigest } from '../../../../lib/access/keyring.js';
import { AccessCounts } from '../../../../lib/access/metrics.js';
import { GatewayError } from '../../../../lib/errors.js';
import type { AccessKey } from '../../../../config/types.js';

const rights = { denyMethods: [], writes: true, cacheBypass: false, admin: false };
const entry = (label: string, extra: Partial<AccessKey>): AccessKey => ({ ...rights, label, keySha256: keyDigest(`${label}-key-0123456789abcdef`), ...extra });

function setup(now = Date.UTC(2026, 10, 28, 12)) {
  const ring = buildKeyring({
    keys: [entry('metered', { creditsPerSecond: 100, creditsPerDay: 50, cacheHitCredits: 3, methodCredits: { eth_call: 5 } }), entry('free', {})],
    adminRoutes: 'keys',
  });
  const counts = new AccessCounts();
  const budgets = new Budgets(ring, counts, { now: () => now });
  return { ring, counts, budgets, metered: budgets.plan(ring.grants[0]!)!, free: ring.grants[1]! };
}

test('a plan for a grant with a budget field only, with its limits and its prices', (t) => {
  const { ring, budgets, metered, free } = setup();
  t.true(hasBudgets(ring));
  t.false(hasBudgets(buildKeyring({ keys: [entry('free', { cacheHitCredits: 2 })], adminRoutes: 'keys' })), 'prices alone are not a budget');
  t.is(budgets.plan(free), undefined);
  t.deepEqual(metered.limits, { perSecond: 100, perDay: 50 });
  t.is(budgets.estimateOf(metered, 'eth_call', 3), 15, 'the key\'s weight × N');
  t.is(budgets.estimateOf(metered, 'eth_getBalance', 0), 20, 'N below 1 counts as 1');
  t.is(budgets.costOf(metered, 'eth_getLogs', 2, true), 3, 'a cache hit costs the key\'s price');
});

test('with the memory store a reservation is synchronous; a settle is applied once and says what is left', (t) => {
  const { budgets, metered } = setup();
  const charge = budgets.reserve(metered, 40, 1);
  if (charge instanceof Promise || charge instanceof Error) return t.fail('a synchronous charge');
  t.is(charge.remainingDay, 10);
  t.is(budgets.settle(charge, 20), undefined);
  t.is(charge.remainingDay, 30);
  t.is(charge.credits, 20);
  budgets.settle(charge, 45);
  t.is(charge.remainingDay, 30, 'a second settle does nothing');
  const list: string[] = [];
  pushCreditHeaders(list, charge);
  t.deepEqual(list, ['X-Credits', '20', 'X-Credits-Remaining-Second', String(Math.floor(charge.remainingSecond)), 'X-Credits-Remaining-Day', '30']);
});

test('a refusal: 429, -32020 with the client\'s id, Retry-After and the credit headers, counted by label and reason', (t) => {
  const { budgets, metered, counts } = setup();
  const refused = budgets.reserve(metered, 60, 'req-7');
  if (!(refused instanceof GatewayError)) return t.fail('refused');
  t.is(refused.status, 429);
  t.is(refused.rpcCode, -32020);
  t.is(refused.rpcId, 'req-7');
  t.deepEqual(refused.data, { reason: 'day', key: 'metered', retryAfter: 12 * 3600 });
  t.deepEqual(refused.headers, { 'Retry-After': String(12 * 3600), 'X-Credits': '0', 'X-Credits-Remaining-Second': '100', 'X-Credits-Remaining-Day': '50' });
  t.is(counts.refusals.get('metered')?.get('day'), 1);
});

test('the budgets are kept in access.redis, else in cache.redis\'s Redis, else in memory', (t) => {
  const cache = { redis: { url: 'redis://cache:6379', prefix: 'c:' } };
  const own = { keys: [], adminRoutes: 'keys' as const, redis: { url: 'redis://own:6379', prefix: 'o:', timeoutMs: 80 } };
  t.deepEqual(budgetRedis({ access: own, cache }, 5_000), { url: 'redis://own:6379', prefix: 'o:', timeoutMs: 80, leaseMs: 35_000 });
  t.deepEqual(budgetRedis({ access: { keys: [], adminRoutes: 'keys' }, cache }, 5_000), { url: 'redis://cache:6379', prefix: 'c:', timeoutMs: 50, leaseMs: 35_000 });
  t.is(budgetRedis({ access: { keys: [], adminRoutes: 'keys' } }, 5_000), undefined);
  // The cache's Redis comes with the wait its operator gave it, not 50 ms under a Redis known slower.
  const slow = { redis: { url: 'redis://cache:6379', prefix: 'c:', timeoutMs: 400 } };
  t.is(budgetRedis({ access: { keys: [], adminRoutes: 'keys' }, cache: slow }, 5_000)?.timeoutMs, 400);
  t.is(budgetRedis({ access: own, cache: slow }, 5_000)?.timeoutMs, 80);
});

test('a charge is a fixed shape', (t) => {
  const { budgets, metered } = setup();
  const charge = budgets.reserve(metered, 1, null) as Charge;
  t.deepEqual(Object.keys(charge), ['plan', 'reservation', 'settled', 'credits', 'remainingSecond', 'remainingDay']);
});
