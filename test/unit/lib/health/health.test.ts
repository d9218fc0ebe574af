import test from 'ava';
import { failureThreshold, isUp, neverSucceeded, newHealth, recordFailure, recordSuccess, recordVote, upstreamState } from '../../../../lib/health/health.js';

const now = 1_000_000;

test('should start with empty counters and no cool-down', (t) => {
  t.like(newHealth(), {
    successes: 0,
    failures: 0,
    consecutiveFailures: 0,
    agreements: 0,
    disagreements: 0,
    latencyMs: undefined,
    coolingUntil: 0,
    lastError: undefined,
  });
  const h = newHealth();
  t.true('latencyMs' in h && 'lastError' in h, 'optional fields are present (shown by /chains)');
});

test('should give every upstream its own record', (t) => {
  const a = newHealth();
  recordFailure(a, 'x', now);
  t.is(newHealth().failures, 0);
});

test('should count a success and take its latency as the first estimate', (t) => {
  const h = newHealth();
  recordSuccess(h, 100);
  t.is(h.successes, 1);
  t.is(h.latencyMs, 100);
});

test('should smooth the latency (80% old, 20% new)', (t) => {
  const h = newHealth();
  recordSuccess(h, 100);
  recordSuccess(h, 200);
  t.is(h.latencyMs, 120);
});

test('should count a failure with its reason, without cooling down below the threshold', (t) => {
  const h = newHealth();
  recordFailure(h, 'timeout', now);
  t.is(h.failures, 1);
  t.is(h.consecutiveFailures, 1);
  t.is(h.lastError, 'timeout');
  t.is(h.coolingUntil, 0);
  t.is(failureThreshold, 2);
});

/** consecutive failures → cool-down in ms: 1 s at the threshold, doubling, at most 60 s. */
const coolDowns: [number, number][] = [
  [2, 1_000],
  [3, 2_000],
  [4, 4_000],
  [7, 32_000],
  [8, 60_000],
  [20, 60_000],
];
for (const [failures, ms] of coolDowns) {
  test(`should cool down for ${ms} ms after ${failures} failures in a row`, (t) => {
    const h = newHealth();
    for (let i = 0; i < failures; i++) recordFailure(h, `f${i}`, now);
    t.is(h.coolingUntil, now + ms);
    t.is(h.lastError, `f${failures - 1}`);
  });
}

test('should end the cool-down and reset the streak on a success', (t) => {
  const h = newHealth();
  recordFailure(h, 'a', now);
  recordFailure(h, 'b', now);
  t.true(h.coolingUntil > now);
  recordSuccess(h, 10);
  t.is(h.coolingUntil, 0);
  t.is(h.consecutiveFailures, 0);
  t.is(h.failures, 2, 'total failures are kept');
  t.is(h.lastError, 'b', 'the last error stays visible for /chains');
});

test('should not let the latency estimate see failures', (t) => {
  const h = newHealth();
  recordSuccess(h, 50);
  recordFailure(h, 'timeout', now);
  t.is(h.latencyMs, 50);
});

// ---- disputes: one vote in a decided quorum at a time ----

/** Plays "WWLL…" (W won, L lost) into a fresh record; returns it and every trust change. */
const play = (votes: string, policy = { window: 4, maxLost: 2 }, h = newHealth()) => {
  const changes: string[] = [];
  for (const v of votes) {
    const change = recordVote(h, v === 'W', policy);
    if (change) changes.push(`${change}@${changes.length + h.recentVotes.length}`);
  }
  return { h, changes };
};

test('should count agreements and disagreements with every recorded vote', (t) => {
  const { h } = play('WWLW');
  t.is(h.agreements, 3);
  t.is(h.disagreements, 1);
});

test('should distrust an upstream at maxLost lost votes within the window', (t) => {
  t.false(play('LWWWL').h.distrusted, 'the first loss slid out of the window of 4');
  const { h } = play('WLWL');
  t.true(h.distrusted);
  t.is(h.recentLost, 2);
});

test('should trust it again once fewer than half of maxLost (rounded up) of the window are lost', (t) => {
  const { h } = play('LL');
  t.true(h.distrusted);
  play('WW', undefined, h);
  t.true(h.distrusted, 'the two losses are still in the window of 4');
  play('W', undefined, h);
  t.true(h.distrusted, 'one loss left: not below ceil(2 / 2) = 1');
  play('W', undefined, h);
  t.false(h.distrusted);
  t.is(h.recentLost, 0);
});

test('should not flip back at the threshold (hysteresis)', (t) => {
  const policy = { window: 10, maxLost: 4 };
  const { h } = play('LLLL', policy);
  t.true(h.distrusted);
  play('WWWWWWW', policy, h); // window: L L L W W W W W W W → 3 lost, not below 2
  t.true(h.distrusted);
  play('W', policy, h); // → 2 lost
  t.true(h.distrusted);
  play('W', policy, h); // → 1 lost
  t.false(h.distrusted);
});

test('should never distrust with maxLost 0, and keep no window then', (t) => {
  const { h } = play('LLLLLLLL', { window: 4, maxLost: 0 });
  t.false(h.distrusted);
  t.is(h.disagreements, 8);
  t.deepEqual(h.recentVotes, []);
});

test('should report each change of trust once', (t) => {
  const h = newHealth();
  const policy = { window: 4, maxLost: 2 };
  t.is(recordVote(h, false, policy), undefined);
  t.is(recordVote(h, false, policy), 'distrusted');
  t.is(recordVote(h, false, policy), undefined);
  for (let i = 0; i < 3; i++) t.is(recordVote(h, true, policy), undefined);
  t.is(recordVote(h, true, policy), 'trusted');
});

test('should say unknown (not up) before any probe or call, and down from the first failure', (t) => {
  const h = newHealth();
  t.is(upstreamState(h, now, 3), 'unknown');
  t.false(isUp(h));
  recordFailure(h, 'probe: connect ECONNREFUSED 127.0.0.1:1', now);
  t.is(upstreamState(h, now, 3), 'down', 'one failure is enough');
  t.false(isUp(h));
  t.true(neverSucceeded(h));
  recordFailure(h, 'probe: connect ECONNREFUSED 127.0.0.1:1', now);
  t.is(upstreamState(h, now, 3), 'cooling-down');
  t.is(upstreamState(h, h.coolingUntil, 3), 'down', 'still down once the cool-down has passed');
  recordSuccess(h, 5);
  t.is(upstreamState(h, now, 3), 'healthy');
  t.true(isUp(h));
  t.false(neverSucceeded(h));
  h.lag = 4;
  t.is(upstreamState(h, now, 3), 'lagging');
  t.true(isUp(h), 'a lagging upstream answers: up');
  h.wrongChainId = '5';
  t.is(upstreamState(h, now, 3), 'wrong-chain');
  t.false(isUp(h));
});

test('should say loop (not up) for an upstream that is the gateway itself', (t) => {
  const h = newHealth();
  recordSuccess(h, 5);
  h.loop = true;
  t.is(upstreamState(h, now, 3), 'loop');
  t.false(isUp(h));
});
