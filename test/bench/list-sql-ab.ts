/**
 * A/B of the indexer's list SQL (and the stats statement) between this checkout and another one
 * (`BENCH_BASELINE`: a directory holding that version's `lib/`, e.g. made with
 * `git archive <commit> lib | tar -x -C /tmp/base`), on ONE embedded PostgreSQL seeded with the
 * demo generator and indexed as the migrations index it. Each statement runs in interleaved
 * rounds, old then new; reported: the median of the per-round ratios of the wall time of
 * `BENCH_REPS` runs, the lowest EXPLAIN ANALYZE execution time of each, and the shared buffers
 * each touched (not noisy on a busy machine), for each list under no filter, `originChainId`
 * and `destChainId`. Also checks that both return as many rows.
 *
 *   BENCH_BASELINE=/tmp/base BENCH_BRIDGES=100000 BENCH_ROUNDS=5 node --import tsx test/bench/list-sql-ab.ts
 *
 * Options: BENCH_BRIDGES (bridges to generate, about 3 events each), BENCH_ROUNDS, BENCH_REPS,
 * BENCH_QUERIES (comma-separated list names), BENCH_STATS=1 (also the stats statement),
 * BENCH_EXPLAIN=1 (print the new plans).
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { startTestDatabase } from '../support/pg.js';
import { generateDemo, insertRows } from '../../lib/indexer/seed.js';
import * as NEW from '../../lib/indexer/read/queries.js';
import { statsStatement as newStats } from '../../lib/indexer/ops/stats.js';

type Statement = { text: string; values: unknown[] };
const baseline = process.env.BENCH_BASELINE;
if (!baseline) throw new Error('BENCH_BASELINE: the directory of the version to compare with (holding its lib/)');
const OLD = await import(pathToFileURL(path.resolve(baseline, 'lib/indexer/read/queries.ts')).href) as typeof NEW;
const { statsStatement: oldStats } = await import(pathToFileURL(path.resolve(baseline, 'lib/indexer/ops/stats.ts')).href) as { statsStatement: typeof newStats };

const bridges = Number(process.env.BENCH_BRIDGES ?? 100_000);
const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const reps = Number(process.env.BENCH_REPS ?? 3);
const now = Math.floor(Date.now() / 1000);
const median = (x: number[]) => [...x].sort((a, b) => a - b)[Math.floor(x.length / 2)]!;

const pg = await startTestDatabase();
try {
  const t0 = performance.now();
  const data = generateDemo({ count: bridges, now, seed: 7 });
  const tables = [['requests', 'BridgeRequestEvents'], ['relays', 'BridgeRelayedEvents'], ['proofs', 'BridgeProofProvidedEvents'],
    ['disputes', 'BridgeProofDisputedEvents'], ['claims', 'BridgeDepositClaimedEvents'], ['refunds', 'BridgeDepositRefundedEvents']] as const;
  let events = 0;
  for (const [key, table] of tables) {
    events += data[key].length;
    await insertRows(pg.db, table, data[key]);
  }
  const db = pg.pool({ statementTimeoutMs: 600_000 });
  await db.none('VACUUM ANALYZE');
  console.log(`${events} events (${bridges} bridges) seeded and analyzed in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const ctx = { now, ...NEW.WINDOW_DEFAULTS };
  const wall = async (st: Statement, n = reps) => {
    const t = performance.now();
    for (let i = 0; i < n; i += 1) await db.any(st.text, st.values);
    return (performance.now() - t) / n;
  };
  const explain = async (st: Statement) => {
    const [row] = await db.any<{ 'QUERY PLAN': { 'Execution Time': number; Plan: Record<string, number> }[] }>(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${st.text}`, st.values);
    const plan = row!['QUERY PLAN'][0]!;
    return { ms: plan['Execution Time'], buffers: (plan.Plan['Shared Hit Blocks'] ?? 0) + (plan.Plan['Shared Read Blocks'] ?? 0) };
  };
  if (process.env.BENCH_STATS) {
    const o = oldStats(ctx as never);
    const n = newStats(ctx as never);
    const ratios: number[] = [];
    for (let r = 0; r < rounds; r += 1) ratios.push(await wall(n, 1) / await wall(o, 1));
    console.log(`stats: new/old ${median(ratios).toFixed(2)} (rounds ${ratios.map((x) => x.toFixed(2)).join(' ')})`);
  }
  const names = (process.env.BENCH_QUERIES ?? 'missingRelay,exceedDeadline,missingProof,missingClaim,disputes').split(',') as NEW.ListQueryName[];
  const filters: [string, object][] = [['none', {}], ['origin', { originChainId: 42161 }], ['dest', { destChainId: 8453 }]];
  for (const name of names) {
    for (const [label, f] of filters) {
      const filter = { limit: 100, ...f } as never;
      const o = OLD.listStatement(name, filter, ctx as never);
      const n = NEW.listStatement(name, filter, ctx as never);
      await wall(o);
      await wall(n);
      const ratios: number[] = [];
      const eo: number[] = [];
      const en: number[] = [];
      let buffers = [0, 0];
      for (let r = 0; r < rounds; r += 1) {
        ratios.push(await wall(n) / await wall(o));
        const [x, y] = [await explain(o), await explain(n)];
        eo.push(x.ms);
        en.push(y.ms);
        buffers = [x.buffers, y.buffers];
      }
      const [ro, rn] = [(await db.any(o.text, o.values)).length, (await db.any(n.text, n.values)).length];
      console.log(`${name.padEnd(15)} ${label.padEnd(7)} wall new/old ${median(ratios).toFixed(2)} (rounds ${ratios.map((x) => x.toFixed(2)).join(' ')}); `
        + `execution min old ${Math.min(...eo).toFixed(2)} ms, new ${Math.min(...en).toFixed(2)} ms; buffers old ${buffers[0]}, new ${buffers[1]}; rows ${ro}/${rn}`);
      if (process.env.BENCH_EXPLAIN) {
        const plan = await db.any<Record<string, string>>(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${n.text}`, n.values);
        console.log(plan.map((r) => r['QUERY PLAN']).join('\n'));
      }
    }
  }
} finally {
  await pg.close();
}
