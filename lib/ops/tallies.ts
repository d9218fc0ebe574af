/**
 * The per-request metrics as plain tallies: a request or an upstream call adds to numbers held
 * here (a few map lookups by reference or short string, no label set hashed), and prom-client
 * reads them only when /metrics is scraped. Shown exactly as prom-client's own counter and
 * histogram would show them (same names, labels, label order and buckets).
 */
import type { Upstream } from '../upstream/registry.js';

/** A value as prom-client's registry reads it from a metric's get(). */
interface Sample {
  metricName?: string;
  labels: Record<string, string | number>;
  value: number;
}

/** What prom-client's registry reads at scrape time (its own metrics' get() returns the same). */
export interface ScrapedMetric {
  readonly name: string;
  readonly help: string;
  readonly type: 'counter' | 'histogram';
  /** How a cluster's workers' values combine (prom-client's AggregatorRegistry). */
  readonly aggregator: 'sum';
  get(): Promise<{ name: string; help: string; type: 'counter' | 'histogram'; values: Sample[]; aggregator: 'sum' }>;
  reset(): void;
}

/** What an upstream call's outcome was, as the latency histogram's `outcome` label says it. */
export type CallOutcome = 'vote' | 'failure' | 'refusal';
const outcomes: readonly CallOutcome[] = ['vote', 'failure', 'refusal'];
const outcomeIndex: Readonly<Record<CallOutcome, number>> = { vote: 0, failure: 1, refusal: 2 };

/** The latency histogram's upper bounds, in seconds. */
export const latencyBuckets: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** One upstream's calls: per outcome, a count per bucket (not cumulative; +Inf last) and the sum of seconds. */
class CallSeconds {
  readonly counts = new Float64Array(outcomes.length * (latencyBuckets.length + 1));
  readonly sums = new Float64Array(outcomes.length);

  observe(outcome: number, seconds: number): void {
    let b = 0;
    while (b < latencyBuckets.length && seconds > latencyBuckets[b]!) b++;
    this.counts[outcome * (latencyBuckets.length + 1) + b]! += 1;
    this.sums[outcome]! += seconds;
  }
}

/**
 * `omnigate_upstream_request_duration_seconds`: upstream call latency by chain, upstream and
 * outcome. A metric object prom-client's registry reads with get() at scrape time.
 */
export class UpstreamLatency implements ScrapedMetric {
  readonly name = 'omnigate_upstream_request_duration_seconds';
  readonly help = 'Upstream call latency, by chain, upstream (redacted) and outcome (vote, failure, or refusal: the request refused as too large).';
  readonly type = 'histogram' as const;
  readonly aggregator = 'sum' as const;
  private readonly byUpstream = new Map<Upstream, CallSeconds>();

  observe(u: Upstream, outcome: CallOutcome, seconds: number): void {
    let record = this.byUpstream.get(u);
    if (record === undefined) this.byUpstream.set(u, (record = new CallSeconds()));
    record.observe(outcomeIndex[outcome], seconds);
  }

  get(): ReturnType<ScrapedMetric['get']> {
    const values: Sample[] = [];
    const width = latencyBuckets.length + 1;
    for (const [u, record] of this.byUpstream) {
      for (let o = 0; o < outcomes.length; o++) {
        let count = 0;
        for (let b = 0; b < width; b++) count += record.counts[o * width + b]!;
        if (count === 0) continue;
        const labels = { chain: u.chainId, upstream: u.label, outcome: outcomes[o]! };
        let cumulative = 0;
        for (let b = 0; b < width; b++) {
          cumulative += record.counts[o * width + b]!;
          const le = b < latencyBuckets.length ? latencyBuckets[b]! : '+Inf';
          values.push({ metricName: `${this.name}_bucket`, labels: { le, ...labels }, value: cumulative });
        }
        values.push({ metricName: `${this.name}_sum`, labels, value: record.sums[o]! });
        values.push({ metricName: `${this.name}_count`, labels, value: count });
      }
    }
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator });
  }

  reset(): void {
    this.byUpstream.clear();
  }
}

/** `omnigate_requests_total`: JSON-RPC requests answered, by chain, method and outcome (nested maps, no key built per request). */
export class RequestCount implements ScrapedMetric {
  readonly name = 'omnigate_requests_total';
  readonly help = 'JSON-RPC requests answered, by chain, method and outcome (ok, or the error code such as OMNI_ERR_NO_QUORUM).';
  readonly type = 'counter' as const;
  readonly aggregator = 'sum' as const;
  private readonly counts = new Map<string, Map<string, Map<string, number>>>();

  inc(chain: string, method: string, outcome: string): void {
    let byMethod = this.counts.get(chain);
    if (byMethod === undefined) this.counts.set(chain, (byMethod = new Map()));
    let byOutcome = byMethod.get(method);
    if (byOutcome === undefined) byMethod.set(method, (byOutcome = new Map()));
    byOutcome.set(outcome, (byOutcome.get(outcome) ?? 0) + 1);
  }

  get(): ReturnType<ScrapedMetric['get']> {
    const values: Sample[] = [];
    for (const [chain, byMethod] of this.counts) {
      for (const [method, byOutcome] of byMethod) {
        for (const [outcome, value] of byOutcome) values.push({ labels: { chain, method, outcome }, value });
      }
    }
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator });
  }

  reset(): void {
    this.counts.clear();
  }
}
