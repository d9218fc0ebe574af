import test from 'ava';
import { Counter, Histogram, Registry, type Metric } from 'prom-client';
import { latencyBuckets, RequestCount, UpstreamLatency, type CallOutcome } from '../../../../lib/ops/tallies.js';
import type { Upstream } from '../../../../lib/upstream/registry.js';

const upstream = (chainId: string, label: string) => ({ chainId, label }) as Upstream;

/** The same observations through prom-client's own metrics and through the tallies: the text must be the same. */
test('the tallies show exactly what prom-client\'s own counter and histogram show for the same observations', async (t) => {
  const own = new Registry();
  const ownRequests = new Counter({ name: 'omnigate_requests_total', help: new RequestCount().help, labelNames: ['chain', 'method', 'outcome'] as const, registers: [own] });
  const ownSeconds = new Histogram({
    name: 'omnigate_upstream_request_duration_seconds',
    help: new UpstreamLatency().help,
    labelNames: ['chain', 'upstream', 'outcome'] as const,
    buckets: [...latencyBuckets],
    registers: [own],
  });
  const ours = new Registry();
  const requests = new RequestCount();
  const seconds = new UpstreamLatency();
  ours.registerMetric(requests as unknown as Metric);
  ours.registerMetric(seconds as unknown as Metric);

  const a = upstream('1', 'https://a.example/…');
  const b = upstream('10', 'wss://b.example/');
  const samples: [Upstream, CallOutcome, number][] = [
    [a, 'vote', 0.001], [a, 'vote', 0.005], [a, 'vote', 0.0051], [a, 'vote', 0.3], [a, 'failure', 12],
    [b, 'refusal', 0.05], [b, 'vote', 10], [b, 'vote', 10.5], [a, 'vote', 0],
  ];
  for (const [u, outcome, s] of samples) {
    ownSeconds.observe({ chain: u.chainId, upstream: u.label, outcome }, s);
    seconds.observe(u, outcome, s);
  }
  const requestSamples: [string, string, string][] = [
    ['1', 'eth_call', 'ok'], ['1', 'eth_call', 'ok'], ['1', 'batch', 'OMNI_ERR_NO_QUORUM'], ['none', 'none', 'OMNI_ERR_PARSE'], ['10', 'other', 'ok'],
  ];
  for (const [chain, method, outcome] of requestSamples) {
    ownRequests.inc({ chain, method, outcome });
    requests.inc(chain, method, outcome);
  }
  const sortLines = (text: string) => text.split('\n').sort().join('\n');
  t.is(sortLines(await ours.metrics()), sortLines(await own.metrics()));
  t.regex(await ours.metrics(), /omnigate_upstream_request_duration_seconds_bucket\{le="0\.005",chain="1",upstream="https:\/\/a\.example\/…",outcome="vote"\} 3/);
  t.regex(await ours.metrics(), /omnigate_requests_total\{chain="1",method="eth_call",outcome="ok"\} 2/);

  // JSON (what a cluster's aggregator reads) carries the same values.
  const json = await ours.getMetricsAsJSON();
  t.deepEqual(json.map((m) => [m.name, m.type, m.aggregator]), [
    ['omnigate_requests_total', 'counter', 'sum'],
    ['omnigate_upstream_request_duration_seconds', 'histogram', 'sum'],
  ]);
  requests.reset();
  seconds.reset();
  t.notRegex(await ours.metrics(), /_total\{|_count\{/);
});
