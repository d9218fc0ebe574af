/**
 * Measured quality of each upstream, from real traffic and probes. Per upstream and
 * per method class (`logs`: eth_getLogs, `call`: eth_call and gas estimates, `read`: the rest):
 * - the last `recentSamples` (3) latencies (their median is what the ranking reads: two slow calls
 *   demote an upstream, one outlier does not);
 * - a sliding-window sketch of latencies (DDSketch, @datadog/sketches-js, 2 % relative accuracy,
 *   two halves of `windowMs / 2` that rotate), for the quantiles /chains and /metrics show;
 * - a call abandoned after t ms without an answer (a hedged call answered first, the request was
 *   decided, the client left) is a sample of t: a slow upstream is seen as slow even when it never
 *   gets to answer;
 * - the error rate over its last `outcomeWindow` calls, its calls in flight, its calls started in
 *   the current second (for `maxRps`).
 * Per chain and class: a sketch of the latencies of answered calls, for the adaptive hedge delay.
 * The score (lower is better, in ms) folds these with the health record (distrusted, lag, lost
 * votes): scoreOf().
 *
 * Pure state plus functions that take `now` (ms, any monotonic clock): the tests inject the
 * clock; the gateway passes performance.now().
 */
import { DDSketch } from '@datadog/sketches-js';
import { methodsWhere, type MethodClass } from '../jsonrpc/methods.js';
import { restartLatency, type Health } from './health.js';

export type { MethodClass };
export const methodClasses: readonly MethodClass[] = ['read', 'call', 'logs'];

/** The methods of class `call` and `logs` (the method table's `class`, derived once); every other is `read`. */
export const callMethods: ReadonlySet<string> = new Set(methodsWhere((e) => e.class === 'call'));
export const logsMethods: ReadonlySet<string> = new Set(methodsWhere((e) => e.class === 'logs'));

/** The class of a request: a batch takes its heaviest member's (logs > call > read). */
export function methodClassOf(calls: readonly { method: string }[] | undefined): MethodClass {
  let cls: MethodClass = 'read';
  for (const c of calls ?? []) {
    if (logsMethods.has(c.method)) return 'logs';
    if (callMethods.has(c.method)) cls = 'call';
  }
  return cls;
}

/** Latencies the ranking's median rests on, per upstream and class. */
export const recentSamples = 3;
/** Span of the sliding window of the quantile sketches (ms). */
export const windowMs = 60_000;
/** Outcomes the error rate rests on. */
export const outcomeWindow = 32;
/** Relative accuracy of the latency sketches: a quantile they give is within 2 % of the true one. */
export const sketchAccuracy = 0.02;
const accuracy = sketchAccuracy;
/** A probe or an answer this many times faster than the recent median resets it (a re-measurement). */
export const resetFactor = 3;

/** A sketch over the last `windowMs` (at least; at most 1.5×): two halves that rotate. */
export class WindowedSketch {
  private current = new DDSketch({ relativeAccuracy: accuracy });
  private previous = new DDSketch({ relativeAccuracy: accuracy });
  private startedAt: number;
  constructor(
    now: number,
    private readonly spanMs = windowMs,
  ) {
    this.startedAt = now;
  }

  private rotate(now: number): void {
    const half = this.spanMs / 2;
    if (now - this.startedAt < half) return;
    // Two halves or more have passed: both are stale.
    this.previous = now - this.startedAt < 2 * half ? this.current : new DDSketch({ relativeAccuracy: accuracy });
    this.current = new DDSketch({ relativeAccuracy: accuracy });
    this.startedAt = now - ((now - this.startedAt) % half);
  }

  accept(ms: number, now: number): void {
    this.rotate(now);
    this.current.accept(Math.max(ms, 0.01));
  }

  count(now: number): number {
    this.rotate(now);
    return this.current.count + this.previous.count;
  }

  /** The q-quantile of the window (undefined when it is empty). */
  quantile(q: number, now: number): number | undefined {
    this.rotate(now);
    if (this.previous.count === 0) return this.current.count === 0 ? undefined : this.current.getValueAtQuantile(q);
    if (this.current.count === 0) return this.previous.getValueAtQuantile(q);
    const merged = new DDSketch({ relativeAccuracy: accuracy });
    merged.merge(this.previous);
    merged.merge(this.current);
    return merged.getValueAtQuantile(q);
  }
}

/** The latencies of one upstream for one method class. */
export class ClassStats {
  private readonly ring = new Float64Array(recentSamples);
  /** Which samples of the ring are abandoned calls (a lower bound, not an answer). */
  private readonly cut = new Uint8Array(recentSamples);
  /** The ring's samples in order, for the median (reused: add() runs on every answer). */
  private readonly sorted = new Float64Array(recentSamples);
  private n = 0;
  /** Lower median of the last recentSamples latencies (undefined before the first). */
  p50: number | undefined;
  readonly sketch: WindowedSketch;
  constructor(now: number) {
    this.sketch = new WindowedSketch(now);
  }

  /** Samples in the ring (at most recentSamples). */
  get samples(): number {
    return Math.min(this.n, recentSamples);
  }

  /** Abandoned calls among the recent samples. */
  get abandoned(): number {
    let k = 0;
    for (let i = 0; i < this.samples; i += 1) k += this.cut[i]!;
    return k;
  }

  add(ms: number, now: number, abandoned = false): void {
    this.ring[this.n % recentSamples] = ms;
    this.cut[this.n % recentSamples] = abandoned ? 1 : 0;
    this.n += 1;
    // An insertion sort of the (at most recentSamples) samples into a reused array: copying
    // them into a new array and sorting it allocated on every answer.
    const k = this.samples;
    const sorted = this.sorted;
    for (let i = 0; i < k; i += 1) {
      const v = this.ring[i]!;
      let j = i;
      for (; j > 0 && sorted[j - 1]! > v; j -= 1) sorted[j] = sorted[j - 1]!;
      sorted[j] = v;
    }
    this.p50 = sorted[(k - 1) >> 1];
    this.sketch.accept(ms, now);
  }

  /** Forgets the recent samples (the sketch keeps them): a probe showed the upstream changed. */
  reset(): void {
    this.n = 0;
    this.p50 = undefined;
  }
}

export class UpstreamQuality {
  readonly classes = new Map<MethodClass, ClassStats>();
  inFlight = 0;
  answered = 0;
  errors = 0;
  abandoned = 0;
  /** Last outcomes, true = error; `recentErrors` of them are errors. */
  private readonly outcomes: boolean[] = [];
  recentErrors = 0;
  /** Calls started in the second `rpsSecond` (for maxRps). */
  rpsSecond = -1;
  rpsCount = 0;
  /** Smooth weighted round-robin state (select.ts). */
  wrr = 0;

  stats(cls: MethodClass, now: number): ClassStats {
    let s = this.classes.get(cls);
    if (!s) this.classes.set(cls, (s = new ClassStats(now)));
    return s;
  }

  outcome(error: boolean): void {
    this.outcomes.push(error);
    if (error) this.recentErrors += 1;
    if (this.outcomes.length > outcomeWindow && this.outcomes.shift()) this.recentErrors -= 1;
  }

  get errorRate(): number {
    return this.outcomes.length === 0 ? 0 : this.recentErrors / this.outcomes.length;
  }

  /** Calls started in the second containing `now` (ms). */
  startedThisSecond(now: number): number {
    return Math.floor(now / 1000) === this.rpsSecond ? this.rpsCount : 0;
  }

  /** The median latency the ranking reads for `cls`, when it rests on at least `min` samples. */
  p50(cls: MethodClass, min: number): number | undefined {
    const s = this.classes.get(cls);
    return s && s.samples >= min ? s.p50 : undefined;
  }

  /** Abandoned calls among the recent samples of `cls` (select.ts: two of three lost the race to a later call). */
  abandonedRecently(cls: MethodClass): number {
    return this.classes.get(cls)?.abandoned ?? 0;
  }
}

// Keyed by the health record, which every rankable upstream has (and which lives as long as it).
const byHealth = new WeakMap<Health, UpstreamQuality>();

export function qualityOf(health: Health): UpstreamQuality {
  let q = byHealth.get(health);
  if (!q) byHealth.set(health, (q = new UpstreamQuality()));
  return q;
}

/** Per chain (keyed by the chain object, so two gateways in one process never mix): answered latencies. */
const byChain = new WeakMap<object, Map<MethodClass, WindowedSketch>>();

function chainSketch(chain: object, cls: MethodClass, now: number): WindowedSketch {
  let m = byChain.get(chain);
  if (!m) byChain.set(chain, (m = new Map()));
  let s = m.get(cls);
  if (!s) m.set(cls, (s = new WindowedSketch(now)));
  return s;
}

/** A call started (in flight until one of the record* below). */
export function recordStart(health: Health, now: number): void {
  const q = qualityOf(health);
  q.inFlight += 1;
  const second = Math.floor(now / 1000);
  if (second !== q.rpsSecond) {
    q.rpsSecond = second;
    q.rpsCount = 0;
  }
  q.rpsCount += 1;
}

/** A call answered after `ms` (any answer the transport delivered). */
export function recordAnswered(chain: object | undefined, health: Health, ms: number, cls: MethodClass, now: number): void {
  const q = qualityOf(health);
  q.inFlight = Math.max(0, q.inFlight - 1);
  q.answered += 1;
  q.outcome(false);
  const stats = q.stats(cls, now);
  // An answer far faster than the recent median: the slowness is over (or was a stall), so the
  // older samples go (a demoted upstream comes back on its first fast answer, e.g. an explore request).
  if (stats.p50 !== undefined && stats.p50 > resetFactor * Math.max(ms, 1)) {
    stats.reset();
    // (the answer joins the average next, lib/verify/outcome.ts, when it is a usable one)
    restartLatency(health, ms, false);
  }
  stats.add(ms, now);
  if (chain) chainSketch(chain, cls, now).accept(ms, now);
}

/** A call failed (transport error, timeout, HTTP error). */
export function recordError(health: Health): void {
  // No latency sample: a refused connection fails fast and is no sign of a fast upstream (the
  // health record's cooling down deals with failures).
  const q = qualityOf(health);
  q.inFlight = Math.max(0, q.inFlight - 1);
  q.errors += 1;
  q.outcome(true);
}

/**
 * A call abandoned after `ms` without an answer (another answered first, the request ended): a
 * latency sample of at least `ms`, neither an answer nor an error.
 */
export function recordAbandoned(health: Health, ms: number, cls: MethodClass, now: number): void {
  const q = qualityOf(health);
  q.inFlight = Math.max(0, q.inFlight - 1);
  q.abandoned += 1;
  q.stats(cls, now).add(ms, now, true);
}

/**
 * A probe round of one chain answered (probe.ts; class `read`): a re-measurement. An upstream
 * whose probe took no more than `resetFactor` × the round's median (it is not slow now), or was far
 * faster than its own recent median, or faster than recent samples that are mostly abandoned calls
 * (lower bounds), forgets its recent samples, which are from before a change, and so does its
 * latency average (health.ts restartLatency):
 * an upstream that is fast again is ranked as such after one probe round. Relative to the round,
 * so a loaded machine (every probe slower) does not keep it down.
 */
export function recordProbeRound(round: readonly { health: Health; ms: number }[], now: number): void {
  const sorted = round.map((r) => r.ms).sort((a, b) => a - b);
  const median = sorted.length === 0 ? 0 : sorted[(sorted.length - 1) >> 1]!;
  for (const { health, ms } of round) {
    const q = qualityOf(health);
    // Whether the probe's own latency joins the samples (below).
    let sample = true;
    let changed = false;
    for (const s of q.classes.values()) {
      if (s.p50 === undefined) continue;
      const asPeers = round.length >= 2 && ms <= resetFactor * Math.max(median, 1);
      // Recent samples that are mostly abandoned calls are lower bounds only (under an adaptive
      // hedge, tens of ms for a 3 s upstream): an answer below them is the news, whatever the round,
      // and so is one no slower than its peers' (on a loaded machine every probe may take longer
      // than those lower bounds, and the upstream would stay down until traffic re-measured it).
      const censored = 2 * s.abandoned > s.samples && (ms < s.p50 || asPeers);
      if (censored || s.p50 > resetFactor * Math.max(ms, 1) || (asPeers && s.p50 > ms)) {
        // Reset because it is no slower than its peers in this round, not because the probe was
        // faster than what it replaces: the probe's latency (a fresh connection; hundreds of ms on
        // a loaded machine, against traffic's few ms on kept-alive ones) is no measure of its
        // traffic, and as one of its next samples it would make one stalled answer demote it
        // again. It starts unmeasured; its traffic measures it.
        if (ms >= s.p50) sample = false;
        s.reset();
        changed = true;
      }
    }
    if (sample) q.stats('read', now).add(ms, now);
    // The health record's latency average, when above this probe, forgets the answers before the
    // change too (the ranking reads it as well): it starts again from this probe, when kept.
    if (changed) restartLatency(health, ms, sample);
  }
}

/** One upstream's probe (a round of one). */
export function recordProbe(health: Health, ms: number, now: number): void {
  recordProbeRound([{ health, ms }], now);
}

// One function for every call (a default parameter's arrow would be a new closure per call).
const performanceNow = () => performance.now();

/** Track one upstream call: in flight until it settles; an answer, an error, or abandoned (signal aborted first). */
const notAnError = (kind: string | undefined): boolean => kind === 'budget' || kind === 'rate-limited';

export function trackCall<T>(
  chain: object | undefined,
  health: Health,
  cls: MethodClass,
  signal: { readonly aborted: boolean },
  call: () => Promise<T>,
  clock: () => number = performanceNow,
): Promise<T> {
  const began = clock();
  recordStart(health, began);
  let promise: Promise<T>;
  try {
    promise = call();
  } catch (err) {
    recordError(health);
    throw err;
  }
  promise.then(
    () => recordCallAnswered(chain, health, cls, began, clock()),
    (err: unknown) => recordCallFailed(health, cls, signal, began, err, clock()),
  );
  return promise;
}

/** A tracked call (recordStart at `began`) answered at `now`. */
export function recordCallAnswered(chain: object | undefined, health: Health, cls: MethodClass, began: number, now: number): void {
  recordAnswered(chain, health, now - began, cls, now);
}

/** A tracked call (recordStart at `began`) that failed at `now`: abandoned (signal aborted first), not the upstream's error, or its error. */
export function recordCallFailed(health: Health, cls: MethodClass, signal: { readonly aborted: boolean }, began: number, err: unknown, now: number): void {
  if (signal.aborted) recordAbandoned(health, now - began, cls, now);
  // Our own byte budget refusing an answer is not the upstream's error, nor is a rate limit (rate-limits.ts).
  else if (notAnError((err as { kind?: string } | undefined)?.kind)) qualityOf(health).inFlight = Math.max(0, qualityOf(health).inFlight - 1);
  else recordError(health);
}

/**
 * The score of an upstream (lower is better; ms, or null before any sample): its median latency
 * (class `read`, else any class), times (1 + 4 × error rate), times 2 per lost vote of its recent
 * votes, plus 100 ms per block of lag; a distrusted upstream scores 10× more.
 */
export function scoreOf(health: Health, cls: MethodClass = 'read'): number | null {
  const q = byHealth.get(health);
  if (!q) return null;
  let p50 = q.p50(cls, 1);
  for (const c of methodClasses) p50 ??= q.p50(c, 1);
  if (p50 === undefined) return null;
  let score = p50 * (1 + 4 * q.errorRate) * 2 ** Math.min(health.recentLost, 10) + 100 * Math.max(0, health.lag);
  if (health.distrusted) score *= 10;
  return Math.round(score * 10) / 10;
}

/** What /chains shows of an upstream's quality. */
export function describeQuality(health: Health, now = performance.now()) {
  const q = qualityOf(health);
  const classes: Record<string, { p50Ms: number | null; p90Ms: number | null; samples: number }> = {};
  for (const [cls, s] of q.classes) {
    const round = (v: number | undefined) => (v === undefined ? null : Math.round(v * 10) / 10);
    classes[cls] = { p50Ms: round(s.sketch.quantile(0.5, now)), p90Ms: round(s.sketch.quantile(0.9, now)), samples: s.sketch.count(now) };
  }
  return {
    score: scoreOf(health),
    inFlight: q.inFlight,
    errorRate: Math.round(q.errorRate * 1000) / 1000,
    abandoned: q.abandoned,
    latency: classes,
  };
}

/**
 * The chain's recent `q` quantile of answered calls of class `cls` (ms), or undefined while fewer
 * than `minSamples` were answered in the window (the hedge delay reads it).
 */
export function chainQuantile(chain: object, cls: MethodClass, q: number, minSamples: number, now: number): number | undefined {
  const sketch = byChain.get(chain)?.get(cls);
  if (!sketch || sketch.count(now) < minSamples) return undefined;
  return sketch.quantile(q, now);
}
