/**
 * A fan-out of calls over ranked candidates: start k more calls on demand, receive outcomes in
 * completion order, abort whatever is still running. It decides nothing; the verify stage
 * drives it. Guarantees: every call gets an AbortSignal; after abort() no outcome is delivered
 * and every running call's signal has fired, so nothing is left running past the request.
 */

export type Outcome<U, R> =
  | { upstream: U; ok: true; value: R; ms: number }
  | { upstream: U; ok: false; error: Error; ms: number };

export class FanOut<U, R> {
  private readonly queue: Outcome<U, R>[] = [];
  private waiter: ((o: Outcome<U, R> | undefined) => void) | undefined;
  private readonly controllers = new Set<AbortController>();
  private next = 0;
  private running = 0;
  private aborted = false;
  /** Upstreams called so far, in the order they were started. */
  readonly called: U[] = [];

  constructor(
    private readonly candidates: readonly U[],
    private readonly call: (upstream: U, signal: AbortSignal) => Promise<R>,
    private readonly onOutcome?: (outcome: Outcome<U, R>) => void,
  ) {}

  get inFlight(): number {
    return this.running;
  }

  get remaining(): number {
    return this.candidates.length - this.next;
  }

  /** Starts up to `count` more calls; returns how many started. */
  launch(count: number): number {
    let started = 0;
    while (started < count && this.next < this.candidates.length && !this.aborted) {
      this.start(this.candidates[this.next++]!);
      started += 1;
    }
    return started;
  }

  private start(upstream: U): void {
    const controller = new AbortController();
    this.controllers.add(controller);
    this.running += 1;
    this.called.push(upstream);
    const began = performance.now();
    const settle = (outcome: Outcome<U, R>) => {
      this.controllers.delete(controller);
      this.running -= 1;
      if (this.aborted) return;
      this.onOutcome?.(outcome);
      if (this.waiter) {
        const w = this.waiter;
        this.waiter = undefined;
        w(outcome);
      } else this.queue.push(outcome);
    };
    this.call(upstream, controller.signal).then(
      (value) => settle({ upstream, ok: true, value, ms: performance.now() - began }),
      (error: unknown) => settle({ upstream, ok: false, error: error instanceof Error ? error : new Error(String(error)), ms: performance.now() - began }),
    );
  }

  /** The next outcome, or undefined when nothing is queued or running (or after abort). */
  nextOutcome(): Promise<Outcome<U, R> | undefined> {
    const queued = this.queue.shift();
    if (queued) return Promise.resolve(queued);
    if (this.running === 0 || this.aborted) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      this.waiter = resolve;
    });
  }

  /** Aborts every running call; pending nextOutcome() resolves to undefined. */
  abort(reason?: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    for (const c of this.controllers) c.abort(reason);
    this.controllers.clear();
    this.queue.length = 0;
    const w = this.waiter;
    this.waiter = undefined;
    w?.(undefined);
  }
}
