/**
 * A fan-out of calls over ranked candidates: start k more calls on demand, receive outcomes in
 * completion order, abort whatever is still running. It decides nothing; the agreement loop
 * (lib/verify/agreement.ts) drives it. Guarantees: every call gets a cancel signal; after abort()
 * no outcome is delivered and every running call's signal has fired, so nothing is left running
 * past the request. Calls are only ever aborted together, so they share one signal.
 *
 * Outcomes are pushed to one listener (callbacks, no promise per outcome: this is the hot path
 * of every request); the listener hears `undefined` once, when the fan-out is aborted.
 */
import { Cancellation, type CallSink, type CancelSignal } from './transport/contract.js';

export type Outcome<U, R> =
  | { upstream: U; ok: true; value: R; ms: number }
  | { upstream: U; ok: false; error: Error; ms: number };

export type OutcomeListener<U, R> = (outcome: Outcome<U, R> | undefined) => void;

/**
 * How the fan-out makes a call: a function whose promise settles with its outcome, or an object
 * whose `callInto` tells the outcome to the sink it is handed (no promise, no reaction closures
 * per call: the hot path).
 */
export type CallOf<U, R> = ((upstream: U, signal: CancelSignal) => Promise<R>) | { callInto(upstream: U, signal: CancelSignal, sink: CallSink<R>): void };

/**
 * A call still running: who, and since when (on the fan-out's clock), and the sink its outcome
 * is told to. The calls in flight are a list linked through these entries, in the order they
 * started: no Set (its table made and shrunk again) per request.
 */
class Running<U, R> implements CallSink<R> {
  prev: Running<U, R> | undefined;
  next: Running<U, R> | undefined = undefined;
  settled = false;

  constructor(
    readonly fanout: FanOut<U, R>,
    readonly upstream: U,
    readonly began: number,
    last: Running<U, R> | undefined,
  ) {
    this.prev = last;
  }

  answered(value: R): void {
    this.fanout.settle(this, true, value, undefined);
  }

  failed(error: unknown): void {
    this.fanout.settle(this, false, undefined, error instanceof Error ? error : new Error(String(error)));
  }
}

const performanceNow = () => performance.now();

/** An outcome told while its call was being started, handed on once `start` has returned. */
function settleLater<U, R>(entry: Running<U, R>, ok: boolean, value: R | undefined, error: Error | undefined): void {
  entry.fanout.settle(entry, ok, value, error, true);
}

export class FanOut<U, R> {
  private readonly cancellation = new Cancellation();
  private queue: Outcome<U, R>[] = [];
  private listener: OutcomeListener<U, R> | undefined;
  private candidates: readonly U[];
  private next = 0;
  /** The calls in flight (first and last of the list), and how many. */
  private first: Running<U, R> | undefined = undefined;
  private last: Running<U, R> | undefined = undefined;
  private running = 0;
  private aborted = false;
  /** Whether a call is being started (an outcome told meanwhile waits for a microtask). */
  private starting = false;
  /** Upstreams called so far, in the order they were started. */
  readonly called: U[] = [];

  /**
   * `expectedMs`, when given, orders the calls of one launch: the one expected to take longest
   * starts first. The answer waits for the slowest of the batch, so its clock should start
   * first (each start is a socket write, tens of µs); which upstreams are called is unchanged.
   * `now` is the clock the calls' durations are measured with (ms; tests inject their own).
   * `later`, when given, is read at each launch after the first: the candidates left that it
   * names (an upstream put on back-off since the candidates were ranked) move behind the others,
   * so that they are called only when nothing else is left.
   */
  constructor(
    candidates: readonly U[],
    private readonly call: CallOf<U, R>,
    private readonly expectedMs?: (upstream: U) => number | undefined,
    private readonly now: () => number = performanceNow,
    private readonly later?: (upstream: U) => boolean,
  ) {
    this.candidates = candidates;
  }

  get inFlight(): number {
    return this.running;
  }

  get remaining(): number {
    return this.candidates.length - this.next;
  }

  /** Starts up to `count` more calls; returns how many started. */
  launch(count: number): number {
    if (this.aborted) return 0;
    if (this.later !== undefined && this.called.length > 0) this.deferLater(this.later);
    const end = Math.min(this.next + Math.max(0, count), this.candidates.length);
    if (end - this.next <= 1) {
      if (end === this.next) return 0;
      this.start(this.candidates[this.next++]!);
      return 1;
    }
    const batch = this.candidates.slice(this.next, end);
    this.next = end;
    const expected = this.expectedMs;
    if (expected) slowestFirst(batch, expected);
    for (const upstream of batch) this.start(upstream);
    return batch.length;
  }

  /**
   * Puts upstreams back at the end of the candidates, to be called again by a later launch (an
   * answer that could not count yet, e.g. from an upstream that had not reached the pinned block).
   */
  requeue(upstreams: readonly U[]): void {
    if (this.aborted || upstreams.length === 0) return;
    this.candidates = [...this.candidates.slice(this.next), ...upstreams];
    this.next = 0;
  }

  /** The candidates left, those `later` names behind the others (each side in its order), when both kinds are left. */
  private deferLater(later: (upstream: U) => boolean): void {
    const { candidates, next } = this;
    let first = -1;
    for (let i = next; i < candidates.length; i++) {
      if (later(candidates[i]!)) {
        first = i;
        break;
      }
    }
    if (first < 0) return;
    const kept: U[] = [];
    const deferred: U[] = [];
    for (let i = next; i < candidates.length; i++) (i >= first && later(candidates[i]!) ? deferred : kept).push(candidates[i]!);
    if (kept.length === 0) return;
    this.candidates = kept.concat(deferred);
    this.next = 0;
  }

  private start(upstream: U): void {
    const last = this.last;
    const entry = new Running<U, R>(this, upstream, this.now(), last);
    if (last === undefined) this.first = entry;
    else last.next = entry;
    this.last = entry;
    this.running += 1;
    this.called.push(upstream);
    const call = this.call;
    if (typeof call === 'function') {
      call(upstream, this.cancellation).then(
        (value) => entry.answered(value),
        (error: unknown) => entry.failed(error),
      );
      return;
    }
    // An outcome told before callInto returns (a call refused at once) is handed on from a
    // microtask, as a promise's would be: the loop never hears of a call while it starts one.
    this.starting = true;
    try {
      call.callInto(upstream, this.cancellation, entry);
    } finally {
      this.starting = false;
    }
  }

  /** A call's outcome (its entry's sink); the first one told counts, any later one is ignored. */
  settle(entry: Running<U, R>, ok: boolean, value: R | undefined, error: Error | undefined, deferred = false): void {
    if (entry.settled) return;
    if (this.starting && !deferred) {
      queueMicrotask(() => settleLater(entry, ok, value, error));
      return;
    }
    entry.settled = true;
    const ms = this.now() - entry.began;
    this.unlink(entry);
    if (this.aborted) return;
    const upstream = entry.upstream;
    const outcome: Outcome<U, R> = ok ? { upstream, ok: true, value: value as R, ms } : { upstream, ok: false, error: error!, ms };
    if (this.listener) this.listener(outcome);
    else this.queue.push(outcome);
  }

  private unlink(entry: Running<U, R>): void {
    const { prev, next } = entry;
    if (prev === undefined) this.first = next;
    else prev.next = next;
    if (next === undefined) this.last = prev;
    else next.prev = prev;
    entry.prev = entry.next = undefined;
    this.running -= 1;
  }

  /**
   * Sets the one listener: it hears the outcomes settled so far at once, then each as it
   * settles, and `undefined` when the fan-out is aborted (at once if it already was).
   */
  onOutcome(listener: OutcomeListener<U, R>): void {
    if (this.listener) throw new Error('FanOut: a listener is already set');
    this.listener = listener;
    const queued = this.queue;
    this.queue = [];
    for (const outcome of queued) {
      if (this.aborted) break;
      listener(outcome);
    }
    if (this.aborted && queued.length === 0) listener(undefined);
  }

  /**
   * Aborts every running call; the listener hears `undefined`. Later calls do nothing.
   * `abandoned`, when given, hears each call still running, with how long it had run (ms).
   */
  abort(reason?: unknown, abandoned?: (upstream: U, ms: number) => void): void {
    if (this.aborted) return;
    this.aborted = true;
    if (abandoned && this.running > 0) {
      const now = this.now();
      for (let r = this.first; r !== undefined; r = r.next) abandoned(r.upstream, now - r.began);
    }
    this.cancellation.abort(reason);
    this.queue.length = 0;
    this.listener?.(undefined);
  }
}

/**
 * Orders a launch's batch by expected latency, the longest first, equal ones in their order (as
 * a stable sort does). An insertion sort in place: a batch is a few upstreams, and
 * Array.prototype.sort would make its comparator's closures and a work array per launch.
 */
function slowestFirst<U>(batch: U[], expected: (upstream: U) => number | undefined): void {
  for (let i = 1; i < batch.length; i++) {
    const u = batch[i]!;
    const ms = expected(u) ?? 0;
    let j = i;
    // (a comparison that is not true, NaN's included, keeps the order, as sort's comparator of 0 or NaN does)
    while (j > 0 && (expected(batch[j - 1]!) ?? 0) < ms) {
      batch[j] = batch[j - 1]!;
      j -= 1;
    }
    batch[j] = u;
  }
}
