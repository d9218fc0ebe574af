import test from 'ava';
import { failureThreshold, isUp, neverSucceeded, newHealth, recordFailure, recordSuccess, upstreamState } from '../../../../lib/upstream/health.js';

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
