/**
 * What the end of each step of an agreement records: one outcome on the upstream's health record
 * and the metrics (a head seen in an answer too), a decided quorum's votes won or lost (distrust
 * only from comparisons, N ≥ 2), and the error of a request that got no group of N.
 */
import test from 'ava';
import { silentLogger } from '../../../../lib/log.js';
import { createMetrics } from '../../../../lib/ops/metrics.js';
import { ByteBudget } from '../../../../lib/upstream/budget.js';
import type { Registry, Upstream } from '../../../../lib/upstream/registry.js';
import { failureError, recordDecision, recordOutcome } from '../../../../lib/verify/outcome.js';
import type { Bad, DisputedRequest, Failed, Good } from '../../../../lib/verify/question.js';
import type { Vote } from '../../../../lib/verify/quorum.js';
import { single, testChain, testUpstream } from '../../../support/stage.js';

const request = (method = 'eth_getBalance', params: unknown[] = ['0x1', '0x10']): DisputedRequest => ({ requestId: 'r', log: silentLogger, payload: single(method, params) });
const good = (upstream: Upstream, result: string, ms = 10): Good => ({ upstream, ok: true, body: Buffer.from(`{"jsonrpc":"2.0","id":1,"result":"${result}"}`), hash: `h-${result}`, ms });
const bad = (upstream: Upstream, reason: string, extra: Partial<Bad> = {}): Bad => ({ upstream, ok: false, reason, ms: 5, ...extra });
const vote = (g: Good): Vote<Good> => ({ hash: g.hash, item: g, voter: g.upstream.provider });

function metricsOf(upstreams: Upstream[]) {
  const registry: Registry = { chains: new Map([['1', testChain(upstreams)]]), loopThrough: () => undefined, close: async () => {} };
  return createMetrics(registry);
}

async function sampleCounts(metrics: ReturnType<typeof metricsOf>) {
  const { values } = await metrics.upstreamSeconds.get();
  return values.filter((v) => v.metricName === 'omnigate_upstream_request_duration_seconds_count').map((v) => `${v.labels.upstream} ${v.labels.outcome} ${v.value}`);
}

test('recordOutcome should record a vote as the upstream\'s success, with its latency, and time it as a vote', async (t) => {
  const u = testUpstream(0);
  const metrics = metricsOf([u]);
  recordOutcome(request(), good(u, '0x1', 12), metrics);
  t.is(u.health.successes, 1);
  t.is(u.health.latencyMs, 12);
  t.is(u.health.consecutiveFailures, 0);
  t.deepEqual(await sampleCounts(metrics), ['http://u0.test/*** vote 1']);
});

test('recordOutcome should record a failure with its reason, but not a refusal nor our own budget\'s refusal', async (t) => {
  const u = testUpstream(0);
  const metrics = metricsOf([u]);
  recordOutcome(request(), bad(u, 'HTTP 500'), metrics);
  t.is(u.health.failures, 1);
  t.is(u.health.consecutiveFailures, 1);
  t.is(u.health.lastError, 'HTTP 500');
  recordOutcome(request(), bad(u, 'too large', { refused: { body: Buffer.from('{}') } }), metrics);
  recordOutcome(request(), bad(u, 'budget exhausted', { kind: 'budget' }), metrics);
  t.is(u.health.failures, 1, 'neither counts against the upstream');
  t.is(u.health.lastError, 'HTTP 500');
  t.deepEqual((await sampleCounts(metrics)).sort(), ['http://u0.test/*** failure 2', 'http://u0.test/*** refusal 1']);
});

test('recordOutcome should take the head an eth_blockNumber answer shows', (t) => {
  const u = testUpstream(0);
  recordOutcome(request('eth_blockNumber', []), good(u, '0x20'), undefined);
  t.is(u.health.head, 0x20n);
});

test('recordDecision should count each vote of a comparison as won or lost, and distrust a loser at maxLost', async (t) => {
  const [a, b, c] = [testUpstream(0), testUpstream(1), testUpstream(2)];
  const metrics = metricsOf([a, b, c]);
  const decide = () => {
    const votes = [vote(good(a, '0x1')), vote(good(b, '0x2')), vote(good(c, '0x1'))];
    recordDecision(request(), { hash: 'h-0x1', required: 2, members: [votes[0]!.item, votes[2]!.item], votes }, { window: 10, maxLost: 2 }, metrics);
  };
  decide();
  t.deepEqual([a.health.agreements, b.health.agreements, c.health.agreements], [1, 0, 1]);
  t.is(b.health.disagreements, 1);
  t.is(b.health.recentLost, 1);
  t.false(b.health.distrusted);
  decide();
  t.true(b.health.distrusted);
  t.false(a.health.distrusted);
  const { values } = await metrics.disagreements.get();
  t.deepEqual(values.map((v) => [v.labels.upstream, v.value]), [['http://u1.test/***', 2]]);
});

test('recordDecision should not let N=1 answers change trust', (t) => {
  const u = testUpstream(0, { health: { distrusted: true, recentLost: 3, recentVotes: [true, true, true] } });
  const g = good(u, '0x1');
  recordDecision(request(), { hash: 'other', required: 1, members: [g], votes: [vote(g)] }, { window: 10, maxLost: 2 }, undefined);
  t.is(u.health.agreements, 1);
  t.is(u.health.disagreements, 0);
  t.true(u.health.distrusted);
  t.is(u.health.recentLost, 3);
});

function failed(fields: Partial<Failed>): Failed {
  return { kind: 'failed', cause: 'exhausted', required: 2, votes: [], failures: [], ineligible: [], called: [], ...fields };
}

test('failureError should be a 502 -32011 listing the failures and the upstreams given up on', (t) => {
  const [a, b, c] = [testUpstream(0), testUpstream(1), testUpstream(2)];
  const g = good(a, '0x1');
  const err = failureError(request(), failed({ votes: [vote(g)], failures: [bad(b, 'HTTP 500')], called: [a, b, c] }), undefined);
  t.like(err, { rpcCode: -32011, status: 502 });
  t.is(err.message, 'Upstreams failed: 2 agreeing answers needed, 1 usable answer received');
  t.deepEqual(err.data, {
    required: 2,
    groups: [{ hash: 'h-0x1', upstreams: ['http://u0.test/***'] }],
    failures: [{ upstream: 'http://u1.test/***', reason: 'HTTP 500' }],
    unanswered: ['http://u2.test/***'],
  });
});

test('failureError should be a -32010 with the differences when the upstreams disagreed', (t) => {
  const [a, b] = [testUpstream(0), testUpstream(1)];
  const err = failureError(request(), failed({ votes: [vote(good(a, '0x1')), vote(good(b, '0x2'))], called: [a, b] }), undefined);
  t.like(err, { rpcCode: -32010, status: 502 });
  const data = err.data as { groups: unknown[]; differences: { path: string }[] };
  t.is(data.groups.length, 2);
  t.deepEqual(data.differences.map((d) => d.path), ['result']);
});

test('failureError should be a 504 -32012 past the deadline and a 503 -32013 when our budget refused answers', (t) => {
  const a = testUpstream(0);
  const late = failureError(request(), failed({ cause: 'deadline', called: [a] }), undefined);
  t.like(late, { rpcCode: -32012, status: 504, data: { unanswered: ['http://u0.test/***'] } });
  const account = new ByteBudget(1000).open();
  const refused = failureError(request(), failed({ cause: 'budget', failures: [bad(a, 'budget', { kind: 'budget' })], called: [a] }), account);
  t.like(refused, { rpcCode: -32013, status: 503, data: { bufferedBytes: 1000 }, headers: { 'Retry-After': '1' } });
  t.like(failureError(request(), failed({ cause: 'budget', called: [a] }), undefined), { rpcCode: -32011 }, 'without a budget: a plain failure');
});

test('failureError should list the answers that could not count as votes', (t) => {
  const [a, b] = [testUpstream(0), testUpstream(1)];
  const err = failureError(request(), failed({ cause: 'ineligible', ineligible: [good(a, '0x1')], called: [a, b] }), undefined);
  t.like(err, { rpcCode: -32011, data: { ineligible: ['http://u0.test/***'], unanswered: ['http://u1.test/***'] } });
});
