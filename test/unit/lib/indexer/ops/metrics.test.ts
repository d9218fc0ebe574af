/**
 * The indexer's Prometheus gauges over an injected OpsSource (no database): the pending stages per
 * chain pair, the ages aged to the scrape's clock, the heads, and stats_up / refreshed_timestamp
 * through a failed refresh (the other gauges keep their last values).
 */
import test from 'ava';
import { Registry } from 'prom-client';
import { indexerGauges } from '../../../../../lib/indexer/ops/metrics.js';
import type { OpsSource, StatsSnapshot, StatusSnapshot } from '../../../../../lib/indexer/ops/stats.js';
import type { Logger } from '../../../../../lib/log.js';
import { silentLogger } from '../../../../../lib/log.js';

const stats: StatsSnapshot = {
  generatedAt: 1000,
  stages: [
    { stage: 'missingRelay', originChainId: 42161, destChainId: 8453, count: 3, oldestAgeSeconds: 60 },
    { stage: 'disputed', originChainId: 1, destChainId: null, count: 1, oldestAgeSeconds: 5 },
  ],
} as StatsSnapshot;
const status: StatusSnapshot = {
  generatedAt: 1000,
  source: 'events',
  chains: [
    { chainId: 42161, chain: 'arbitrum', latestBlock: '250000000', latestTimestamp: 990, ageSeconds: 10, finalizedBlock: null, finalizedTimestamp: null, ready: null },
    { chainId: 8453, chain: 'base', latestBlock: null, latestTimestamp: null, ageSeconds: null, finalizedBlock: null, finalizedTimestamp: null, ready: null },
  ],
} as StatusSnapshot;

function opsFrom(results: { fail: boolean }) {
  const refresh = <T>(value: T) => async () => {
    if (results.fail) throw new Error('connect ECONNREFUSED postgres://user:s3cret@db:5432/x');
    return value;
  };
  return { stats: { refresh: refresh(stats), get: refresh(stats) }, status: { refresh: refresh(status), get: refresh(status) } } as unknown as OpsSource;
}

const valueOf = (text: string, series: string) => {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

test('should show nothing but stats_up 0 before the first refresh', async (t) => {
  const registry = new Registry();
  indexerGauges(registry, opsFrom({ fail: false }), { now: () => 1000 });
  const text = await registry.metrics();
  t.is(valueOf(text, 'omnigate_indexer_stats_up'), 0);
  t.is(valueOf(text, 'omnigate_indexer_stats_refreshed_timestamp_seconds'), 0);
  t.false(text.includes('omnigate_indexer_pending{'));
});

test('should show each stage per chain pair and the heads, aged to the scrape\'s clock', async (t) => {
  const registry = new Registry();
  let clock = 1000;
  const gauges = indexerGauges(registry, opsFrom({ fail: false }), { now: () => clock });
  await gauges.refresh();
  clock = 1030;
  const text = await registry.metrics();
  t.is(valueOf(text, 'omnigate_indexer_pending{stage="missingRelay",origin_chain_id="42161",dest_chain_id="8453"}'), 3);
  t.is(valueOf(text, 'omnigate_indexer_pending{stage="disputed",origin_chain_id="1",dest_chain_id="unknown"}'), 1);
  t.is(valueOf(text, 'omnigate_indexer_pending_oldest_age_seconds{stage="missingRelay",origin_chain_id="42161",dest_chain_id="8453"}'), 90);
  t.is(valueOf(text, 'omnigate_indexer_head_age_seconds{chain_id="42161",chain="arbitrum"}'), 40);
  t.is(valueOf(text, 'omnigate_indexer_head_block{chain_id="42161",chain="arbitrum"}'), 250000000);
  t.false(text.includes('chain="base"'), 'no series for a chain with no indexed block');
  t.is(valueOf(text, 'omnigate_indexer_stats_up'), 1);
  t.is(valueOf(text, 'omnigate_indexer_stats_refreshed_timestamp_seconds'), 1000);
});

test('should say stats_up 0 after a failed refresh, keep the last values, and log once per outage without the password', async (t) => {
  const registry = new Registry();
  const results = { fail: false };
  const warned: string[] = [];
  const logger = { ...silentLogger, warn: (obj: unknown) => warned.push(JSON.stringify(obj)), info: () => {} } as unknown as Logger;
  const gauges = indexerGauges(registry, opsFrom(results), { now: () => 1000, logger });
  await gauges.refresh();
  results.fail = true;
  await gauges.refresh();
  await gauges.refresh();
  const text = await registry.metrics();
  t.is(valueOf(text, 'omnigate_indexer_stats_up'), 0);
  t.is(valueOf(text, 'omnigate_indexer_pending{stage="missingRelay",origin_chain_id="42161",dest_chain_id="8453"}'), 3);
  t.is(warned.length, 1);
  t.false(warned[0]!.includes('s3cret'));
  results.fail = false;
  await gauges.refresh();
  t.is(valueOf(await registry.metrics(), 'omnigate_indexer_stats_up'), 1);
});

test('refreshes asked while one runs should share it', async (t) => {
  let calls = 0;
  const ops = opsFrom({ fail: false });
  const refresh = ops.stats.refresh.bind(ops.stats);
  (ops.stats as { refresh: unknown }).refresh = () => {
    calls += 1;
    return refresh();
  };
  const gauges = indexerGauges(new Registry(), ops);
  await Promise.all([gauges.refresh(), gauges.refresh(), gauges.refresh()]);
  t.is(calls, 1);
});
