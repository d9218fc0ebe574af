/**
 * The admission of an upstream's calls, shared by both HTTP clients (http.ts, undici.ts): at
 * most `limit` calls are with the client at once (`upstreams.maxSockets`); the others wait here,
 * oldest first, as a call object and nothing more (no request built yet), in a list linked
 * through the calls themselves (no Set or array entry per call on the hot path).
 *
 * Under the gateway's socket cap an upstream has a guaranteed `share` of it: calls up to the
 * share are admitted as room allows; a call above the share only with room the cap lends
 * (`Lender`, sockets.ts), given back when the call ends. An upstream thus borrows what the cap
 * does not use, and stops borrowing as soon as another upstream waits for a socket; the sockets
 * its borrowed calls leave idle are closed once cold (sockets.ts), so that the cap may lend
 * their room to another upstream, but not while its calls are refused lent room (`refused`).
 * An upstream refused room is woken by its own calls' ends, and by the cap when another upstream
 * frees room (its lent calls end, its sockets close or are swept: `wantRoom`, `resume`).
 */

/** What a call needs to wait in the queue. */
export interface Admitted {
  waiting: boolean;
  qprev: this | undefined;
  qnext: this | undefined;
  /** Whether it was admitted above its upstream's share, on room lent by the cap. */
  borrowed: boolean;
  /** Hands the call to the client (it was admitted). */
  start(): void;
}

/** The cap that lends room above an upstream's share (sockets.ts SocketPool). */
export interface Lender {
  /** Its round, noted when room is refused (its sweep of cold borrowed sockets counts them). */
  readonly round: number;
  /** One call's room above its upstream's share: true when lent. */
  lend(): boolean;
  /** A call admitted on lent room ended. */
  giveBack(): void;
  /** One of the upstream's calls was refused room: `resume` it when another upstream frees some. */
  wantRoom(admission: { readonly refused: number; resume(): void }): void;
}

export class Admission<C extends Admitted> {
  closed = false;
  /** Calls with the client now, at most `limit`. */
  active = 0;
  readonly limit: number;
  /** The calls with the client the upstream may always have (its share of the cap): `limit` without a lender. */
  readonly share: number;
  /** Calls with the client within the share (the others are on lent room). */
  private inShare = 0;
  /** The cap that lends room above the share (none: no call beyond the share). */
  private readonly lender: Lender | undefined;
  /**
   * The lender's round when a call was last refused lent room (-1: never): while calls ask for
   * room, the sockets the upstream borrowed are not cold (it takes them again as soon as room is lent).
   */
  refused = -1;
  /** The calls waiting, oldest first. */
  private waitHead: C | undefined = undefined;
  private waitTail: C | undefined = undefined;

  constructor(limit: number, share?: number, lender?: Lender) {
    this.limit = limit > 0 ? limit : Infinity;
    this.share = lender === undefined || share === undefined ? this.limit : Math.min(this.limit, share);
    this.lender = this.share < this.limit ? lender : undefined;
  }

  /** Starts the call now if it may go (within the share, or on lent room) and none waits, else queues it. */
  admit(call: C): void {
    if (this.waitHead === undefined && this.take(call)) {
      call.start();
      return;
    }
    call.waiting = true;
    call.qprev = this.waitTail;
    if (this.waitTail) this.waitTail.qnext = call;
    else this.waitHead = call;
    this.waitTail = call;
  }

  /** Counts the call in when it may go now: within the share, or above it on room the cap lends. */
  private take(call: C): boolean {
    if (this.inShare < this.share) {
      this.inShare += 1;
      this.active += 1;
      call.borrowed = false;
      return true;
    }
    if (this.lender !== undefined && this.active < this.limit) {
      if (this.lender.lend()) {
        this.active += 1;
        call.borrowed = true;
        return true;
      }
      this.refused = this.lender.round;
      this.lender.wantRoom(this);
    }
    return false;
  }

  /** Takes a call out of the queue (it started, or it ended while it waited). */
  unqueue(call: C): void {
    const { qprev, qnext } = call;
    if (qprev) qprev.qnext = qnext;
    else this.waitHead = qnext;
    if (qnext) qnext.qprev = qprev;
    else this.waitTail = qprev;
    call.qprev = call.qnext = undefined;
    call.waiting = false;
  }

  /**
   * A call with the client ended: its room is given back (to the share, or to the cap when it
   * was lent) and the oldest waiting calls start while they may (on node:http a request waits in
   * the agent until the ended call's socket is free, or for a new one).
   */
  release(call: C): void {
    this.active -= 1;
    if (call.borrowed) this.lender!.giveBack();
    else this.inShare -= 1;
    this.resume();
  }

  /** Starts the oldest waiting calls while they may go (room given back, or freed by another upstream). */
  resume(): void {
    if (this.closed) return; // close() fails the waiting calls next
    for (let next = this.waitHead; next !== undefined && this.take(next); next = this.waitHead) {
      this.unqueue(next);
      next.start();
    }
  }
}
