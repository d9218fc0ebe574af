/**
 * What the budget stages cost per request with the memory store, measured alone in one process:
 * a reservation (the estimate of one eth_blockNumber at N=1) and its settle, as a request of a key
 * with a budget it never spends pays them, 200,000 times per round.
 *
 *   node --import tsx test/bench/budget-cost.ts
 *
 * Knobs: BENCH_ROUNDS (default 5), BENCH_CALLS (per round, default 200000). Prints µs per
 * reserve + settle for each round and their median.
 */
import { Budgets, type Charge } from '../../lib/access/budget.js';
import { buildKeyring, keyDigest } from '../../lib/access/keyring.js';
import { AccessCounts } from '../../lib/access/metrics.js';

const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const calls = Number(process.env.BENCH_CALLS ?? 200_000);
const rights = { denyMethods: [], writes: true, cacheBypass: false, admin: false };
const ring = buildKeyring({
  keys: [{ ...rights, label: 'bench', keySha256: keyDigest('bench-client-key-0123456789abcdef'), creditsPerSecond: 1e9, creditsPerDay: 1e15, maxConcurrent: 100_000 }],
  adminRoutes: 'keys',
});
const budgets = new Budgets(ring, new AccessCounts());
const plan = budgets.plan(ring.grants[0]!)!;
const perCall: number[] = [];
for (let r = 0; r < rounds; r++) {
  const t0 = performance.now();
  for (let i = 0; i < calls; i++) {
    const charge = budgets.reserve(plan, budgets.estimateOf(plan, 'eth_blockNumber', 1), i) as Charge;
    budgets.settle(charge, budgets.costOf(plan, 'eth_blockNumber', 1, false));
  }
  perCall.push(((performance.now() - t0) * 1000) / calls);
}
const sorted = [...perCall].sort((a, b) => a - b);
console.log(`µs per reserve + settle, by round: ${perCall.map((x) => x.toFixed(2)).join(', ')}; median ${sorted[Math.floor(rounds / 2)]!.toFixed(2)}`);
