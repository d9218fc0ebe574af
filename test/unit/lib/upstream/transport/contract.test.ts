/**
 * The transport contract's helpers: the one-shot Cancellation, withTimeout (the caller's abort or
 * the timeout, told apart, and whether the bytes may have left), the failure kinds and messages, the request id as a header value.
 */
import test from 'ava';
import { ByteBudget } from '../../../../../lib/upstream/budget.js';
import { Cancellation, describeError, overBudget, tooDeep, UpstreamCallError, withTimeout } from '../../../../../lib/upstream/transport/contract.js';
import { requestIdHeader } from '../../../../../lib/upstream/transport/call.js';

test('Cancellation should run each listener once, in order, and none added after the abort', (t) => {
  const c = new Cancellation();
  const calls: string[] = [];
  const removed = () => calls.push('removed');
  c.addEventListener('abort', () => calls.push('a'));
  c.addEventListener('abort', removed);
  c.addEventListener('abort', () => calls.push('b'));
  c.removeEventListener('abort', removed);
  t.false(c.aborted);
  c.abort('why');
  c.abort('again');
  t.true(c.aborted);
  t.is(c.reason, 'why');
  t.deepEqual(calls, ['a', 'b']);
  c.addEventListener('abort', () => calls.push('late'));
  t.deepEqual(calls, ['a', 'b']);
});

/** A call that waits for its signal to abort, after optionally writing. */
const waitForAbort = (write: boolean) => (signal: AbortSignal, state: { sent: boolean }) =>
  new Promise<never>((_resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    if (write) state.sent = true;
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });

test('withTimeout should return what the call returns and leave no listener on the caller\'s signal', async (t) => {
  const listening = new Set<() => void>();
  const outer = { aborted: false, addEventListener: (_: 'abort', l: () => void) => listening.add(l), removeEventListener: (_: 'abort', l: () => void) => listening.delete(l) };
  t.is(await withTimeout(outer, 60_000, async () => { t.is(listening.size, 1); return 'answer'; }), 'answer');
  t.is(listening.size, 0);
  await t.throwsAsync(withTimeout(outer, 60_000, () => Promise.reject(new Error('x'))));
  t.is(listening.size, 0, 'after a failure too');
});

test('withTimeout should fail with kind timeout when no answer comes in time, saying whether the bytes left', async (t) => {
  const unsent = await t.throwsAsync(withTimeout(new Cancellation(), 1, waitForAbort(false)), { instanceOf: UpstreamCallError });
  t.like(unsent, { kind: 'timeout', sent: false, message: 'no answer within 1 ms' });
  const sent = await t.throwsAsync(withTimeout(new Cancellation(), 1, waitForAbort(true)), { instanceOf: UpstreamCallError });
  t.like(sent, { kind: 'timeout', sent: true });
});

test('withTimeout should fail with kind aborted on the caller\'s abort, before or during the call', async (t) => {
  const outer = new Cancellation();
  const during = withTimeout(outer, 60_000, waitForAbort(true));
  outer.abort();
  t.like(await t.throwsAsync(during), { kind: 'aborted', sent: true });
  const before = new Cancellation();
  before.abort();
  t.like(await t.throwsAsync(withTimeout(before, 60_000, waitForAbort(false))), { kind: 'aborted', sent: false });
});

test('withTimeout should keep a failure the call described, and describe any other as transport', async (t) => {
  const own = new UpstreamCallError('http-status', 'HTTP 503');
  t.is(await t.throwsAsync(withTimeout(new Cancellation(), 60_000, () => Promise.reject(own))), own);
  const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
  const err = await t.throwsAsync(withTimeout(new Cancellation(), 60_000, () => Promise.reject(refused)));
  t.like(err, { kind: 'transport', sent: false, message: 'ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:1', cause: refused });
});

test('describeError should give the code and the message, the cause\'s first', (t) => {
  t.is(describeError(new Error('plain')), 'plain');
  t.is(describeError(Object.assign(new Error('outer'), { cause: { code: 'ECONNRESET', message: 'socket hang up' } })), 'ECONNRESET: socket hang up');
  t.is(describeError('a string'), 'a string');
});

test('UpstreamCallError should default to sent, and the helpers name the limit', (t) => {
  t.true(new UpstreamCallError('transport', 'x').sent);
  t.like(tooDeep(12), { kind: 'too-deep', message: 'answer nested deeper than 12 levels (limits.jsonDepth)' });
  const account = new ByteBudget(100).open();
  account.take(30);
  t.like(overBudget(account, 80, false), { kind: 'budget', sent: false, message: 'upstream byte budget exhausted: 80 more bytes would pass limits.bufferedBytes (100; 30 in use)' });
});

test('requestIdHeader should pass visible ASCII through as is and drop every other character', (t) => {
  t.is(requestIdHeader('0b9c6f1e-5a7d-4c1f-9a3e-2f4b6c8d0e1f'), '0b9c6f1e-5a7d-4c1f-9a3e-2f4b6c8d0e1f');
  t.is(requestIdHeader('!~'), '!~', 'the ends of the visible range');
  t.is(requestIdHeader('a b\tc\r\nd\u007fe\u00e9f'), 'abcdef', 'space, controls, DEL and non-ASCII dropped');
  t.is(requestIdHeader(''), '');
});
