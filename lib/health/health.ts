/**
 * Health of one upstream: passive (fed by the outcome of every call) and active (fed by the
 * periodic probe, probe.ts). The ranking reads it. Each field is documented because /chains
 * shows them as they are. `upstreamState()` turns it into the one word /chains shows, and
 * `isUp()` into the `omnigate_upstream_up` gauge and the readiness count (/ready).
 */
export interface Health {
  /** Calls that returned a usable answer (a vote). */
  successes: number;
  /** Calls that failed (transport, timeout, HTTP error, unusable body). */
  failures: number;
  /** Failures since the last success; 0 when the last call succeeded. */
  consecutiveFailures: number;
  /** Times this upstream was in the winning group. */
  agreements: number;
  /** Times this upstream answered something the winning group did not. */
  disagreements: number;
  /** Exponentially weighted latency of successful calls, in ms (undefined before the first, and after a re-measurement that kept no sample: restartLatency). */
  latencyMs: number | undefined;
  /** Answers in latencyMs since it last (re)started (the ranking reads it only over slowMinSamples, lib/upstream/select.ts). */
  latencySamples: number;
  /** Until when (epoch ms) the upstream is ranked last after repeated failures. */
  coolingUntil: number;
  /** Last failure reason, for /chains. */
  lastError: string | undefined;
  /** When the last probe finished (epoch ms; 0 before the first). */
  lastProbeAt: number;
  /** When the upstream was last asked for its head (probe or head tracker, heads.ts); 0: never. */
  headPolledAt: number;
  /** Latest head block number: probes, the head tracker and answers passing through (heads.ts). */
  head: bigint | undefined;
  /** Its `safe` head (heads.ts): the tag's block, or latest − finality depth where the chain has no tag. */
  safe: bigint | undefined;
  /** Its `finalized` head (heads.ts), as `safe`. */
  finalized: bigint | undefined;
  /** Its head is far above the chain's robust head (heads.ts): not believed, not ranked first. */
  suspect: boolean;
  /** Blocks behind the chain's robust head (heads.ts chainHead; never the maximum); 0 when ahead. */
  lag: number;
  /** The chain id the upstream reported when it differs from the configured one: out of rotation. */
  wrongChainId: string | undefined;
  /** The upstream is the gateway itself, or leads back to it (loop.ts): out of rotation, not probed. */
  loop: boolean;
  /** Its last votes in decided quorums, oldest first: true = lost (differed from the agreed answer). */
  recentVotes: boolean[];
  /** Lost votes in recentVotes. */
  recentLost: number;
  /** Lost too many agreements (disputes policy): not asked for unverified reads, ranked last. */
  distrusted: boolean;
  /** Until when (epoch ms) the upstream is on back-off after its provider rate-limited us (rate-limits.ts): not asked; 0: never. */
  rateLimitedUntil: number;
  /** Episodes of rate limits since its last success: the exponent of the back-off when no Retry-After is given. */
  rateLimitEpisodes: number;
  /** Rate-limit answers received (HTTP 429, 503 with Retry-After, JSON-RPC rate-limit errors). */
  rateLimits: number;
  /** Proof mode (lib/prove): its answers proven against an agreed header. */
  proofsChecked: number;
  /** Proof mode: its answers (or headers) that failed their proof; each also a lost vote. */
  proofsFailed: number;
  /** Proof mode: its eth_getLogs answers that held the proven logs numbered per transaction (not charged; the proven numbering served). */
  logIndexPerTx: number;
}

export function newHealth(): Health {
  return {
    successes: 0,
    failures: 0,
    consecutiveFailures: 0,
    agreements: 0,
    disagreements: 0,
    latencyMs: undefined,
    latencySamples: 0,
    coolingUntil: 0,
    lastError: undefined,
    lastProbeAt: 0,
    headPolledAt: 0,
    head: undefined,
    safe: undefined,
    finalized: undefined,
    suspect: false,
    lag: 0,
    wrongChainId: undefined,
    loop: false,
    recentVotes: [],
    recentLost: 0,
    distrusted: false,
    rateLimitedUntil: 0,
    rateLimitEpisodes: 0,
    rateLimits: 0,
    proofsChecked: 0,
    proofsFailed: 0,
    logIndexPerTx: 0,
  };
}

/** After this many failures in a row an upstream is ranked last for a while. */
export const failureThreshold = 2;
const coolDownMs = (failures: number) => Math.min(1_000 * 2 ** (failures - failureThreshold), 60_000);

export function recordSuccess(h: Health, latencyMs: number): void {
  h.successes += 1;
  h.consecutiveFailures = 0;
  h.coolingUntil = 0;
  h.rateLimitEpisodes = 0;
  h.latencyMs = h.latencyMs === undefined ? latencyMs : h.latencyMs * 0.8 + latencyMs * 0.2;
  h.latencySamples += 1;
}

/**
 * A re-measurement found the upstream changed (lib/health/quality.ts: a probe round or an answer
 * far faster than its recent median, which drop its recent samples) and took `measuredMs`: an
 * average above that forgets the answers before, and starts again from `measuredMs` (`keep`: the
 * re-measurement is kept as a sample) or from nothing. Each answer weighs 20 %: one 3 s answer
 * left in it kept an upstream found fast again ranked slow for several more answers, which a slow
 * upstream gets one every 5 s (an explore request). An average below `measuredMs` stays (a fast
 * upstream's history is not traded for one slower probe).
 */
export function restartLatency(h: Health, measuredMs: number, keep: boolean): void {
  if (h.latencyMs === undefined || h.latencyMs <= measuredMs) return;
  h.latencyMs = keep ? measuredMs : undefined;
  h.latencySamples = keep ? 1 : 0;
}

export function recordFailure(h: Health, reason: string, now: number): void {
  h.failures += 1;
  h.consecutiveFailures += 1;
  h.lastError = reason;
  if (h.consecutiveFailures >= failureThreshold) h.coolingUntil = now + coolDownMs(h.consecutiveFailures);
}

/**
 * When an upstream's answers lose agreements it is distrusted: `maxLost` lost votes among its last
 * `window` votes in decided quorums (0 turns this off). It is trusted again once fewer than
 * half of maxLost (rounded up) of its last `window` votes were lost: a hysteresis, so an upstream
 * at the threshold does not flip on every vote.
 */
export interface DisputePolicy {
  window: number;
  maxLost: number;
}

/**
 * Records one vote of the upstream in a decided quorum (won: it was in the agreeing group).
 * Returns the change of trust it caused, if any (for the log).
 */
export function recordVote(h: Health, won: boolean, policy: DisputePolicy): 'distrusted' | 'trusted' | undefined {
  if (won) h.agreements += 1;
  else h.disagreements += 1;
  if (policy.maxLost <= 0) return undefined;
  h.recentVotes.push(!won);
  if (!won) h.recentLost += 1;
  while (h.recentVotes.length > policy.window) if (h.recentVotes.shift()) h.recentLost -= 1;
  if (!h.distrusted && h.recentLost >= policy.maxLost) {
    h.distrusted = true;
    return 'distrusted';
  }
  if (h.distrusted && h.recentLost < Math.ceil(policy.maxLost / 2)) {
    h.distrusted = false;
    return 'trusted';
  }
  return undefined;
}

/**
 * The state /chains shows, from the health record alone (first match wins):
 * - `loop`: the upstream is this gateway itself, or leads back to it (out of rotation, loop.ts);
 * - `wrong-chain`: the last probe reported another chain id (out of rotation);
 * - `rate-limited`: its provider rate-limited us; not asked until `rateLimitedUntil` (rate-limits.ts);
 * - `unknown`: no probe has finished and no call was made yet (not known to be up);
 * - `cooling-down`: failed `failureThreshold` times in a row, ranked last until `coolingUntil`;
 * - `down`: the last probe or call failed (from the first failure: a refused connection or a
 *   name that does not resolve is down at once, not after a threshold);
 * - `lagging`: answers, but its head is more than `maxLagBlocks` behind the chain's best;
 * - `healthy`: the last probe or call succeeded.
 */
export type UpstreamState = 'loop' | 'wrong-chain' | 'rate-limited' | 'unknown' | 'cooling-down' | 'down' | 'lagging' | 'healthy';

export function upstreamState(h: Health, now: number, maxLagBlocks: number): UpstreamState {
  if (h.loop) return 'loop';
  if (h.wrongChainId !== undefined) return 'wrong-chain';
  if (h.rateLimitedUntil > now) return 'rate-limited';
  if (h.successes + h.failures + h.lastProbeAt === 0) return 'unknown';
  if (h.coolingUntil > now) return 'cooling-down';
  if (h.consecutiveFailures > 0 || h.successes === 0) return 'down';
  return h.lag > maxLagBlocks ? 'lagging' : 'healthy';
}

/**
 * Up: serves the configured chain (and is not a request loop) and its last probe or call succeeded (`healthy` or `lagging`).
 * Unknown (never probed, never called) is not up. A rate limit is no failure: an upstream on
 * back-off that had answered stays up (its back-off lasts a minute at most).
 */
export function isUp(h: Health): boolean {
  return h.wrongChainId === undefined && !h.loop && h.successes > 0 && h.consecutiveFailures === 0;
}

/** Failed and never answered: ranked after every upstream that has answered at least once. */
export function neverSucceeded(h: Health): boolean {
  return h.successes === 0 && h.failures > 0;
}
