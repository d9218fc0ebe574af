/**
 * Bench: run callbacks after an exact delay, for the fake upstreams' fixed service time.
 *
 * Why not setTimeout: node's timers count from the event loop's cached clock, in whole
 * milliseconds. A timer set late in a busy loop turn is backdated and a 2 ms timer fires after
 * anything from 1 to 2.x ms, depending on when requests arrive. Measured in the upstream: the
 * "2 ms" lasted 1.83–1.87 ms on average under http-proxy's bursty traffic and 2.13–2.19 ms
 * under omnigate's smoother traffic, the same build, one run. That is a 0.3 ms difference of
 * the fake upstream's making, about all of the closed-loop gap between the two.
 *
 * Here a worker thread sleeps in Atomics.wait (sub-millisecond timeouts) until the earliest
 * deadline and pings the main thread, which runs what is due. Error: the wake-up latency of a
 * thread plus `earlyMs`, independent of the traffic's pattern.
 *
 * The worker keeps its own copy of the deadlines, fed through a ring in shared memory, so that
 * the main thread wakes it only when a new deadline is earlier than the one it sleeps towards
 * (with one fixed delay: only when it sleeps with nothing to wait for). Before, the main thread
 * re-armed the worker after every ping, a futex wake and a context switch per answer: measured
 * at 6,000 answers/s, about 10 µs of the fake upstream's 28 µs per answer went to timing it.
 */
import { Worker } from 'node:worker_threads';

/** Due callbacks run up to this early, so close deadlines share one wake-up. */
const earlyMs = 0.02;
/** Deadlines the ring holds by default before the worker has copied them to its own list (it does so on every turn). */
const defaultRingSize = 1 << 16;

// Shared memory: Int32 [0] deadlines written (main), [1] deadlines read (worker), [2] 1 once the
// worker may run; Float64 [2] the deadline the worker sleeps towards (Infinity: none), [3…] the ring.
const workerSource = `
const { workerData, parentPort } = require('node:worker_threads');
const { shared, ringSize, earlyMs } = workerData;
const counts = new Int32Array(shared, 0, 3);
const sleepsUntil = new Float64Array(shared, 16, 1);
const ring = new Float64Array(shared, 24, ringSize);
const now = () => performance.timeOrigin + performance.now();
const pending = []; // deadlines, earliest first
let read = 0;
while (Atomics.load(counts, 2) === 0) Atomics.wait(counts, 2, 0);
for (;;) {
  const written = Atomics.load(counts, 0);
  while (read !== written) {
    const at = ring[read & (ringSize - 1)];
    read = (read + 1) | 0;
    let i = pending.length;
    while (i > 0 && pending[i - 1] > at) i -= 1;
    pending.splice(i, 0, at);
  }
  Atomics.store(counts, 1, read);
  if (pending.length === 0) {
    sleepsUntil[0] = Infinity;
    Atomics.wait(counts, 0, written); // until a deadline is written
    continue;
  }
  const wait = pending[0] - now();
  if (wait > 0) {
    sleepsUntil[0] = pending[0];
    Atomics.wait(counts, 0, written, wait); // until then, or until a deadline is written
    continue;
  }
  const limit = now() + earlyMs;
  let due = 0;
  while (due < pending.length && pending[due] <= limit) due += 1;
  pending.splice(0, due);
  parentPort.postMessage(due);
}
`;

const now = () => performance.timeOrigin + performance.now();

export interface PreciseDelay {
  /** Runs `fn` `ms` milliseconds from now. Throws when the ring is full (see `ringSize`). */
  after(ms: number, fn: () => void): void;
  /** Lets a delay made with `held: true` start reading deadlines. */
  release(): void;
  close(): Promise<void>;
}

export interface PreciseDelayOptions {
  /** Deadlines written and not yet read by the worker, at most; a power of two (default 65,536). */
  ringSize?: number;
  /** The worker reads nothing until `release()` (for tests of a full ring). */
  held?: boolean;
}

export function preciseDelay({ ringSize = defaultRingSize, held = false }: PreciseDelayOptions = {}): PreciseDelay {
  if (!Number.isInteger(ringSize) || ringSize < 1 || (ringSize & (ringSize - 1)) !== 0) {
    throw new RangeError(`precise-delay: ringSize must be a power of two, got ${ringSize}`);
  }
  const shared = new SharedArrayBuffer(24 + 8 * ringSize);
  const counts = new Int32Array(shared, 0, 3);
  const sleepsUntil = new Float64Array(shared, 16, 1);
  const ring = new Float64Array(shared, 24, ringSize);
  sleepsUntil[0] = Infinity;
  const release = () => {
    Atomics.store(counts, 2, 1);
    Atomics.notify(counts, 2);
  };
  if (!held) release();
  const worker = new Worker(workerSource, { eval: true, workerData: { shared, ringSize, earlyMs } });
  worker.unref();
  let written = 0;
  /** Pending callbacks, earliest deadline first. */
  const queue: { at: number; fn: () => void }[] = [];
  let head = 0; // queue[head…] are pending; the array is compacted now and then
  worker.on('message', () => {
    const limit = now() + earlyMs;
    let end = head;
    while (end < queue.length && queue[end]!.at <= limit) end += 1;
    const ready = queue.slice(head, end);
    head = end;
    if (head > 1024 && head * 2 > queue.length) {
      queue.splice(0, head);
      head = 0;
    }
    for (const item of ready) item.fn();
  });
  return {
    after(ms, fn) {
      const at = now() + ms;
      if (((written - Atomics.load(counts, 1)) | 0) >= ringSize) {
        throw new Error(`precise-delay: more than ${ringSize} deadlines not yet read by the timer thread`);
      }
      // Deadlines mostly come in order (one fixed delay per upstream): insert from the end.
      let i = queue.length;
      while (i > head && queue[i - 1]!.at > at) i -= 1;
      queue.splice(i, 0, { at, fn });
      ring[written & (ringSize - 1)] = at;
      written = (written + 1) | 0;
      Atomics.store(counts, 0, written);
      // A worker that sleeps towards a later deadline (or none) must look again; one that is
      // awake, or already sleeps towards an earlier one, reads the ring on its next turn: its
      // wait returns at once when the count it read has changed since.
      if (at < sleepsUntil[0]!) Atomics.notify(counts, 0);
    },
    release,
    async close() {
      await worker.terminate();
    },
  };
}
