/**
 * The cap on open upstream sockets of one gateway (config `limits.upstreamSockets`), across the
 * node:http Agents omnigate made for its HTTP(S) upstreams (a caller's agent is not counted).
 *
 * A socket is counted from the agent's createConnection to its 'close'. A call that may open one
 * holds a reservation from its start until node hands its request a socket, so the sockets open
 * plus the reservations never pass the cap; a call beyond it waits here (as its Call, no request)
 * until a socket closes, a reservation ends or an idle socket is reclaimed. A waiting call ends
 * on its own timeout or abort. Idle kept-alive sockets are reclaimed, oldest first, when a call
 * of another upstream needs a socket and the cap is reached: the cap never deadlocks on sockets
 * that nobody uses. A call whose agent has an idle socket takes it and needs no reservation.
 *
 * Health calls (probes, head polls) of an upstream that carried no traffic since the previous
 * health call close their socket after the answer (`closeWhenFree`): a probe round holds the
 * sockets of the probes in flight, not one per upstream probed for the keep-alive time.
 */
import type http from 'node:http';
import type { Duplex } from 'node:stream';

/** `limits.upstreamSockets`' default. */
export const defaultUpstreamSockets = 256;

/** A call that waits for a socket (http-call.ts Call), linked into the pool's queue. */
export interface SocketWaiter {
  readonly slot: SocketSlot;
  /** Whether it holds a reservation (it may open a socket). */
  reserved: boolean;
  /** Whether it waits in the pool's queue, and its neighbours there. */
  pooled: boolean;
  pprev: SocketWaiter | undefined;
  pnext: SocketWaiter | undefined;
  /** It may go now: sends its request. */
  go(): void;
}

/** One agent's part of the pool: its idle sockets. */
export class SocketSlot {
  idle = 0;
  constructor(
    readonly pool: SocketPool,
    readonly agent: http.Agent,
  ) {}
}

const kSlot = Symbol('omnigate.socketSlot');
const kCloseWhenFree = Symbol('omnigate.closeWhenFree');
type PooledSocket = Duplex & { [kSlot]?: SocketSlot | undefined; [kCloseWhenFree]?: boolean };

/** The socket is closed instead of kept alive when its request ends (a health call's, see above). */
export function closeWhenFree(socket: Duplex | null | undefined): void {
  if (socket && !socket.destroyed) (socket as PooledSocket)[kCloseWhenFree] = true;
}

function onPooledClose(this: PooledSocket): void {
  const slot = this[kSlot];
  if (slot === undefined) return; // reclaimed: already uncounted
  this[kSlot] = undefined;
  slot.pool.closed(this, slot);
}

export class SocketPool {
  /** Sockets open now (counted by the agents' createConnection, until 'close'). */
  open = 0;
  /** Calls started that have no socket yet: each may open one. */
  pending = 0;
  /** The most sockets open at once so far. */
  peak = 0;
  readonly cap: number;
  /** The oldest waiting call (the queue is linked through the calls). */
  head: SocketWaiter | undefined = undefined;
  private tail: SocketWaiter | undefined = undefined;
  /** Idle kept-alive sockets, oldest first. */
  private readonly idle = new Set<PooledSocket>();
  private wakeScheduled = false;
  private readonly wakeSoon = () => {
    this.wakeScheduled = false;
    this.wake();
  };

  constructor(cap = defaultUpstreamSockets) {
    this.cap = cap > 0 ? cap : Infinity;
  }

  /** Counts the sockets of `agent` (one agent per upstream); returns its slot. */
  attach(agent: http.Agent): SocketSlot {
    const slot = new SocketSlot(this, agent);
    type Create = (options: object, oncreate?: (err: Error | null, socket?: Duplex) => void) => Duplex | undefined;
    const create = (agent as unknown as { createConnection: Create }).createConnection.bind(agent) as Create;
    const keep = agent.keepSocketAlive.bind(agent) as (socket: Duplex) => boolean;
    const reuse = agent.reuseSocket.bind(agent);
    const count = (socket: PooledSocket | undefined) => {
      if (socket === undefined || socket[kSlot] !== undefined || socket.destroyed) return;
      socket[kSlot] = slot;
      this.open += 1;
      if (this.open > this.peak) this.peak = this.open;
      socket.once('close', onPooledClose);
    };
    (agent as unknown as { createConnection: Create }).createConnection = (options, oncreate) => {
      // A socket handed over later (by the callback) is counted then.
      const socket = create(options, oncreate && ((err, s) => (err || count(s), oncreate(err, s))));
      count(socket);
      return socket;
    };
    agent.keepSocketAlive = ((socket: PooledSocket) => {
      if (socket[kCloseWhenFree] || !keep(socket)) {
        // The agent destroys it now: it no longer counts (its 'close' comes a loop phase later).
        socket[kCloseWhenFree] = false;
        if (socket[kSlot] === slot) {
          socket[kSlot] = undefined;
          this.open -= 1;
          this.wakeOnNextTick();
        }
        return false;
      }
      if (socket[kSlot] === slot) {
        this.idle.add(socket);
        slot.idle += 1;
        // The agent files it as free after this returns: a waiting call takes it on the next tick.
        this.wakeOnNextTick();
      }
      return true;
    }) as http.Agent['keepSocketAlive'];
    agent.reuseSocket = (socket, req) => {
      if (this.idle.delete(socket as PooledSocket)) slot.idle -= 1;
      reuse(socket, req);
    };
    return slot;
  }

  /** Wakes the waiting calls on the next tick, if any wait (not inside the agent's own handling of a socket). */
  private wakeOnNextTick(): void {
    if (this.head !== undefined && !this.wakeScheduled) {
      this.wakeScheduled = true;
      process.nextTick(this.wakeSoon);
    }
  }

  /**
   * A call asks to start where the quick check (open + pending < cap, nobody waiting) failed:
   * true when it may go now (reserved, or taking an idle socket of its agent), false when it was
   * queued (go() is called later).
   */
  admit(w: SocketWaiter): boolean {
    if (w.slot.idle > 0) {
      w.reserved = false;
      return true;
    }
    if (this.head === undefined && (this.open + this.pending < this.cap || this.reclaim())) {
      this.pending += 1;
      w.reserved = true;
      return true;
    }
    w.pooled = true;
    w.pprev = this.tail;
    if (this.tail) this.tail.pnext = w;
    else this.head = w;
    this.tail = w;
    return false;
  }

  /** Takes a call out of the queue (it ended while it waited, or it goes). */
  unqueue(w: SocketWaiter): void {
    const { pprev, pnext } = w;
    if (pprev) pprev.pnext = pnext;
    else this.head = pnext;
    if (pnext) pnext.pprev = pprev;
    else this.tail = pprev;
    w.pprev = w.pnext = undefined;
    w.pooled = false;
  }

  /** A call's reservation ends (its request has a socket, or the call ended). */
  release(w: SocketWaiter): void {
    w.reserved = false;
    this.pending -= 1;
    if (this.head !== undefined) this.wake();
  }

  /** A counted socket closed. */
  closed(socket: PooledSocket, slot: SocketSlot): void {
    this.open -= 1;
    if (this.idle.delete(socket)) slot.idle -= 1;
    if (this.head !== undefined) this.wake();
  }

  /**
   * Starts the waiting calls that may go, oldest first: one whose agent has an idle socket takes
   * it; another gets a reservation while the cap allows, or when an idle socket (of any agent)
   * can be reclaimed for it. Strictly in order: a call never waits behind younger ones of an
   * upstream that keeps its sockets busy.
   */
  private wake(): void {
    for (let w = this.head; w; w = this.head) {
      if (w.slot.idle > 0) {
        this.unqueue(w);
        w.reserved = false;
      } else if (this.open + this.pending < this.cap || this.reclaim()) {
        this.unqueue(w);
        this.pending += 1;
        w.reserved = true;
      } else return;
      w.go();
    }
  }

  /** Closes the oldest idle socket (of any agent); false when none is idle. */
  private reclaim(): boolean {
    const socket = this.idle.values().next().value as PooledSocket | undefined;
    if (socket === undefined) return false;
    const slot = socket[kSlot]!;
    this.idle.delete(socket);
    slot.idle -= 1;
    socket[kSlot] = undefined;
    this.open -= 1;
    // Out of the agent's free list now: it must not hand the socket to a request before 'close'.
    const free = slot.agent.freeSockets as Record<string, Duplex[] | undefined>;
    for (const name of Object.keys(free)) {
      const list = free[name]!;
      const i = list.indexOf(socket);
      if (i === -1) continue;
      list.splice(i, 1);
      if (list.length === 0) delete free[name];
    }
    socket.destroy();
    return true;
  }
}
