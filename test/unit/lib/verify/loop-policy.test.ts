/**
 * How per-request loop policies combine: every mayHedge must allow, the on* hooks all run in
 * order, the other hooks are the last policy's; composePolicies merges without touching what a
 * policy returned.
 */
import test from 'ava';
import type { Upstream } from '../../../../lib/upstream/registry.js';
import { composePolicies, mergeLoopPolicy, type LoopPolicy, type LoopPolicyOf } from '../../../../lib/verify/loop-policy.js';
import type { Decided, LoopState, RequestQuestion } from '../../../../lib/verify/question.js';

const state = { required: 2, votes: 0, missing: 2, inFlight: 2, remaining: 1, called: 2, hedged: 0, elapsedMs: 5 } as LoopState;
const u = { label: 'u0' } as Upstream;

test('should copy the hooks of a policy into an empty base', (t) => {
  const mayHedge = () => true;
  const merged = mergeLoopPolicy<LoopPolicy>({}, { mayHedge, hedgeDelayMs: () => 7 });
  t.is(merged.mayHedge, mayHedge);
  t.is(merged.hedgeDelayMs!(state), 7);
  const base: LoopPolicy = { hedgeDelayMs: () => 1 };
  t.is(mergeLoopPolicy(base, undefined), base);
  t.is(mergeLoopPolicy(base, { hedgeDelayMs: undefined }).hedgeDelayMs!(state), 1, 'an undefined hook is no hook');
});

test('should allow a hedge only when every mayHedge does', (t) => {
  for (const [a, b, expected] of [[true, true, true], [true, false, false], [false, true, false]] as const) {
    const asked: string[] = [];
    const merged = mergeLoopPolicy<LoopPolicy>({ mayHedge: () => (asked.push('a'), a) }, { mayHedge: () => (asked.push('b'), b) });
    t.is(merged.mayHedge!(state), expected);
    t.deepEqual(asked, a ? ['a', 'b'] : ['a'], 'the second is not asked once the first refuses');
  }
});

test('should run every on* hook, the base\'s first, with the same arguments', (t) => {
  const calls: string[] = [];
  const merged = mergeLoopPolicy(
    {
      onOutcome: (_a, counted) => calls.push(`base outcome ${counted}`),
      onAbandoned: (up, ms) => calls.push(`base abandoned ${up.label} ${ms}`),
      onHedge: (after, n) => calls.push(`base hedge ${after} ${n}`),
      onDecided: (d) => calls.push(`base decided ${d.hash}`),
    },
    {
      onOutcome: (_a, counted) => calls.push(`extra outcome ${counted}`),
      onAbandoned: (up, ms) => calls.push(`extra abandoned ${up.label} ${ms}`),
      onHedge: (after, n) => calls.push(`extra hedge ${after} ${n}`),
      onDecided: (d) => calls.push(`extra decided ${d.hash}`),
    },
  );
  merged.onOutcome!({ upstream: u, ok: false, reason: 'x', ms: 1 }, false);
  merged.onAbandoned!(u, 9);
  merged.onHedge!(20, 1);
  merged.onDecided!({ hash: 'h' } as Decided);
  t.deepEqual(calls, [
    'base outcome false', 'extra outcome false',
    'base abandoned u0 9', 'extra abandoned u0 9',
    'base hedge 20 1', 'extra hedge 20 1',
    'base decided h', 'extra decided h',
  ]);
});

test('should let the later policy replace the other hooks', (t) => {
  const merged = mergeLoopPolicy<LoopPolicy>(
    { hedgeDelayMs: () => 1, hedgeCount: () => 1, eligible: () => true, lacking: () => false },
    { hedgeDelayMs: () => 2, hedgeCount: () => 3, eligible: () => false, lacking: () => true },
  );
  t.is(merged.hedgeDelayMs!(state), 2);
  t.is(merged.hedgeCount!(state), 3);
  t.false(merged.eligible!(u, {} as never));
  t.true(merged.lacking!({} as never));
});

test('composePolicies should merge the hooks of each policy in order, skipping undefined ones', (t) => {
  const calls: string[] = [];
  const first: LoopPolicyOf = () => ({ hedgeDelayMs: () => 10, onHedge: () => calls.push('first') });
  const none: LoopPolicyOf = () => undefined;
  const second: LoopPolicyOf = (q) => (q.confirmable ? { hedgeDelayMs: () => 20, onHedge: () => calls.push('second') } : undefined);
  const policy = composePolicies(first, undefined, none, second);
  const confirmable = policy({ confirmable: true } as RequestQuestion)!;
  t.is(confirmable.hedgeDelayMs!(state), 20);
  confirmable.onHedge!(0, 1);
  t.deepEqual(calls, ['first', 'second']);
  t.is(policy({ confirmable: false })!.hedgeDelayMs!(state), 10);
  t.is(composePolicies(none, none)({}), undefined, 'no hooks at all: undefined');
});

test('composePolicies should not change what a policy returned', (t) => {
  const part: LoopPolicy = { onHedge: () => {} };
  const onHedge = part.onHedge;
  const policy = composePolicies(() => part, () => ({ onHedge: () => {} }));
  policy({});
  policy({});
  t.is(part.onHedge, onHedge);
});

test('composePolicies of one policy should be that policy', (t) => {
  const only: LoopPolicyOf = () => ({});
  t.is(composePolicies(only, undefined), only);
});
