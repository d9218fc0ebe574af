import test from 'ava';
import { FanOut, type Outcome } from '../../../../lib/upstream/fanout.js';
import { Cancellation, type CallSink, type CancelSignal } from '../../../../lib/upstream/transport/contract.js';

/** A call per upstream name that settles when the test says so. */
function deferredCalls() {
  const pending = new Map<string, { resolve: (v: string) => void; reject: (e: Error) => void; signal: CancelSignal }>();
  const call = (upstream: string, signal: CancelSignal) =>
    new Promise<string>((resolve, reject) => {
      pending.set(upstream, { resolve, reject, signal });
    });
  return { pending, call };
}

const flush = () => new Promise((r) => setImmediate(r));
const summary = (o: Outcome<string, string> | undefined) => (o === undefined ? 'end' : o.ok ? `${o.upstream}:${o.value}` : `${o.upstream}!${o.error.message}`);

test('launches calls in candidate order, up to what is asked and what is left', (t) => {
  const { pending, call } = deferredCalls();
  const fan = new FanOut(['a', 'b', 'c'], call);
  t.is(fan.launch(2), 2);
  t.deepEqual([...pending.keys()], ['a', 'b']);
  t.is(fan.inFlight, 2);
  t.is(fan.remaining, 1);
  t.is(fan.launch(5), 1);
  t.deepEqual(fan.called, ['a', 'b', 'c']);
  t.is(fan.launch(1), 0);
});

test('a later launch asks the candidates `later` names (put on back-off meanwhile) after the others; the first launch keeps the ranking', (t) => {
  const { call } = deferredCalls();
  const backedOff = new Set<string>(['a']);
  const fan = new FanOut(['a', 'b', 'c', 'd', 'e'], call, undefined, undefined, (u) => backedOff.has(u));
  t.is(fan.launch(1), 1);
  t.deepEqual(fan.called, ['a'], 'the first launch as ranked (the selection left out who was on back-off then)');
  backedOff.add('b').add('d');
  t.is(fan.launch(2), 2);
  t.deepEqual(fan.called, ['a', 'c', 'e']);
  t.is(fan.remaining, 2);
  t.is(fan.launch(1), 1);
  t.deepEqual(fan.called, ['a', 'c', 'e', 'b'], 'asked when nothing else is left, in rank order');
  backedOff.clear();
  t.is(fan.launch(5), 1);
  t.deepEqual(fan.called, ['a', 'c', 'e', 'b', 'd']);
});

test('starts the calls of one launch slowest-expected first, same upstreams, ties in rank order', (t) => {
  const { pending, call } = deferredCalls();
  const expected: Record<string, number | undefined> = { a: 2, b: 9, c: 9, d: undefined, e: 1 };
  const fan = new FanOut(['a', 'b', 'c', 'd', 'e'], call, (u) => expected[u]);
  t.is(fan.launch(3), 3);
  // b and c (9 ms, in rank order) before a (2 ms)
  t.deepEqual([...pending.keys()], ['b', 'c', 'a']);
  t.is(fan.launch(2), 2);
  // e (1 ms) before d (no latency known yet: counts as 0)
  t.deepEqual(fan.called, ['b', 'c', 'a', 'e', 'd']);
  t.is(fan.launch(1), 0);
  t.is(fan.launch(0), 0);
  fan.abort();
  t.is(fan.launch(1), 0);
});

test('delivers outcomes in completion order, queued ones at subscribe time', async (t) => {
  const { pending, call } = deferredCalls();
  const fan = new FanOut(['a', 'b', 'c'], call);
  fan.launch(3);
  pending.get('b')!.resolve('B');
  await flush();
  const seen: string[] = [];
  fan.onOutcome((o) => seen.push(summary(o)));
  t.deepEqual(seen, ['b:B']);
  pending.get('c')!.reject(new Error('boom'));
  pending.get('a')!.resolve('A');
  await flush();
  t.deepEqual(seen, ['b:B', 'c!boom', 'a:A']);
  t.is(fan.inFlight, 0);
});

test('abort fires the shared signal once, ends the listener once, and drops later outcomes', async (t) => {
  const { pending, call } = deferredCalls();
  const fan = new FanOut(['a', 'b'], call);
  fan.launch(2);
  const seen: string[] = [];
  fan.onOutcome((o) => seen.push(summary(o)));
  const signal = pending.get('a')!.signal;
  t.is(pending.get('b')!.signal, signal, 'calls share one signal');
  let fired = 0;
  signal.addEventListener('abort', () => (fired += 1));
  fan.abort('decided');
  fan.abort('again');
  t.true(signal.aborted);
  t.is(signal.reason, 'decided');
  t.is(fired, 1);
  pending.get('a')!.resolve('late');
  await flush();
  t.deepEqual(seen, ['end']);
  t.is(fan.launch(1), 0, 'nothing starts after abort');
});

test('a listener set after abort hears the end at once', (t) => {
  const fan = new FanOut(['a'], deferredCalls().call);
  fan.launch(1);
  fan.abort();
  const seen: string[] = [];
  fan.onOutcome((o) => seen.push(summary(o)));
  t.deepEqual(seen, ['end']);
});

test('a listener that aborts while queued outcomes are delivered hears the end once, and no more outcomes', async (t) => {
  const { pending, call } = deferredCalls();
  const fan = new FanOut(['a', 'b'], call);
  fan.launch(2);
  pending.get('a')!.resolve('A');
  pending.get('b')!.resolve('B');
  await flush();
  const seen: string[] = [];
  fan.onOutcome((o) => {
    seen.push(summary(o));
    if (o) fan.abort();
  });
  t.deepEqual(seen, ['a:A', 'end']);
});

test('refuses a second listener', (t) => {
  const fan = new FanOut(['a'], deferredCalls().call);
  fan.onOutcome(() => {});
  t.throws(() => fan.onOutcome(() => {}), { message: /already set/ });
});

test('turns a non-Error rejection into an Error outcome', async (t) => {
  const fan = new FanOut(['a'], () => Promise.reject('plain string'));
  const seen: string[] = [];
  fan.onOutcome((o) => seen.push(summary(o)));
  fan.launch(1);
  await flush();
  t.deepEqual(seen, ['a!plain string']);
});

test('Cancellation runs each listener once, in order, and forgets removed and late ones', (t) => {
  const c = new Cancellation();
  const seen: string[] = [];
  const one = () => seen.push('one');
  const two = () => seen.push('two');
  c.addEventListener('abort', one);
  c.addEventListener('abort', two);
  c.addEventListener('abort', () => seen.push('three'));
  c.removeEventListener('abort', two);
  c.abort(new Error('stop'));
  c.abort(new Error('again'));
  c.addEventListener('abort', () => seen.push('late'));
  t.deepEqual(seen, ['one', 'three']);
  t.true(c.aborted);
  t.is((c.reason as Error).message, 'stop');
});

test('abort tells each call still running how long it ran, and none that settled', async (t) => {
  const { pending, call } = deferredCalls();
  let now = 0;
  const fan = new FanOut(['a', 'b', 'c'], call, undefined, () => now);
  fan.launch(2);
  now = 5;
  fan.launch(1);
  pending.get('a')!.resolve('A');
  await flush();
  now = 12;
  const abandoned: string[] = [];
  fan.abort(undefined, (u, ms) => abandoned.push(`${u}:${ms}`));
  t.deepEqual(abandoned, ['b:12', 'c:7']);
});

test('requeue puts upstreams back after the candidates left, to be called again', (t) => {
  const { call } = deferredCalls();
  const fan = new FanOut(['a', 'b', 'c'], call);
  fan.launch(2);
  fan.requeue(['a']);
  t.is(fan.remaining, 2);
  t.is(fan.launch(5), 2);
  t.deepEqual(fan.called, ['a', 'b', 'c', 'a']);
});

test('with a callInto caller: outcomes told to each call sink, in the order told; a second word from a sink is ignored', async (t) => {
  const sinks = new Map<string, CallSink<string>>();
  const fan = new FanOut<string, string>(['a', 'b', 'c'], { callInto: (u, _signal, sink) => void sinks.set(u, sink) });
  const seen: string[] = [];
  fan.onOutcome((o) => seen.push(summary(o)));
  t.is(fan.launch(2), 2);
  t.deepEqual([...sinks.keys()], ['a', 'b']);
  sinks.get('b')!.answered('B');
  t.deepEqual(seen, ['b:B'], 'told at once, no promise in between');
  t.is(fan.inFlight, 1);
  sinks.get('b')!.failed(new Error('late'));
  sinks.get('a')!.failed(new Error('down'));
  sinks.get('a')!.answered('A');
  t.deepEqual(seen, ['b:B', 'a!down']);
  t.is(fan.inFlight, 0);
  fan.launch(1);
  fan.abort();
  sinks.get('c')!.answered('C');
  await flush();
  t.deepEqual(seen, ['b:B', 'a!down', 'end'], 'nothing told after abort is delivered');
});

test('with a callInto caller: an outcome told while the call starts (refused at once) is delivered after the launch returns', async (t) => {
  const order: string[] = [];
  const fan = new FanOut<string, string>(['a', 'b'], {
    callInto: (u, _signal, sink) => {
      order.push(`start ${u}`);
      if (u === 'a') sink.failed('refused' as unknown as Error);
    },
  });
  fan.onOutcome((o) => order.push(`outcome ${summary(o)}`));
  t.is(fan.launch(2), 2);
  order.push('launched');
  t.is(fan.inFlight, 2, 'the refused call is in flight until its outcome is delivered');
  await flush();
  t.deepEqual(order, ['start a', 'start b', 'launched', 'outcome a!refused']);
  t.is(fan.inFlight, 1);
});
