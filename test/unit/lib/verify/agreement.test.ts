/**
 * The agreement loop with a fake call function and a fake clock: every upstream's answer is
 * scripted (what, and how long after its call started), time moves only when the test says so.
 */
import test from 'ava';
import type { Upstream } from '../../../../lib/upstream/registry.js';
import type { CancelSignal, UpstreamResponse } from '../../../../lib/upstream/transport/contract.js';
import type { RpcContext } from '../../../../lib/pipeline/context.js';
import { newHealth } from '../../../../lib/health/health.js';
import { recordAnswered } from '../../../../lib/health/quality.js';
import { hedgePolicy } from '../../../../lib/verify/hedge-policy.js';
import { composePolicies } from '../../../../lib/verify/loop-policy.js';
import { hedgeMissingVotes, runAgreement } from '../../../../lib/verify/agreement.js';
import { type AgreementEnd, type AgreementPolicy, type AgreementRun, type Assessed, type LoopState, type Timers } from '../../../../lib/verify/question.js';

const flush = () => new Promise((resolve) => setImmediate(resolve));

/** Timers on a clock that moves only in advance(); promise callbacks settle between timers. */
class FakeClock implements Timers {
  t = 0;
  private seq = 0;
  private readonly timers = new Map<number, { at: number; fn: () => void }>();
  now = () => this.t;
  setTimeout = (fn: () => void, ms: number) => {
    const id = ++this.seq;
    this.timers.set(id, { at: this.t + ms, fn });
    return id;
  };
  clearTimeout = (handle: unknown) => {
    this.timers.delete(handle as number);
  };
  get pending(): number {
    return this.timers.size;
  }
  async advance(ms: number): Promise<void> {
    const end = this.t + ms;
    for (;;) {
      await flush();
      let next: [number, { at: number; fn: () => void }] | undefined;
      for (const entry of this.timers) if (entry[1].at <= end && (!next || entry[1].at < next[1].at)) next = entry;
      if (!next) break;
      this.timers.delete(next[0]);
      this.t = next[1].at;
      next[1].fn();
    }
    this.t = end;
    await flush();
  }
}

/**
 * What an upstream does when called: answer `hash` (a vote), fail, refuse the request as too
 * large, or hang; `after` ms after its call started.
 */
type Script = { answer: string; after: number } | { fail: string; kind?: string; after: number } | { refuse: string; after: number } | 'hang';

interface Call {
  name: string;
  at: number;
  signal: CancelSignal;
}

function setup(
  scripts: Record<string, Script | Script[]>,
  required: number,
  policy: Partial<AgreementPolicy> & { providers?: Record<string, string>; prior?: { hash: string; by: string[] } } = {},
) {
  const clock = new FakeClock();
  const calls: Call[] = [];
  const events: string[] = [];
  const ends: AgreementEnd[] = [];
  /** The votes each decision hands on to be recorded as won or lost. */
  const recorded: string[] = [];
  const names = Object.keys(scripts);
  const candidates = names.map(
    (name) => ({ label: name, provider: policy.providers?.[name] ?? name, chainId: '1', health: { latencyMs: undefined } }) as unknown as Upstream,
  );
  const times = new Map<string, number>();
  const call = (u: Upstream, signal: CancelSignal) => {
    calls.push({ name: u.label, at: clock.t, signal });
    const n = times.get(u.label) ?? 0;
    times.set(u.label, n + 1);
    const listed = scripts[u.label]!;
    const script = Array.isArray(listed) ? listed[Math.min(n, listed.length - 1)]! : listed;
    return new Promise<UpstreamResponse>((resolve, reject) => {
      if (script === 'hang') return;
      clock.setTimeout(() => {
        if ('answer' in script) resolve({ body: Buffer.from(script.answer) } as UpstreamResponse);
        else if ('refuse' in script) resolve({ body: Buffer.from(`refused:${script.refuse}`) } as UpstreamResponse);
        else reject(Object.assign(new Error(script.fail), { kind: script.kind }));
      }, script.after);
    });
  };
  const assess: AgreementPolicy['assess'] = (o) => {
    if (!o.ok) return { upstream: o.upstream, ok: false, reason: o.error.message, ms: o.ms, kind: (o.error as { kind?: string }).kind };
    const text = o.value.body.toString();
    if (text.startsWith('refused:')) return { upstream: o.upstream, ok: false, reason: 'too large', ms: o.ms, refused: { hash: text, body: o.value.body } };
    return { upstream: o.upstream, ok: true, body: o.value.body, hash: text, ms: o.ms };
  };
  const { providers: _providers, prior: priorScript, ...rest } = policy;
  const prior = priorScript && {
    hash: priorScript.hash,
    members: priorScript.by.map((name) => ({ upstream: candidates.find((u) => u.label === name)!, ok: true as const, body: Buffer.from(priorScript.hash), hash: priorScript.hash, ms: 0 })),
  };
  const run: AgreementRun = runAgreement(
    { candidates, required, perProvider: policy.providers !== undefined, prior },
    {
      call,
      deadlineMs: 10_000,
      assess,
      timers: clock,
      onOutcome: (a: Assessed, counted) => events.push(`${a.upstream.label}:${a.ok ? (counted ? 'vote' : 'ineligible') : a.refused ? 'refusal' : 'failure'}@${clock.t}`),
      onAbandoned: (u, ms) => events.push(`${u.label}:abandoned after ${ms}`),
      onHedge: (afterMs, count) => events.push(`hedge ${count} after ${afterMs}@${clock.t}`),
      onDecided: (d) => {
        events.push(`decided ${d.hash} by ${d.members.map((m) => m.upstream.label).join(',')}`);
        recorded.push(d.votes.map((v) => v.item.upstream.label).join(','));
      },
      ...rest,
    },
    (end) => ends.push(end),
  );
  const called = () => calls.map((c) => `${c.name}@${c.at}`);
  const summary = () => {
    t0(ends.length <= 1, 'the loop ends once');
    const end = ends[0];
    if (!end) return 'running';
    if (end.kind === 'agreed' || end.kind === 'refused') return `${end.kind} ${end.verdict.hash} by ${end.verdict.members.map((m) => m.upstream.label).join(',')}`;
    if (end.kind === 'failed') return `failed (${end.cause})`;
    return `error ${(end.error as Error).message}`;
  };
  return { clock, calls, called, events, recorded, ends, run, summary, allAborted: () => calls.every((c) => c.signal.aborted) };
}
function t0(cond: boolean, message: string): void {
  if (!cond) throw new Error(message);
}

const ok = (answer: string, after = 10): Script => ({ answer, after });
const fail = (after = 10, reason = 'boom'): Script => ({ fail: reason, after });

// --- agreement and escalation

test('N=1: one call, the first answer wins, nothing abandoned', async (t) => {
  const s = setup({ a: ok('x'), b: ok('x'), c: ok('x') }, 1);
  t.deepEqual(s.called(), ['a@0']);
  await s.clock.advance(10);
  t.is(s.summary(), 'agreed x by a');
  t.deepEqual(s.called(), ['a@0']);
  t.deepEqual(s.events, ['a:vote@10', 'decided x by a']);
  t.is(s.clock.pending, 0, 'deadline and hedge timers cleared');
});

test('N=3: exactly three calls when the first three agree', async (t) => {
  const s = setup({ a: ok('x', 5), b: ok('x', 20), c: ok('x', 10), d: ok('x'), e: ok('x') }, 3);
  t.deepEqual(s.called(), ['a@0', 'b@0', 'c@0']);
  await s.clock.advance(30);
  t.is(s.summary(), 'agreed x by a,c,b');
  t.is(s.calls.length, 3);
});

test('N=2: a disagreement asks one more upstream, whose vote settles it', async (t) => {
  const s = setup({ a: ok('x', 10), b: ok('y', 20), c: ok('x', 10), d: ok('x') }, 2);
  await s.clock.advance(100);
  t.deepEqual(s.called(), ['a@0', 'b@0', 'c@20']);
  t.is(s.summary(), 'agreed x by a,c');
  t.true(s.events.includes('decided x by a,c'));
});

test('N=1: a failure moves the question to the next upstream', async (t) => {
  const s = setup({ a: fail(10), b: ok('x', 10) }, 1);
  await s.clock.advance(100);
  t.deepEqual(s.called(), ['a@0', 'b@10']);
  t.deepEqual(s.events, ['a:failure@10', 'b:vote@20', 'decided x by b']);
  t.is(s.summary(), 'agreed x by b');
});

test('fails once no group can reach N, and aborts the call still running', async (t) => {
  const s = setup({ a: fail(10), b: 'hang', c: fail(20) }, 2);
  await s.clock.advance(100);
  t.is(s.summary(), 'failed (exhausted)');
  t.deepEqual(s.called(), ['a@0', 'b@0', 'c@10']);
  t.true(s.allAborted());
  t.true(s.events.includes('b:abandoned after 30'));
  const end = s.ends[0];
  t.true(end?.kind === 'failed' && end.failures.length === 2 && end.votes.length === 0);
});

test('a byte-budget failure is the end\'s cause', async (t) => {
  const s = setup({ a: { fail: 'over budget', kind: 'budget', after: 5 } }, 1);
  await s.clock.advance(10);
  t.is(s.summary(), 'failed (budget)');
});

// --- one vote per provider

test('one vote per provider: a second equal answer from the same provider does not count', async (t) => {
  const s = setup({ a: ok('x', 5), b: ok('x', 10), c: ok('x', 10) }, 2, { providers: { a: 'p', b: 'p', c: 'q' } });
  await s.clock.advance(100);
  t.deepEqual(s.called(), ['a@0', 'b@0', 'c@10']);
  t.is(s.summary(), 'agreed x by a,c');
});

test('without providers, equal answers of every upstream count', async (t) => {
  const s = setup({ a: ok('x', 5), b: ok('x', 10), c: ok('x', 10) }, 2);
  await s.clock.advance(100);
  t.is(s.summary(), 'agreed x by a,b');
});

// --- prior votes (a cached answer confirmed by fewer than N, topped up)

test('prior votes count first: N=3 with two prior votes asks one more upstream, never the prior voters', async (t) => {
  const s = setup({ a: ok('x'), b: ok('x'), c: ok('x', 10), d: ok('x') }, 3, { prior: { hash: 'x', by: ['a', 'b'] } });
  t.deepEqual(s.called(), ['c@0']);
  await s.clock.advance(100);
  t.is(s.summary(), 'agreed x by a,b,c');
  t.deepEqual(s.called(), ['c@0']);
  t.deepEqual(s.events, ['c:vote@10', 'decided x by a,b,c']);
  t.deepEqual(s.recorded, ['c'], 'only the vote cast in this run is recorded');
});

test('prior votes: other upstreams of a prior voter\'s provider are not asked (one vote per provider)', async (t) => {
  const s = setup({ a: ok('x'), a2: ok('x'), b: ok('x', 10) }, 2, { providers: { a: 'p', a2: 'p', b: 'q' }, prior: { hash: 'x', by: ['a'] } });
  await s.clock.advance(100);
  t.deepEqual(s.called(), ['b@0']);
  t.is(s.summary(), 'agreed x by a,b');
});

test('prior votes: a missing voter that disagrees asks one more, whose vote settles it; the liar\'s vote is recorded', async (t) => {
  const s = setup({ a: ok('x'), b: ok('x'), c: ok('y', 10), d: ok('x', 10) }, 3, { prior: { hash: 'x', by: ['a', 'b'] } });
  await s.clock.advance(100);
  t.deepEqual(s.called(), ['c@0', 'd@10']);
  t.is(s.summary(), 'agreed x by a,b,d');
  t.deepEqual(s.recorded, ['c,d']);
});

test('prior votes: disagreement with no upstream left fails, the prior votes among the end\'s votes', async (t) => {
  const s = setup({ a: ok('x'), b: ok('x'), c: ok('y', 10) }, 3, { prior: { hash: 'x', by: ['a', 'b'] } });
  await s.clock.advance(100);
  t.is(s.summary(), 'failed (exhausted)');
  const end = s.ends[0];
  t.true(end?.kind === 'failed');
  if (end?.kind === 'failed') {
    t.deepEqual(end.votes.map((v) => `${v.item.upstream.label}:${v.hash}`), ['a:x', 'b:x', 'c:y']);
    t.deepEqual(end.called.map((u) => u.label), ['c']);
  }
});

test('prior votes: no upstream left to ask ends at once, without a call', async (t) => {
  const s = setup({ a: ok('x'), b: ok('x') }, 3, { prior: { hash: 'x', by: ['a', 'b'] } });
  t.is(s.summary(), 'failed (exhausted)');
  t.is(s.calls.length, 0);
  t.is(s.clock.pending, 0);
});

test('prior votes are never taken back by a recheck; the policy\'s recheck hears them first', async (t) => {
  const heard: string[] = [];
  const s = setup({ a: ok('x'), a2: ok('x'), b: ok('x', 10), c: ok('x', 20) }, 3, {
    prior: { hash: 'x', by: ['a', 'a2'] },
    recheck: (a) => (heard.push(a.upstream.label), true),
    // (b's answer may not count; the prior votes must stay whatever eligible says)
    eligible: (u) => u.label === 'c',
  });
  await s.clock.advance(100);
  t.deepEqual(heard, ['a', 'a2', 'b', 'c'], 'then every answer, b\'s that does not count too');
  t.deepEqual(s.called(), ['b@0', 'c@10']);
  t.is(s.summary(), 'agreed x by a,a2,c');
});

// --- refusals

test('refusals: every upstream refusing relays the first refusal', async (t) => {
  const s = setup({ a: { refuse: 'big', after: 5 }, b: { refuse: 'big', after: 5 } }, 1);
  await s.clock.advance(100);
  t.deepEqual(s.called(), ['a@0', 'b@5']);
  t.is(s.summary(), 'refused refused:big by a,b');
});

test('refusals: a vote from a call still running turns the end into a failure, not a relayed refusal', async (t) => {
  const s = setup({ a: { refuse: 'big', after: 5 }, b: ok('x', 20), c: ok('y', 30) }, 3);
  await s.clock.advance(100);
  t.is(s.summary(), 'failed (exhausted)');
  t.deepEqual(s.events, ['a:refusal@5', 'b:vote@20', 'c:abandoned after 20']);
});

test('refusals: a refusal then a vote from the next upstream answers the vote', async (t) => {
  const s = setup({ a: { refuse: 'big', after: 5 }, b: ok('x', 5) }, 1);
  await s.clock.advance(100);
  t.is(s.summary(), 'agreed x by b');
});

// --- hedging

test('hedging: no outcome for the delay asks one more; the first answer wins, the hung call is abandoned', async (t) => {
  const s = setup({ a: 'hang', b: ok('x', 10), c: ok('x') }, 1, { hedgeDelayMs: () => 100 });
  await s.clock.advance(99);
  t.deepEqual(s.called(), ['a@0']);
  await s.clock.advance(1);
  t.deepEqual(s.called(), ['a@0', 'b@100']);
  await s.clock.advance(10);
  t.is(s.summary(), 'agreed x by b');
  t.deepEqual(s.events, ['hedge 1 after 100@100', 'b:vote@110', 'decided x by b', 'a:abandoned after 110']);
  t.true(s.allAborted());
});

test('hedging: an outcome restarts the quiet period', async (t) => {
  const s = setup({ a: ok('x', 60), b: 'hang', c: ok('x', 5) }, 2, { hedgeDelayMs: () => 100 });
  await s.clock.advance(159);
  t.deepEqual(s.called(), ['a@0', 'b@0'], 'a answered at 60: the hedge waits until 160');
  await s.clock.advance(10);
  t.deepEqual(s.called(), ['a@0', 'b@0', 'c@160']);
  t.is(s.summary(), 'agreed x by a,c');
});

test('hedging off: a hung upstream is waited for until the deadline', async (t) => {
  const s = setup({ a: 'hang', b: ok('x') }, 1, { deadlineMs: 1000 });
  await s.clock.advance(999);
  t.deepEqual(s.called(), ['a@0']);
  await s.clock.advance(1);
  t.is(s.summary(), 'failed (deadline)');
  t.true(s.allAborted());
  t.deepEqual(s.events, ['a:abandoned after 1000']);
});

test('hedging budget: a refused hedge waits for another delay', async (t) => {
  let allowed = false;
  const s = setup({ a: 'hang', b: ok('x') }, 1, { hedgeDelayMs: () => 100, mayHedge: () => allowed });
  await s.clock.advance(150);
  t.deepEqual(s.called(), ['a@0']);
  allowed = true;
  await s.clock.advance(50);
  t.deepEqual(s.called(), ['a@0', 'b@200']);
});

test('hedging N=3 for the missing votes only: two in, one hung, one hedge', async (t) => {
  const seen: LoopState[] = [];
  const s = setup({ a: ok('x', 5), b: ok('x', 5), c: 'hang', d: ok('x', 5), e: ok('x') }, 3, {
    hedgeDelayMs: () => 100,
    hedgeCount: (state) => {
      seen.push(state);
      return hedgeMissingVotes(state);
    },
  });
  await s.clock.advance(200);
  t.deepEqual(s.called(), ['a@0', 'b@0', 'c@0', 'd@105']);
  t.is(s.summary(), 'agreed x by a,b,d');
  t.like(seen[0], { required: 3, votes: 2, missing: 1, inFlight: 1, remaining: 2, called: 3, hedged: 0 });
});

test('an adaptive hedge delay is read at each timer', async (t) => {
  const delays = [100, 30];
  const s = setup({ a: 'hang', b: 'hang', c: ok('x') }, 1, { hedgeDelayMs: (state) => delays[state.hedged] ?? 1000 });
  await s.clock.advance(100);
  t.deepEqual(s.called(), ['a@0', 'b@100']);
  await s.clock.advance(30);
  t.deepEqual(s.called(), ['a@0', 'b@100', 'c@130']);
});

// --- with the hedge policy of the gateway (lib/verify/hedge-policy.ts)

/** A request's context on `chain` whose answered calls (class read) took `ms`, 30 of them. */
function chainAnswering(ms: number) {
  const chain = {};
  const h = newHealth();
  for (let i = 0; i < 30; i += 1) recordAnswered(chain, h, ms, 'read', 0);
  const ctx = (required = 1) => ({ chain, required, payload: { batch: false, calls: [{ method: 'eth_getBalance', id: 1, params: [] }] } }) as unknown as RpcContext;
  return { chain, ctx };
}
const adaptive = { minMs: 20, maxMs: 1000, quantile: 0.9, budget: 0.1, now: () => 0 };

test('hedge policy: ~300 ms answers hedge after ~300 ms, ~5 ms answers after the minimum', async (t) => {
  for (const [ms, low, high] of [[300, 290, 310], [5, 20, 20]] as const) {
    const policyOf = hedgePolicy(adaptive);
    const { ctx } = chainAnswering(ms);
    // The adaptive budget starts empty: ten first calls earn the chain one hedge.
    for (let i = 0; i < 10; i += 1) policyOf(ctx());
    const policy = policyOf(ctx())!;
    const s = setup({ a: 'hang', b: ok('x', 1), c: ok('x') }, 1, policy);
    await s.clock.advance(low - 1);
    t.deepEqual(s.called(), ['a@0'], `${ms} ms: not before ${low}`);
    await s.clock.advance(high - low + 1);
    t.is(s.calls.length, 2, `${ms} ms: hedged by ${high}`);
    await s.clock.advance(10);
    t.is(s.summary(), 'agreed x by b');
  }
});

test('hedge policy: the budget refuses hedges once spent, and a composed policy that refuses costs it nothing', async (t) => {
  const { ctx } = chainAnswering(5);
  // A fixed delay starts with a burst of 10; with a budget of 0 that burst is all it gets.
  const hedging = hedgePolicy({ ...adaptive, fixedMs: 20, budget: 0 });
  const noWrites = composePolicies(hedging, () => ({ mayHedge: () => false }));
  const refused = setup({ a: 'hang', b: ok('x') }, 1, noWrites(ctx())!);
  await refused.clock.advance(500);
  t.deepEqual(refused.called(), ['a@0'], 'the other policy refused');
  for (let i = 0; i < 10; i += 1) {
    const s = setup({ a: 'hang', b: ok('x') }, 1, hedging(ctx())!);
    await s.clock.advance(25);
    t.deepEqual(s.called(), ['a@0', 'b@20'], `hedge ${i + 1} of the burst`);
  }
  const s = setup({ a: 'hang', b: ok('x') }, 1, hedging(ctx())!);
  await s.clock.advance(500);
  t.deepEqual(s.called(), ['a@0'], 'budget spent: no hedge');
  const adaptiveNone = setup({ a: 'hang', b: ok('x') }, 1, hedgePolicy({ ...adaptive, budget: 0 })(chainAnswering(5).ctx())!);
  await adaptiveNone.clock.advance(500);
  t.deepEqual(adaptiveNone.called(), ['a@0'], 'adaptive: no burst to start with');
});

test('hedge policy: N=3 hedges one call per missing vote beyond the calls still running', async (t) => {
  const policy = hedgePolicy({ ...adaptive, fixedMs: 100 })(chainAnswering(5).ctx(3))!;
  const s = setup({ a: ok('x', 5), b: 'hang', c: 'hang', d: ok('x', 5), e: ok('x', 5) }, 3, policy);
  await s.clock.advance(104);
  // a voted at 5; two votes missing, two calls running: one hedge.
  t.deepEqual(s.called(), ['a@0', 'b@0', 'c@0']);
  await s.clock.advance(1);
  t.deepEqual(s.called(), ['a@0', 'b@0', 'c@0', 'd@105']);
  await s.clock.advance(110);
  t.deepEqual(s.called(), ['a@0', 'b@0', 'c@0', 'd@105', 'e@210']);
  await s.clock.advance(10);
  t.is(s.summary(), 'agreed x by a,d,e');
});

// --- deadline and client close

test('deadline: every call in flight is aborted once, with how long it ran', async (t) => {
  const s = setup({ a: 'hang', b: 'hang', c: 'hang' }, 2, { hedgeDelayMs: () => 100, deadlineMs: 250 });
  await s.clock.advance(300);
  t.deepEqual(s.called(), ['a@0', 'b@0', 'c@100']);
  t.is(s.summary(), 'failed (deadline)');
  t.true(s.allAborted());
  t.deepEqual(s.events.filter((e) => e.includes('abandoned')).sort(), ['a:abandoned after 250', 'b:abandoned after 250', 'c:abandoned after 150']);
  t.is(s.clock.pending, 0);
});

test('deadline: a refusal is not relayed past the deadline', async (t) => {
  const s = setup({ a: { refuse: 'big', after: 5 }, b: 'hang' }, 1, { deadlineMs: 50 });
  await s.clock.advance(100);
  t.is(s.summary(), 'failed (deadline)');
});

test('the client leaving aborts every call and ends the loop once', async (t) => {
  const s = setup({ a: 'hang', b: ok('x', 20) }, 2);
  await s.clock.advance(10);
  s.run.abort();
  s.run.abort();
  t.is(s.summary(), 'failed (aborted)');
  t.true(s.allAborted());
  await s.clock.advance(100);
  t.is(s.ends.length, 1, 'a later answer changes nothing');
});

test('a hook that throws ends the loop with its error, and every call is aborted', async (t) => {
  const s = setup({ a: ok('x', 5), b: 'hang' }, 2, {
    onOutcome: () => {
      throw new Error('hook');
    },
  });
  await s.clock.advance(10);
  t.is(s.summary(), 'error hook');
  t.true(s.allAborted());
});

// --- eligibility (a stub: heads will say who has the pinned block)

test('eligibility: an answer that may not count is neither a vote nor a failure; another upstream is asked', async (t) => {
  const s = setup({ a: ok('empty', 5), b: ok('x', 5) }, 1, { eligible: (u) => u.label !== 'a' });
  await s.clock.advance(100);
  t.deepEqual(s.called(), ['a@0', 'b@5']);
  t.deepEqual(s.events, ['a:ineligible@5', 'b:vote@10', 'decided x by b']);
  t.is(s.summary(), 'agreed x by b');
});

test('eligibility: too few eligible answers end with the cause "ineligible"', async (t) => {
  const s = setup({ a: ok('empty', 5), b: ok('x', 5) }, 2, { eligible: (u) => u.label !== 'a' });
  await s.clock.advance(100);
  t.is(s.summary(), 'failed (ineligible)');
  const end = s.ends[0];
  t.deepEqual(end?.kind === 'failed' ? end.ineligible.map((a) => a.upstream.label) : [], ['a']);
});

test('eligibility: waitForEligible waits, then asks the ineligible upstreams again', async (t) => {
  let caughtUp = false;
  let release: () => void = () => {};
  const waits: string[][] = [];
  const s = setup({ a: [ok('empty', 5), ok('x', 5)], b: ok('x', 5) }, 2, {
    eligible: (u) => u.label !== 'a' || caughtUp,
    waitForEligible: (_state, waiting) => {
      waits.push(waiting.map((u) => u.label));
      return new Promise<void>((resolve) => (release = resolve));
    },
  });
  await s.clock.advance(50);
  t.deepEqual(waits, [['a']]);
  t.is(s.summary(), 'running');
  caughtUp = true;
  release();
  await s.clock.advance(50);
  t.deepEqual(s.called(), ['a@0', 'b@0', 'a@50']);
  t.is(s.summary(), 'agreed x by b,a');
});

test('eligibility: a failure that only says the upstream lacks the data is asked again after the wait', async (t) => {
  // Two lagging nodes answer "header not found"; the third has the block. N=2 cannot agree,
  // so the loop waits (heads catching up), then asks the lagging ones again.
  const waits: string[][] = [];
  let release: () => void = () => {};
  const s = setup({ a: [fail(5, 'header not found'), ok('x', 5)], b: fail(5, 'header not found'), c: ok('x', 5) }, 2, {
    lacking: (f) => f.reason === 'header not found',
    waitForEligible: (_state, waiting) => {
      waits.push(waiting.map((u) => u.label));
      return new Promise<void>((resolve) => (release = resolve));
    },
  });
  await s.clock.advance(50);
  t.deepEqual(waits, [['a', 'b']], 'one wait, for the two lacking upstreams');
  t.is(s.summary(), 'running', 'no failure before the wait is over');
  release();
  await s.clock.advance(50);
  t.is(s.summary(), 'agreed x by c,a');
  t.deepEqual(s.called(), ['a@0', 'b@0', 'c@5', 'a@50'], 'one more call for the one missing vote');
});

test('eligibility: lacking failures end with the cause "ineligible" when no wait is offered, and other failures never wait', async (t) => {
  const s = setup({ a: fail(5, 'header not found'), b: ok('x', 5) }, 2, { lacking: (f) => f.reason === 'header not found', waitForEligible: () => undefined });
  await s.clock.advance(50);
  t.is(s.summary(), 'failed (ineligible)');
  let asked = 0;
  const other = setup({ a: fail(5, 'rate limited'), b: ok('x', 5) }, 2, {
    lacking: (f) => f.reason === 'header not found',
    waitForEligible: () => {
      asked++;
      return Promise.resolve();
    },
  });
  await other.clock.advance(50);
  t.is(other.summary(), 'failed (exhausted)');
  t.is(asked, 0, 'a failure that is not "lacking" is not waited for');
});

test('eligibility: the deadline still ends a wait that never resolves, and tells the wait it ended', async (t) => {
  let ended: AbortSignal | undefined;
  const waitForEligible = (_state: unknown, _waiting: unknown, signal: AbortSignal) => {
    ended = signal;
    return new Promise(() => {});
  };
  const s = setup({ a: ok('empty', 5) }, 1, { eligible: () => false, waitForEligible, deadlineMs: 500 });
  await s.clock.advance(100);
  t.false(ended!.aborted, 'waiting');
  await s.clock.advance(900);
  t.is(s.summary(), 'failed (deadline)');
  t.true(ended!.aborted, 'the wait can stop listening for heads: its question is over');
});

test('eligibility: no wait offered (undefined) fails at once', async (t) => {
  const s = setup({ a: ok('empty', 5) }, 1, { eligible: () => false, waitForEligible: () => undefined });
  await s.clock.advance(10);
  t.is(s.summary(), 'failed (ineligible)');
});

test('eligibility recheck: an answer that changes who may vote takes back the votes already counted', async (t) => {
  // Hash pins: "none" answers vote until one upstream answers with the data; then they do not.
  let known = false;
  const s = setup({ a: ok('none', 5), b: ok('data', 10), c: ok('none', 5), d: ok('data', 5) }, 2, {
    eligible: (_u, a) => !known || a.hash !== 'none',
    recheck: (a) => !known && a.hash !== 'none' && (known = true),
  });
  await s.clock.advance(100);
  t.deepEqual(s.called(), ['a@0', 'b@0', 'c@10', 'd@15']);
  t.deepEqual(s.events.slice(0, 3), ['a:vote@5', 'b:vote@10', 'c:ineligible@15']);
  t.is(s.summary(), 'agreed data by b,d', 'a\'s "none", counted first, is not a vote once b has the data');
  const decided = s.events.find((e) => e.startsWith('decided'));
  t.is(decided, 'decided data by b,d');
});

test('eligibility recheck: an answer that does not count itself still takes back the votes its data rules out', async (t) => {
  // A batch asked whole: b has the data of one member but lacks another, so its answer is no vote;
  // the "none" counted before it is taken back all the same, and c's "none" does not count.
  let known = false;
  const s = setup({ a: ok('none', 5), b: ok('data', 10), c: ok('none', 5), d: ok('none', 5) }, 2, {
    eligible: (u, a) => (a.hash === 'none' ? !known : u.label !== 'b'),
    recheck: (a) => !known && a.hash !== 'none' && (known = true),
  });
  await s.clock.advance(100);
  t.deepEqual(s.called(), ['a@0', 'b@0', 'c@10', 'd@10'], 'two votes missing again once a\'s is taken back');
  t.deepEqual(s.events.slice(0, 3), ['a:vote@5', 'b:ineligible@10', 'c:ineligible@15']);
  t.is(s.summary(), 'failed (ineligible)', 'never "none" by a,c once b had the data');
});

test('eligibility recheck: taken-back votes are asked again after the wait, and a run without data still agrees on "none"', async (t) => {
  let known = false;
  const waits: string[][] = [];
  const s = setup({ a: [ok('none', 5), ok('data', 5)], b: ok('data', 10), c: ok('none', 5) }, 2, {
    eligible: (_u, a) => !known || a.hash !== 'none',
    recheck: (a) => !known && a.hash !== 'none' && (known = true),
    waitForEligible: (_state, waiting) => {
      waits.push(waiting.map((u) => u.label));
      return Promise.resolve();
    },
  });
  await s.clock.advance(100);
  t.deepEqual(waits, [['a', 'c']]);
  t.is(s.summary(), 'agreed data by b,a');
  known = false;
  const plain = setup({ a: ok('none', 5), b: ok('none', 10), c: ok('data', 5) }, 2, {
    eligible: (_u, a) => !known || a.hash !== 'none',
    recheck: (a) => !known && a.hash !== 'none' && (known = true),
  });
  await plain.clock.advance(100);
  t.is(plain.summary(), 'agreed none by a,b', 'N "none" before any data: confirmed as before');
});

// --- the matrix: hedge × escalation × deadline × eligibility, N=2 over a, b, c, d, e

interface Case {
  hedge: boolean;
  /** b fails at 10 ms (escalation) instead of hanging */
  escalate: boolean;
  /** the deadline at 150 ms instead of 10 s */
  deadline: boolean;
  /** c's answer may not count */
  ineligibleC: boolean;
}
// a answers x at 20; b hangs (or fails at 10); c answers x 30 ms after its call; d answers x 30
// ms after its call; e answers y at 5. Hedge delay 100 ms.
function expected(c: Case): { called: string[]; end: string } {
  const called = ['a@0', 'b@0'];
  let at: number;
  // The first extra call: escalation at 10, or a hedge at 20 + 100 (a's vote restarted the quiet period).
  if (c.escalate) at = 10;
  else if (c.hedge) at = 120;
  else return { called, end: c.deadline ? 'failed (deadline)' : 'running' };
  if (c.deadline && at >= 150) return { called, end: 'failed (deadline)' };
  called.push(`c@${at}`);
  if (!c.ineligibleC) return { called, end: at + 30 < (c.deadline ? 150 : Infinity) ? 'agreed x by a,c' : 'failed (deadline)' };
  // c's answer does not count, and is not a failure: with b failed, d is asked in its place at
  // once; with b still running (c was a hedge), one call is in flight per missing vote, so d
  // waits for the next hedge, a delay after c's answer.
  const dAt = c.escalate ? at + 30 : at + 30 + 100;
  if (c.deadline && dAt >= 150) return { called, end: 'failed (deadline)' };
  called.push(`d@${dAt}`);
  return { called, end: dAt + 30 < (c.deadline ? 150 : Infinity) ? 'agreed x by a,d' : 'failed (deadline)' };
}
for (const hedge of [false, true]) {
  for (const escalate of [false, true]) {
    for (const deadline of [false, true]) {
      for (const ineligibleC of [false, true]) {
        const c: Case = { hedge, escalate, deadline, ineligibleC };
        const name = `matrix: hedge ${hedge ? 'on' : 'off'}, ${escalate ? 'a failure' : 'no failure'}, deadline ${deadline ? '150 ms' : 'far'}, ${ineligibleC ? 'c ineligible' : 'all eligible'}`;
        test(name, async (t) => {
          const s = setup({ a: ok('x', 20), b: escalate ? fail(10) : 'hang', c: ok('x', 30), d: ok('x', 30), e: ok('y', 5) }, 2, {
            ...(hedge && { hedgeDelayMs: () => 100 }),
            deadlineMs: deadline ? 150 : 10_000,
            ...(ineligibleC && { eligible: (u: Upstream) => u.label !== 'c' }),
          });
          await s.clock.advance(1000);
          const want = expected(c);
          t.deepEqual(s.called(), want.called);
          t.is(s.summary(), want.end);
          if (want.end !== 'running') t.true(s.allAborted(), 'every call aborted at the end');
          else s.run.abort();
        });
      }
    }
  }
}
