/**
 * Prometheus gauges of the indexer's stats and status (lib/indexer/ops/stats.ts), registered on the balancer's
 * registry so they come out at the same GET /metrics. The snapshots are refreshed every
 * `intervalSeconds` (one set of queries per interval, whatever the scrape rate); a scrape only
 * reads the last snapshot. Ages are computed at scrape time from the timestamps the snapshot
 * found, so they keep growing between refreshes, and after a failed refresh, as the last values
 * are kept and `omnigate_indexer_stats_up` drops to 0.
 */
import { Gauge, type Registry } from 'prom-client';
import { silentLogger, type Logger } from '../../log.js';
import { redactCredentials } from '../../upstream/redact.js';
import type { OpsSource, StatsSnapshot, StatusSnapshot } from './stats.js';

export const DEFAULT_STATS_INTERVAL_SECONDS = 30;

export interface IndexerGaugesOptions {
  /** Seconds between refreshes (default 30). */
  intervalSeconds?: number;
  logger?: Logger;
  /** Clock in unix seconds (tests pin it). */
  now?: () => number;
}

export interface IndexerGauges {
  /** Refreshes the snapshots once; resolves when done (whether or not it succeeded). */
  refresh(): Promise<void>;
  /** Refreshes at once, then every interval. */
  start(): void;
  stop(): void;
}

const PAIR = ['stage', 'origin_chain_id', 'dest_chain_id'] as const;

export function indexerGauges(registry: Registry, ops: OpsSource, options: IndexerGaugesOptions = {}): IndexerGauges {
  const logger = options.logger ?? silentLogger;
  const now = options.now ?? (() => Math.floor(Date.now() / 1000));
  const intervalMs = (options.intervalSeconds ?? DEFAULT_STATS_INTERVAL_SECONDS) * 1000;
  let stats: StatsSnapshot | undefined;
  let status: StatusSnapshot | undefined;
  let up = 0;
  let refreshedAt = 0;

  const pairLabels = (s: StatsSnapshot['stages'][number]) => ({
    stage: s.stage, origin_chain_id: String(s.originChainId), dest_chain_id: s.destChainId === null ? 'unknown' : String(s.destChainId),
  });
  new Gauge({
    name: 'omnigate_indexer_pending',
    help: 'Bridges waiting in a stage (missingRelay, exceedDeadline, missingProof, missingClaim, disputed), per origin and destination chain id, at the last refresh.',
    labelNames: PAIR, registers: [registry],
    collect() {
      this.reset();
      for (const s of stats?.stages ?? []) this.set(pairLabels(s), s.count);
    },
  });
  new Gauge({
    name: 'omnigate_indexer_pending_oldest_age_seconds',
    help: 'Seconds since the oldest bridge waiting in a stage entered it, per chain pair (from the last refresh, aged to now).',
    labelNames: PAIR, registers: [registry],
    collect() {
      this.reset();
      const t = now();
      for (const s of stats?.stages ?? []) this.set(pairLabels(s), t - (stats!.generatedAt - s.oldestAgeSeconds));
    },
  });
  new Gauge({
    name: 'omnigate_indexer_head_age_seconds',
    help: 'Seconds since the time of the latest indexed block of a chain (from the last refresh, aged to now).',
    labelNames: ['chain_id', 'chain'] as const, registers: [registry],
    collect() {
      this.reset();
      const t = now();
      for (const c of status?.chains ?? []) {
        if (c.latestTimestamp !== null) this.set({ chain_id: c.chainId === null ? 'unknown' : String(c.chainId), chain: c.chain }, Math.max(0, t - c.latestTimestamp));
      }
    },
  });
  new Gauge({
    name: 'omnigate_indexer_head_block',
    help: 'Latest indexed block of a chain at the last refresh.',
    labelNames: ['chain_id', 'chain'] as const, registers: [registry],
    collect() {
      this.reset();
      for (const c of status?.chains ?? []) {
        if (c.latestBlock !== null) this.set({ chain_id: c.chainId === null ? 'unknown' : String(c.chainId), chain: c.chain }, Number(c.latestBlock));
      }
    },
  });
  new Gauge({
    name: 'omnigate_indexer_stats_up',
    help: '1 when the last refresh of the indexer stats succeeded; 0 before the first and after a failed one (the other indexer gauges then keep their last values).',
    registers: [registry],
    collect() {
      this.set(up);
    },
  });
  new Gauge({
    name: 'omnigate_indexer_stats_refreshed_timestamp_seconds',
    help: 'Unix time of the last successful refresh of the indexer stats (0: none yet).',
    registers: [registry],
    collect() {
      this.set(refreshedAt);
    },
  });

  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let failing = false;
  const refresh = () => {
    running ??= Promise.all([ops.stats.refresh(), ops.status.refresh()]).then(([s, st]) => {
      stats = s;
      status = st;
      up = 1;
      refreshedAt = now();
      if (failing) logger.info('indexer stats refresh succeeded again');
      failing = false;
    }, (err: unknown) => {
      up = 0;
      // Once per outage, not once per interval (the database watch logs the outage itself).
      if (!failing) logger.warn({ err: { name: (err as Error).name, message: redactCredentials((err as Error).message) } }, 'indexer stats refresh failed; the gauges keep their last values');
      failing = true;
    }).finally(() => {
      running = undefined;
    });
    return running;
  };
  return {
    refresh,
    start() {
      if (timer) return;
      void refresh();
      timer = setInterval(() => void refresh(), intervalMs);
      timer.unref();
    },
    stop() {
      clearInterval(timer);
      timer = undefined;
    },
  };
}
