/**
 * What operators watch, on the wire against a real PostgreSQL holding the fixture bridges:
 * ageSeconds and the decoded request on every list item, /api/stats and /api/status (REST and
 * GraphQL), and the indexer's gauges at the balancer's /metrics after a refresh (and after a
 * failed one).
 */
import test from 'ava';
import { indexerApi } from '../../../lib/indexer/api.js';
import { LIST_ROUTES } from '../../../lib/indexer/catalog.js';
import { closeIndexerDb } from '../../../lib/indexer/db/pool.js';
import { indexerGauges } from '../../../lib/indexer/ops/metrics.js';
import { CHAIN_BLOCK_INDEXES, runStatus, type StageStat, type StatsSnapshot, type StatusSnapshot } from '../../../lib/indexer/ops/stats.js';
import { indexesPresent } from '../../../lib/indexer/db/indexes.js';
import { PONDER_04_LAYOUT } from '../../../lib/indexer/db/layout.js';
import { startServer, type RunningServer } from '../../../lib/server/app.js';
import { listeningPort, logLines, runCli, configFile } from '../../support/cli.js';
import { startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream.js';
import { makeConfig } from '../../support/gateway.js';
import { startTestDatabase, type TestDatabase } from '../../support/pg.js';
import { D, FIXTURE_ROWS, H, NOW, SPECS, deadlineOf, labelOf, loadFixtures } from '../../fixtures/indexer/bridges.js';
import { get, graphql, serve, type Running } from '../../fixtures/indexer/server.js';

let pg: TestDatabase;
let app: Running;

test.before(async () => {
  pg = await startTestDatabase();
  await loadFixtures(pg.db);
  app = await serve(indexerApi(pg.db, { now: () => NOW, statsMaxAgeSeconds: 0 }));
});

test.after.always(async () => {
  await app?.close();
  await pg?.close();
});

type Item = Record<string, unknown> & { ageSeconds: number };

/** The timestamp a list is ordered by, read from one item along the route's sortedBy path. */
function sortTs(item: Item, sortedBy: string): number {
  if (!sortedBy.includes('.')) return item.blockTimestamp as number;
  const [phase, field] = sortedBy.split('.') as [string, string];
  return (item[phase] as Record<string, number>)[field]!;
}

for (const route of LIST_ROUTES) {
  test(`GET ${route.paths[0]}: every item's ageSeconds is now − ${route.sortedBy}, and its request is decoded`, async (t) => {
    const res = await get<Item[]>(`${app.base}${route.paths[0]}?limit=1000`);
    t.is(res.status, 200);
    t.true(res.body.length > 0, 'the fixture has items on every list');
    for (const item of res.body) {
      t.is(item.ageSeconds, NOW - sortTs(item, route.sortedBy));
      const bridge = item.Bridge as Record<string, unknown> & { decodedRequest?: Record<string, unknown> };
      if (!bridge || !('request' in bridge)) continue; // disputes and invalid relays carry no request
      const label = labelOf(bridge.transactionId as string);
      const spec = SPECS.get(label)!;
      t.like(bridge.decodedRequest, {
        version: spec.sendChainGas ? 1 : 2, originChainId: bridge.originChainId, destChainId: bridge.destChainId,
        originAmount: '100500000', destAmount: bridge.destAmount, deadline: String(deadlineOf(spec)),
        sendChainGas: spec.sendChainGas ? true : null, exclusivityEndTime: spec.sendChainGas ? null : String(spec.request! + 60),
      }, label);
    }
  });
}

/** /api/stats derived from the lists themselves: per pair, how many items and the largest age. */
async function statsFromLists(): Promise<StageStat[]> {
  const lists: [StageStat['stage'], string][] = [
    ['missingRelay', '/api/pending-transactions/missing-relay'], ['exceedDeadline', '/api/pending-transactions/exceed-deadline'],
    ['missingProof', '/api/pending-transactions/missing-proof'], ['missingClaim', '/api/pending-transactions/missing-claim'],
  ];
  const out: StageStat[] = [];
  for (const [stage, path] of lists) {
    const res = await get<(Item & { Bridge: { originChainId: number; destChainId: number } })[]>(`${app.base}${path}?limit=1000`);
    const pairs = new Map<string, StageStat>();
    for (const item of res.body) {
      const key = `${item.Bridge.originChainId}>${item.Bridge.destChainId}`;
      const s = pairs.get(key) ?? { stage, originChainId: item.Bridge.originChainId, destChainId: item.Bridge.destChainId, count: 0, oldestAgeSeconds: 0 };
      s.count += 1;
      s.oldestAgeSeconds = Math.max(s.oldestAgeSeconds, item.ageSeconds);
      pairs.set(key, s);
    }
    out.push(...[...pairs.values()].sort((a, b) => a.originChainId - b.originChainId || a.destChainId! - b.destChainId!));
  }
  return out;
}

test('GET /api/stats: counts and oldest ages per stage and chain pair agree with the lists, and with the fixture timeline', async (t) => {
  const res = await get<StatsSnapshot>(`${app.base}/api/stats`);
  t.is(res.status, 200);
  t.is(res.body.generatedAt, NOW);
  const fromLists = await statsFromLists();
  t.deepEqual(res.body.stages.filter((s) => s.stage !== 'disputed'), fromLists);
  t.deepEqual(res.body.stages.filter((s) => s.stage === 'disputed'), [
    { stage: 'disputed', originChainId: 10, destChainId: 42161, count: 1, oldestAgeSeconds: 6 * H - 1800 },
  ]);
  t.deepEqual(res.body.stages.find((s) => s.stage === 'missingRelay' && s.originChainId === 42161),
    { stage: 'missingRelay', originChainId: 42161, destChainId: 8453, count: 1, oldestAgeSeconds: H });
  t.deepEqual(res.body.stages.find((s) => s.stage === 'exceedDeadline' && s.originChainId === 56),
    { stage: 'exceedDeadline', originChainId: 56, destChainId: 480, count: 1, oldestAgeSeconds: 40 * D });
  t.is(res.headers.get('content-type'), 'application/json; charset=utf-8');
});

test('GET /api/stats rejects query parameters and other methods as problem+json', async (t) => {
  const bad = await get<{ code: string }>(`${app.base}/api/stats?x=1`);
  t.is(bad.status, 400);
  t.is(bad.body.code, 'INVALID_PARAMETER');
  const post = await get<{ code: string }>(`${app.base}/api/status`, { method: 'POST' });
  t.is(post.status, 405);
  t.is(post.headers.get('allow'), 'GET, HEAD');
});

/** The newest event per chain, from the fixture rows (relays on the destination chain). */
function newestPerChain(): Map<number, { block: string; ts: number }> {
  const out = new Map<number, { block: string; ts: number }>();
  for (const [kind, list] of Object.entries(FIXTURE_ROWS)) {
    for (const row of list) {
      const chain = Number(kind === 'relays' ? row.destChainId : row.originChainId);
      const cur = out.get(chain);
      if (!cur || BigInt(row.blockNumber as string) > BigInt(cur.block)) out.set(chain, { block: String(row.blockNumber), ts: Number(row.blockTimestamp) });
    }
  }
  return out;
}

test.serial('status from the events: the same per chain with the (chain, blockNumber) indexes (probes) and while they are missing (a scan)', async (t) => {
  t.true(await indexesPresent(pg.db, PONDER_04_LAYOUT, CHAIN_BLOCK_INDEXES), 'the migrations created them');
  const probed = await runStatus(pg.db, NOW);
  t.is(probed.source, 'events');
  t.true(probed.chains.length > 1);
  const rollback = Object.assign(new Error('rollback'), { rollback: true });
  await pg.db.tx(async (tx) => {
    await tx.none(`DROP INDEX ${CHAIN_BLOCK_INDEXES.map((n) => `public."${n}"`).join(', ')}`);
    const db = tx as unknown as typeof pg.db;
    t.false(await indexesPresent(db, PONDER_04_LAYOUT, CHAIN_BLOCK_INDEXES));
    t.deepEqual(await runStatus(db, NOW), probed);
    throw rollback;
  }).catch((err: unknown) => {
    if (err !== rollback) throw err;
  });
});

test.serial('GET /api/status without Ponder metadata: the newest indexed event per chain', async (t) => {
  const res = await get<StatusSnapshot>(`${app.base}/api/status`);
  t.is(res.status, 200);
  t.is(res.body.source, 'events');
  const expected = newestPerChain();
  t.deepEqual(res.body.chains.map((c) => c.chainId), [...expected.keys()].sort((a, b) => a - b));
  for (const c of res.body.chains) {
    const e = expected.get(c.chainId!)!;
    t.deepEqual(c, {
      chainId: c.chainId, chain: c.chain, latestBlock: e.block, latestTimestamp: e.ts, ageSeconds: NOW - e.ts,
      finalizedBlock: null, finalizedTimestamp: null, ready: null,
    });
  }
  t.is(res.body.chains.find((c) => c.chainId === 42161)?.chain, 'arbitrum');
});

test.serial("GET /api/status reads Ponder's _ponder_status (0.9–0.10), then _ponder_checkpoint (newest) when present", async (t) => {
  await pg.db.none(`CREATE TABLE "_ponder_status" ("network_name" TEXT PRIMARY KEY, "block_number" BIGINT, "block_timestamp" BIGINT, "ready" BOOLEAN NOT NULL)`);
  t.teardown(() => pg.db.none('DROP TABLE IF EXISTS "_ponder_status"; DROP TABLE IF EXISTS "_ponder_checkpoint"'));
  await pg.db.none(`INSERT INTO "_ponder_status" VALUES ('arbitrum', 250000000, ${NOW - 90}, true), ('base', NULL, NULL, false)`);
  const status = await get<StatusSnapshot>(`${app.base}/api/status`);
  t.deepEqual(status.body, {
    generatedAt: NOW, source: 'ponder_status',
    chains: [
      { chainId: 42161, chain: 'arbitrum', latestBlock: '250000000', latestTimestamp: NOW - 90, ageSeconds: 90, finalizedBlock: null, finalizedTimestamp: null, ready: true },
      { chainId: 8453, chain: 'base', latestBlock: null, latestTimestamp: null, ageSeconds: null, finalizedBlock: null, finalizedTimestamp: null, ready: false },
    ],
  });

  await pg.db.none(`CREATE TABLE "_ponder_checkpoint" ("chain_name" TEXT PRIMARY KEY, "chain_id" BIGINT NOT NULL,
    "safe_checkpoint" VARCHAR(75) NOT NULL, "latest_checkpoint" VARCHAR(75) NOT NULL, "finalized_checkpoint" VARCHAR(75) NOT NULL)`);
  const checkpoint = (ts: number, chainId: number, blockNumber: number) =>
    `${String(ts).padStart(10, '0')}${String(chainId).padStart(16, '0')}${String(blockNumber).padStart(16, '0')}${'0'.repeat(16)}5${'0'.repeat(16)}`;
  await pg.db.none('INSERT INTO "_ponder_checkpoint" VALUES ($1, $2, $3, $4, $5)',
    ['mainnet', 1, checkpoint(NOW - 36, 1, 23_000_010), checkpoint(NOW - 12, 1, 23_000_012), checkpoint(NOW - 780, 1, 22_999_947)]);
  const newest = await get<StatusSnapshot>(`${app.base}/api/status`);
  t.deepEqual(newest.body, {
    generatedAt: NOW, source: 'ponder_checkpoint',
    chains: [{
      chainId: 1, chain: 'mainnet', latestBlock: '23000012', latestTimestamp: NOW - 12, ageSeconds: 12,
      finalizedBlock: '22999947', finalizedTimestamp: NOW - 780, ready: null,
    }],
  });
});

test.serial("GET /api/status reads Ponder 0.4.42–0.8's _ponder_meta status row with the app's finalized checkpoint, and 0.11–0.12's _ponder_checkpoint without a finalized column", async (t) => {
  const cp = (ts: number, chainId: number, blockNumber: number) =>
    `${String(ts).padStart(10, '0')}${String(chainId).padStart(16, '0')}${String(blockNumber).padStart(16, '0')}${'0'.repeat(16)}5${'0'.repeat(16)}`;
  await pg.db.none('CREATE TABLE "_ponder_meta" ("key" TEXT PRIMARY KEY, "value" JSONB)');
  t.teardown(() => pg.db.none('DROP TABLE IF EXISTS "_ponder_meta"; DROP TABLE IF EXISTS "_ponder_checkpoint"'));
  // Before Ponder's first status write the row is null: the newest events answer.
  await pg.db.none(`INSERT INTO "_ponder_meta" VALUES ('status', NULL)`);
  t.is((await get<StatusSnapshot>(`${app.base}/api/status`)).body.source, 'events');
  // 0.7's key is app_<instance>; the finalized checkpoint names one chain (arbitrum's block 249999000).
  await pg.db.none(`UPDATE "_ponder_meta" SET value = $1 WHERE key = 'status'`, [{
    arbitrum: { block: { number: 250000000, timestamp: NOW - 30 }, ready: true }, base: { block: null, ready: false },
  }]);
  await pg.db.none(`INSERT INTO "_ponder_meta" VALUES ('app_1a2b', $1)`, [{ is_locked: 1, checkpoint: cp(NOW - 600, 42161, 249_999_000) }]);
  const meta = await get<StatusSnapshot>(`${app.base}/api/status`);
  t.deepEqual(meta.body, {
    generatedAt: NOW, source: 'ponder_meta',
    chains: [
      { chainId: 42161, chain: 'arbitrum', latestBlock: '250000000', latestTimestamp: NOW - 30, ageSeconds: 30, finalizedBlock: '249999000', finalizedTimestamp: NOW - 600, ready: true },
      { chainId: 8453, chain: 'base', latestBlock: null, latestTimestamp: null, ageSeconds: null, finalizedBlock: null, finalizedTimestamp: NOW - 600, ready: false },
    ],
  });

  await pg.db.none(`CREATE TABLE "_ponder_checkpoint" ("chain_name" TEXT PRIMARY KEY, "chain_id" BIGINT NOT NULL,
    "safe_checkpoint" VARCHAR(75) NOT NULL, "latest_checkpoint" VARCHAR(75) NOT NULL)`);
  await pg.db.none('INSERT INTO "_ponder_checkpoint" VALUES ($1, $2, $3, $4)', ['base', 8453, cp(NOW - 50, 8453, 30_000_001), cp(NOW - 5, 8453, 30_000_020)]);
  const v011 = await get<StatusSnapshot>(`${app.base}/api/status`);
  t.deepEqual(v011.body, {
    generatedAt: NOW, source: 'ponder_checkpoint',
    chains: [{
      chainId: 8453, chain: 'base', latestBlock: '30000020', latestTimestamp: NOW - 5, ageSeconds: 5,
      finalizedBlock: null, finalizedTimestamp: null, ready: null,
    }],
  });
});

test('GraphQL stats and status answer what REST answers', async (t) => {
  const res = await graphql<{ data: { stats: StatsSnapshot; status: StatusSnapshot } }>(app.base, `{
    stats { generatedAt stages { stage originChainId destChainId count oldestAgeSeconds } }
    status { generatedAt source chains { chainId chain latestBlock latestTimestamp ageSeconds finalizedBlock finalizedTimestamp ready } }
  }`);
  t.is(res.status, 200, JSON.stringify(res.body));
  const stats = await get<StatsSnapshot>(`${app.base}/api/stats`);
  t.deepEqual(res.body.data.stats, stats.body);
  t.is(res.body.data.status.generatedAt, NOW);
  t.true(res.body.data.status.chains.length > 0);
});

test('GraphQL list items carry ageSeconds and the decoded request', async (t) => {
  const res = await graphql<{ data: { pendingTransactionsMissingRelay: { ageSeconds: number; Bridge: { decodedRequest: Record<string, unknown> } }[] } }>(app.base,
    '{ pendingTransactionsMissingRelay(originChainId: 42161) { ageSeconds Bridge { decodedRequest { version deadline sendChainGas exclusivityRelayer } } } }');
  t.deepEqual(res.body.data.pendingTransactionsMissingRelay, [
    { ageSeconds: H, Bridge: { decodedRequest: { version: 1, deadline: String(NOW - H + 3600), sendChainGas: true, exclusivityRelayer: null } } },
  ]);
});

/** The value of one sample line of a Prometheus text exposition, or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

test("the indexer's gauges at the balancer's /metrics after a refresh, and their last values kept with stats_up 0 when a refresh fails", async (t) => {
  const pool = pg.pool();
  const api = indexerApi(pool, { now: () => NOW, statsMaxAgeSeconds: 0 });
  let gauges: ReturnType<typeof indexerGauges> | undefined;
  const upstream: FakeUpstream = await startFakeUpstream();
  t.teardown(() => upstream.close());
  const server: RunningServer = await startServer(makeConfig({ chains: { 1: { rpcs: [upstream.url] } } }), 0, {
    extraHandlers: [api],
    onMetricsRegistry: (registry) => {
      gauges = indexerGauges(registry, api.ops, { now: () => NOW + 30 });
    },
  });
  t.teardown(() => server.close());
  const metrics = async () => (await get(`http://127.0.0.1:${server.port}/metrics`)).text;

  const before = await metrics();
  t.is(sample(before, 'omnigate_indexer_stats_up'), 0, 'down before the first refresh');
  t.is(sample(before, 'omnigate_indexer_pending{stage="missingRelay",origin_chain_id="42161",dest_chain_id="8453"}'), undefined);

  await gauges!.refresh();
  const after = await metrics();
  t.is(sample(after, 'omnigate_indexer_stats_up'), 1);
  t.is(sample(after, 'omnigate_indexer_stats_refreshed_timestamp_seconds'), NOW + 30);
  t.is(sample(after, 'omnigate_indexer_pending{stage="missingRelay",origin_chain_id="42161",dest_chain_id="8453"}'), 1);
  t.is(sample(after, 'omnigate_indexer_pending_oldest_age_seconds{stage="missingRelay",origin_chain_id="42161",dest_chain_id="8453"}'), H + 30,
    'aged to the scrape time');
  t.is(sample(after, 'omnigate_indexer_pending{stage="disputed",origin_chain_id="10",dest_chain_id="42161"}'), 1);
  t.is(sample(after, 'omnigate_indexer_pending{stage="exceedDeadline",origin_chain_id="56",dest_chain_id="480"}'), 1);
  const arb = newestPerChain().get(42161)!;
  t.is(sample(after, 'omnigate_indexer_head_age_seconds{chain_id="42161",chain="arbitrum"}'), NOW + 30 - arb.ts);
  t.regex(after, /omnigate_requests_total|omnigate_upstream_up/, "the balancer's metrics are still there");

  await closeIndexerDb(pool); // every query of this pool now fails
  await gauges!.refresh();
  const failed = await metrics();
  t.is(sample(failed, 'omnigate_indexer_stats_up'), 0);
  t.is(sample(failed, 'omnigate_indexer_pending{stage="missingRelay",origin_chain_id="42161",dest_chain_id="8453"}'), 1, 'last values kept');
  t.is(sample(failed, 'omnigate_indexer_stats_refreshed_timestamp_seconds'), NOW + 30);
});

test('omnigate serve (the real CLI) adds the indexer gauges to /metrics, refreshed every OMNIGATE_INDEXER_STATS_INTERVAL_S', async (t) => {
  const upstream = await startFakeUpstream();
  t.teardown(() => upstream.close());
  const file = await configFile(t, `refreshInterval: 60\nchains:\n  1337:\n    rpcs: [${upstream.url}]\n`, 'omnigate-ops-');
  const run = runCli(['serve', '--config', file, '--port', '0'], { DATABASE_URL: pg.url, OMNIGATE_INDEXER_STATS_INTERVAL_S: '1', LOG_LEVEL: 'info' });
  t.teardown(async () => {
    if (run.child.exitCode === null && run.child.signalCode === null) {
      run.child.kill('SIGKILL');
      await run.exited;
    }
  });
  const base = `http://127.0.0.1:${await listeningPort(run)}`;
  // The first refresh starts with the server; wait for it (a few seconds at most).
  let text = (await get(`${base}/metrics`)).text;
  for (const end = Date.now() + 20_000; sample(text, 'omnigate_indexer_stats_up') !== 1 && Date.now() < end; ) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    text = (await get(`${base}/metrics`)).text;
  }
  t.is(sample(text, 'omnigate_indexer_stats_up'), 1, text.split('\n').filter((l) => l.includes('indexer')).join('\n'));
  // Against the real clock every fixture request is older than 7 days: exceed-deadline.
  t.true(Date.now() / 1000 > NOW + 8 * D);
  t.is(sample(text, 'omnigate_indexer_pending{stage="exceedDeadline",origin_chain_id="42161",dest_chain_id="8453"}'), 1);
  t.is(sample(text, 'omnigate_indexer_pending{stage="disputed",origin_chain_id="10",dest_chain_id="42161"}'), 1);
  t.true(sample(text, 'omnigate_indexer_head_age_seconds{chain_id="42161",chain="arbitrum"}')! > 0);
  t.regex(text, /omnigate_requests_total|omnigate_upstream_up/);
  t.false(text.includes(new URL(pg.url).password), 'no database password in the metrics');
  const stats = await get<StatsSnapshot>(`${base}/api/stats`);
  t.is(stats.status, 200);
  t.true(stats.body.stages.some((s) => s.stage === 'exceedDeadline'));
  t.deepEqual(logLines(run).filter((l) => (l.level === 'error' || l.level === 'warn') && /indexer|stats/.test(String(l.msg))).map((l) => l.msg), []);
});

test('omnigate serve reads the gauges\' refresh interval from the YAML indexer: section (indexer.statsIntervalSeconds)', async (t) => {
  const upstream = await startFakeUpstream();
  t.teardown(() => upstream.close());
  // No OMNIGATE_INDEXER_STATS_INTERVAL_S: the default (30 s) would refresh once in this test.
  const file = await configFile(t, `refreshInterval: 60\nindexer:\n  statsIntervalSeconds: 1\nchains:\n  1337:\n    rpcs: [${upstream.url}]\n`, 'omnigate-ops-');
  const run = runCli(['serve', '--config', file, '--port', '0'], { DATABASE_URL: pg.url, OMNIGATE_INDEXER_STATS_INTERVAL_S: '', LOG_LEVEL: 'info' });
  t.teardown(async () => {
    if (run.child.exitCode === null && run.child.signalCode === null) {
      run.child.kill('SIGKILL');
      await run.exited;
    }
  });
  const base = `http://127.0.0.1:${await listeningPort(run)}`;
  const refreshed = async () => sample((await get(`${base}/metrics`)).text, 'omnigate_indexer_stats_refreshed_timestamp_seconds') ?? 0;
  let first = await refreshed();
  for (const end = Date.now() + 20_000; first === 0 && Date.now() < end; ) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    first = await refreshed();
  }
  t.true(first > 0, 'the first refresh came');
  // A second refresh within a few intervals of 1 s (never within the 30 s default).
  let next = first;
  for (const end = Date.now() + 20_000; next === first && Date.now() < end; ) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    next = await refreshed();
  }
  t.true(next > first, 'refreshed again: the interval came from the YAML file');
});
