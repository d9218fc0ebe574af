/**
 * The end of an answer's life, on the client's side: when the upstream calls of a request may
 * stop and its buffered bytes (limits.bufferedBytes) go back, and how long a written answer may
 * wait for its client to take it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** The callbacks waiting on each connection's 'close' (one listener per connection, however many requests it pipelines). */
const waiting = new WeakMap<Socket, Set<() => void>>();

/**
 * Calls `done(arg)` once, when the answer to `req` is written or will never be: the response's
 * 'close', or its connection's. Node emits 'close' on a response whose client left only for the
 * response being written on that connection: a pipelined request waiting for its turn got none,
 * and held its upstream calls and buffered bytes for the life of the process. A connection
 * already closed calls `done` on the next tick. (`arg`: what `done` needs, so that a function
 * shared by every request serves, not a closure made for each.)
 */
export function onAnswerDone(req: IncomingMessage, res: ServerResponse, done: () => void): void;
export function onAnswerDone<T>(req: IncomingMessage, res: ServerResponse, done: (arg: T) => void, arg: T): void;
export function onAnswerDone<T>(req: IncomingMessage, res: ServerResponse, done: (arg?: T) => void, arg?: T): void {
  let called = false;
  const socket = req.socket as Socket | null | undefined;
  const fire = () => {
    if (called) return;
    called = true;
    res.off('close', fire);
    if (socket) waiting.get(socket)?.delete(fire);
    done(arg);
  };
  // (on, not once: fire takes itself off, and once would wrap it in one more closure per request)
  res.on('close', fire);
  if (!socket || typeof socket.once !== 'function') return;
  if (socket.destroyed) return void process.nextTick(fire);
  let set = waiting.get(socket);
  if (!set) {
    const callbacks = new Set<() => void>();
    waiting.set(socket, callbacks);
    socket.once('close', () => {
      waiting.delete(socket);
      for (const f of [...callbacks]) f();
    });
    set = callbacks;
  }
  set.add(fire);
}

/** Whether the client of `req` is gone (its connection closed): nobody will read an answer. */
export const clientGone = (req: IncomingMessage): boolean => req.socket?.destroyed === true;

/**
 * Ends `res` with `body`; a client that has not taken all of it `sendMs` later is disconnected
 * (timeouts.sendMs), so that one that stops reading cannot hold the answer, and the upstream
 * bytes of its request, for ever: Node has no such timer, a response's write waits as long as
 * the connection stays open. A pipelined answer's time starts at its turn (when it gets the
 * connection), not while the answers before it are written.
 */
export function endAnswer(res: ServerResponse, body: Buffer | string, sendMs: number | undefined): void {
  res.end(body);
  if (!(sendMs !== undefined && sendMs > 0) || res.writableFinished) return;
  // All of it already handed to the kernel (the usual small answer): nothing is held here.
  if (res.socket && res.socket.writableLength === 0) return;
  let timer: NodeJS.Timeout | undefined;
  const arm = () => {
    timer = setTimeout(() => res.destroy(), sendMs);
    timer.unref();
  };
  if (res.socket) arm();
  else res.once('socket', arm);
  res.once('close', () => {
    clearTimeout(timer);
    res.off('socket', arm);
  });
}
