/**
 * The metrics of one pipeline: a registry of its own (two pipelines never collide), bounded
 * method labels, and the per-upstream and per-chain gauges read from the records at scrape time.
 */
import test from 'ava';
import { chainHead } from '../../../../lib/health/heads.js';
import { createMetrics, knownMethods, methodLabel } from '../../../../lib/ops/metrics.js';
import type { Registry } from '../../../../lib/upstream/registry.js';
import { testChain, testUpstream } from '../../../support/stage.js';

test('methodLabel should name a known method, `batch`, `none`, and `other` for any other name', (t) => {
  t.true(knownMethods.has('eth_getBalance'));
  t.is(methodLabel([{ method: 'eth_getBalance' }]), 'eth_getBalance');
  t.is(methodLabel([{ method: 'eth_getBalance' }, { method: 'eth_chainId' }]), 'batch');
  t.is(methodLabel([]), 'none');
  t.is(methodLabel(undefined), 'none');
  t.is(methodLabel([{ method: 'random_name_1234' }]), 'other');
});

function registryOf(): Registry {
  const upstreams = [
    testUpstream(0, { health: { successes: 2, head: 100n, safe: 90n, finalized: 80n, lag: 0 } }),
    testUpstream(1, { health: { failures: 1, consecutiveFailures: 1, head: 95n, lag: 5, distrusted: true, wrongChainId: '5' } }),
  ];
  return { chains: new Map([['1', testChain(upstreams)]]), loopThrough: () => undefined, close: async () => {} };
}

/** The value of one series in the Prometheus text, or undefined. */
function valueOf(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

test('should read each upstream\'s gauges from its record at scrape time', async (t) => {
  const registry = registryOf();
  const metrics = createMetrics(registry);
  const u0 = 'chain="1",upstream="http://u0.test/***"';
  const u1 = 'chain="1",upstream="http://u1.test/***"';
  let text = await metrics.registry.metrics();
  t.is(valueOf(text, `omnigate_upstream_up{${u0}}`), 1);
  t.is(valueOf(text, `omnigate_upstream_up{${u1}}`), 0);
  t.is(valueOf(text, `omnigate_upstream_lag_blocks{${u1}}`), 5);
  t.is(valueOf(text, `omnigate_upstream_wrong_chain{${u1}}`), 1);
  t.is(valueOf(text, `omnigate_upstream_distrusted{${u1}}`), 1);
  t.is(valueOf(text, `omnigate_upstream_head_block{${u0},tag="finalized"}`), 80);
  t.is(valueOf(text, `omnigate_upstream_head_block{${u1},tag="safe"}`), undefined, 'no series for a head not known');
  t.is(valueOf(text, 'omnigate_chain_head_block{chain="1",tag="latest"}'), Number(chainHead(registry.chains.get('1')!)));
  registry.chains.get('1')!.upstreams[1]!.health.distrusted = false;
  text = await metrics.registry.metrics();
  t.is(valueOf(text, `omnigate_upstream_distrusted{${u1}}`), 0, 'read again at the next scrape');
  t.false(text.includes('KEY'), 'no provider key in any label');
});

test('should count requests, upstream latency and disagreements in a registry of each pipeline\'s own', async (t) => {
  const upstreams = registryOf();
  const a = createMetrics(upstreams);
  const b = createMetrics(registryOf());
  a.requests.inc('1', 'eth_getBalance', 'ok');
  a.disagreements.inc({ chain: '1', upstream: 'http://u1.test/***' });
  const u0 = upstreams.chains.get('1')!.upstreams[0]!;
  a.upstreamSeconds.observe(u0, 'vote', 0.02);
  const text = await a.registry.metrics();
  t.is(valueOf(text, 'omnigate_requests_total{chain="1",method="eth_getBalance",outcome="ok"}'), 1);
  t.is(valueOf(text, 'omnigate_upstream_disagreements_total{chain="1",upstream="http://u1.test/***"}'), 1);
  t.is(valueOf(text, `omnigate_upstream_request_duration_seconds_bucket{le="0.025",chain="1",upstream="${u0.label}",outcome="vote"}`), 1);
  t.is(valueOf(await b.registry.metrics(), 'omnigate_requests_total{chain="1",method="eth_getBalance",outcome="ok"}'), undefined);
});

test('should add the process metrics only when asked', async (t) => {
  t.false((await createMetrics(registryOf()).registry.metrics()).includes('omnigate_process_cpu'));
  t.true((await createMetrics(registryOf(), { processMetrics: true }).registry.metrics()).includes('omnigate_process_cpu'));
});
