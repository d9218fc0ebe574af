/**
 * Pipelined requests take turns: at most `servedPerConnection` requests of one connection are in
 * the app at once. Node parses every request a client has written on a connection and hands each
 * to the app at once, and it stops reading only once answers wait to be written; a client that
 * writes thousands of small requests in one burst (one TCP write of 1.5 MB is 20,000 calls)
 * started that many requests (agreements, upstream calls, their memory) before the first answer
 * could be written, slowing every other client into its deadline. A request beyond the limit
 * waits, in order, until one of its connection's answers ends; while any waits, the connection is
 * not read (the client's further writes stay in its own buffers), with the flag Node's own
 * back-pressure uses, so that a request reading its body does not resume it. What Node's parser
 * refuses on a connection is answered after the answers of the requests before it (afterAnswers).
 */
import type http from 'node:http';
import type { Socket } from 'node:net';

/** Requests of one connection in the app at once; its later requests wait their turn. */
export const servedPerConnection = 32;

const kTurns = Symbol('omnigate.turns');

/** One connection's turns: its requests in the app, and those waiting (request, answer, request, …). */
interface Turns {
  app: http.RequestListener;
  active: number;
  waiting: (http.IncomingMessage | http.ServerResponse)[];
  /** The next waiting pair's index in `waiting`. */
  head: number;
  /** What to do once every request of the connection is answered (afterAnswers). */
  then: (() => void) | undefined;
  /** The connection's newest request (the only one that may still be receiving its body). */
  last: http.IncomingMessage | undefined;
}

/** The node:http socket fields that say and make Node's own pause (`_http_server.js`). */
type ServerSocket = Socket & { [kTurns]?: Turns; _paused?: boolean; parser?: { resume(): void } | null };

/** `app`, taking turns on each connection. */
export function takingTurns(app: http.RequestListener): http.RequestListener {
  return function served(req, res) {
    const socket = req.socket as ServerSocket;
    let turns = socket[kTurns];
    if (turns === undefined) socket[kTurns] = turns = { app, active: 0, waiting: [], head: 0, then: undefined, last: undefined };
    turns.last = req;
    if (turns.active < servedPerConnection) return enter(turns, req, res);
    turns.waiting.push(req, res);
    if (socket._paused !== true) {
      // Node pauses its parser too once the bytes it has are parsed, and resumes neither while
      // `_paused` holds (an IncomingMessage's read would resume a socket paused without it).
      socket._paused = true;
      socket.pause();
    }
  };
}

function enter(turns: Turns, req: http.IncomingMessage, res: http.ServerResponse): void {
  turns.active += 1;
  // ('close' comes once: on, not once, which would wrap the listener in a closure per request)
  res.on('close', turnEnded);
  turns.app(req, res);
}

/** An answer of the connection ended (written, or its connection gone): the next waiting request enters. */
function turnEnded(this: http.ServerResponse): void {
  const socket = this.req.socket as ServerSocket | null;
  const turns = socket?.[kTurns];
  if (!socket || !turns) return;
  turns.active -= 1;
  if (socket.destroyed) return;
  if (turns.head === turns.waiting.length) {
    if (turns.active === 0 && turns.then !== undefined) turns.then();
    return;
  }
  const req = turns.waiting[turns.head] as http.IncomingMessage;
  const res = turns.waiting[turns.head + 1] as http.ServerResponse;
  turns.waiting[turns.head] = turns.waiting[turns.head + 1] = undefined!;
  turns.head += 2;
  if (turns.head === turns.waiting.length) {
    // None waits any more: the connection is read again (the request just let in may still be
    // receiving its body), unless its answers back up unread (then Node's own pause holds, and
    // Node reads it again once they drain) or what follows could not be parsed (afterAnswers).
    turns.waiting = [];
    turns.head = 0;
    if (socket._paused === true && !socket.writableNeedDrain && turns.then === undefined) {
      socket._paused = false;
      socket.parser?.resume();
      socket.resume();
    }
  }
  enter(turns, req, res);
}

/**
 * Runs `fn` once every request of the connection that reached the app (or waits its turn) is
 * answered, at once when none is or when the newest of them is not whole: an answer written on
 * the connection by other means (a refusal of what Node's parser could not read) comes after
 * them, in the order a pipelining client matches answers to its requests. Meanwhile the
 * connection is not read. Once per connection.
 */
export function afterAnswers(socket: Socket, fn: () => void): void {
  const turns = (socket as ServerSocket)[kTurns];
  if (turns === undefined || (turns.active === 0 && turns.head === turns.waiting.length)) return fn();
  // A request whose body was cut (the refusal is its own: a bad chunk, the client too slow) would
  // never be answered: the refusal goes now, as its answer, and the connection with it.
  if (turns.last !== undefined && !turns.last.complete) return fn();
  if (turns.then !== undefined) return;
  turns.then = fn;
  (socket as ServerSocket)._paused = true;
  socket.pause();
}
