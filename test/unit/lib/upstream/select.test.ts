import test from 'ava';
import { newHealth, type Health } from '../../../../lib/health/health.js';
import { recordAbandoned, recordAnswered } from '../../../../lib/health/quality.js';
import { maxLagBlocks, rankUpstreams, slowClasses, slowMinSamples, spreadProviders } from '../../../../lib/upstream/select.js';

const now = 1_000_000;
const up = (index: number, health: Partial<Health> = {}) => ({ index, name: `u${index}`, health: { ...newHealth(), ...health } });
const names = (list: { name: string }[]) => list.map((u) => u.name);

const cases: [string, ReturnType<typeof up>[], string[]][] = [
  ['keep the configured order when all are healthy', [up(0), up(1), up(2)], ['u0', 'u1', 'u2']],
  ['sort by configured position whatever the input order', [up(2), up(0), up(1)], ['u0', 'u1', 'u2']],
  ['put a cooling-down upstream last', [up(0, { coolingUntil: now + 1 }), up(1), up(2)], ['u1', 'u2', 'u0']],
  ['keep cooling-down upstreams in configured order among themselves', [up(2, { coolingUntil: now + 5 }), up(0, { coolingUntil: now + 50_000 }), up(1)], ['u1', 'u0', 'u2']],
  ['rank an upstream whose cool-down has ended as healthy', [up(0, { coolingUntil: now }), up(1)], ['u0', 'u1']],
  ['rank an upstream whose cool-down ended in the past as healthy', [up(0, { coolingUntil: now - 1 }), up(1)], ['u0', 'u1']],
  ['ignore failure counts below the cool-down threshold', [up(0, { successes: 1, failures: 9, consecutiveFailures: 1 }), up(1)], ['u0', 'u1']],
  ['put an upstream that failed and never answered after one that answered', [up(0, { failures: 1, consecutiveFailures: 1 }), up(1, { successes: 1 })], ['u1', 'u0']],
  ['put an upstream that failed and never answered after a cooling-down one that once answered', [up(0, { failures: 1, consecutiveFailures: 1 }), up(1, { successes: 1, failures: 2, coolingUntil: now + 1 })], ['u1', 'u0']],
  ['not demote an upstream that was never tried', [up(0), up(1, { successes: 1 })], ['u0', 'u1']],
  ['keep every upstream when all failed and never answered (the balancer still tries)', [up(1, { failures: 3 }), up(0, { failures: 1, coolingUntil: now + 9 })], ['u1', 'u0']],
  ['put a slow upstream (latency over 3× the fastest + 100 ms) after the fast ones', [up(0, { latencyMs: 900, successes: slowMinSamples, latencySamples: slowMinSamples }), up(1, { latencyMs: 5 }), up(2)], ['u1', 'u2', 'u0']],
  ['not call an upstream slow on fewer answers than slowMinSamples (one cold-start outlier)', [up(0, { latencyMs: 900, successes: slowMinSamples - 1, latencySamples: slowMinSamples - 1 }), up(1, { latencyMs: 5, successes: 1 })], ['u0', 'u1']],
  ['ignore ordinary latency differences (configured order stands)', [up(0, { latencyMs: 90 }), up(1, { latencyMs: 5 })], ['u0', 'u1']],
  ['rank slow after lagging', [up(0, { lag: 100 }), up(1, { latencyMs: 900, successes: 50, latencySamples: 50 }), up(2, { latencyMs: 5 })], ['u2', 'u1', 'u0']],
  ['keep the configured order when all are cooling down', [up(1, { coolingUntil: now + 9 }), up(0, { coolingUntil: now + 9 })], ['u0', 'u1']],
  ['return an empty list for no candidates', [], []],
  ['put a lagging upstream after the ones that keep up', [up(0, { lag: maxLagBlocks + 1 }), up(1), up(2)], ['u1', 'u2', 'u0']],
  ['not count a lag of exactly maxLagBlocks as lagging', [up(0, { lag: maxLagBlocks }), up(1)], ['u0', 'u1']],
  ['rank cooling down after lagging', [up(0, { coolingUntil: now + 1 }), up(1, { lag: 100 }), up(2)], ['u2', 'u1', 'u0']],
  ['leave out an upstream that reported another chain id', [up(0, { wrongChainId: '5' }), up(1), up(2, { coolingUntil: now + 1 })], ['u1', 'u2']],
  ['return an empty list when every upstream is on another chain', [up(0, { wrongChainId: '5' })], []],
];

for (const [name, candidates, expected] of cases) {
  test(`should ${name}`, (t) => {
    t.deepEqual(names(rankUpstreams(candidates, now)), expected);
  });
}

test('should give the same ranking for the same state, every time', (t) => {
  const candidates = [up(3), up(1, { coolingUntil: now + 1 }), up(0), up(2)];
  const first = names(rankUpstreams(candidates, now));
  for (let i = 0; i < 20; i++) t.deepEqual(names(rankUpstreams([...candidates].reverse(), now)), first);
  t.deepEqual(first, ['u0', 'u2', 'u3', 'u1']);
});

test('should not reorder the caller\'s array', (t) => {
  const candidates = [up(1), up(0)];
  rankUpstreams(candidates, now);
  t.deepEqual(names(candidates), ['u1', 'u0']);
});

test('should return the same objects it was given', (t) => {
  const candidates = [up(1), up(0)];
  const ranked = rankUpstreams(candidates, now);
  t.is(ranked[0], candidates[1]);
  t.is(ranked[1], candidates[0]);
});

test('should rank a distrusted upstream after all the others, cooling down and lagging included', (t) => {
  t.deepEqual(names(rankUpstreams([up(0, { distrusted: true }), up(1, { coolingUntil: now + 1 }), up(2, { lag: 100 }), up(3)], now)), ['u3', 'u2', 'u1', 'u0']);
  t.deepEqual(names(rankUpstreams([up(0, { distrusted: true }), up(1, { distrusted: true, coolingUntil: now + 1 }), up(2, { distrusted: true })], now)), ['u0', 'u2', 'u1']);
});

const of = (index: number, provider: string, health: Partial<Health> = {}) => ({ ...up(index, health), provider });

test('should put the best upstream of each provider first, then the others, in rank order', (t) => {
  const ranked = [of(0, 'a'), of(1, 'a'), of(2, 'b'), of(3, 'a'), of(4, 'c'), of(5, 'b')];
  const { ordered, distinct } = spreadProviders(ranked);
  t.deepEqual(names(ordered), ['u0', 'u2', 'u4', 'u1', 'u3', 'u5']);
  t.is(distinct, 3);
});

test('should keep the list as it is when every upstream is its own provider', (t) => {
  const ranked = [of(0, 'a'), of(1, 'b'), of(2, 'c')];
  const { ordered, distinct } = spreadProviders(ranked);
  t.is(ordered, ranked);
  t.is(distinct, 3);
});

test('should count no provider for an empty list', (t) => {
  t.deepEqual(spreadProviders([]), { ordered: [], distinct: 0 });
});

test('slowClasses should name, per upstream, the classes in which the ranking puts it behind as slow', (t) => {
  const list = [up(0), up(1), up(2), up(3, { latencyMs: 900, successes: slowMinSamples, latencySamples: slowMinSamples }), up(4, { latencyMs: 5 })];
  for (const u of list) for (const ms of [2, 3, 2]) recordAnswered(undefined, u.health, ms, 'read', 0);
  for (const u of list) for (const ms of [40, 45, 50]) recordAnswered(undefined, u.health, ms, 'logs', 0);
  // u0 lost two read races of its last three (abandoned after 22 and 23 ms): slow for reads only.
  recordAbandoned(list[0]!.health, 22, 'read', 0);
  recordAbandoned(list[0]!.health, 23, 'read', 0);
  // u1's logs take 400 ms: above 3× the chain's median (45 ms) and the 50 ms floor.
  for (const ms of [400, 410, 420]) recordAnswered(undefined, list[1]!.health, ms, 'logs', 0);
  const slow = slowClasses(list, now);
  t.deepEqual(list.map((u) => slow.get(u)), [['read'], ['logs'], [], ['read', 'call', 'logs'], []]);
  // What the ranking does with it: behind the others for that class.
  t.deepEqual(names(rankUpstreams(list, now, 'read')).at(-2), 'u0');
  t.deepEqual(names(rankUpstreams(list, now, 'logs')).slice(-2), ['u1', 'u3']);
});
