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
 */
import { Worker } from 'node:worker_threads';

/** Due callbacks run up to this early, so close deadlines share one wake-up. */
const earlyMs = 0.02;

const workerSource = `
const { workerData, parentPort } = require('node:worker_threads');
const gen = new Int32Array(workerData, 0, 1);
const next = new Float64Array(workerData, 8, 1);
const now = () => performance.timeOrigin + performance.now();
for (;;) {
  const g = Atomics.load(gen, 0);
  const deadline = next[0];
  if (deadline === 0) { Atomics.wait(gen, 0, g); continue; }
  const wait = deadline - now();
  if (wait > 0) { Atomics.wait(gen, 0, g, wait); continue; }
  parentPort.postMessage(0);
  Atomics.wait(gen, 0, g); // until the main thread arms the next deadline
}
`;

const now = () => performance.timeOrigin + performance.now();

export interface PreciseDelay {
  /** Runs `fn` `ms` milliseconds from now. */
  after(ms: number, fn: () => void): void;
  close(): Promise<void>;
}

export function preciseDelay(): PreciseDelay {
  const shared = new SharedArrayBuffer(16);
  const gen = new Int32Array(shared, 0, 1);
  const next = new Float64Array(shared, 8, 1);
  const worker = new Worker(workerSource, { eval: true, workerData: shared });
  worker.unref();
  /** Pending callbacks, earliest deadline first. */
  const queue: { at: number; fn: () => void }[] = [];
  const arm = (at: number) => {
    next[0] = at;
    Atomics.add(gen, 0, 1);
    Atomics.notify(gen, 0);
  };
  worker.on('message', () => {
    const limit = now() + earlyMs;
    let due = 0;
    while (due < queue.length && queue[due]!.at <= limit) due += 1;
    const ready = queue.splice(0, due);
    if (queue.length > 0) arm(queue[0]!.at);
    else arm(0);
    for (const item of ready) item.fn();
  });
  return {
    after(ms, fn) {
      const at = now() + ms;
      // Deadlines mostly come in order (one fixed delay per upstream): insert from the end.
      let i = queue.length;
      while (i > 0 && queue[i - 1]!.at > at) i -= 1;
      queue.splice(i, 0, { at, fn });
      if (i === 0) arm(at);
    },
    async close() {
      await worker.terminate();
    },
  };
}
