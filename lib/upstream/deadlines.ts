/**
 * Deadlines held in shared lists instead of a `setTimeout` each: one list per duration (a
 * request's deadline, an upstream call's timeout), in the order they fall due, and one unref'd
 * timer per list for its first. Deadlines of one duration are added in the order they fall due,
 * so an add is an append and a removal an unlink, with no timer made or cleared: the list's
 * timer, set for the first deadline, finds what is due when it fires and is set again for the
 * next. A deadline ends on or after its time (the timer is never trusted to be on time: what is
 * not due yet when it fires waits on), and no timer keeps the process alive.
 *
 * The items are the objects that own the deadlines (their fields below: no entry object per
 * deadline).
 */

/** What a list holds: an object with its deadline's fields and what to do when it passes. */
export interface Due {
  /** When it falls due (performance.now() ms). */
  dueAt: number;
  duePrev: Due | undefined;
  dueNext: Due | undefined;
  /** The list it is in; undefined once removed or expired. */
  dueList: DeadlineList | undefined;
  /** Its deadline passed (it has left the list). */
  expire(): void;
}

export class DeadlineList {
  private first: Due | undefined = undefined;
  private last: Due | undefined = undefined;
  private timer: NodeJS.Timeout | undefined = undefined;
  /** When the timer is set to fire (Infinity: no timer). */
  private timerAt = Infinity;

  constructor(readonly ms: number) {}

  /** `item` falls due `ms` (the list's duration) from now. */
  add(item: Due): void {
    const at = performance.now() + this.ms;
    item.dueAt = at;
    item.dueList = this;
    // From the end: deadlines of one duration come in order, so this is an append.
    let before = this.last;
    while (before !== undefined && before.dueAt > at) before = before.duePrev;
    const after = before === undefined ? this.first : before.dueNext;
    item.duePrev = before;
    item.dueNext = after;
    if (before === undefined) this.first = item;
    else before.dueNext = item;
    if (after === undefined) this.last = item;
    else after.duePrev = item;
    if (at < this.timerAt) this.arm(at);
  }

  /** `item` no longer falls due (its owner ended first); nothing when it is in no list. */
  static remove(item: Due): void {
    const list = item.dueList;
    if (list !== undefined) list.unlink(item);
  }

  private unlink(item: Due): void {
    const { duePrev: prev, dueNext: next } = item;
    if (prev === undefined) this.first = next;
    else prev.dueNext = next;
    if (next === undefined) this.last = prev;
    else next.duePrev = prev;
    item.duePrev = item.dueNext = item.dueList = undefined;
  }

  private arm(at: number): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timerAt = at;
    // (at most node's longest timer: one past it would fire at once, and again, while nothing is due)
    this.timer = setTimeout(fire, Math.min(maxTimerMs, Math.max(1, Math.ceil(at - performance.now()))), this);
    this.timer.unref();
  }

  /** The timer fired: what is due expires, in order; the timer is set again for what is left. */
  expireDue(): void {
    this.timer = undefined;
    this.timerAt = Infinity;
    try {
      const now = performance.now();
      for (let item = this.first; item !== undefined && item.dueAt <= now; item = this.first) {
        this.unlink(item);
        item.expire();
      }
    } finally {
      const first = this.first;
      if (first !== undefined) {
        if (this.timer === undefined) this.arm(first.dueAt);
      } else if (lists.get(this.ms) === this) {
        // An empty list is dropped (made again at its next deadline): durations never pile up.
        lists.delete(this.ms);
      }
    }
  }
}

const maxTimerMs = 2 ** 31 - 1;

function fire(list: DeadlineList): void {
  list.expireDue();
}

const lists = new Map<number, DeadlineList>();

/** The process's list of deadlines of `ms` milliseconds. */
export function deadlineList(ms: number): DeadlineList {
  let list = lists.get(ms);
  if (list === undefined) lists.set(ms, (list = new DeadlineList(ms)));
  return list;
}
