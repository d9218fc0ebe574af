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
    throw new UpstreamCallError('rate-limited', `${method}: ${rateLimitLabel} ${error.code}: ${String(error.message ?? '').slice(0, 200)}`);
  }
  return parsed;
}

const hexQuantity = /^0x[0-9a-f]{1,16}$/i;

/** Asks one upstream for its heads; failures leave them as they are (the probe judges health). */
async function pollUpstream(u: Upstream, withTags: boolean, timeoutMs: number, signal: CancelSignal, logger: Logger): Promise<void> {
  try {
    const latest = await ask(u, 'eth_blockNumber', [], timeoutMs, signal);
    if (typeof latest.result === 'string' && hexQuantity.test(latest.result)) recordHead(u, 'latest', BigInt(latest.result), 'poll');
    if (!withTags && headTags(u) !== 'unknown') return;
    for (const tag of ['safe', 'finalized'] as const) {
      const a = await ask(u, 'eth_getBlockByNumber', [tag, false], timeoutMs, signal);
      const number = (a.result as { number?: unknown } | null | undefined)?.number;
      if (typeof number === 'string' && hexQuantity.test(number)) {
        recordTags(u, 'native');
        recordHead(u, tag, BigInt(number), 'poll');
      } else if (a.error !== undefined) {
        // The node does not know the tag: derive both from the finality depth.
        recordTags(u, 'absent');
        return;
      }
    }
  } catch (err) {
    if (signal.aborted) return;
    const e = err as { kind?: string; retryAfterMs?: number; message: string };
    if (e.kind === 'rate-limited') noteRateLimit(u, `head poll: ${u.secrets.scrub(e.message)}`, e.retryAfterMs, logger);
    else logger.debug({ chain: u.chainId, upstream: u.label, reason: u.secrets.scrub(e.message) }, 'head poll failed');
  }
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
 * `pollNowGapMs`; refreshes the chain (waking the waiters, onHeads) when the polls end. Only on a
 * chain whose heads are polled already (a poll here must not turn eligibility on by itself).
 * Resolves when the polls it started, and those already in flight that it joined, have ended
 * (an upstream polled less than pollNowGapMs ago counts as fresh); it never rejects.
 */
export function pollHeadsNow(chain: Chain, upstreams: readonly Upstream[], timeoutMs = 2_000): Promise<void> {
  if (!headsPolled(chain)) return Promise.resolve();
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
        const polling = pollUpstream(u, false, timeoutMs, neverAborted, silentLogger).finally(() => onDemand.set(u, { polling: undefined, at: performance.now() }));
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
  options: { settings?: (chain: Chain) => HeadSettings; timeoutMs: number; logger?: Logger; concurrency?: number },
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
    const live = chain.upstreams.filter((u) => inRotation(u) && !rateLimited(u.health, now));
    await mapLimited(live, options.concurrency ?? defaultProbeConcurrency, (u) => pollUpstream(u, n % tagEvery === 0, options.timeoutMs, abort, logger));
    if (!abort.aborted) refreshChain(chain);
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
