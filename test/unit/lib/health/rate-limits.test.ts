import test from 'ava';
import { newHealth, recordFailure, recordSuccess, upstreamState } from '../../../../lib/health/health.js';
import { backOffMs, isRateLimitError, isRateLimitReason, maxBackOffMs, rateLimited, recordRateLimit } from '../../../../lib/health/rate-limits.js';
import { retryAfterMsOf, statusError } from '../../../../lib/upstream/transport/contract.js';
import { errorKind } from '../../../../lib/verify/answers/trouble.js';

test('Retry-After in seconds or as an HTTP date; anything else is not read', (t) => {
  const now = Date.UTC(2026, 10, 28, 12, 0, 0);
  t.is(retryAfterMsOf('2', now), 2000);
  t.is(retryAfterMsOf(' 0 ', now), 0);
  t.is(retryAfterMsOf('Sat, 28 Nov 2026 12:00:30 GMT', now), 30_000);
  t.is(retryAfterMsOf('Sat, 28 Nov 2026 11:00:00 GMT', now), 0, 'a date past is now');
  t.is(retryAfterMsOf(undefined, now), undefined);
  t.is(retryAfterMsOf('-1', now), undefined);
  t.is(retryAfterMsOf('soon', now), undefined);
  t.is(retryAfterMsOf('1.5', now), undefined);
});

test('HTTP 429, and 503 with a Retry-After, are rate limits; other statuses are not', (t) => {
  const e429 = statusError(429, '7');
  t.is(e429.kind, 'rate-limited');
  t.is(e429.retryAfterMs, 7000);
  t.is(e429.message, 'HTTP 429');
  t.is(statusError(429, undefined).retryAfterMs, undefined);
  t.is(statusError(503, '1').kind, 'rate-limited');
  t.is(statusError(503, undefined).kind, 'http-status');
  t.is(statusError(500, '1').kind, 'http-status');
});

test('the back-off: the Retry-After within 1 s and 60 s, else 1 s doubling per episode', (t) => {
  t.is(backOffMs(1, 2000), 2000);
  t.is(backOffMs(1, 0), 1000);
  t.is(backOffMs(1, 3_600_000), maxBackOffMs);
  t.deepEqual([1, 2, 3, 4, 7, 8, 100].map((e) => backOffMs(e, undefined)), [1000, 2000, 4000, 8000, 60_000, 60_000, 60_000]);
});

test('a rate limit is no failure: an episode sets the back-off; calls meanwhile extend it without starting another; a success ends the streak', (t) => {
  const h = newHealth();
  recordSuccess(h, 10);
  const now = 1_000_000;
  t.true(recordRateLimit(h, 'HTTP 429', undefined, now), 'an episode starts');
  t.is(h.rateLimitedUntil, now + 1000);
  t.true(rateLimited(h, now + 999));
  t.false(rateLimited(h, now + 1000));
  t.is(upstreamState(h, now + 1, 3), 'rate-limited');
  t.false(recordRateLimit(h, 'HTTP 429', 5000, now + 10), 'a call that was in flight: same episode');
  t.is(h.rateLimitedUntil, now + 5010, 'extended to its Retry-After');
  t.is(h.rateLimitEpisodes, 1);
  t.is(h.rateLimits, 2);
  t.is(h.failures, 0);
  t.is(h.consecutiveFailures, 0);
  t.is(h.coolingUntil, 0);
  t.true(recordRateLimit(h, 'HTTP 429', undefined, now + 6000));
  t.is(h.rateLimitedUntil, now + 6000 + 2000, 'the second episode: 2 s');
  t.is(upstreamState(h, now + 9000, 3), 'healthy');
  recordSuccess(h, 10);
  t.is(h.rateLimitEpisodes, 0);
  recordFailure(h, 'x', now);
  t.is(h.rateLimitEpisodes, 0);
});

test('the forms of a rate-limit error, in answers and in probes alike; a revert never', (t) => {
  for (const [code, message] of [
    [-32005, 'daily request count exceeded, request rate limited'],
    [-32005, 'limit exceeded'],
    [429, 'Too Many Requests'],
    [-32000, 'Your app has exceeded its compute units per second capacity'],
    [-32007, 'request limit reached'],
    [-32029, 'rate limited'],
    [-32603, 'Too many requests, please slow down'],
  ] as const) {
    t.true(isRateLimitError(code, message), `${code} ${message}`);
    const verdict = errorKind(code, message);
    t.is(verdict?.label, 'rate limited', `${code} ${message}`);
    t.true(isRateLimitReason(`${verdict!.label} ${code}: ${message}`));
    t.true(isRateLimitReason(`batch id "x": ${verdict!.label} ${code}: ${message}`));
  }
  t.false(isRateLimitError(3, 'execution reverted: rate limit exceeded'));
  t.false(isRateLimitError(-32000, 'header not found'));
  t.is(errorKind(-32005, 'query returned more than 10000 results')?.kind, 'refusal', 'a range refusal stays a refusal');
  t.is(errorKind(-32000, 'header not found')?.label, 'provider error');
  t.false(isRateLimitReason('provider error -32000: header not found'));
  t.false(isRateLimitReason('HTTP 429'));
});
