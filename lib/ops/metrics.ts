/**
 * Prometheus metrics of one pipeline (prom-client), in a registry of its own so several
 * pipelines in one process never collide. Served as text at GET /metrics.
 *
 * Label values are bounded: `method` is a known Ethereum method name or `other` (a client could
 * otherwise create one series per random string), `upstream` is the redacted URL.
 */
import { Counter, Gauge, Registry, collectDefaultMetrics, type Metric } from 'prom-client';
import { RequestCount, UpstreamLatency } from './tallies.js';
import { supportedMethods } from './collection.js';
import { chainHead } from '../health/heads.js';
import { isUp } from '../health/health.js';
import type { Registry as Upstreams, Upstream } from '../upstream/registry.js';
import { maxLagBlocks, slowClasses } from '../upstream/select.js';
import { methodClasses, qualityOf, scoreOf } from '../health/quality.js';

/** The methods the label names: the Postman collection's (the method table's rows with an example), derived once. */
export const knownMethods: ReadonlySet<string> = new Set(supportedMethods.map((m) => m.method));

/** The method label of a request: the method, `batch` for a batch, `other` for names we do not know. */
export function methodLabel(calls: readonly { method: string }[] | undefined): string {
  if (!calls || calls.length === 0) return 'none';
  if (calls.length > 1) return 'batch';
  const method = calls[0]!.method;
  return knownMethods.has(method) ? method : 'other';
}

/** What the cache of confirmed answers (lib/cache) shows at scrape time. */
export interface CacheStats {
  /** Lookups answered from it, lookups that were not, answers kept: by chain id. */
  readonly hits: ReadonlyMap<string, number>;
  readonly misses: ReadonlyMap<string, number>;
  readonly stored: ReadonlyMap<string, number>;
  /** Entries confirmed by fewer than N topped up to N, and entries dropped because an answer asked to top them up differed: by chain id. */
  readonly toppedUp: ReadonlyMap<string, number>;
  readonly disputed: ReadonlyMap<string, number>;
  readonly bytes: number;
  readonly entries: number;
  readonly evictions: number;
  /** Redis, when configured: up or not, writes paused (above its byte budget), and its lookups' and writes' outcomes. */
  readonly redis?: { up: boolean; full: boolean; hits: number; misses: number; errors: number; refused: number; writeErrors: number };
}

export interface Metrics {
  readonly registry: Registry;
  /** Requests answered: inc(chain, method, outcome), a plain tally read at scrape time (tallies.ts). */
  readonly requests: RequestCount;
  /** Upstream call latency: observe(upstream, outcome, seconds), a plain tally read at scrape time. */
  readonly upstreamSeconds: UpstreamLatency;
  readonly disagreements: Counter<'chain' | 'upstream'>;
}

/**
 * The process metrics (CPU, memory, event loop, GC): collected once per process, in a registry of
 * their own, and registered in each pipeline's registry that shows them. prom-client's collector
 * never stops (a GC observer, an event-loop histogram) and holds its registry: given a pipeline's
 * own, it kept every closed pipeline (its upstreams, metrics, agents) for the life of the process.
 */
let processRegistry: Registry | undefined;

function processMetrics(): Registry {
  if (!processRegistry) {
    processRegistry = new Registry();
    collectDefaultMetrics({ register: processRegistry, prefix: 'omnigate_' });
  }
  return processRegistry;
}

export function createMetrics(
  upstreams: Upstreams,
  options: {
    processMetrics?: boolean;
    /** Requests that joined an identical one's agreement, by chain id (lib/verify/merge.ts InFlight.merged). */
    mergedRequests?: ReadonlyMap<string, number>;
    /** The cache of confirmed answers, read at scrape time (lib/cache). */
    cache?: () => CacheStats;
  } = {},
): Metrics {
  const registry = new Registry();
  // (getMetricsAsArray is typed as the metrics' descriptions: they are the metrics themselves)
  if (options.processMetrics) for (const metric of processMetrics().getMetricsAsArray()) registry.registerMetric(metric as unknown as Metric);
  // The two metrics every request adds to: plain tallies, read when /metrics is scraped.
  const requests = new RequestCount();
  registry.registerMetric(requests as unknown as Metric);
  const upstreamSeconds = new UpstreamLatency();
  registry.registerMetric(upstreamSeconds as unknown as Metric);
  const disagreements = new Counter({
    name: 'omnigate_upstream_disagreements_total',
    help: 'Answers of an upstream that differed from the agreeing group.',
    labelNames: ['chain', 'upstream'] as const,
    registers: [registry],
  });
  const merged = options.mergedRequests;
  if (merged) {
    new Counter({
      name: 'omnigate_merged_requests_total',
      help: 'Confirmable requests that joined an identical request\'s agreement in flight instead of asking the upstreams again, by chain.',
      labelNames: ['chain'] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const [chain, n] of merged) this.inc({ chain }, n);
      },
    });
  }
  if (options.cache) registerCacheMetrics(registry, options.cache);
  registerUpstreamGauges(registry, upstreams);
  return { registry, requests, upstreamSeconds, disagreements };
}

/** Each upstream of every chain: its chain id, label and record. */
function eachUpstream(upstreams: Upstreams, fn: (chain: string, label: string, u: Upstream) => void): void {
  for (const chain of upstreams.chains.values()) for (const u of chain.upstreams) fn(chain.id, u.label, u);
}

/**
 * How `omnigate serve --workers N` combines a gauge of every worker into one (prom-client's
 * AggregatorRegistry, lib/server/cluster.ts): counters and histograms sum; a state every worker
 * holds alike (a head, a flag) must not be multiplied by N.
 */
type Aggregator = 'sum' | 'max' | 'min' | 'average';

/** A gauge per upstream, read at scrape time: its value, or null for none. */
function perUpstream(registry: Registry, upstreams: Upstreams, name: string, help: string, aggregator: Aggregator, value: (u: Upstream) => number | null): void {
  new Gauge({
    name,
    help,
    labelNames: ['chain', 'upstream'] as const,
    registers: [registry],
    aggregator,
    collect() {
      this.reset();
      eachUpstream(upstreams, (chain, upstream, u) => {
        const v = value(u);
        if (v !== null) this.set({ chain, upstream }, v);
      });
    },
  });
}

/** The heads' tags and the health record's key of each (a block number is exact in a float64 up to 2^53). */
const tags = [['latest', 'head'], ['safe', 'safe'], ['finalized', 'finalized']] as const;

/** The gauges of upstreams and chains, read from their records at scrape time, in /metrics order. */
function registerUpstreamGauges(registry: Registry, upstreams: Upstreams): void {
  perUpstream(registry, upstreams, 'omnigate_upstream_up', '1 when the upstream serves the configured chain and its last probe or call succeeded; 0 from its first failure, and before its first probe (with --workers: 0 when any worker saw it fail).', 'min', (u) => (isUp(u.health) ? 1 : 0));
  perUpstream(registry, upstreams, 'omnigate_upstream_lag_blocks', `Blocks behind the chain's robust head (omnigate_chain_head_block, never the maximum; ranked last above ${maxLagBlocks}).`, 'max', (u) => u.health.lag);
  perUpstream(registry, upstreams, 'omnigate_upstream_wrong_chain', '1 when the last probe reported another chain id (out of rotation).', 'max', (u) => (u.health.wrongChainId === undefined ? 0 : 1));
  perUpstream(registry, upstreams, 'omnigate_upstream_distrusted', '1 when the upstream lost too many agreements (disputes.maxLost of its last disputes.window votes): ranked last, not asked for unverified reads (with --workers: by any worker).', 'max', (u) => (u.health.distrusted ? 1 : 0));
  // Rate limits (lib/health/rate-limits.ts), read from the health records: calls, probes and head polls alike.
  new Counter({
    name: 'omnigate_upstream_rate_limited_total',
    help: 'Rate-limit answers of the upstream\'s provider (HTTP 429, 503 with Retry-After, a JSON-RPC rate-limit error), to calls, probes and head polls.',
    labelNames: ['chain', 'upstream'] as const,
    registers: [registry],
    collect() {
      this.reset();
      eachUpstream(upstreams, (chain, upstream, u) => this.inc({ chain, upstream }, u.health.rateLimits));
    },
  });
  perUpstream(registry, upstreams, 'omnigate_upstream_rate_limited', '1 while the upstream is on back-off after a rate limit: not asked until it ends (with --workers: by any worker).', 'max', (u) => (u.health.rateLimitedUntil > Date.now() ? 1 : 0));
  // Heads (lib/health/heads.ts).
  new Gauge({
    name: 'omnigate_upstream_head_block',
    help: 'The upstream\'s latest, safe and finalized heads (tag label), as the head tracker, probes and answers saw them.',
    labelNames: ['chain', 'upstream', 'tag'] as const,
    registers: [registry],
    aggregator: 'max',
    collect() {
      this.reset();
      eachUpstream(upstreams, (chain, upstream, u) => {
        for (const [tag, key] of tags) if (u.health[key] !== undefined) this.set({ chain, upstream, tag }, Number(u.health[key]));
      });
    },
  });
  perUpstream(registry, upstreams, 'omnigate_upstream_suspect', '1 when the upstream\'s head is more than heads.suspectBlocks above the chain\'s head (the highest head within heads.suspectBlocks of the median): not believed, not ranked first.', 'max', (u) => (u.health.suspect ? 1 : 0));
  new Gauge({
    name: 'omnigate_chain_head_block',
    help: 'The chain\'s robust head per tag: the highest upstream head within heads.suspectBlocks of the median (never the maximum).',
    labelNames: ['chain', 'tag'] as const,
    registers: [registry],
    aggregator: 'max',
    collect() {
      this.reset();
      for (const chain of upstreams.chains.values()) {
        for (const [tag] of tags) {
          const head = chainHead(chain, tag);
          if (head !== undefined) this.set({ chain: chain.id, tag }, Number(head));
        }
      }
    },
  });
  perUpstream(registry, upstreams, 'omnigate_upstream_score', 'Measured quality of the upstream (lower is better, in ms): recent median latency, weighed by error rate, lost votes, lag and distrust; shown only, the ranking does not use it; absent before its first sample (with --workers: the workers\' average).', 'average', (u) => scoreOf(u.health));
  new Gauge({
    name: 'omnigate_upstream_slow',
    help: '1 when the ranking puts the upstream behind as slow for the method class (read, call, logs), by its measured latency or by calls abandoned unanswered; else 0 (with --workers: in any worker).',
    labelNames: ['chain', 'upstream', 'class'] as const,
    registers: [registry],
    aggregator: 'max',
    collect() {
      this.reset();
      const now = Date.now();
      for (const chain of upstreams.chains.values()) {
        for (const [u, classes] of slowClasses(chain.upstreams, now)) {
          for (const cls of methodClasses) this.set({ chain: chain.id, upstream: u.label, class: cls }, classes.includes(cls) ? 1 : 0);
        }
      }
    },
  });
  perUpstream(registry, upstreams, 'omnigate_upstream_in_flight', 'Calls to the upstream in flight.', 'sum', (u) => qualityOf(u.health).inFlight);
  new Gauge({
    name: 'omnigate_upstream_latency_quantile_seconds',
    help: 'Upstream latency over the last minute (answered and abandoned calls, probes), by method class (read, call, logs) and quantile (0.5, 0.9); with --workers, the workers\' average.',
    labelNames: ['chain', 'upstream', 'class', 'quantile'] as const,
    registers: [registry],
    aggregator: 'average',
    collect() {
      this.reset();
      const now = performance.now();
      eachUpstream(upstreams, (chain, upstream, u) => {
        for (const [cls, stats] of qualityOf(u.health).classes) {
          for (const q of [0.5, 0.9]) {
            const v = stats.sketch.quantile(q, now);
            if (v !== undefined) this.set({ chain, upstream, class: cls, quantile: String(q) }, v / 1000);
          }
        }
      });
    },
  });
}

/** The cache's counters and gauges, read from its stats at scrape time. */
function registerCacheMetrics(registry: Registry, stats: () => CacheStats): void {
  const byChain = (name: string, help: string, pick: (s: CacheStats) => ReadonlyMap<string, number>) =>
    new Counter({
      name,
      help,
      labelNames: ['chain'] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const [chain, n] of pick(stats())) this.inc({ chain }, n);
      },
    });
  byChain('omnigate_cache_hits_total', 'Confirmable requests answered from the cache of confirmed answers, by chain.', (s) => s.hits);
  byChain('omnigate_cache_misses_total', 'Confirmable requests the cache looked up and could not answer (or bypassed: Cache-Control: no-cache), by chain.', (s) => s.misses);
  byChain('omnigate_cache_stored_total', 'Confirmed answers at final blocks kept in the cache, by chain.', (s) => s.stored);
  byChain('omnigate_cache_topups_total', 'Cached answers confirmed by fewer than a request\'s N brought to N by asking only for the missing votes (also counted as misses), by chain.', (s) => s.toppedUp);
  byChain('omnigate_cache_disputed_total', 'Cached answers dropped because an upstream asked to top them up gave another answer, by chain.', (s) => s.disputed);
  // (bytes and entries: each worker has its own memory cache, so they sum; Redis's state: min/max)
  const gauge = (name: string, help: string, pick: (s: CacheStats) => number, aggregator: Aggregator = 'sum') =>
    new Gauge({
      name,
      help,
      registers: [registry],
      aggregator,
      collect() {
        this.set(pick(stats()));
      },
    });
  gauge('omnigate_cache_bytes', 'Bytes the in-memory cache holds (answers, keys and bookkeeping), within cache.memoryBytes.', (s) => s.bytes);
  gauge('omnigate_cache_entries', 'Answers the in-memory cache holds.', (s) => s.entries);
  if (stats().redis) registerRedisMetrics(registry, stats, gauge);
  new Counter({
    name: 'omnigate_cache_evictions_total',
    help: 'Answers dropped from the in-memory cache to make room (least recently used first).',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(stats().evictions);
    },
  });
}

/** Redis's state and lookups (cache.redis set). */
function registerRedisMetrics(registry: Registry, stats: () => CacheStats, gauge: (name: string, help: string, pick: (s: CacheStats) => number, aggregator?: Aggregator) => unknown): void {
  gauge('omnigate_cache_redis_up', '1 when Redis (cache.redis) is connected; 0 while it is unreachable (requests are then served from the upstreams). Absent without cache.redis.', (s) => (s.redis?.up ? 1 : 0), 'min');
  gauge('omnigate_cache_redis_writes_paused', '1 while Redis uses more memory than cache.redis.maxBytes: new answers are not stored.', (s) => (s.redis?.full ? 1 : 0), 'max');
  new Counter({
    name: 'omnigate_cache_redis_lookups_total',
    help: 'Lookups in Redis by outcome: hit, miss, error (down, failed or slower than cache.redis.timeoutMs), refused (a value whose authentication or shape failed: never served).',
    labelNames: ['outcome'] as const,
    registers: [registry],
    collect() {
      this.reset();
      const r = stats().redis;
      if (!r) return;
      this.inc({ outcome: 'hit' }, r.hits);
      this.inc({ outcome: 'miss' }, r.misses);
      this.inc({ outcome: 'error' }, r.errors);
      this.inc({ outcome: 'refused' }, r.refused);
    },
  });
}
