/**
 * The head tracker: asks each upstream for its `latest` head every `heads.intervalMs` (and for its
 * `safe` and `finalized` blocks every `tagEvery`-th round), and on demand when a pinned read
 * waits for heads (pollHeadsNow). What it learns goes into heads.ts, which keeps each upstream's
 * heads and the chain's. An upstream on back-off after a rate limit (rate-limits.ts) is not
 * polled until it ends; a poll that meets a rate limit puts it on back-off.
 */
import type { RpcPayload } from '../jsonrpc/types.js';
import { silentLogger, type Logger } from '../log.js';
import type { Chain, Registry, Upstream } from '../upstream/registry.js';
import { Cancellation, UpstreamCallError, type CancelSignal } from '../upstream/transport/contract.js';
import { chainHeadSettings, headTags, inRotation, linkUpstream, recordHead, recordTags, refreshChain, setChainHeadSettings, type HeadSettings } from './heads.js';
import { defaultProbeConcurrency, mapLimited } from './limited.js';
import { isRateLimitError, noteRateLimit, rateLimitLabel, rateLimited } from './rate-limits.js';

// ---------------------------------------------------------------------------------------------
// The head tracker

export interface HeadTracker {
  /** One round on every chain (at start, by each tick, and by tests). */
  runOnce(): Promise<void>;
  stop(): void;
}

/** Every this many rounds the tracker also asks for the safe and finalized blocks. */
export const tagEvery = 4;

interface Answer {
  result?: unknown;
  error?: { code?: number; message?: string };
}

async function ask(u: Upstream, method: string, params: unknown[], timeoutMs: number, signal: CancelSignal): Promise<Answer> {
  const body = { jsonrpc: '2.0', id: 1, method, params };
  const payload: RpcPayload = { calls: [{ id: 1, method, params }], batch: false, raw: Buffer.from(JSON.stringify(body)) };
  const answer = await u.transport.send({ payload, requestId: `heads-${method}`, signal, timeoutMs, maxBytes: 1024 * 1024, background: true });
  let parsed: Answer;
  try {
    parsed = JSON.parse(answer.body.toString('utf8')) as Answer;
  } catch {
    // (V8's message quotes the body's first characters: a key cut in two could not be scrubbed.)
    throw new Error(`${method}: the answer is not JSON`);
  }
  const error = parsed?.error;
  if (typeof error?.code === 'number' && isRateLimitError(error.code, String(error.message ?? ''))) {
    // Scrubbed, then cut: a key cut in two first would keep its first half.
    throw new UpstreamCallError('rate-limited', `${method}: ${rateLimitLabel} ${error.code}: ${u.secrets.scrub(String(error.message ?? '')).slice(0, 200)}`);
  }
  return parsed;
}

const noop = (): void => undefined;
const hexQuantity = /^0x[0-9a-f]{1,16}$/i;

/**
 * What one head poll of an upstream saw: its latest head, its safe and finalized blocks when the
 * node answers those tags (`tags: 'native'`), or `tags: 'absent'` when it answered them with an
 * error. Plain data: `applyHeadPoll` records it, here or in another process (the cluster's
 * workers, lib/server/cluster.ts).
 */
export interface HeadPoll {
  latest?: bigint;
  safe?: bigint;
  finalized?: bigint;
  tags?: 'native' | 'absent';
}

/**
 * Asks one upstream for its heads; a failure ends the poll with what it saw so far (the probe
 * judges health). `tags`: `always`, or `unknown` (only while the node's answer to the tags is not
 * known yet), or `never` (its latest head only).
 */
async function pollUpstream(u: Upstream, tags: 'always' | 'unknown' | 'never', timeoutMs: number, signal: CancelSignal, logger: Logger): Promise<HeadPoll> {
  const seen: HeadPoll = { latest: undefined, safe: undefined, finalized: undefined, tags: undefined };
  try {
    const latest = await ask(u, 'eth_blockNumber', [], timeoutMs, signal);
    if (typeof latest.result === 'string' && hexQuantity.test(latest.result)) seen.latest = BigInt(latest.result);
    if (tags === 'never' || (tags === 'unknown' && headTags(u) !== 'unknown')) return seen;
    for (const tag of ['safe', 'finalized'] as const) {
      const a = await ask(u, 'eth_getBlockByNumber', [tag, false], timeoutMs, signal);
      const number = (a.result as { number?: unknown } | null | undefined)?.number;
      if (typeof number === 'string' && hexQuantity.test(number)) {
        seen.tags = 'native';
        seen[tag] = BigInt(number);
      } else if (a.error !== undefined) {
        // The node does not know the tag: derive both from the finality depth.
        seen.tags = 'absent';
        return seen;
      }
    }
  } catch (err) {
    if (signal.aborted) return seen;
    const e = err as { kind?: string; retryAfterMs?: number; message: string };
    if (e.kind === 'rate-limited') noteRateLimit(u, `head poll: ${u.secrets.scrub(e.message)}`, e.retryAfterMs, logger);
    else logger.debug({ chain: u.chainId, upstream: u.label, reason: u.secrets.scrub(e.message) }, 'head poll failed');
  }
  return seen;
}

/** Records what a head poll saw in the upstream's heads, in the order the poll saw it (the chain is not refreshed). */
export function applyHeadPoll(u: Upstream, seen: HeadPoll): void {
  if (seen.latest !== undefined) recordHead(u, 'latest', seen.latest, 'poll');
  if (seen.safe !== undefined) {
    recordTags(u, 'native');
    recordHead(u, 'safe', seen.safe, 'poll');
  }
  if (seen.finalized !== undefined) {
    recordTags(u, 'native');
    recordHead(u, 'finalized', seen.finalized, 'poll');
  }
  if (seen.tags === 'absent') recordTags(u, 'absent');
}

/** Polls one upstream and records what it saw. */
async function pollAndApply(u: Upstream, tags: 'always' | 'unknown' | 'never', timeoutMs: number, signal: CancelSignal, logger: Logger): Promise<HeadPoll> {
  const seen = await pollUpstream(u, tags, timeoutMs, signal, logger);
  if (!signal.aborted) applyHeadPoll(u, seen);
  return seen;
}

/** Some upstream of the chain was asked for its head (a probe, the head tracker or pollHeadsNow). */
export function headsPolled(chain: Chain): boolean {
  return chain.upstreams.some((u) => u.health.headPolledAt > 0);
}

/** At most one on-demand head poll (pollHeadsNow) per upstream in this many ms. */
export const pollNowGapMs = 250;
const onDemand = new WeakMap<Upstream, { polling: Promise<void> | undefined; at: number }>();
/**
 * The signal of on-demand polls: never fired, so it keeps no listener. (One AbortSignal shared by
 * every poll took a listener per poll in flight: 11 upstreams polled at once, and Node warned
 * MaxListenersExceededWarning, "Possible EventTarget memory leak detected".)
 */
const neverAborted: CancelSignal = { aborted: false, addEventListener() {}, removeEventListener() {} };

/**
 * Asks these upstreams for their latest head now, without waiting for the tracker's next round
 * (a request pinned above their known heads is waiting for them: the heads polled every
 * `heads.intervalMs` may be seconds old). At most one poll per upstream in flight and per
 * `pollNowGapMs`; refreshes the chain (waking the waiters, onHeads) when the polls end. Also on a
 * chain whose heads are not polled (a pipeline mounted without startHealthChecks, or before their
 * first round): a read whose absence needs heads learns them here. Resolves when the polls it started, and those already in flight that it joined, have ended
 * (an upstream polled less than pollNowGapMs ago counts as fresh); it never rejects.
 */
export function pollHeadsNow(chain: Chain, upstreams: readonly Upstream[], timeoutMs = 2_000): Promise<void> {
  const now = performance.now();
  const waits: Promise<void>[] = [];
  const due: Upstream[] = [];
  const wall = Date.now();
  for (const u of upstreams) {
    if (!inRotation(u) || rateLimited(u.health, wall)) continue;
    const last = onDemand.get(u);
    // Joined: its round refreshes the chain after its own polls; this one's after all of them.
    if (last?.polling) waits.push(last.polling.then(() => refreshChain(chain)));
    else if (last === undefined || now - last.at >= pollNowGapMs) due.push(u);
  }
  if (due.length > 0) {
    const round = Promise.all(
      due.map((u) => {
        linkUpstream(u, chain);
        // (the latest head only: a request waits for it; the tags are the tracker's, and a chain
        // whose heads are not tracked keeps `safe`/`finalized` unresolved)
        const polling = pollAndApply(u, 'never', timeoutMs, neverAborted, silentLogger).then(noop).finally(() => onDemand.set(u, { polling: undefined, at: performance.now() }));
        onDemand.set(u, { polling, at: now });
        return polling;
      }),
    ).then(() => refreshChain(chain));
    waits.push(round);
  }
  return waits.length === 0 ? Promise.resolve() : Promise.all(waits).then(() => undefined);
}

/**
 * Polls every chain's upstreams for their heads, each chain on its own `heads.intervalMs`
 * cadence (first round at once), at most `concurrency` upstreams of a chain at once
 * (`limits.probeConcurrency`). Timers are unref'd; stop() ends it and aborts polls in flight.
 */
export function startHeadTracker(
  registry: Registry,
  options: {
    settings?: (chain: Chain) => HeadSettings;
    timeoutMs: number;
    logger?: Logger;
    concurrency?: number;
    /**
     * Called with each chain's round once it is recorded: what each upstream's poll saw, in the
     * chain's order (`undefined`: not polled, out of rotation). The cluster's primary sends it to its workers.
     */
    onRound?: (chain: Chain, polls: (HeadPoll | undefined)[]) => void;
  },
): HeadTracker {
  const logger = options.logger ?? silentLogger;
  // Every poll listens to it while in flight (one per upstream): a Cancellation, not an AbortSignal,
  // which warns MaxListenersExceededWarning from 11 listeners (11 upstreams polled at once).
  const abort = new Cancellation();
  const timers = new Set<NodeJS.Timeout>();
  const rounds = new Map<Chain, number>();
  for (const chain of registry.chains.values()) {
    if (options.settings) setChainHeadSettings(chain, options.settings(chain));
    for (const u of chain.upstreams) linkUpstream(u, chain);
  }
  const round = async (chain: Chain) => {
    const n = rounds.get(chain) ?? 0;
    rounds.set(chain, n + 1);
    const now = Date.now();
    const polls = await mapLimited(chain.upstreams, options.concurrency ?? defaultProbeConcurrency, (u) =>
      inRotation(u) && !rateLimited(u.health, now) ? pollAndApply(u, n % tagEvery === 0 ? 'always' : 'unknown', options.timeoutMs, abort, logger) : Promise.resolve(undefined),
    );
    if (abort.aborted) return;
    refreshChain(chain);
    options.onRound?.(chain, polls);
  };
  const loop = (chain: Chain) => {
    round(chain).finally(() => {
      if (abort.aborted) return;
      const timer = setTimeout(() => {
        timers.delete(timer);
        loop(chain);
      }, chainHeadSettings(chain).intervalMs);
      timer.unref();
      timers.add(timer);
    });
  };
  for (const chain of registry.chains.values()) loop(chain);
  return {
    async runOnce() {
      await Promise.all([...registry.chains.values()].map(round));
    },
    stop() {
      abort.abort();
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
    },
  };
}
