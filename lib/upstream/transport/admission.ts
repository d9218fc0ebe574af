/**
 * The admission of an upstream's calls, shared by both HTTP clients (http.ts, undici.ts): at
 * most `limit` calls are with the client at once (`upstreams.maxSockets`); the others wait here,
 * oldest first, as a call object and nothing more (no request built yet), in a list linked
 * through the calls themselves (no Set or array entry per call on the hot path).
 */

/** What a call needs to wait in the queue. */
export interface Admitted {
  waiting: boolean;
  qprev: this | undefined;
  qnext: this | undefined;
  /** Hands the call to the client (it was admitted). */
  start(): void;
}

export class Admission<C extends Admitted> {
  closed = false;
  /** Calls with the client now, at most `limit`. */
  active = 0;
  readonly limit: number;
  /** The calls waiting, oldest first. */
  private waitHead: C | undefined = undefined;
  private waitTail: C | undefined = undefined;

  constructor(limit: number) {
    this.limit = limit > 0 ? limit : Infinity;
  }

  /** Starts the call now if fewer than `limit` calls are with the client and none waits, else queues it. */
  admit(call: C): void {
    if (this.active < this.limit && !this.waitHead) {
      this.active += 1;
      call.start();
      return;
    }
    call.waiting = true;
    call.qprev = this.waitTail;
    if (this.waitTail) this.waitTail.qnext = call;
    else this.waitHead = call;
    this.waitTail = call;
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
   * A call with the client ended: the oldest waiting call starts in its place (on node:http its
   * request waits in the agent until the ended call's socket is free, or for a new one).
   */
  release(): void {
    this.active -= 1;
    if (this.closed) return; // close() fails the waiting calls next
    while (this.active < this.limit && this.waitHead) {
      const next = this.waitHead;
      this.unqueue(next);
      this.active += 1;
      next.start();
    }
  }
}
