import test from 'ava';
import { validateConfig } from '../../../../config/schema.js';
import { newHealth, recordSuccess, type Health } from '../../../../lib/health/health.js';
import { WindowedSketch, methodClassOf, qualityOf, recordAbandoned, recordAnswered, recordProbe, recordProbeRound, recordStart, scoreOf, trackCall, windowMs } from '../../../../lib/health/quality.js';
import { HedgeBudget, hedgeDelay } from '../../../../lib/verify/hedge-policy.js';
import { arrange, rankTiers, slowMinSamples, type Rankable } from '../../../../lib/upstream/select.js';

interface U extends Rankable {
  name: string;
}

/** Upstreams that answered once (not "never succeeded"), with the given recent latencies (class read). */
function ups(latencies: number[][], extra: Partial<U>[] = []): U[] {
  return latencies.map((ms, index) => {
    const health: Health = { ...newHealth(), successes: 1 };
    for (const m of ms) recordAnswered(undefined, health, m, 'read', 0);
    return { index, health, name: `u${index}`, ...extra[index] };
  });
}

const names = (list: U[]) => list.map((u) => u.name);
const rank = (list: U[]) => rankTiers(list, 0, 'read');

test('should class eth_getLogs as logs, eth_call and gas estimates as call, the rest as read (a batch by its heaviest)', (t) => {
  t.is(methodClassOf([{ method: 'eth_getLogs' }]), 'logs');
  t.is(methodClassOf([{ method: 'eth_estimateGas' }]), 'call');
  t.is(methodClassOf([{ method: 'eth_getBalance' }]), 'read');
  t.is(methodClassOf([{ method: 'eth_getBalance' }, { method: 'eth_call' }]), 'call');
  t.is(methodClassOf(undefined), 'read');
});

test('should rank an upstream far slower than the chain median behind its peers after two samples', (t) => {
  const list = ups([[600, 600], [3, 4], [2, 5], [4, 3], [3, 3]]);
  t.deepEqual(names(rank(list).ranked), ['u1', 'u2', 'u3', 'u4', 'u0']);
  t.deepEqual(rank(list).tiers, [0, 0, 0, 0, 1]);
});

test('should demote an upstream whose calls were abandoned twice of three, even under the floor (an adaptive hedge cuts them short)', (t) => {
  const list = ups([[], [2, 2], [3, 2], [2, 3], [2, 2]]);
  recordAbandoned(list[0]!.health, 22, 'read', 0); // the hedge after 20 ms answered first
  t.deepEqual(rank(list).tiers, [0, 0, 0, 0, 0], 'one lost race is no evidence');
  recordAbandoned(list[0]!.health, 23, 'read', 0);
  t.deepEqual(names(rank(list).ranked), ['u1', 'u2', 'u3', 'u4', 'u0']);
  t.deepEqual(rank(list).tiers, [0, 0, 0, 0, 1]);
  recordAnswered(undefined, list[0]!.health, 2, 'read', 0);
  t.deepEqual(rank(list).tiers, [0, 0, 0, 0, 0], 'a fast answer again (an explore request): back at once');
});

test('should not demote for lost races when the abandoned calls were no slower than the chain', (t) => {
  // Equal upstreams at ~300 ms: calls abandoned at 300–400 ms are within 1.5× of the median.
  const list = ups([[300], [300, 310], [290, 300]]);
  recordAbandoned(list[0]!.health, 320, 'read', 0);
  recordAbandoned(list[0]!.health, 330, 'read', 0);
  t.deepEqual(rank(list).tiers, [0, 0, 0]);
});

test('should not demote on one outlier (lower median of the recent samples)', (t) => {
  const list = ups([[600, 3], [3, 4], [2, 5]]);
  t.deepEqual(names(rank(list).ranked), ['u0', 'u1', 'u2']);
});

test('should not reorder for ordinary jitter or below the floor', (t) => {
  t.deepEqual(names(rank(ups([[9, 9], [3, 3], [3, 3]])).ranked), ['u0', 'u1', 'u2'], '3× the median but under the 50 ms floor');
  t.deepEqual(names(rank(ups([[250, 250], [120, 120], [100, 100]])).ranked), ['u0', 'u1', 'u2'], 'above the floor, within 3× of the median');
});

test('should count an abandoned call as a sample of at least its time', (t) => {
  const list = ups([[], [3, 4], [2, 5]]);
  recordAbandoned(list[0]!.health, 400, 'read', 0);
  recordAbandoned(list[0]!.health, 400, 'read', 0);
  t.deepEqual(names(rank(list).ranked), ['u1', 'u2', 'u0']);
  t.is(qualityOf(list[0]!.health).abandoned, 2);
});

test('should judge each method class on its own', (t) => {
  const list = ups([[3, 3], [3, 3], [3, 3]]);
  for (const u of list) for (const ms of [200, 210]) recordAnswered(undefined, u.health, ms, 'logs', 0);
  t.deepEqual(names(rankTiers(list, 0, 'logs').ranked), ['u0', 'u1', 'u2'], 'slow logs everywhere is nobody slow');
  recordAnswered(undefined, list[0]!.health, 900, 'call', 0);
  recordAnswered(undefined, list[0]!.health, 900, 'call', 0);
  recordAnswered(undefined, list[1]!.health, 5, 'call', 0);
  recordAnswered(undefined, list[1]!.health, 5, 'call', 0);
  recordAnswered(undefined, list[2]!.health, 5, 'call', 0);
  recordAnswered(undefined, list[2]!.health, 5, 'call', 0);
  t.deepEqual(names(rankTiers(list, 0, 'call').ranked), ['u1', 'u2', 'u0']);
  t.deepEqual(names(rankTiers(list, 0, 'read').ranked), ['u0', 'u1', 'u2'], 'its reads are as fast as the others');
});

test('should bring a demoted upstream back after one fast probe (a re-measurement)', (t) => {
  const list = ups([[600, 600, 600, 600], [3, 4], [2, 5]]);
  t.is(rank(list).ranked.at(-1)!.name, 'u0');
  recordProbe(list[0]!.health, 4, 0);
  t.deepEqual(names(rank(list).ranked), ['u0', 'u1', 'u2']);
  recordAnswered(undefined, list[1]!.health, 3, 'read', 0);
  recordProbe(list[1]!.health, 700, 0);
  t.deepEqual(names(rank(list).ranked), ['u0', 'u1', 'u2'], 'one slow probe among fast samples is not enough');
});

test('should bring a demoted upstream back after a probe round where it was not slow, on a loaded machine too', (t) => {
  const list = ups([[600, 600, 600], [3, 4], [2, 5]]);
  t.is(rank(list).ranked.at(-1)!.name, 'u0');
  // Every probe of the round is slow (a busy machine): u0's is no slower than the others'.
  recordProbeRound(list.map((u, i) => ({ health: u.health, ms: [250, 200, 220][i]! })), 0);
  t.is(rank(list).ranked[0]!.name, 'u0');
  const again = ups([[600, 600, 600], [3, 4], [2, 5]]);
  recordProbeRound(again.map((u, i) => ({ health: u.health, ms: [600, 3, 4][i]! })), 0);
  t.is(rank(again).ranked.at(-1)!.name, 'u0', 'still slow in the round: still behind');
});

test('should bring back an upstream fast again whose latency average held its slow answers (a re-measurement restarts the average too)', (t) => {
  // Health records as answers leave them: u0 answered 4 fast calls, then two of 1 s; its peers a few ms.
  const withAverage = (list: U[]) => {
    for (const [i, u] of list.entries()) for (const ms of i === 0 ? [2, 2, 2, 2, 1000, 1000] : [2, 3, 2, 3, 2, 3]) recordSuccess(u.health, ms);
    return list;
  };
  const list = withAverage(ups([[2, 2, 1000, 1000], [2, 3], [3, 2]]));
  t.true(list[0]!.health.latencyMs! > 300 && list[0]!.health.successes >= slowMinSamples);
  t.is(rank(list).ranked.at(-1)!.name, 'u0');
  // The probe round finds it fast again (its average still over 3× the fastest + 100 ms).
  recordProbeRound(list.map((u, i) => ({ health: u.health, ms: [4, 3, 4][i]! })), 0);
  t.deepEqual(rank(list).tiers, [0, 0, 0]);
  // So does an explore request's fast answer.
  const explored = withAverage(ups([[2, 2, 1000, 1000], [2, 3], [3, 2]]));
  recordAnswered(undefined, explored[0]!.health, 2, 'read', 0);
  t.deepEqual(rank(explored).tiers, [0, 0, 0]);
  t.is(explored[0]!.health.latencySamples, 0, 'its usable answers start the average again');
  // A fast upstream re-measured by a slower probe (its recent median above the probe, the probe
  // above its average) keeps its average.
  const fast = ups([[9, 9], [2, 3], [3, 2]]);
  for (const u of fast) for (const ms of [2, 3, 2, 3, 2]) recordSuccess(u.health, ms);
  const kept = fast[0]!.health.latencyMs;
  recordProbeRound(fast.map((u, i) => ({ health: u.health, ms: [6, 5, 6][i]! })), 0);
  t.is(fast[0]!.health.latencySamples, 5);
  t.is(fast[0]!.health.latencyMs, kept);
  // A probe round that re-measures nothing (it is as slow as it was) leaves the average as it is.
  const still = withAverage(ups([[], [2, 3], [3, 2]]));
  recordProbeRound(still.map((u, i) => ({ health: u.health, ms: [1000, 3, 4][i]! })), 0);
  t.is(rank(still).ranked.at(-1)!.name, 'u0');
});

test('should bring back an upstream demoted by lost races when a probe answers below them, even a slow probe of the round', (t) => {
  const list = ups([[], [2, 2], [3, 2]]);
  recordAbandoned(list[0]!.health, 24, 'read', 0);
  recordAbandoned(list[0]!.health, 25, 'read', 0);
  t.is(rank(list).ranked.at(-1)!.name, 'u0');
  // Its probe (a fresh connection on a loaded machine) is 5× the round's median, but below the 24 ms it was cut short at.
  recordProbeRound(list.map((u, i) => ({ health: u.health, ms: [15, 3, 3][i]! })), 0);
  t.deepEqual(rank(list).tiers, [0, 0, 0]);
  const again = ups([[], [2, 2], [3, 2]]);
  recordAbandoned(again[0]!.health, 24, 'read', 0);
  recordAbandoned(again[0]!.health, 25, 'read', 0);
  recordProbeRound(again.map((u, i) => ({ health: u.health, ms: [40, 3, 3][i]! })), 0);
  t.is(rank(again).ranked.at(-1)!.name, 'u0', 'a probe slower than the races it lost: still behind');
});

test('should bring back an upstream demoted by lost races when its probe is above them but no slower than its peers (a loaded machine)', (t) => {
  const list = ups([[], [2, 2], [3, 2]]);
  recordAbandoned(list[0]!.health, 24, 'read', 0);
  recordAbandoned(list[0]!.health, 25, 'read', 0);
  t.is(rank(list).ranked.at(-1)!.name, 'u0');
  // Every probe of the round is slow; u0's 30 ms is above the 24 ms it was cut short at, but within 3× the round's median.
  recordProbeRound(list.map((u, i) => ({ health: u.health, ms: [30, 20, 25][i]! })), 0);
  t.deepEqual(rank(list).tiers, [0, 0, 0]);
});

test('should not let the slow probe that brought an upstream back demote it again with one stalled answer (a loaded machine)', (t) => {
  const list = ups([[], [1, 1, 1], [1, 1, 1]]);
  for (let i = 0; i < 3; i += 1) recordAbandoned(list[0]!.health, 85, 'read', 0);
  t.is(rank(list).ranked.at(-1)!.name, 'u0');
  // Every probe of the round takes ~285 ms (fresh connections on a loaded machine): u0 is back.
  recordProbeRound(list.map((u, i) => ({ health: u.health, ms: [283, 287, 288][i]! })), 0);
  t.deepEqual(rank(list).tiers, [0, 0, 0]);
  // Its first call answers in 120 ms (a stall): one outlier, not evidence; the probe's 283 ms is no traffic latency.
  recordAnswered(undefined, list[0]!.health, 120, 'read', 0);
  t.deepEqual(rank(list).tiers, [0, 0, 0]);
  // Two such answers are.
  recordAnswered(undefined, list[0]!.health, 120, 'read', 0);
  t.is(rank(list).ranked.at(-1)!.name, 'u0');
});

test('should keep the trouble tiers above measured slowness (cooling, lagging, distrusted)', (t) => {
  const list = ups([[600, 600], [3, 3], [3, 3]], [{}, { health: { ...newHealth(), successes: 1, coolingUntil: 10 } as Health }]);
  recordAnswered(undefined, list[1]!.health, 3, 'read', 0);
  recordAnswered(undefined, list[1]!.health, 3, 'read', 0);
  t.deepEqual(names(rank(list).ranked), ['u2', 'u0', 'u1']);
});

test('should share N=1 load exactly between equal upstreams (balanced)', (t) => {
  const list = ups([[3, 3], [3, 3], [3, 3], [3, 3]]);
  const count = new Map<string, number>();
  for (let i = 0; i < 400; i += 1) {
    const { ranked, tiers } = rank(list);
    const first = arrange(ranked, tiers, { strategy: 'balanced', required: 1, cls: 'read', now: 0 })[0]!;
    count.set(first.name, (count.get(first.name) ?? 0) + 1);
  }
  t.deepEqual([...count.values()], [100, 100, 100, 100]);
});

test('should share by weight 3:1 and prefer the least loaded', (t) => {
  const list = ups([[3, 3], [3, 3]], [{ weight: 3 }, { weight: 1 }]);
  const count = [0, 0];
  for (let i = 0; i < 400; i += 1) {
    const { ranked, tiers } = rank(list);
    count[arrange(ranked, tiers, { strategy: 'balanced', required: 1, cls: 'read', now: 0 })[0]!.index]! += 1;
  }
  t.deepEqual(count, [300, 100]);
  recordStart(list[0]!.health, 0);
  recordStart(list[0]!.health, 0);
  recordStart(list[0]!.health, 0);
  recordStart(list[0]!.health, 0);
  const { ranked, tiers } = rank(list);
  t.is(arrange(ranked, tiers, { strategy: 'balanced', required: 1, cls: 'read', now: 0 })[0]!.name, 'u1', '4 in flight / weight 3 is more than 0 / 1');
});

test('should keep list order under priority, and for N ≥ 2 (no reorder within the best tier)', (t) => {
  const list = ups([[140, 140], [60, 60], [60, 60], [100, 100]]);
  const { ranked, tiers } = rank(list);
  t.deepEqual(names(arrange(ranked, tiers, { strategy: 'priority', required: 1, cls: 'read', now: 0 })), ['u0', 'u1', 'u2', 'u3']);
  t.deepEqual(names(arrange(ranked, tiers, { strategy: 'balanced', required: 2, cls: 'read', now: 0 })), ['u0', 'u1', 'u2', 'u3']);
});

test('should skip an upstream at its cap (in flight or per second), not drop it', (t) => {
  const list = ups([[3, 3], [3, 3]], [{ maxConcurrent: 1 }, { maxRps: 2 }]);
  recordStart(list[0]!.health, 0);
  const { ranked, tiers } = rank(list);
  const opts = { strategy: 'priority' as const, required: 1, cls: 'read' as const };
  t.deepEqual(names(arrange(ranked, tiers, { ...opts, now: 0 })), ['u1', 'u0']);
  recordStart(list[1]!.health, 500);
  recordStart(list[1]!.health, 900);
  t.deepEqual(names(arrange(ranked, tiers, { ...opts, now: 999 })), ['u0', 'u1'], 'both at their cap: list order');
  t.deepEqual(names(arrange(ranked, tiers, { ...opts, now: 1000 })), ['u1', 'u0'], 'a new second');
});

test('should put a slow upstream first on an explore request (re-measured by traffic)', (t) => {
  const list = ups([[600, 600], [3, 3], [3, 3]]);
  const { ranked, tiers } = rank(list);
  t.is(arrange(ranked, tiers, { strategy: 'balanced', required: 1, cls: 'read', now: 0, explore: true })[0]!.name, 'u0');
  t.not(arrange(ranked, tiers, { strategy: 'balanced', required: 1, cls: 'read', now: 0 })[0]!.name, 'u0');
});

test('should follow the chain quantile of answered calls for the hedge delay, within bounds', (t) => {
  const bounds = { minMs: 20, maxMs: 1000, quantile: 0.9 };
  const slow = {};
  const fast = {};
  const h = newHealth();
  t.is(hedgeDelay(slow, 'read', bounds, 0), 0, 'no samples yet: no hedging');
  for (let i = 0; i < 50; i += 1) recordAnswered(slow, h, 280 + (i % 10) * 4, 'read', 0);
  for (let i = 0; i < 50; i += 1) recordAnswered(fast, h, 5, 'read', 0);
  const d = hedgeDelay(slow, 'read', bounds, 0);
  t.true(d >= 300 && d <= 330, `~300 ms: ${d}`);
  t.is(hedgeDelay(fast, 'read', bounds, 0), 20, 'never below the minimum');
  t.is(hedgeDelay(fast, 'read', { ...bounds, minMs: 1 }, 0), 5);
  t.is(hedgeDelay(fast, 'logs', bounds, 0), 0, 'per class');
  t.is(hedgeDelay(slow, 'read', { ...bounds, fixedMs: 250 }, 0), 250, 'timeouts.hedgeMs is a fixed override');
  t.is(hedgeDelay(slow, 'read', bounds, 2 * windowMs), 0, 'the window slides: old samples are gone');
});

test('should spend at most the hedging budget', (t) => {
  t.false(new HedgeBudget(0.1, 2).canHedge(), 'nothing to spend before a first call');
  const b = new HedgeBudget(0.1, 2, 2);
  t.true(b.tryHedge());
  t.true(b.tryHedge());
  t.false(b.tryHedge(), 'burst spent');
  for (let i = 0; i < 9; i += 1) b.onCall();
  t.false(b.tryHedge());
  b.onCall();
  t.true(b.tryHedge(), 'one hedge per ten calls');
  t.throws(() => new HedgeBudget(2));
});

test('should tell whether a hedge may go without taking a token; spend takes them', (t) => {
  const b = new HedgeBudget(0.1, 2, 2);
  t.true(b.canHedge());
  t.true(b.canHedge(), 'asking is free');
  b.spend(2);
  t.false(b.canHedge());
  b.onCalls(5); // five first calls: half a token
  t.false(b.canHedge());
  b.onCalls(5);
  t.true(b.canHedge());
});

test('should slide the sketch window', (t) => {
  const s = new WindowedSketch(0, 1000);
  s.accept(10, 0);
  t.is(s.count(400), 1);
  s.accept(20, 600);
  t.is(s.count(900), 2);
  t.is(s.count(1200), 1, 'the first half rotated out');
  t.is(s.count(5000), 0);
  t.is(s.quantile(0.5, 5000), undefined);
});

test('should track a call: in flight, answered, failed, abandoned', async (t) => {
  const h = newHealth();
  let clock = 0;
  const signal = { aborted: false };
  const p = trackCall({}, h, 'read', signal, () => Promise.resolve('ok'), () => clock);
  t.is(qualityOf(h).inFlight, 1);
  clock = 7;
  await p;
  await Promise.resolve();
  t.is(qualityOf(h).inFlight, 0);
  t.is(qualityOf(h).answered, 1);
  await t.throwsAsync(trackCall({}, h, 'read', signal, () => Promise.reject(new Error('refused')), () => clock));
  t.is(qualityOf(h).errors, 1);
  const aborted = { aborted: true };
  const abandon = () => {
    clock += 20;
    return Promise.reject(new Error('aborted'));
  };
  await t.throwsAsync(trackCall({}, h, 'read', aborted, abandon, () => clock));
  t.is(qualityOf(h).abandoned, 1);
  t.is(qualityOf(h).errorRate, 0.5);
  t.is(scoreOf(h), 7 * (1 + 4 * 0.5));
});

test('should validate strategy, weight and caps with path-named errors', (t) => {
  const r = validateConfig({
    chains: {
      1: {
        strategy: 'fastest',
        rpcs: [{ url: 'https://a.example', weight: 0 }, { url: 'https://b.example', maxConcurrent: 1.5 }, { url: 'https://c.example', maxRps: -1 }],
      },
    },
    timeouts: { hedgeQuantile: 2, hedgeBudget: 'x' },
  });
  t.true('problems' in r);
  const paths = 'problems' in r ? r.problems.map((p) => p.path).sort() : [];
  t.deepEqual(paths, ['chains.1.rpcs[0].weight', 'chains.1.rpcs[1].maxConcurrent', 'chains.1.rpcs[2].maxRps', 'chains.1.strategy', 'timeouts.hedgeBudget', 'timeouts.hedgeQuantile']);
  const ok = validateConfig({ chains: { 1: { strategy: 'priority', rpcs: [{ url: 'https://a.example', weight: 3, maxConcurrent: 5, maxRps: 10 }, 'https://b.example'] } }, timeouts: { hedgeMs: 300 } });
  t.true('config' in ok);
  if ('config' in ok) {
    t.is(ok.config.chains['1']!.strategy, 'priority');
    t.deepEqual(ok.config.chains['1']!.upstreamLimits, [{ weight: 3, maxConcurrent: 5, maxRps: 10 }, {}]);
    t.false(ok.config.timeouts.hedgeAdaptive);
  }
});
