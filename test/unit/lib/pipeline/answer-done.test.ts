/**
 * The end of an answer's life: onAnswerDone fires once, on the response's close or its
 * connection's (a pipelined request waiting its turn included); endAnswer disconnects a client
 * that has not taken a written answer within sendMs, and arms nothing when nothing is held.
 */
import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import test from 'ava';
import { clientGone, endAnswer, onAnswerDone } from '../../../../lib/pipeline/answer-done.js';

const socket = (destroyed = false) => Object.assign(new EventEmitter(), { destroyed });
const request = (s: EventEmitter | undefined) => ({ socket: s }) as unknown as IncomingMessage;
const response = () => new EventEmitter() as unknown as ServerResponse;

test('should call done once when the response closes, and not again when the connection closes', (t) => {
  const s = socket();
  const res = response();
  let done = 0;
  onAnswerDone(request(s), res, () => (done += 1));
  t.is(done, 0);
  res.emit('close');
  t.is(done, 1);
  s.emit('close');
  res.emit('close');
  t.is(done, 1);
});

test('should call done for every request of a connection when it closes, with one listener on the connection', (t) => {
  const s = socket();
  const calls: string[] = [];
  onAnswerDone(request(s), response(), () => calls.push('first'));
  onAnswerDone(request(s), response(), () => calls.push('pipelined'));
  t.is(s.listenerCount('close'), 1);
  s.emit('close');
  t.deepEqual(calls, ['first', 'pipelined']);
});

test('should forget a request answered before its connection closes', (t) => {
  const s = socket();
  const res = response();
  const calls: string[] = [];
  onAnswerDone(request(s), res, () => calls.push('answered'));
  onAnswerDone(request(s), response(), () => calls.push('waiting'));
  res.emit('close');
  s.emit('close');
  t.deepEqual(calls, ['answered', 'waiting']);
  t.is(res.listenerCount('close'), 0, 'its listener is removed');
});

test('should call done on the next tick when the connection is already closed', async (t) => {
  let done = 0;
  onAnswerDone(request(socket(true)), response(), () => (done += 1));
  t.is(done, 0, 'not synchronously');
  await new Promise((resolve) => process.nextTick(resolve));
  t.is(done, 1);
});

test('should work without a socket, on the response\'s close only', (t) => {
  const res = response();
  let done = 0;
  onAnswerDone(request(undefined), res, () => (done += 1));
  res.emit('close');
  t.is(done, 1);
});

test('clientGone should say whether the request\'s connection is destroyed', (t) => {
  t.true(clientGone(request(socket(true))));
  t.false(clientGone(request(socket(false))));
  t.false(clientGone(request(undefined)));
});

/** Waits for `event` on `emitter`, keeping the process alive meanwhile (endAnswer's timer is unref'd). */
async function once(emitter: EventEmitter, event: string): Promise<void> {
  const keep = setInterval(() => {}, 1000);
  try {
    await new Promise((resolve) => emitter.once(event, resolve));
  } finally {
    clearInterval(keep);
  }
}

/** A response whose socket still holds `pending` bytes after end(). */
function heldResponse(pending: number) {
  const res = Object.assign(new EventEmitter(), {
    ended: undefined as unknown,
    destroyed: 0,
    writableFinished: false,
    socket: { writableLength: pending } as { writableLength: number } | undefined,
    end(body: unknown) {
      res.ended = body;
    },
    destroy() {
      res.destroyed += 1;
      res.emit('close');
    },
  });
  return res;
}

test('endAnswer should end the response with the body, and disconnect a client that has not taken it within sendMs', async (t) => {
  const res = heldResponse(1000);
  const closed = once(res, 'close');
  endAnswer(res as unknown as ServerResponse, 'body', 1);
  t.is(res.ended, 'body');
  await closed;
  t.is(res.destroyed, 1);
});

test('endAnswer should arm nothing when all of the answer left, when sendMs is 0, or when the client took it', async (t) => {
  for (const [pending, sendMs] of [[0, 1], [1000, 0], [1000, undefined]] as const) {
    const res = heldResponse(pending);
    endAnswer(res as unknown as ServerResponse, 'b', sendMs);
    t.is(res.listenerCount('close'), 0, `pending ${pending}, sendMs ${sendMs}`);
  }
  const taken = heldResponse(1000);
  endAnswer(taken as unknown as ServerResponse, 'b', 1);
  taken.emit('close'); // the client took it: the timer is cleared
  await new Promise((resolve) => setTimeout(resolve, 20));
  t.is(taken.destroyed, 0);
});

test('endAnswer should start the time when the response gets its connection', async (t) => {
  const res = heldResponse(1000);
  res.socket = undefined;
  endAnswer(res as unknown as ServerResponse, 'b', 1);
  await new Promise((resolve) => setTimeout(resolve, 20));
  t.is(res.destroyed, 0, 'not while waiting its turn');
  const closed = once(res, 'close');
  res.socket = { writableLength: 1000 };
  res.emit('socket');
  await closed;
  t.is(res.destroyed, 1);
});
