/**
 * One load scenario with autocannon's programmatic API: a warm-up (discarded), then a fixed
 * duration at a fixed number of connections. Latency percentiles are computed here from every
 * 2xx response time at full (sub-millisecond) precision: autocannon's own histogram counts whole
 * milliseconds, too coarse for a 0.5 ms budget.
 */
import { createRequire } from 'node:module';
import { parsePayload } from '../../lib/jsonrpc/parse.js';
import { createHttpTransport } from './client/pool.js';
import { Cancellation } from '../../lib/upstream/transport/contract.js';

const require = createRequire(import.meta.url);

interface AutocannonResult {
  requests: { total: number; sent: number; average: number };
  non2xx: number;
  errors: number;
  timeouts: number;
  duration: number;
}
interface Instance {
  on(event: 'response', fn: (client: unknown, status: number, bytes: number, ms: number) => void): void;
  stop(): void;
}
type Autocannon = (opts: Record<string, unknown>, cb: (err: Error | null, result: AutocannonResult) => void) => Instance;
const autocannon = require('autocannon') as Autocannon;

export interface LoadOptions {
  url: string;
  body?: string;
  method?: 'GET' | 'POST';
  connections: number;
  seconds: number;
  warmupSeconds: number;
  /**
   * Offered load in requests/s, spread evenly (open loop, runFixedRate below); unset: a closed
   * loop, each connection sending its next request when the answer came (autocannon).
   */
  rate?: number;
  /**
   * Open loop only: each request goes to every one of these URLs at once (`url` is ignored) and
   * counts as answered when the last of them answers: a client doing N-of-N itself.
   */
  fanOut?: string[];
  /** Awaited between the warm-up and the measured run (e.g. to read a process's CPU time). */
  onMeasureStart?: () => Promise<void>;
  /** Called every 50 ms while measuring (e.g. to sample a process's RSS). */
  sample?: () => void;
  /**
   * Smoke mode: a run that got nothing by its end, no answer and no error (a short run on a machine
   * busy with the test suite can end before the first answer), goes on until its first answer or
   * error, for at most UNTIL_ANSWER_MAX_S more; called once when it does, with its planned length.
   * Its rate is then counted over the time it took. Unset (a full run): no answer is no answer.
   */
  untilAnswer?: (seconds: number) => void;
}

/** How long past its end a smoke run (LoadOptions.untilAnswer) waits for its first answer at most. */
export const UNTIL_ANSWER_MAX_S = 60;

export interface LoadResult {
  connections: number;
  seconds: number;
  ok: number;
  sent: number;
  non2xx: number;
  errors: number;
  rps: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  bytesPerResponse: number;
}

function once(options: LoadOptions, seconds: number, record: boolean): Promise<{ result: AutocannonResult; times: Float64Array; n: number; bytes: number; wallS: number; extended: boolean }> {
  return new Promise((resolve, reject) => {
    let times = new Float64Array(1 << 16);
    let n = 0;
    let bytes = 0;
    // (answers of any status and request errors: what ends a run extended by untilAnswer)
    let settled = 0;
    let extended = false;
    const started = performance.now();
    const timer = options.sample && record ? setInterval(options.sample, 50) : undefined;
    const until = record && options.untilAnswer ? options.untilAnswer : undefined;
    const instance = autocannon(
      {
        url: options.url,
        method: options.method ?? 'POST',
        headers: options.body ? { 'content-type': 'application/json' } : {},
        ...(options.body ? { body: options.body } : {}),
        connections: options.connections,
        // (untilAnswer: stopped below, once the run has its length and an answer)
        duration: until ? seconds + UNTIL_ANSWER_MAX_S : seconds,
        // autocannon stops on its sampling tick (every second by default): a run shorter than a
        // second (a smoke run's) ticks every 50 ms, so that it ends when it should.
        ...(seconds < 1 ? { sampleInt: 50 } : {}),
        timeout: 30,
      },
      (err, result) => {
        if (timer) clearInterval(timer);
        if (stopper) clearInterval(stopper);
        if (err) reject(err);
        else resolve({ result, times, n, bytes, wallS: (performance.now() - started) / 1000, extended });
      },
    );
    const stopper = until
      ? setInterval(() => {
          if (performance.now() - started < seconds * 1000) return;
          if (settled === 0) {
            if (!extended) until(seconds);
            extended = true;
            return;
          }
          clearInterval(stopper);
          instance.stop();
        }, 10)
      : undefined;
    if (until) (instance as unknown as { on(event: 'reqError', fn: () => void): void }).on('reqError', () => (settled += 1));
    if (record) {
      instance.on('response', (_c, status, size, ms) => {
        settled += 1;
        if (status < 200 || status >= 300) return;
        if (n === times.length) {
          const grown = new Float64Array(times.length * 2);
          grown.set(times);
          times = grown;
        }
        times[n++] = ms;
        bytes += size;
      });
    }
  });
}

const at = (sorted: Float64Array, q: number) => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!);

export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  if (options.rate) return runFixedRate(options, options.rate);
  if (options.warmupSeconds > 0) await once(options, options.warmupSeconds, false);
  await options.onMeasureStart?.();
  const { result, times, n, bytes, wallS, extended } = await once(options, options.seconds, true);
  return summary(options, times.subarray(0, n), result.requests.sent, result.non2xx, result.errors + result.timeouts, bytes, extended ? wallS : undefined);
}

/** `extendedS`: the length of a run extended by untilAnswer, over which its rate is counted. */
function summary(options: LoadOptions, times: Float64Array, sent: number, non2xx: number, errors: number, bytes: number, extendedS?: number): LoadResult {
  const n = times.length;
  const seconds = extendedS ?? options.seconds;
  const sorted = times.sort();
  return {
    connections: options.connections,
    seconds,
    ok: n,
    sent,
    non2xx,
    errors,
    rps: n / seconds,
    p50: at(sorted, 0.5),
    p90: at(sorted, 0.9),
    p99: at(sorted, 0.99),
    max: at(sorted, 1),
    bytesPerResponse: n > 0 ? bytes / n : 0,
  };
}

/**
 * Open-loop load: requests leave on an even schedule (checked every millisecond) over a keep-alive
 * pool of `connections`, whether or not earlier answers came back. The schedule never waits for
 * an answer, so a server's stall is charged to every request it delayed (they wait in the pool
 * for a connection, or in the server): no coordinated omission. autocannon's own rate option
 * sends each second's requests in one burst, which measures the burst's queueing instead.
 *
 * The client is the raw-socket HTTP/1.1 pool omnigate used for upstreams before issue 18 (client/pool.ts, POST only): this
 * process spent 26–45 µs per request with it at 4,000–8,000 req/s, ticker included. undici's
 * Pool.request, used here before, cost 84–91 µs per request at 4,000 req/s, which filled the
 * core this process shares with the fake upstreams before any server under test was busy, and it
 * holds requests on reused sockets until the check phase (see client/pool.ts), which adds to
 * every latency measured.
 */
async function runFixedRate(options: LoadOptions, rate: number): Promise<LoadResult> {
  if (options.method === 'GET') throw new Error('fixed-rate load sends POST requests only');
  const pools = (options.fanOut ?? [options.url]).map((url) => createHttpTransport(url, { connections: options.connections }));
  const payload = parsePayload(Buffer.from(options.body ?? ''), { maxBatchSize: 1 });
  const never = new Cancellation();
  const run = (seconds: number, record: boolean) =>
    new Promise<{ times: number[]; sent: number; non2xx: number; errors: number; bytes: number }>((resolve) => {
      const times: number[] = [];
      let sent = 0, non2xx = 0, errors = 0, bytes = 0, pending = 0;
      const gap = 1000 / rate;
      const start = performance.now();
      const end = start + seconds * 1000;
      let due = start;
      let ticking = true;
      const done = () => {
        if (!ticking && pending === 0) resolve({ times, sent, non2xx, errors, bytes });
      };
      // Latency counts from when the request is handed to the pool (queueing there for a free
      // connection included), not from its slot on the schedule: the 1 ms ticker hands requests
      // over up to 1 ms after their slot, on average 0.5 ms, the generator's own lag, which would
      // be added to every path alike and flatten every ratio taken between them.
      const fire = () => {
        const at = performance.now();
        sent += 1;
        pending += 1;
        const call = { payload, requestId: `bench-${sent}`, signal: never, timeoutMs: 30_000, maxBytes: 64 * 2 ** 20 };
        Promise.all(pools.map((pool) => pool.send(call)))
          .then((answers) => {
            if (record) {
              times.push(performance.now() - at);
              bytes += answers[0]!.body.length;
            }
          })
          // The transport fails a call on HTTP ≥ 300 as on any other error.
          .catch((err: { kind?: string }) => {
            if (err.kind === 'http-status') non2xx += 1;
            else errors += 1;
          })
          .finally(() => { pending -= 1; done(); });
      };
      const timer = setInterval(() => {
        const now = performance.now();
        while (due <= now && due < end) {
          fire();
          due += gap;
        }
        if (due >= end) {
          clearInterval(timer);
          ticking = false;
          done();
        }
      }, 1);
    });
  try {
    if (options.warmupSeconds > 0) await run(options.warmupSeconds, false);
    await options.onMeasureStart?.();
    const r = await run(options.seconds, true);
    return summary(options, Float64Array.from(r.times), r.sent, r.non2xx, r.errors, r.bytes);
  } finally {
    await Promise.all(pools.map((pool) => pool.close()));
  }
}
