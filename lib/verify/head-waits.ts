/**
 * Waiting for heads, and the -32016 errors when a wait ends without enough upstreams: the bounded
 * waits the eligibility policies (eligibility-policy.ts, batch-eligibility.ts) hand the agreement
 * loop, woken by each head refresh (lib/health/heads.ts onHeads), the signal they listen to, and
 * the errors that name the block or hash, who had it and the heads seen (URLs redacted).
 */
import { BlockNotAvailableError } from '../errors.js';
import type { RpcCall } from '../jsonrpc/types.js';
import { believedHead, chainHead, chainHeadSettings, headsEnded, inRotation, onHeads } from '../health/heads.js';
import { headsPolled, pollHeadsNow } from '../health/tracker.js';
import type { Chain, Upstream } from '../upstream/registry.js';
import { bestCredibleHead, eligible, highestBlock, knownToHave, type BlockNeed } from './eligibility.js';

// ---------------------------------------------------------------------------------------------
// Waiting, and the error when the wait ends without enough upstreams

/** Distinct providers among the eligible upstreams (one vote each). */
export function eligibleProviders(chain: Chain, calls: readonly RpcCall[], among: readonly Upstream[] = chain.upstreams): number {
  const providers = new Set<string>();
  for (const u of among) if (inRotation(u) && eligible(chain, u, calls)) providers.add(u.provider);
  return providers.size;
}

/** Distinct providers among the upstreams known to have the block (eligibility.ts knownToHave: they may vouch for an absence). */
export function providersWithBlock(chain: Chain, calls: readonly RpcCall[], among: readonly Upstream[] = chain.upstreams): number {
  const providers = new Set<string>();
  for (const u of among) if (inRotation(u) && knownToHave(chain, u, calls)) providers.add(u.provider);
  return providers.size;
}

/**
 * Waits at most `waitMs` (default: the chain's heads.waitMs) until `required` providers are
 * known to have the block the calls need (providersWithBlock: an upstream whose head is unknown
 * is not), waking on each head refresh (no polling). Resolves true when they are, false at the
 * end of the wait or on abort.
 */
export function waitForEligible(
  chain: Chain,
  calls: readonly RpcCall[],
  required: number,
  options: { waitMs?: number; signal?: AbortSignal; among?: readonly Upstream[] } = {},
): Promise<boolean> {
  return waitUntil(chain, () => providersWithBlock(chain, calls, options.among) >= required, options);
}

/**
 * The wait of a read pinned to a block number that fewer than `required` providers are known to
 * have: the waiting upstreams asked for their heads now (heads polled every heads.intervalMs may
 * be seconds old, or never polled), then at most heads.waitMs for enough of them to have the
 * block. Rejects with blockNotAvailable when they still do not (`started`: when the question began).
 */
export function waitForBlock(chain: Chain, calls: readonly RpcCall[], required: number, waiting: readonly Upstream[], ended: AbortSignal, started: number, id: string | number | null): Promise<void> {
  const polled = pollHeadsNow(chain, waiting);
  return waitForEligible(chain, calls, required, { signal: whilePolling(chain, polled, ended) })
    .then((ok) => ok || (!ended.aborted && polled.then(() => providersWithBlock(chain, calls) >= required)))
    .then((ok) => {
      if (!ok) throw blockNotAvailable(chain, calls, required, performance.now() - started, id);
    });
}

/**
 * Waits at most `waitMs` (default: the chain's heads.waitMs) until `check()` holds, judged now
 * and on each head refresh of the chain (onHeads; no polling). Resolves true when it holds, false
 * at the end of the wait, on abort (`signal`: the question ended first), or when the chain's
 * pipeline closed (no head will come). `atOnce: false`: not judged before the first refresh.
 */
export function waitUntil(chain: Chain, check: () => boolean, options: { waitMs?: number; signal?: AbortSignal; atOnce?: boolean } = {}): Promise<boolean> {
  if (options.atOnce !== false && check()) return Promise.resolve(true);
  if (options.signal?.aborted || headsEnded(chain)) return Promise.resolve(false);
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      clearTimeout(timer);
      unsubscribe();
      options.signal?.removeEventListener('abort', onAbort);
      resolve(ok);
    };
    const onAbort = () => done(false);
    const unsubscribe = onHeads(chain, () => {
      if (check()) done(true);
      else if (headsEnded(chain)) done(false);
    });
    const timer = setTimeout(() => done(check()), options.waitMs ?? chainHeadSettings(chain).waitMs);
    // The request's own deadline keeps the process up while it waits; a wait whose loop already
    // ended (deadline, client gone, pipeline closed) must not hold a closed process for waitMs.
    timer.unref();
    options.signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * The -32016 error (HTTP 503, Retry-After) for "fewer than `required` eligible upstreams after
 * the wait": names the block and the heads seen (URLs redacted).
 */
export function blockNotAvailable(chain: Chain, calls: readonly RpcCall[], required: number, waitedMs: number, id?: string | number | null): InstanceType<typeof BlockNotAvailableError> {
  const block = highestBlock(chain, calls);
  const shown = block === undefined ? 'the pinned block' : `block ${block} (0x${block.toString(16)})`;
  const eligibleCount = providersWithBlock(chain, calls);
  const head = chainHead(chain);
  return retryShortly(chain, `${shown} is not yet available on ${required} upstream${required === 1 ? '' : 's'} (${eligibleCount} ha${eligibleCount === 1 ? 's' : 've'} it after waiting ${Math.round(waitedMs)} ms): retry shortly`, {
    block: block === undefined ? null : `0x${block.toString(16)}`,
    required,
    eligible: eligibleCount,
    waitedMs: Math.round(waitedMs),
    chainHead: head === undefined ? null : `0x${head.toString(16)}`,
    heads: chain.upstreams.map((u) => ({
      upstream: u.label,
      latest: hex(u.health.head),
      ...(u.health.suspect ? { suspect: true } : {}),
    })),
  }, id);
}

/**
 * The signal a wait for heads listens to: the question's end, or the end of the polls on demand
 * when the chain's heads are still not polled after them (no tracker or probe runs and every poll
 * failed: no head comes within the wait, which then ends at once).
 */
export function whilePolling(chain: Chain, polled: Promise<void>, ended: AbortSignal): AbortSignal {
  if (headsPolled(chain)) return ended;
  const stop = new AbortController();
  const onEnd = () => stop.abort();
  ended.addEventListener('abort', onEnd, { once: true });
  void polled.then(() => {
    if (!headsPolled(chain)) stop.abort();
  });
  return stop.signal;
}

/** These upstreams, and every other of the chain whose head is not known (none once the heads are tracked). */
export function withUnknownHeads(chain: Chain, upstreams: readonly Upstream[]): readonly Upstream[] {
  const unknown = chain.upstreams.filter((u) => u.health.head === undefined && !upstreams.includes(u));
  return unknown.length === 0 ? upstreams : [...upstreams, ...unknown];
}

/**
 * Waits at most `waitMs` (default: the chain's heads.waitMs) until one of `upstreams` reports a
 * higher head than now (a node that lacked a hash another upstream knows may have caught up),
 * waking on each head refresh (no polling). Resolves true when one did, false at the end of the
 * wait. An upstream whose head was unknown rises when its head becomes known (a poll on demand).
 */
export function waitForHeadsToRise(chain: Chain, upstreams: readonly Upstream[], options: { waitMs?: number; signal?: AbortSignal } = {}): Promise<boolean> {
  const before = upstreams.map((u) => u.health.head);
  const rose = () => upstreams.some((u, i) => u.health.head !== undefined && (before[i] === undefined || u.health.head > before[i]!));
  return waitUntil(chain, rose, { ...options, atOnce: false });
}

/**
 * The -32016 error (HTTP 503, Retry-After) for a read pinned by a hash that some upstream has
 * (`had`: answers with the data) while others answer as if they lack it (`lacked`: null, `[]` or
 * an unknown-block error), so that N cannot agree on the data: names the hash, who had it and who
 * lacked it (URLs redacted). Never a confirmed "not found" when an upstream had the data.
 */
export function hashNotAvailable(
  chain: Chain,
  pin: Extract<BlockNeed, { kind: 'hash' }>,
  required: number,
  had: readonly Upstream[],
  lacked: readonly Upstream[],
  id?: string | number | null,
): InstanceType<typeof BlockNotAvailableError> {
  const providers = new Set(had.map((u) => u.provider)).size;
  const what = pin.of === 'transaction' ? 'transaction' : 'block';
  return retryShortly(chain, `${what} ${pin.hash} is not yet available on ${required} upstream${required === 1 ? '' : 's'} (${providers} ha${providers === 1 ? 's' : 've'} it, ${lacked.length} answer${lacked.length === 1 ? 's' : ''} as if ${lacked.length === 1 ? 'it lacks' : 'they lack'} it): retry shortly`, {
    hash: pin.hash,
    pin: what,
    required,
    eligible: providers,
    had: had.map((u) => u.label),
    lacked: lacked.map((u) => u.label),
  }, id);
}

/**
 * The -32016 error (HTTP 503, Retry-After) for a read pinned by a hash that every upstream answered
 * as missing, where fewer than `required` providers at the best credible head said so: the others
 * are behind it and could not have seen what its newest blocks hold, so "not found" cannot be
 * vouched for. Names the hash, the best head, and who answered from where (URLs redacted).
 */
export function absenceNotVouched(
  chain: Chain,
  pin: Extract<BlockNeed, { kind: 'hash' }>,
  required: number,
  atBest: readonly Upstream[],
  behind: readonly Upstream[],
  id?: string | number | null,
): InstanceType<typeof BlockNotAvailableError> {
  const providers = new Set(atBest.map((u) => u.provider)).size;
  const what = pin.of === 'transaction' ? 'transaction' : 'block';
  const best = bestCredibleHead(chain);
  return retryShortly(chain, `${what} ${pin.hash} was not found, but only ${providers} of the ${required} upstream${required === 1 ? '' : 's'} needed ${providers === 1 ? 'is' : 'are'} at the best head${best === undefined ? '' : ` (block ${best})`}; ${behind.length} behind it could not have seen it yet: retry shortly`, {
    hash: pin.hash,
    pin: what,
    required,
    eligible: providers,
    bestHead: hex(best),
    atBestHead: atBest.map((u) => u.label),
    behind: behind.map((u) => ({ upstream: u.label, latest: hex(believedHead(u)) })),
  }, id);
}

/** A -32016 (HTTP 503) with `Retry-After`: the chain's heads.waitMs in seconds, at least 1. */
function retryShortly(chain: Chain, message: string, data: Record<string, unknown>, id: string | number | null | undefined): InstanceType<typeof BlockNotAvailableError> {
  return new BlockNotAvailableError(message, {
    ...(id !== undefined ? { id } : {}),
    headers: { 'Retry-After': String(Math.max(1, Math.ceil(chainHeadSettings(chain).waitMs / 1000))) },
    data,
  });
}

const hex = (n: bigint | undefined) => (n === undefined ? null : `0x${n.toString(16)}`);
