/**
 * One load scenario with autocannon's programmatic API: a warm-up (discarded), then a fixed
 * duration at a fixed number of connections. Latency percentiles are computed here from every
 * 2xx response time at full (sub-millisecond) precision: autocannon's own histogram counts whole
 * milliseconds, too coarse for a 0.5 ms budget.
 */
import { createRequire } from 'node:module';

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
  /** Awaited between the warm-up and the measured run (e.g. to read a process's CPU time). */
  onMeasureStart?: () => Promise<void>;
  /** Called every 50 ms while measuring (e.g. to sample a process's RSS). */
  sample?: () => void;
}

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

function once(options: LoadOptions, seconds: number, record: boolean): Promise<{ result: AutocannonResult; times: Float64Array; n: number; bytes: number; wallS: number }> {
  return new Promise((resolve, reject) => {
    let times = new Float64Array(1 << 16);
    let n = 0;
    let bytes = 0;
    const started = performance.now();
    const timer = options.sample && record ? setInterval(options.sample, 50) : undefined;
    const instance = autocannon(
      {
        url: options.url,
        method: options.method ?? 'POST',
        headers: options.body ? { 'content-type': 'application/json' } : {},
        ...(options.body ? { body: options.body } : {}),
        connections: options.connections,
        duration: seconds,
        timeout: 30,
      },
      (err, result) => {
        if (timer) clearInterval(timer);
        if (err) reject(err);
        else resolve({ result, times, n, bytes, wallS: (performance.now() - started) / 1000 });
      },
    );
    if (record) {
      instance.on('response', (_c, status, size, ms) => {
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
  if (options.warmupSeconds > 0) await once(options, options.warmupSeconds, false);
  await options.onMeasureStart?.();
  const { result, times, n, bytes } = await once(options, options.seconds, true);
  const sorted = times.subarray(0, n).sort();
  return {
    connections: options.connections,
    seconds: options.seconds,
    ok: n,
    sent: result.requests.sent,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
    rps: n / options.seconds,
    p50: at(sorted, 0.5),
    p90: at(sorted, 0.9),
    p99: at(sorted, 0.99),
    max: at(sorted, 1),
    bytesPerResponse: n > 0 ? bytes / n : 0,
  };
}
