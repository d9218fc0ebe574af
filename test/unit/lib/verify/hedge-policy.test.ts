/**
 * The hedging policy (lib/verify/hedge-policy.ts) and how policies compose
 * (lib/verify/loop-policy.ts). Clock injected; no timers, no sleeps. The loop itself with this
 * policy: test/unit/lib/verify/agreement.test.ts ("hedge policy: …").
 */
import test from 'ava';
import type { RpcContext } from '../../../../lib/pipeline/context.js';
import { newHealth } from '../../../../lib/health/health.js';
import { recordAnswered } from '../../../../lib/health/quality.js';
import { hedgeMissingVotes } from '../../../../lib/verify/agreement.js';
import { type LoopState } from '../../../../lib/verify/question.js';
import { hedgePolicy, hedgeSettings } from '../../../../lib/verify/hedge-policy.js';
import { composePolicies, mergeLoopPolicy, type LoopPolicy } from '../../../../lib/verify/loop-policy.js';
import { validateConfig } from '../../../../config/schema.js';

const state: LoopState = { required: 1, votes: 0, missing: 1, inFlight: 1, remaining: 4, called: 1, hedged: 0, elapsedMs: 0 };
const settings = { minMs: 20, maxMs: 1000, quantile: 0.9, budget: 0.1 };
const ctxOf = (chain: object, method = 'eth_getBalance', required = 1) =>
  ({ chain, required, payload: { batch: false, calls: [{ method, id: 1, params: [] }] } }) as unknown as RpcContext;

/** `n` answered calls of `ms` on `chain`, at time `now`. */
function answered(chain: object, ms: number, n: number, now = 0, cls: 'read' | 'logs' = 'read'): void {
  const h = newHealth();
  for (let i = 0; i < n; i += 1) recordAnswered(chain, h, ms, cls, now);
}

test('adaptive: the delay follows the chain p90 of answered calls of the request class, within the bounds', (t) => {
  const clock = { t: 0 };
  const policy = hedgePolicy({ ...settings, now: () => clock.t });
  const slow = {};
  const fast = {};
  t.is(policy(ctxOf(slow))!.hedgeDelayMs!(state), 0, 'before 20 answers: no hedging');
  answered(slow, 300, 19);
  t.is(policy(ctxOf(slow))!.hedgeDelayMs!(state), 0, '19 answers: still none');
  answered(slow, 300, 11);
  answered(fast, 5, 30);
  const d = policy(ctxOf(slow))!.hedgeDelayMs!(state);
  t.true(d >= 290 && d <= 310, `~300 ms: ${d}`);
  t.is(policy(ctxOf(fast))!.hedgeDelayMs!(state), 20, 'never below hedgeMinMs');
  t.is(policy(ctxOf(fast, 'eth_getLogs'))!.hedgeDelayMs!(state), 0, 'eth_getLogs has its own class (no answers yet: no hedging)');
  answered(slow, 5000, 30);
  t.is(policy(ctxOf(slow))!.hedgeDelayMs!(state), 1000, 'never above hedgeMaxMs');
  clock.t = 10 * 60_000;
  t.is(policy(ctxOf(fast))!.hedgeDelayMs!(state), 0, 'the window slides with the injected clock: no answers left, no hedging');
});

test('fixed: timeouts.hedgeMs set in the file is used as it is; 0 turns hedging off', (t) => {
  const chain = {};
  answered(chain, 5, 30);
  t.is(hedgePolicy({ ...settings, fixedMs: 250 })(ctxOf(chain))!.hedgeDelayMs!(state), 250);
  t.is(hedgePolicy({ ...settings, fixedMs: 0 })(ctxOf(chain))!.hedgeDelayMs!(state), 0);
  t.is(hedgePolicy({ ...settings, fixedMs: 0 })(ctxOf(chain))!.mayHedge, undefined, 'off: nothing else set');
});

test('the config: hedgeMs absent is adaptive, set (even to its default) is fixed', (t) => {
  const parse = (timeouts: object) => {
    const r = validateConfig({ timeouts, chains: { 1: { rpcs: ['https://a.example'] } } });
    if ('problems' in r) throw new Error(JSON.stringify(r.problems));
    return hedgeSettings(r.config.timeouts);
  };
  t.deepEqual(parse({}), { minMs: 20, maxMs: 1000, quantile: 0.9, budget: 0.1 });
  t.deepEqual(parse({ hedgeMs: 1000 }), { fixedMs: 1000, minMs: 20, maxMs: 1000, quantile: 0.9, budget: 0.1 });
  t.deepEqual(parse({ hedgeMinMs: 50, hedgeMaxMs: 400, hedgeQuantile: 0.95, hedgeBudget: 0.2 }), { minMs: 50, maxMs: 400, quantile: 0.95, budget: 0.2 });
});

test('budget: hedges of a chain at most its share of first calls after a burst of 10; N=2 requests earn twice', (t) => {
  const policy = hedgePolicy({ ...settings, fixedMs: 100 });
  const chain = {};
  let p = policy(ctxOf(chain))!;
  for (let i = 0; i < 10; i += 1) {
    t.true(p.mayHedge!(state));
    p.onHedge!(100, 1);
  }
  t.false(p.mayHedge!(state), 'the burst is spent');
  t.false(p.mayHedge!(state), 'asking again takes nothing and changes nothing');
  for (let i = 0; i < 9; i += 1) p = policy(ctxOf(chain))!;
  t.false(p.mayHedge!(state), '9 first calls: 0.9 of a hedge');
  p = policy(ctxOf(chain))!;
  t.true(p.mayHedge!(state), '10 first calls: one hedge');
  p.onHedge!(100, 1);
  for (let i = 0; i < 5; i += 1) p = policy(ctxOf(chain, 'eth_getBalance', 2))!;
  t.true(p.mayHedge!(state), '5 requests of N=2: 10 first calls');
  t.true(hedgePolicy({ ...settings, fixedMs: 100 })(ctxOf({}))!.mayHedge!(state), 'one budget per chain');
});

test('budget, adaptive: starts empty and is earned from the first request, so a chain that is slow everywhere gets at most 10 % more calls', (t) => {
  const policy = hedgePolicy(settings);
  const chain = {};
  answered(chain, 300, 30);
  let p = policy(ctxOf(chain))!;
  t.true(p.hedgeDelayMs!(state) > 0, 'the chain has latencies to judge by');
  t.false(p.mayHedge!(state), 'no burst at start: one first call is a tenth of a hedge');
  // Every request would hedge (its call is as slow as the chain's p90): the budget decides.
  let hedges = 0;
  for (let i = 1; i < 40; i += 1) {
    p = policy(ctxOf(chain))!;
    if (p.mayHedge!(state)) {
      p.onHedge!(300, 1);
      hedges += 1;
    }
  }
  t.is(hedges, 4, '40 first calls: 4 hedges, 44 calls');
  const idle = {};
  answered(idle, 300, 30);
  for (let i = 0; i < 500; i += 1) p = policy(ctxOf(idle))!;
  let saved = 0;
  while (p.mayHedge!(state)) {
    p.onHedge!(300, 1);
    saved += 1;
  }
  t.is(saved, 10, 'unused hedges add up to a burst of 10');
});

test('N > 1 hedges only the missing votes', (t) => {
  t.is(hedgePolicy(settings)(ctxOf({}))!.hedgeCount, hedgeMissingVotes);
  t.is(hedgeMissingVotes({ ...state, required: 3, votes: 1, missing: 2, inFlight: 0 }), 2);
  t.is(hedgeMissingVotes({ ...state, required: 3, votes: 2, missing: 1, inFlight: 1 }), 1);
});

test('composed: every mayHedge must agree, every on* hook runs, the last policy sets the rest', (t) => {
  const seen: string[] = [];
  const writes = (): LoopPolicy => ({ mayHedge: () => false, onHedge: () => seen.push('writes'), hedgeDelayMs: () => 7 });
  const both = composePolicies(hedgePolicy({ ...settings, fixedMs: 100 }), writes)(ctxOf({}))!;
  t.false(both.mayHedge!(state));
  t.is(both.hedgeDelayMs!(state), 7);
  t.is(both.hedgeCount, hedgeMissingVotes);
  both.onHedge!(100, 1);
  t.deepEqual(seen, ['writes']);
  const base: LoopPolicy = { onHedge: () => seen.push('base'), mayHedge: () => true };
  mergeLoopPolicy(base, { onHedge: () => seen.push('extra'), mayHedge: () => false });
  base.onHedge!(1, 1);
  t.deepEqual(seen, ['writes', 'base', 'extra']);
  t.false(base.mayHedge!(state));
  t.is(composePolicies(() => undefined, () => undefined)(ctxOf({})), undefined);
  t.throws(() => hedgePolicy({ ...settings, budget: 2 }));
  t.throws(() => hedgePolicy({ ...settings, minMs: 50, maxMs: 10 }));
});
