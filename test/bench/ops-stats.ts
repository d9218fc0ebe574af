/**
 * How long the operators' snapshots take at scale: seeds the bench's data set (BENCH_EVENTS,
 * default 1,000,000 events, the demo generator) into an embedded PostgreSQL, then times the
 * stats statement and the status query (lib/indexer/ops/stats.ts) five times each. Not part of `npm run bench` (minutes of seeding):
 *   node --import tsx test/bench/ops-stats.ts
 */
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { openIndexerDb } from '../../lib/indexer/index.js';
import { runStats, runStatus } from '../../lib/indexer/ops/stats.js';
import { WINDOW_DEFAULTS } from '../../lib/indexer/read/queries.js';
import { generateDemo, insertRows } from '../../lib/indexer/seed.js';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 1_000_000);
const TABLES = [
  ['requests', 'BridgeRequestEvents'], ['relays', 'BridgeRelayedEvents'], ['proofs', 'BridgeProofProvidedEvents'],
  ['disputes', 'BridgeProofDisputedEvents'], ['claims', 'BridgeDepositClaimedEvents'], ['refunds', 'BridgeDepositRefundedEvents'],
] as const;

const base = await mkdtemp(path.join(os.tmpdir(), 'omnigate-ops-bench-'));
await chmod(base, 0o755);
// A statement timeout of 60 s: the stats are aggregates over whole tables.
const opened = await openIndexerDb({ dataDir: path.join(base, 'pgdata'), ephemeral: true, statementTimeoutMs: 60_000 });
try {
  let total = 0;
  const now = Math.floor(Date.now() / 1000);
  for (let chunk = 0; total < EVENTS; chunk += 1) {
    const data = generateDemo({ count: Math.max(12, Math.min(25_000, Math.ceil((EVENTS - total) / 3))), now, seed: 7919 * (chunk + 1) });
    await opened.db.tx(async (t) => {
      for (const [key, table] of TABLES) {
        await insertRows(t, table, data[key]);
        total += data[key].length;
      }
    });
  }
  await opened.db.task(async (t) => {
    await t.none('SET statement_timeout = 0');
    await t.none('VACUUM (ANALYZE)');
    await t.none('RESET statement_timeout');
  });
  const time = async (name: string, fn: () => Promise<unknown>) => {
    const ms: number[] = [];
    for (let i = 0; i < 5; i += 1) {
      const t0 = performance.now();
      await fn();
      ms.push(performance.now() - t0);
    }
    ms.sort((a, b) => a - b);
    console.log(`${name}: median ${ms[2]!.toFixed(0)} ms (min ${ms[0]!.toFixed(0)}, max ${ms[4]!.toFixed(0)}) at ${total} events`);
  };
  let stages = 0;
  await time('stats (one statement, five stages)', async () => {
    stages = (await runStats(opened.db, { now, ...WINDOW_DEFAULTS })).stages.length;
  });
  console.log(`  ${stages} stage × pair entries`);
  await time('status (newest event per chain)', () => runStatus(opened.db, now));
} finally {
  await opened.close();
  await rm(base, { recursive: true, force: true });
}
