import test from 'ava';
import { decide, leadingCount, tally, type Decision, type TallyState, type Vote } from '../../../../lib/verify/quorum.js';

/** Votes written as a string: "AAB" = upstreams u0, u1, u2 answered A, A, B in that order. */
const votes = (hashes: string): Vote<string>[] => [...hashes].map((hash, i) => ({ hash, item: `u${i}` }));
const state = (inFlight: number, remaining: number): TallyState => ({ inFlight, remaining });

const cases: [string, string, number, TallyState, Decision<string>][] = [
  // agreement
  ['agree at exactly N', 'AA', 2, state(0, 3), { kind: 'agreed', hash: 'A', members: ['u0', 'u1'] }],
  ['agree with N=1 on the first vote', 'A', 1, state(2, 5), { kind: 'agreed', hash: 'A', members: ['u0'] }],
  ['agree on the group that reached N, not the first to arrive', 'BAA', 2, state(1, 0), { kind: 'agreed', hash: 'A', members: ['u1', 'u2'] }],
  ['agree with calls still in flight', 'AA', 2, state(3, 2), { kind: 'agreed', hash: 'A', members: ['u0', 'u1'] }],
  ['return only N members of a larger group, in arrival order', 'ABAAA', 3, state(0, 0), { kind: 'agreed', hash: 'A', members: ['u0', 'u2', 'u3'] }],
  ['let the group that appeared first win when two reach N', 'BAAB', 2, state(0, 0), { kind: 'agreed', hash: 'B', members: ['u0', 'u3'] }],
  ['agree at N=3 with a liar among them', 'AABA', 3, state(0, 1), { kind: 'agreed', hash: 'A', members: ['u0', 'u1', 'u3'] }],
  // launching
  ['launch N calls at the start', '', 3, state(0, 5), { kind: 'launch', count: 3 }],
  ['launch all of them when exactly N remain', '', 3, state(0, 3), { kind: 'launch', count: 3 }],
  ['launch one more per missing vote after a disagreement', 'AB', 2, state(0, 3), { kind: 'launch', count: 1 }],
  ['launch two more when the best group has 1 of 3', 'AB', 3, state(0, 4), { kind: 'launch', count: 2 }],
  ['launch one more when one of two in flight failed (N=2, one vote in)', 'A', 2, state(0, 2), { kind: 'launch', count: 1 }],
  ['launch one more when a call failed before any vote (N=1)', '', 1, state(0, 2), { kind: 'launch', count: 1 }],
  ['launch the missing ones beyond those in flight', '', 3, state(1, 5), { kind: 'launch', count: 2 }],
  // waiting
  ['wait while enough calls are in flight', 'A', 2, state(1, 3), { kind: 'wait' }],
  ['wait with N in flight and nothing in yet', '', 2, state(2, 3), { kind: 'wait' }],
  ['wait when in flight exceed what is missing', 'A', 2, state(2, 0), { kind: 'wait' }],
  ['wait after a disagreement while the tie-breaker is in flight', 'AB', 2, state(1, 0), { kind: 'wait' }],
  // failing
  ['fail when every upstream answered and no group reached N', 'ABC', 2, state(0, 0), { kind: 'failed' }],
  ['fail with no votes and nothing left', '', 1, state(0, 0), { kind: 'failed' }],
  ['fail early when remaining plus in flight cannot reach N', 'AB', 3, state(1, 0), { kind: 'failed' }],
  ['fail early at the start when there are fewer upstreams than N', '', 3, state(0, 2), { kind: 'failed' }],
  ['fail early when the best group is too far behind', 'ABC', 3, state(0, 1), { kind: 'failed' }],
  ['fail when N=1 and every call failed', '', 1, state(0, 0), { kind: 'failed' }],
];

for (const [name, hashes, required, s, expected] of cases) {
  test(`should ${name} (votes "${hashes}", N=${required}, in flight ${s.inFlight}, remaining ${s.remaining})`, (t) => {
    t.deepEqual(decide(votes(hashes), required, s), expected);
  });
}

test('should group votes by hash in order of first appearance, keeping arrival order within a group', (t) => {
  const groups = tally(votes('BABCA'));
  t.deepEqual([...groups.keys()], ['B', 'A', 'C']);
  t.deepEqual(groups.get('A'), ['u1', 'u4']);
  t.deepEqual(groups.get('B'), ['u0', 'u2']);
});

test('should reach a verdict with exactly N calls when the first N agree', (t) => {
  // Drive decide() as the fetch stage does and count the calls it asks for.
  const answers = 'AAAAA';
  let launched = 0;
  let inFlight = 0;
  const received: Vote<string>[] = [];
  for (;;) {
    const d = decide(received, 3, state(inFlight, answers.length - launched));
    if (d.kind === 'launch') {
      launched += d.count;
      inFlight += d.count;
    } else if (d.kind === 'wait') {
      inFlight -= 1;
      received.push({ hash: answers[received.length]!, item: `u${received.length}` });
    } else {
      t.is(d.kind, 'agreed');
      break;
    }
  }
  t.is(launched, 3);
});

test('should never agree on fewer than N votes, whatever the order', (t) => {
  for (const hashes of ['A', 'AB', 'ABA', 'ABCD']) {
    const d = decide(votes(hashes), hashes === 'ABA' ? 3 : 2, state(0, 0));
    t.is(d.kind, 'failed', hashes);
  }
});

// ---- one vote per provider ----

/** Votes with voters: "A:p A:p B:q" = u0 (provider p) A, u1 (provider p) A, u2 (provider q) B. */
const cast = (spec: string): Vote<string>[] =>
  spec.split(' ').filter(Boolean).map((s, i) => ({ hash: s.split(':')[0]!, voter: s.split(':')[1]!, item: `u${i}` }));

const voterCases: [string, string, number, TallyState, Decision<string>][] = [
  ['not agree on two equal answers of one provider', 'A:p A:p', 2, state(0, 1), { kind: 'launch', count: 1 }],
  ['fail when only one provider answered twice and nothing is left', 'A:p A:p', 2, state(0, 0), { kind: 'failed' }],
  ['agree on two providers, skipping the second answer of the first', 'A:p A:p A:q', 2, state(0, 0), { kind: 'agreed', hash: 'A', members: ['u0', 'u2'] }],
  ['not let two liars of one provider beat an honest pair', 'B:p B:p A:q A:r', 2, state(0, 0), { kind: 'agreed', hash: 'A', members: ['u2', 'u3'] }],
  ['agree at N=1 on the first vote whatever its provider', 'A:p', 1, state(0, 3), { kind: 'agreed', hash: 'A', members: ['u0'] }],
];
for (const [name, spec, required, s, expected] of voterCases) {
  test(`should ${name} (votes "${spec}", N=${required})`, (t) => {
    t.deepEqual(decide(cast(spec), required, s), expected);
  });
}

// ---- the same decisions however many votes (a few are counted in place, more through a tally) ----

/** The rule written plainly: the first group, in order of appearance, with N votes of distinct voters (a vote without a voter counts alone). */
function reference(vs: readonly Vote<string>[], required: number, s: TallyState): Decision<string> {
  let best = 0;
  for (const hash of tally(vs).keys()) {
    const voters = new Set<string>();
    const members = vs.filter((v) => v.hash === hash && (v.voter === undefined || (!voters.has(v.voter) && voters.add(v.voter)))).map((v) => v.item);
    if (members.length >= required) return { kind: 'agreed', hash, members: members.slice(0, required) };
    best = Math.max(best, members.length);
  }
  const missing = required - best;
  if (missing > s.inFlight + s.remaining) return { kind: 'failed' };
  const launch = Math.min(missing - s.inFlight, s.remaining);
  if (launch > 0) return { kind: 'launch', count: launch };
  return s.inFlight > 0 ? { kind: 'wait' } : { kind: 'failed' };
}

test('should decide as the plain rule does for 0 to 16 votes, with and without voters, and count the leading group alike', (t) => {
  // A fixed sequence (a linear congruential generator): the same cases on every run.
  let seed = 12345;
  const next = (n: number): number => ((seed = (seed * 1103515245 + 12345) % 2147483648) >>> 8) % n;
  for (let k = 0; k < 5000; k++) {
    const vs: Vote<string>[] = Array.from({ length: next(17) }, (_, i) => ({
      hash: 'ABC'[next(3)]!,
      item: `u${i}`,
      ...(next(10) < 7 ? { voter: `p${next(4)}` } : {}),
    }));
    const required = 1 + next(5);
    const s = state(next(3), next(3));
    const expected = reference(vs, required, s);
    t.deepEqual(decide(vs, required, s), expected, JSON.stringify({ vs, required, s }));
    let best = 0;
    for (let n = 1; n <= vs.length; n++) if (reference(vs, n, { inFlight: 0, remaining: 0 }).kind === 'agreed') best = n;
    t.is(leadingCount(vs), best);
  }
});
