/**
 * The cap on open upstream sockets of one gateway (config `limits.upstreamSockets`), across the
 * node:http Agents omnigate made for its HTTP(S) upstreams (a caller's agent is not counted) and
 * the undici pools of its undici upstreams: one count for both.
 *
 * A socket is counted from the agent's createConnection to its 'close'. A call that may open one
 * holds a reservation from its start until node hands its request a socket, so the sockets open
 * plus the reservations never pass the cap; a call beyond it waits here (as its Call, no request)
 * until a socket closes, a reservation ends or an idle socket is reclaimed. A waiting call ends
 * on its own timeout or abort. Idle kept-alive sockets are reclaimed, oldest first, when a call
 * of another upstream needs a socket and the cap is reached: the cap never deadlocks on sockets
 * that nobody uses. A call whose agent has an idle socket takes it and needs no reservation.
 *
 * Each upstream has a share of the cap (registry.ts shareOfCap), guaranteed to it; a call above
 * its share is admitted only on room the pool lends (`lend`, admission.ts), counted until the call
 * ends. An upstream whose call was refused that room is noted (`wantRoom`): room freed by another
 * upstream (a loan given back, a socket closed, a reservation ended, the sweep below) is offered
 * to it at once (`offerRoom`), on either client, rather than when one of its own calls ends. Sockets above their upstream's share (an agent's beyond it, the connections of an undici
 * pool of calls above the share) are reclaimed first; a waiter above its share reclaims only
 * those, and a waiter within its share, while some are open but busy, waits for one of them to be
 * idle rather than close a socket of an upstream within its share (which would then take
 * another's in turn: a connection per call under load).
 *
 * Borrowed room gone cold is given back: a socket above its upstream's share that stays idle for
 * `borrowedIdleMs` (1 s by default) is closed, so that the cap may lend the room to another
 * upstream at once rather than when the socket's keep-alive ends. One sweep timer per pool
 * (unref'd; armed only while such sockets may be idle: an agent above its share has idle
 * sockets, or a pool of borrowed undici calls has connections) runs every `borrowedIdleMs` and
 * closes the sockets above their share that were idle already at its previous round and have
 * carried nothing since: a socket is closed after 1 to 2 × `borrowedIdleMs` idle. On node:http,
 * those of agents above their share, oldest idle first, down to the share; each socket notes the
 * round in which it went idle (no clock read per call). On undici, the connections of the pools
 * of borrowed calls whose Client has no request, and had none at the previous round with the
 * same bytes written since. Not cold: the sockets of an upstream one of whose calls was refused
 * lent room in the round (`Borrower`, admission.ts): it takes them again as soon as room is lent,
 * and closing them would only open others. Two upstreams busy above their shares, their calls
 * waiting for room, thus keep their connections, on a loaded machine too, where an idle time
 * alone closed the spare connections undici keeps (first lines of undici.ts) between waves of
 * answers, and opened them again at the next wave.
 *
 * Health calls (probes, head polls) of an upstream that carried no traffic since the previous
 * health call close their socket after the answer (`closeWhenFree`): a probe round holds the
 * sockets of the probes in flight, not one per upstream probed for the keep-alive time.
 *
 * undici (a ConnectionSlot per upstream): undici decides itself when a call needs a new
 * connection (it may open one for a call started in the turn another call's connection is
 * freed), so the cap is kept where connections are made: each undici Client (one connection of
 * a pool) connects through `connect` here, which counts the connection from the connect to its
 * 'close', and holds one beyond the cap in the same queue as node's waiting calls until a socket
 * closes or one can be reclaimed. A connection whose Client has no request is idle: when
 * something waits, the idle ones are found by a scan (only after an undici call ended since the
 * last scan found none) and closed, one per waiter; undici reconnects on that Client's next
 * request. A held connect whose upstream has no call in flight any more (they ended on their
 * timeout or abort) is dropped with an error, so nothing waits past the calls' deadlines. A
 * health call of an upstream without traffic since the last one closes that upstream's idle
 * connections once no call of it is in flight (`closeWhenIdle`).
 */
import type http from 'node:http';
import { createRequire } from 'node:module';
import type { Duplex } from 'node:stream';

/** `limits.upstreamSockets`' default. */
export const defaultUpstreamSockets = 256;

/**
 * How long a socket above its upstream's share stays idle before it is closed: long enough that
 * a connection between two calls of a busy upstream is never closed, short enough that another
 * upstream soon borrows the room.
 */
export const defaultBorrowedIdleMs = 1_000;

/** A call that waits for a socket (http-call.ts Call), or an undici connect, linked into the pool's queue. */
export interface SocketWaiter {
  /** Its upstream's part: one with an idle socket lets a node call take it. */
  readonly slot: { readonly idle: number };
  /** Whether it holds a reservation (it may open a socket). */
  reserved: boolean;
  /** Whether it is above its upstream's share of the cap (it may reclaim only sockets above their upstream's share). */
  readonly borrowed: boolean;
  /** Whether it waits in the pool's queue, and its neighbours there. */
  pooled: boolean;
  pprev: SocketWaiter | undefined;
  pnext: SocketWaiter | undefined;
  /** It may go now: sends its request. */
  go(): void;
}

/** What the pool reads of an upstream's admission of calls (admission.ts). */
export interface Borrower {
  /** The last round (`SocketPool.round`) in which one of its calls was refused lent room (it waits for it). */
  readonly refused: number;
  /** Starts its waiting calls that may go now (room was freed). */
  resume(): void;
}

/** One agent's part of the pool: its sockets open and idle, and its share of the cap. */
export class SocketSlot {
  idle = 0;
  open = 0;
  /** Its upstream's admission (http.ts sets it): sockets above the share are not cold while it asks for room. */
  borrower: Borrower | undefined = undefined;
  constructor(
    readonly pool: SocketPool,
    readonly agent: http.Agent,
    /** Its upstream's share of the cap: sockets beyond it are borrowed, reclaimed first. */
    readonly share: number,
  ) {}
}

/** undici's connect function (its `connect` option, what buildConnector makes). */
export type Connect = (options: object, callback: (err: Error | null, socket: Duplex | null) => void) => void;

/** What the cap reads of an undici Client (one connection): its requests, queued or running. */
export interface ConnectionClient {
  readonly stats: { readonly size: number };
}

/** One undici upstream's part of the cap: its connections, and its calls in flight. */
export class ConnectionSlot {
  /** No node socket of its own: a held connect always waits for room under the cap. */
  readonly idle = 0;
  /** The upstream's connections, connected and counted. */
  readonly sockets = new Set<Duplex>();
  /** Calls of this upstream with undici now (set by undici.ts); none: the pool is idle. */
  busy = 0;
  /** Connects of this pool held in the queue. */
  held = 0;
  /** Its connections are closed when no call is in flight (a health call on an upstream without traffic). */
  closeWhenIdle = false;
  /** The upstream's other part (its share's and its borrowed calls' pools are two). */
  twin: ConnectionSlot | undefined = undefined;
  /** Its upstream's admission (undici.ts sets it): borrowed connections are not cold while it asks for room. */
  borrower: Borrower | undefined = undefined;
  constructor(
    readonly pool: SocketPool,
    /** The pool of the upstream's calls above its share: its connections are borrowed, reclaimed first. */
    readonly lent = false,
  ) {}
}

/** A connect of an undici pool beyond the cap, waiting in the pool's queue. */
class HeldConnect implements SocketWaiter {
  reserved = false;
  readonly borrowed: boolean;
  pooled = false;
  pprev: SocketWaiter | undefined = undefined;
  pnext: SocketWaiter | undefined = undefined;
  constructor(
    readonly slot: ConnectionSlot,
    readonly client: ConnectionClient,
    readonly options: object,
    readonly inner: Connect,
    readonly callback: (err: Error | null, socket: Duplex | null) => void,
  ) {
    this.borrowed = slot.lent;
  }

  go(): void {
    const pool = this.slot.pool;
    this.slot.held -= 1;
    // The reservation wake() made becomes the connection itself.
    if (this.reserved) {
      this.reserved = false;
      pool.pending -= 1;
    }
    pool.connectNow(this.slot, this.client, this.options, this.inner, this.callback);
  }
}

/** The error an undici connection the cap closes is destroyed with (closeConnection); undici is loaded by then (only its connections are closed so). */
function closedByCap(): Error {
  const { InformationalError } = (createRequire(import.meta.url)('undici') as typeof import('undici')).errors;
  return new InformationalError('connection closed by omnigate');
}

const kConnection = Symbol('omnigate.connectionSlot');
const kClient = Symbol('omnigate.connectionClient');
/** The bytes written on a borrowed connection when the sweep last found it idle (-1: it was not). */
const kIdleWritten = Symbol('omnigate.idleWritten');
type CountedConnection = Duplex & { [kConnection]?: ConnectionSlot | undefined; [kClient]?: ConnectionClient; [kIdleWritten]?: number; bytesWritten?: number };

function onConnectionClose(this: CountedConnection): void {
  const slot = this[kConnection];
  if (slot === undefined) return; // reclaimed: already uncounted
  slot.pool.connectionClosed(this, slot);
}

const kSlot = Symbol('omnigate.socketSlot');
const kCloseWhenFree = Symbol('omnigate.closeWhenFree');
/** The pool's sweep round in which the socket last went idle. */
const kIdleRound = Symbol('omnigate.idleRound');
type PooledSocket = Duplex & { [kSlot]?: SocketSlot | undefined; [kCloseWhenFree]?: boolean; [kIdleRound]?: number };

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
  /** Calls admitted above their upstream's share, on room lent (`lend`). */
  borrowed = 0;
  /** Sockets open above their upstream's share (an agent's beyond it, a pool of borrowed calls' connections). */
  aboveShare = 0;
  readonly cap: number;
  /** How long a socket above its upstream's share may stay idle (see above). */
  readonly borrowedIdleMs: number;
  /** The oldest waiting call (the queue is linked through the calls). */
  head: SocketWaiter | undefined = undefined;
  private tail: SocketWaiter | undefined = undefined;
  /** Idle kept-alive sockets, oldest first. */
  private readonly idle = new Set<PooledSocket>();
  /** The undici upstreams with connections open. */
  private readonly connected = new Set<ConnectionSlot>();
  /** Whether an undici call ended since a scan last found no idle connection. */
  private mayBeIdle = false;
  private wakeScheduled = false;
  private readonly wakeSoon = () => {
    this.wakeScheduled = false;
    this.wake();
  };
  /**
   * The round of the sweep of cold borrowed sockets: how many sweeps ran so far (an idle socket,
   * and an upstream refused lent room, note it); and the next sweep's timer (none: nothing to sweep).
   */
  round = 0;
  private sweepTimer: NodeJS.Timeout | undefined = undefined;
  private readonly sweepSoon = () => {
    this.sweepTimer = undefined;
    this.sweep();
  };
  /**
   * The upstreams one of whose calls was refused lent room since room was last offered, in the
   * order they were refused: offered room (`offerRoom`) when some is freed (a loan given back, a
   * socket closed, a reservation ended, the sweep). Their own calls' ends start them too; room
   * another upstream frees would otherwise wait for one of those.
   */
  private readonly wanting = new Set<Borrower>();
  private offerScheduled = false;
  private readonly offerSoon = () => {
    this.offerScheduled = false;
    this.offerRoom();
  };

  constructor(cap = defaultUpstreamSockets, borrowedIdleMs = defaultBorrowedIdleMs) {
    this.cap = cap > 0 ? cap : Infinity;
    this.borrowedIdleMs = borrowedIdleMs;
  }

  /** Counts the sockets of `agent` (one agent per upstream, `share` its share of the cap); returns its slot. */
  attach(agent: http.Agent, share = Infinity): SocketSlot {
    const slot = new SocketSlot(this, agent, share);
    type Create = (options: object, oncreate?: (err: Error | null, socket?: Duplex) => void) => Duplex | undefined;
    const create = (agent as unknown as { createConnection: Create }).createConnection.bind(agent) as Create;
    const keep = agent.keepSocketAlive.bind(agent) as (socket: Duplex) => boolean;
    const reuse = agent.reuseSocket.bind(agent);
    const count = (socket: PooledSocket | undefined) => {
      if (socket === undefined || socket[kSlot] !== undefined || socket.destroyed) return;
      socket[kSlot] = slot;
      socket[kIdleRound] = this.round;
      this.open += 1;
      if (++slot.open > slot.share) {
        this.aboveShare += 1;
        // Its idle sockets are now above the share: the oldest go once cold.
        if (slot.idle > 0) this.sweepLater();
      }
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
          this.slotClosed(slot);
          this.wakeOnNextTick();
          this.roomFreed();
        }
        return false;
      }
      if (socket[kSlot] === slot) {
        this.idle.add(socket);
        slot.idle += 1;
        socket[kIdleRound] = this.round;
        if (slot.open > slot.share) this.sweepLater();
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

  /**
   * undici's connect for one Client of an upstream (`inner`: undici's own connect function): the
   * connection is counted under the cap; one beyond it is held in the queue (oldest first, with
   * node's waiting calls).
   */
  connect(slot: ConnectionSlot, client: ConnectionClient, inner: Connect, options: object, callback: (err: Error | null, socket: Duplex | null) => void): void {
    if (this.head === undefined && (this.open + this.pending < this.cap || this.reclaim(slot.lent))) {
      this.connectNow(slot, client, options, inner, callback);
      return;
    }
    slot.held += 1;
    this.enqueue(new HeldConnect(slot, client, options, inner, callback));
  }

  /** Opens a connection of `slot` now: counted from here to its 'close' (or the connect's failure). */
  connectNow(slot: ConnectionSlot, client: ConnectionClient, options: object, inner: Connect, callback: (err: Error | null, socket: Duplex | null) => void): void {
    this.open += 1;
    if (this.open > this.peak) this.peak = this.open;
    inner(options, (err, socket) => {
      if (err || socket === null) {
        this.closed(undefined, undefined);
        callback(err, null);
        return;
      }
      const counted = socket as CountedConnection;
      counted[kConnection] = slot;
      counted[kClient] = client;
      counted[kIdleWritten] = -1;
      slot.sockets.add(socket);
      if (slot.lent) {
        this.aboveShare += 1;
        this.sweepLater();
      }
      this.connected.add(slot);
      socket.once('close', onConnectionClose);
      callback(null, socket);
    });
  }

  /**
   * An undici call of `slot` ended (undici.ts): waiting calls may now find its connection idle;
   * with no call of it in flight, its connects still held are dropped (the calls that wanted
   * them have ended) and, after a health call that asked so, its connections are closed.
   */
  callEnded(slot: ConnectionSlot): void {
    this.mayBeIdle = true;
    if (slot.busy === 0) {
      if (slot.held > 0) this.dropHeld(slot);
      if (slot.closeWhenIdle) this.closeAll(slot);
      const twin = slot.twin;
      if (twin !== undefined && twin.closeWhenIdle && twin.busy === 0) this.closeAll(twin);
    }
    this.wakeOnNextTick();
  }

  /**
   * The connections of `slot` and of its twin are closed once none of their calls is in flight:
   * now for a part with none (undici.ts `releaseKept`), else at its last call's end.
   */
  closeWhenIdle(slot: ConnectionSlot): void {
    for (const part of slot.twin === undefined ? [slot] : [slot, slot.twin]) {
      part.closeWhenIdle = true;
      if (part.busy === 0) this.closeAll(part);
    }
  }

  /** Closes the idle sockets of one agent (http.ts `releaseKept`); those in use are left to their call. */
  closeIdleOf(slot: SocketSlot): void {
    if (slot.idle === 0) return;
    // (Bounded by the cap: idle sockets are open ones. Deleting the current entry of a Set keeps
    // its iteration valid.)
    for (const socket of this.idle) if (socket[kSlot] === slot) this.reclaimSocket(socket, slot);
    this.wakeOnNextTick();
    this.roomFreed();
  }

  /** Closes the connections of `slot` (none of its calls is in flight). */
  private closeAll(slot: ConnectionSlot): void {
    slot.closeWhenIdle = false;
    for (const socket of slot.sockets) this.closeConnection(socket as CountedConnection, slot);
    this.roomFreed();
  }

  /**
   * Room for one call above its upstream's share: lent while no call or connect waits for a
   * socket and the sockets open (idle ones included), the reservations and the calls already on
   * lent room leave room under the cap; counted until `giveBack`. A lent call counts twice while
   * it holds a socket (the socket and the loan): borrowers take at most half the room left, and an
   * upstream within its share most often finds room at once. One that does not waits no longer
   * than a lent call lasts: nothing is lent while anyone waits, and sockets above their share
   * are the first reclaimed (`reclaim`).
   */
  lend(): boolean {
    if (this.head === undefined && this.open + this.pending + this.borrowed < this.cap) {
      this.borrowed += 1;
      return true;
    }
    return false;
  }

  /**
   * A call on lent room ended. Its own upstream's waiting calls take the room first (admission.ts
   * release, in this turn); what they leave is offered to the others on the next tick.
   */
  giveBack(): void {
    this.borrowed -= 1;
    this.roomFreed();
  }

  /** One of `borrower`'s calls was refused lent room: it is offered room when some is freed. */
  wantRoom(borrower: Borrower): void {
    this.wanting.add(borrower);
  }

  /** Room was freed under the cap: offered, on the next tick, to the upstreams refused lent room. */
  private roomFreed(): void {
    if (this.wanting.size > 0 && !this.offerScheduled) {
      this.offerScheduled = true;
      process.nextTick(this.offerSoon);
    }
  }

  /**
   * Offers the room there is to lend to the upstreams refused lent room, first refused first,
   * after the calls waiting for a socket (nothing is lent while one waits). An upstream refused
   * again is noted anew, last (`wantRoom`): when room runs out, the next has its turn first.
   */
  private offerRoom(): void {
    for (const borrower of this.wanting) {
      if (this.head !== undefined || this.open + this.pending + this.borrowed >= this.cap) return;
      this.wanting.delete(borrower);
      borrower.resume();
    }
  }

  /** Fails the connects of `slot` held in the queue (undici fails the requests bound to them, already ended here). */
  private dropHeld(slot: ConnectionSlot): void {
    for (let w = this.head; w; ) {
      const next = w.pnext;
      if (w.slot === slot) {
        this.unqueue(w);
        slot.held -= 1;
        (w as HeldConnect).callback(new Error('no call waits for this connection any more'), null);
      }
      w = next;
    }
  }

  /** A counted undici connection closed. */
  connectionClosed(socket: CountedConnection, slot: ConnectionSlot): void {
    socket[kConnection] = undefined;
    slot.sockets.delete(socket);
    if (slot.lent) this.aboveShare -= 1;
    if (slot.sockets.size === 0) this.connected.delete(slot);
    this.closed(undefined, undefined);
  }

  /**
   * Closes an undici connection, uncounted at once. It is destroyed with the error undici's own
   * abort destroys a connection with (an InformationalError): undici then takes the close for
   * ours. Destroyed without one, undici reads the close as the end of an answer delimited by the
   * connection's close (HTTP/1.0, or no length): the connection of a call that ended (its
   * timeout, its abort) and is closed here before undici aborts its request would end that
   * request's answer after the abort, and undici throws out of the socket's close event (the
   * process dies).
   */
  private closeConnection(socket: CountedConnection, slot: ConnectionSlot): void {
    socket[kConnection] = undefined;
    slot.sockets.delete(socket);
    if (slot.lent) this.aboveShare -= 1;
    if (slot.sockets.size === 0) this.connected.delete(slot);
    this.open -= 1;
    socket.destroy(closedByCap());
  }

  /** Closes one idle undici connection (its Client has no request), of a pool of borrowed calls only when `lent`; false when none is. */
  private reclaimConnection(lent: boolean): boolean {
    if (!this.mayBeIdle) return false;
    for (const slot of this.connected) {
      if (lent && !slot.lent) continue;
      for (const socket of slot.sockets) {
        if ((socket as CountedConnection)[kClient]!.stats.size === 0) {
          this.closeConnection(socket as CountedConnection, slot);
          return true;
        }
      }
    }
    if (!lent) this.mayBeIdle = false;
    return false;
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
    if (this.head === undefined && (this.open + this.pending < this.cap || this.reclaim(w.borrowed))) {
      this.pending += 1;
      w.reserved = true;
      return true;
    }
    this.enqueue(w);
    return false;
  }

  /** Queues a waiter, last. */
  private enqueue(w: SocketWaiter): void {
    w.pooled = true;
    w.pprev = this.tail;
    if (this.tail) this.tail.pnext = w;
    else this.head = w;
    this.tail = w;
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
    this.roomFreed();
  }

  /** A counted socket closed (an undici connection: no socket or slot given). */
  closed(socket: PooledSocket | undefined, slot: SocketSlot | undefined): void {
    this.open -= 1;
    if (slot !== undefined) this.slotClosed(slot);
    if (socket !== undefined && this.idle.delete(socket)) slot!.idle -= 1;
    if (this.head !== undefined) this.wake();
    this.roomFreed();
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
      } else if (this.open + this.pending < this.cap || this.reclaim(w.borrowed)) {
        this.unqueue(w);
        this.pending += 1;
        w.reserved = true;
      } else return;
      w.go();
    }
  }

  /**
   * Closes an idle socket for a waiter: first one borrowed (of an agent above its upstream's
   * share, oldest first, else of a pool of borrowed undici calls); then, unless the waiter is
   * above its own share (`borrower`), the oldest idle socket of any agent, else any idle undici
   * connection. False when none may be closed. An upstream above its share thus never takes room
   * from one within its share, and one within its share takes borrowed room back first.
   */
  private reclaim(borrower: boolean): boolean {
    // (Both scans are bounded by the cap: idle sockets are open ones.)
    for (const socket of this.idle) {
      const slot = socket[kSlot]!;
      if (slot.open > slot.share) return this.reclaimSocket(socket, slot);
    }
    if (this.reclaimConnection(true)) return true;
    // Sockets above their share, busy now: the waiter waits for one of them to be idle (their
    // calls end within their timeouts) rather than close a socket of an upstream within its
    // share, which would then take another's in turn.
    if (borrower || this.aboveShare > 0) return false;
    const socket = this.idle.values().next().value as PooledSocket | undefined;
    if (socket === undefined) return this.reclaimConnection(false);
    return this.reclaimSocket(socket, socket[kSlot]!);
  }

  /** Arms the sweep of cold borrowed sockets and connections, unless it is armed. */
  private sweepLater(): void {
    if (this.sweepTimer !== undefined) return;
    this.sweepTimer = setTimeout(this.sweepSoon, this.borrowedIdleMs);
    this.sweepTimer.unref();
  }

  /**
   * Closes, oldest first, the idle sockets of agents above their share that went idle before the
   * previous round (idle `borrowedIdleMs` at least), down to each agent's share, and the
   * connections of pools of borrowed undici calls idle since the previous round; armed again
   * while such sockets, idle for less, or such connections remain.
   */
  private sweep(): void {
    const previous = this.round++;
    let again = false;
    // (Both scans are bounded by the cap: idle sockets and connections are open ones. Deleting the
    // current entry of a Set keeps its iteration valid.)
    for (const socket of this.idle) {
      const slot = socket[kSlot]!;
      if (slot.open <= slot.share) continue;
      if (socket[kIdleRound]! < previous && slot.borrower?.refused !== previous) this.reclaimSocket(socket, slot);
      else again = true;
    }
    for (const slot of this.connected) {
      if (!slot.lent) continue;
      const wanted = slot.borrower?.refused === previous;
      for (const socket of slot.sockets as Set<CountedConnection>) {
        const idle = socket[kClient]!.stats.size === 0;
        const written = socket.bytesWritten ?? 0;
        if (idle && !wanted && socket[kIdleWritten] === written) this.closeConnection(socket, slot);
        else {
          socket[kIdleWritten] = idle ? written : -1;
          again = true;
        }
      }
    }
    if (again) this.sweepLater();
    if (this.head !== undefined) this.wake();
    this.offerRoom();
  }

  /** One socket of an agent is no longer counted. */
  private slotClosed(slot: SocketSlot): void {
    if (slot.open-- > slot.share) this.aboveShare -= 1;
  }

  /** Closes an idle socket of an agent, uncounted at once. */
  private reclaimSocket(socket: PooledSocket, slot: SocketSlot): true {
    this.idle.delete(socket);
    slot.idle -= 1;
    socket[kSlot] = undefined;
    this.open -= 1;
    this.slotClosed(slot);
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
