/**
 * Heads: each upstream's `latest`, `safe` and `finalized` block and the chain's robust head. The
 * eligibility predicates of the agreement loop, which read them, are in eligibility.ts.
 *
 * Where the heads come from:
 * - the head tracker (tracker.ts startHeadTracker): every `heads.intervalMs` per chain, `eth_blockNumber` on
 *   each upstream, and every `tagEvery`-th round `eth_getBlockByNumber("safe"|"finalized", false)`;
 *   an upstream that answers those with a JSON-RPC error has no tags: its safe and finalized heads
 *   are then `latest − finalityDepth` (finalityDepths below);
 * - the health probe (probe.ts, every `refreshInterval` s): its `eth_blockNumber`;
 * - answers passing through (observe(), called where answers are assessed): an `eth_blockNumber`
 *   result, a block's `number`, a receipt's or transaction's `blockNumber`.
 *
 * Heads never go backwards, with one reading of a reorg: a poll of the upstream's own head (the
 * tracker's or the probe's) that is lower than the known head is believed when the next poll
 * is lower too (two in a row): a real reorg to a shorter chain, a node reset to an older
 * snapshot, a load balancer that now routes to a lagging backend. One lower poll alone (one call
 * that hit a lagging backend) is ignored, and an answer passing through only ever raises a head.
 *
 * The chain's head (chainHead) is robust to an outlier: the median of the providers' heads (the
 * lower median: a head that at least half of them reached; a provider's several upstreams count
 * once, with the highest of their heads), then the highest head within `suspectBlocks` of it. An upstream more than `suspectBlocks` above that chain head (refreshChain)
 * (not above the median) is `suspect`: its head is not the chain's, it is ranked after the
 * others (select.ts) and believed to have no block above the chain's head. With two upstreams far
 * apart the lower one is believed: the conservative reading, since no third upstream can say
 * which is right.
 */
import type { HeadsConfig } from '../../config/schema.js';
import { methods, methodsWhere } from '../jsonrpc/methods.js';
import type { RpcCall } from '../jsonrpc/types.js';
import type { Chain, Upstream } from '../upstream/registry.js';

// ---------------------------------------------------------------------------------------------
// Settings

export type HeadSettings = Required<HeadsConfig>;

/**
 * Known chains: block time (the default wait) and finality depth (used only where a node does not
 * answer the safe/finalized tags). Sources, as reasoning rather than measurement:
 * - Ethereum and its testnets: 12 s slots; Casper FFG finalizes a block two epochs of 32 slots
 *   later (consensus-specs SLOTS_PER_EPOCH = 32), so 64 blocks.
 * - Gnosis: 5 s slots, 16 slots per epoch (Gnosis beacon chain config): two epochs, 32 blocks.
 * - Polygon PoS: 2 s blocks; before its milestones (2023) applications waited 128–256 blocks for
 *   reorgs that did happen that deep: 256.
 * - OP Mainnet, Base (2 s) and Arbitrum One (0.25 s): final when the L1 batch holding them is
 *   final, roughly 15–30 minutes: 1,800 and 7,200 blocks (30 minutes). Their nodes answer the tags.
 * - Avalanche C-Chain: Snowman accepts a block as final: 1.
 * - BNB Smart Chain: 0.75 s blocks since the Maxwell upgrade (2025); its fast finality answers the
 *   tags, the depth is the default.
 * Any other chain: 2 s, 128 blocks; set `heads.waitMs` and `heads.finalityDepth` per chain.
 */
export const knownChains: Readonly<Record<string, { blockMs: number; finalityDepth?: number }>> = {
  1: { blockMs: 12_000, finalityDepth: 64 },
  11155111: { blockMs: 12_000, finalityDepth: 64 },
  17000: { blockMs: 12_000, finalityDepth: 64 },
  560048: { blockMs: 12_000, finalityDepth: 64 },
  100: { blockMs: 5_000, finalityDepth: 32 },
  137: { blockMs: 2_000, finalityDepth: 256 },
  10: { blockMs: 2_000, finalityDepth: 1_800 },
  8453: { blockMs: 2_000, finalityDepth: 1_800 },
  42161: { blockMs: 250, finalityDepth: 7_200 },
  43114: { blockMs: 2_000, finalityDepth: 1 },
  56: { blockMs: 750 },
};

export const headDefaults = {
  intervalMs: 4_000,
  suspectBlocks: 128,
  finalityDepth: 128,
  blockMs: 2_000,
} as const;

/** The wait for heads is at least this long (one block of a fast chain is too short to matter). */
const minWaitMs = 1_000;

/** A chain's settings: its own keys, else the global ones, else the known chain's, else the defaults. */
export function headSettings(chainId: string, global: HeadsConfig = {}, own: HeadsConfig = {}): HeadSettings {
  const known = Object.hasOwn(knownChains, chainId) ? knownChains[chainId] : undefined;
  return {
    intervalMs: own.intervalMs ?? global.intervalMs ?? headDefaults.intervalMs,
    suspectBlocks: own.suspectBlocks ?? global.suspectBlocks ?? headDefaults.suspectBlocks,
    finalityDepth: own.finalityDepth ?? global.finalityDepth ?? known?.finalityDepth ?? headDefaults.finalityDepth,
    waitMs: own.waitMs ?? global.waitMs ?? Math.max(minWaitMs, known?.blockMs ?? headDefaults.blockMs),
  };
}

// ---------------------------------------------------------------------------------------------
// Per-upstream heads

export type HeadTag = 'latest' | 'safe' | 'finalized';
const field = { latest: 'head', safe: 'safe', finalized: 'finalized' } as const;

interface HeadState {
  /** A lower value seen by the last poll, waiting for the next poll to confirm it. */
  drop: Partial<Record<HeadTag, bigint>>;
  /** Whether the upstream answers the safe/finalized tags. */
  tags: 'unknown' | 'native' | 'absent';
  /** A suspect's believed head: the chain's robust head (it has no block above it). */
  cap: bigint | undefined;
}

const states = new WeakMap<Upstream, HeadState>();
const chainOf = new WeakMap<Upstream, Chain>();
const settingsOf = new WeakMap<Chain, HeadSettings>();

function stateOf(u: Upstream): HeadState {
  let s = states.get(u);
  if (!s) states.set(u, (s = { drop: {}, tags: 'unknown', cap: undefined }));
  return s;
}

/** The settings a chain's heads use (set by the tracker from the config; defaults otherwise). */
export function chainHeadSettings(chain: Chain): HeadSettings {
  let s = settingsOf.get(chain);
  if (!s) settingsOf.set(chain, (s = headSettings(chain.id)));
  return s;
}

export function setChainHeadSettings(chain: Chain, settings: HeadSettings): void {
  settingsOf.set(chain, settings);
}

/**
 * Records a head the upstream has. `poll`: the upstream was asked for its head (it may go back,
 * on the second lower poll in a row); `answer`: seen in an answer (only ever raises).
 * Returns whether the upstream's head changed.
 */
export function recordHead(u: Upstream, tag: HeadTag, value: bigint, source: 'poll' | 'answer'): boolean {
  const h = u.health;
  if (source === 'poll') h.headPolledAt = Date.now();
  const key = field[tag];
  const current = h[key];
  const s = stateOf(u);
  if (current === undefined || value >= current) {
    delete s.drop[tag];
    if (value === current) return false;
    h[key] = value;
    if (tag === 'latest') derive(u);
    return true;
  }
  if (source === 'answer') return false;
  if (s.drop[tag] === undefined) {
    s.drop[tag] = value;
    return false;
  }
  delete s.drop[tag];
  h[key] = value;
  if (tag === 'latest') derive(u);
  return true;
}

/** Whether the upstream answers the safe/finalized tags, as its head polls found (tracker.ts). */
export const headTags = (u: Upstream): HeadState['tags'] => stateOf(u).tags;

/**
 * What a head poll found of the tags: `native` (the node answers them), or `absent` (it does not:
 * its safe and finalized heads are then derived from its latest one and the finality depth).
 */
export function recordTags(u: Upstream, tags: 'native' | 'absent'): void {
  stateOf(u).tags = tags;
  if (tags === 'absent') derive(u);
}

/** The chain an upstream belongs to, for the heads that refreshChain and derive() judge it by. */
export function linkUpstream(u: Upstream, chain: Chain): void {
  chainOf.set(u, chain);
}

/** Where the upstream has no tags: safe = finalized = latest − finality depth. */
function derive(u: Upstream): void {
  const s = stateOf(u);
  const chain = chainOf.get(u);
  if (s.tags !== 'absent' || u.health.head === undefined || !chain) return;
  const depth = BigInt(chainHeadSettings(chain).finalityDepth);
  const value = u.health.head > depth ? u.health.head - depth : 0n;
  u.health.safe = value;
  u.health.finalized = value;
}

/** Lower median: a value that at least half of `values` reached. */
export function lowerMedian(values: bigint[]): bigint | undefined {
  if (values.length === 0) return undefined;
  values.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return values[Math.floor((values.length - 1) / 2)];
}

export const inRotation = (u: Upstream): boolean => u.health.wrongChainId === undefined && !u.health.loop;

/**
 * One head per provider (the highest of its upstreams in rotation): a provider's several
 * endpoints (its https and wss URLs, two regions) are one witness, as they are one vote, so they
 * cannot outnumber the other providers in the median.
 */
function providerHeads(chain: Chain, key: (typeof field)[HeadTag]): bigint[] {
  const best = new Map<string, bigint>();
  for (const u of chain.upstreams) {
    const h = u.health[key];
    if (!inRotation(u) || h === undefined) continue;
    const known = best.get(u.provider);
    if (known === undefined || h > known) best.set(u.provider, h);
  }
  return [...best.values()];
}

/**
 * The chain's head: the highest provider head within `suspectBlocks` of the median head (never
 * the maximum: one upstream reporting 0xffffffffffff does not move it). For `safe` and
 * `finalized`, the lower median itself, over every provider in rotation (finalityMedian: one not
 * known counts as lowest): a block at least half of the providers hold as such.
 * Each provider counts once (providerHeads). Undefined before any head.
 */
export function chainHead(chain: Chain, tag: HeadTag = 'latest'): bigint | undefined {
  const heads = providerHeads(chain, field[tag]);
  if (tag !== 'latest') return finalityMedian(chain, heads);
  const median = lowerMedian(heads);
  if (median === undefined) return median;
  const limit = median + BigInt(chainHeadSettings(chain).suspectBlocks);
  return heads.reduce((best, h) => (h <= limit && h > best ? h : best), median);
}

/**
 * The chain's safe or finalized block from the providers' ones: the lower median over every
 * provider in rotation, a provider whose block is not known counting as lowest. So it is a block
 * that more than half of the providers hold as safe/finalized (all of one or two), never the word of the
 * providers that happened to answer: with one of three providers known (the others' tag polls
 * failing, or not in yet), it is undefined, not that one's block, which a provider on a fork (or
 * lying) may set at a block the others have not finalized. Undefined while too few are known.
 */
function finalityMedian(chain: Chain, known: bigint[]): bigint | undefined {
  const providers = new Set<string>();
  for (const u of chain.upstreams) if (inRotation(u)) providers.add(u.provider);
  const unknown = providers.size - known.length;
  const at = Math.floor((providers.size - 1) / 2);
  if (at < unknown) return undefined;
  known.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return known[at - unknown];
}

/**
 * Recomputes each upstream's lag (blocks behind the chain's head, 0 when ahead) and whether it is
 * suspect. Called after a probe round, a tracker round, and when an answer raised a head.
 */
export function refreshChain(chain: Chain): void {
  for (const u of chain.upstreams) chainOf.set(u, chain);
  const head = chainHead(chain);
  const limit = head === undefined ? undefined : head + BigInt(chainHeadSettings(chain).suspectBlocks);
  for (const u of chain.upstreams) {
    const h = u.health;
    const s = stateOf(u);
    if (h.head === undefined || head === undefined) {
      h.suspect = false;
      s.cap = undefined;
      continue;
    }
    h.lag = h.head < head ? Number(head - h.head) : 0;
    // Above the chain's head by more than suspectBlocks, which lies within suspectBlocks of the median.
    h.suspect = inRotation(u) && h.head > limit!;
    s.cap = h.suspect ? head : undefined;
  }
  notify(chain);
}

/** The head an upstream is believed to have: its latest, capped at the chain's head if suspect. */
export function believedHead(u: Upstream): bigint | undefined {
  const head = u.health.head;
  const cap = states.get(u)?.cap;
  return head !== undefined && cap !== undefined && cap < head ? cap : head;
}

// ---------------------------------------------------------------------------------------------
// Waiting for heads

const listeners = new WeakMap<Chain, Set<() => void>>();

function notify(chain: Chain): void {
  const set = listeners.get(chain);
  if (set) for (const fn of [...set]) fn();
}

/** Chains whose pipeline closed: no head will come any more (endHeadWaits). */
const ended = new WeakSet<Chain>();

/**
 * The chain's pipeline closed (rpcPipeline's close()): the tracker and probes are stopped, so no
 * head will come. Wakes the waits for heads (onHeads), which end at once (headsEnded).
 */
export function endHeadWaits(chain: Chain): void {
  ended.add(chain);
  notify(chain);
}

/** Whether the chain's pipeline closed: a wait for its heads would wait for nothing. */
export const headsEnded = (chain: Chain): boolean => ended.has(chain);

/** Calls fn each time the chain's heads were refreshed; returns the unsubscribe function. */
export function onHeads(chain: Chain, fn: () => void): () => void {
  let set = listeners.get(chain);
  if (!set) listeners.set(chain, (set = new Set()));
  set.add(fn);
  return () => set.delete(fn);
}

// ---------------------------------------------------------------------------------------------
// Observing answers (the request path: cheap, no JSON parse of large bodies)

/** Methods whose result carries the block it was read from, and the key that holds it: the method table's `seenBlock`, derived once. */
export const observedKey: ReadonlyMap<string, string> = new Map(methodsWhere((e) => e.seenBlock !== undefined).map((m) => [m, methods[m]!.seenBlock!]));

/** Only the start of an answer is searched: a block's `number` comes before its transactions. */
const observeWindow = 64 * 1024;

const resultKey = Buffer.from('"result"');

/** The quoted keys firstQuantity looks for, as bytes: made once per key, not per answer. */
const needles = new Map<string, Buffer>();

function firstQuantity(body: Buffer, key: string): bigint | undefined {
  const window = body.length > observeWindow ? body.subarray(0, observeWindow) : body;
  let needle = needles.get(key);
  if (needle === undefined) needles.set(key, (needle = Buffer.from(`"${key}"`)));
  const at = window.indexOf(needle);
  if (at < 0) return undefined;
  return quantityAt(window, at + key.length + 2, Math.min(window.length, at + key.length + 64));
}

/**
 * The quantity in the bytes [from, end) taken as latin1, as `/^\s*:\s*"(0x[0-9a-fA-F]{1,16})"/`
 * reads it (whitespace, a colon, whitespace, then a quoted 0x quantity of 1 to 16 hex digits),
 * read off the bytes: no string, match or regex run per answer.
 */
function quantityAt(bytes: Buffer, from: number, end: number): bigint | undefined {
  let i = from;
  while (i < end && isSpace(bytes[i]!)) i++;
  if (i >= end || bytes[i] !== 0x3a /* : */) return undefined;
  i++;
  while (i < end && isSpace(bytes[i]!)) i++;
  if (end - i < 5 || bytes[i] !== 0x22 /* " */ || bytes[i + 1] !== 0x30 /* 0 */ || bytes[i + 2] !== 0x78 /* x */) return undefined;
  const digits = i + 3;
  let j = digits;
  // (up to 13 digits, 52 bits, the value is exact in a number)
  let value = 0;
  while (j < end && j - digits < 16) {
    const d = hexValue(bytes[j]!);
    if (d < 0) break;
    value = value * 16 + d;
    j++;
  }
  if (j === digits || j >= end || bytes[j] !== 0x22 /* " */) return undefined;
  return j - digits <= 13 ? BigInt(value) : BigInt(bytes.toString('latin1', digits - 2, j));
}

/** `\s` of a latin1 byte: tab to carriage return, space, and no-break space (0xa0). */
const isSpace = (b: number): boolean => (b >= 0x09 && b <= 0x0d) || b === 0x20 || b === 0xa0;

function hexValue(b: number): number {
  if (b >= 0x30 && b <= 0x39) return b - 0x30;
  if (b >= 0x61 && b <= 0x66) return b - 0x57;
  if (b >= 0x41 && b <= 0x46) return b - 0x37;
  return -1;
}

/**
 * Heads seen in an answer passing through (single calls only; a batch answer is not parsed on
 * the request path): an `eth_blockNumber` result, a block's `number`, a receipt's or
 * transaction's `blockNumber`. The answer proves the upstream has that block, so its head is at
 * least that; it is never lowered by an answer. Cheap: a bounded byte search, no JSON parse.
 */
export function observe(u: Upstream, call: RpcCall | undefined, body: Buffer): void {
  if (!call) return;
  let seen: bigint | undefined;
  if (call.method === 'eth_blockNumber') seen = firstQuantity(body, 'result');
  else {
    const key = observedKey.get(call.method);
    if (key === undefined) return;
    // Only a result is a block seen, not an error's message or data: its "result" key comes
    // right after "jsonrpc" and "id" (a body whose first 256 bytes lack it is not observed).
    if (!body.subarray(0, 256).includes(resultKey)) return;
    seen = firstQuantity(body, key);
  }
  if (seen === undefined) return;
  if (recordHead(u, 'latest', seen, 'answer')) {
    const chain = chainOf.get(u);
    if (chain) refreshChain(chain);
  }
}

