/**
 * Eligibility: the predicates the agreement loop calls (pure functions of a call and the heads
 * tracked by lib/health/heads.ts) and the resolution of `safe`/`finalized`; what an answer that
 * says "not there" looks like is missing.ts, the bounded waits and the -32016 errors head-waits.ts.
 * Where a call's pin sits comes from the one method table (lib/jsonrpc/methods.ts
 * `pinOf`) and the config's declared pins (the chain's `extraConfirmable`). A pinned read counts
 * a vote only from an upstream known to have the block: for a block number (a block parameter,
 * EIP-1898 `blockNumber`, eth_getLogs `toBlock`, a resolved `safe`/`finalized`), an upstream whose
 * head is at or above it; for a hash, whether the upstream has it shows only in its answer, and
 * an answer "as if it lacks it" (missing.ts answerBodyAsMissing) is not a vote for "not found" when another
 * upstream has it (lib/verify/eligibility-policy.ts).
 */
import { resolvableTags, type CustomMethods } from '../jsonrpc/methods.js';
import { pinAtOf, pinOf } from '../jsonrpc/classify.js';
import type { RpcCall, RpcPayload } from '../jsonrpc/types.js';
import { scanText } from './answers/answers.js';
import { believedHead, chainHead, inRotation } from '../health/heads.js';
import { headsPolled } from '../health/tracker.js';
import type { Chain, Upstream } from '../upstream/registry.js';

/** What block a call needs an upstream to have. */
export type BlockNeed =
  /** A block number (a hex number, `earliest`, EIP-1898 `blockNumber`, eth_getLogs `toBlock`). */
  | { kind: 'number'; block: bigint }
  /** `safe` or `finalized`: a number once resolved (resolveTag). */
  | { kind: 'tag'; tag: 'safe' | 'finalized' }
  /** A block or transaction hash: whether an upstream has it is known only from its answer. */
  | { kind: 'hash'; hash: string; of: 'block' | 'transaction' }
  /** `latest`, `pending` or no block parameter: whatever head the upstream has. */
  | { kind: 'head' };

/**
 * The block a call needs, read from where the method table (lib/jsonrpc/methods.ts `pinOf`) or
 * the config (`custom`, the chain's `extraConfirmable`) says its pin is; undefined for a method
 * not tied to a block (eth_chainId, …) or a malformed pin. eth_getLogs needs its `toBlock` (the
 * highest block of its range) or its `blockHash`.
 */
export function blockNeeded(call: RpcCall, custom?: CustomMethods): BlockNeed | undefined {
  const pin = pinOf(call, custom);
  switch (pin.kind) {
    case 'number':
      return { kind: 'number', block: pin.block };
    case 'tag':
      return resolvableTags.has(pin.tag) ? { kind: 'tag', tag: pin.tag as 'safe' | 'finalized' } : { kind: 'head' };
    case 'blockHash':
      return { kind: 'hash', hash: pin.hash, of: 'block' };
    case 'txHash':
      return { kind: 'hash', hash: pin.hash, of: 'transaction' };
    case 'none':
      return undefined;
  }
}

/** The hash a single call is pinned to (a block hash, EIP-1898 `blockHash`, a transaction hash), if any. */
export function hashPinned(chain: Chain, call: RpcCall): Extract<BlockNeed, { kind: 'hash' }> | undefined {
  const need = blockNeeded(call, chain.extraConfirmable);
  return need?.kind === 'hash' ? need : undefined;
}

/**
 * Whether the upstream is known to have block n: true when its latest head is at or above it,
 * false below it, undefined when its head is not known. A suspect upstream is believed up to the
 * chain's head only.
 */
export function hasBlock(u: Upstream, n: bigint): boolean | undefined {
  const head = believedHead(u);
  return head === undefined ? undefined : n <= head;
}

/**
 * `safe` or `finalized` as a block number, once known: with `voters`, the lowest of their
 * safe/finalized heads (a block every one of them holds as safe/finalized; undefined while one
 * of them is unknown); without, the chain's (the lower median of its providers'). Also `earliest`
 * (0) and a hex number; `latest`/`pending` move: undefined.
 */
export function resolveTag(chain: Chain, tag: string, voters?: readonly Upstream[]): bigint | undefined {
  const t = tag.toLowerCase();
  if (t === 'earliest') return 0n;
  if (/^0x[0-9a-f]+$/i.test(tag)) return BigInt(tag);
  if (t !== 'safe' && t !== 'finalized') return undefined;
  // The chain's: the lower median of its providers' (each provider once, heads.ts chainHead).
  if (!voters) return chainHead(chain, t);
  let low: bigint | undefined;
  for (const u of voters) {
    const v = u.health[t];
    if (v === undefined) return undefined;
    if (low === undefined || v < low) low = v;
  }
  return low;
}

/** What resolveTags did: each `safe`/`finalized` tag it replaced, with the block it became. */
export interface ResolvedTags {
  payload: RpcPayload;
  resolved: { tag: string; block: bigint }[];
}

/**
 * `safe`, `finalized` and `earliest` resolved for one request: each such tag where a call's pin
 * sits (the method table's or the config's: a block parameter, EIP-1898 `blockNumber`, eth_getLogs
 * `fromBlock`/`toBlock`) is replaced by the chain's robust safe/finalized head (resolveTag: the
 * lower median of the providers' heads, which heads.ts derives as latest − finality depth on
 * nodes without the tags), or by block 0 (`earliest`, which a node that expired its history
 * would read as its cutoff). The upstreams are then asked for that number, and the read is pinned
 * to it. The ids and every other parameter are kept; `raw` is written anew (what HTTP upstreams
 * receive); the answers are still relayed as the nodes give them.
 * Undefined when no call names such a tag, when one cannot be resolved (the heads are not
 * tracked for the chain: the request stays unconfirmable), or when the body holds a number that
 * would not be written back as the client wrote it (1e400, 2^64 as a JSON number).
 * Works on a single call and on a batch alike (each member's tags resolved).
 */
export function resolveTags(chain: Chain, payload: RpcPayload): ResolvedTags | undefined {
  // The common case first (no tag to resolve): no closure, no allocation. This runs for every unconfirmable request.
  let any = false;
  for (const call of payload.calls) if ((any = namesResolvableTag(call, chain.extraConfirmable))) break;
  if (!any) return undefined;
  const resolved: { tag: string; block: bigint }[] = [];
  let unresolvable = false;
  const swap = (value: unknown, object: boolean): unknown => {
    if (typeof value === 'string') {
      const tag = value.toLowerCase();
      if (!resolvableTags.has(tag)) return value;
      const block = resolveTag(chain, tag);
      if (block === undefined) {
        unresolvable = true;
        return value;
      }
      resolved.push({ tag, block });
      return `0x${block.toString(16)}`;
    }
    if (object && typeof value === 'object' && value !== null && !Array.isArray(value)) {
      const o = value as Record<string, unknown>;
      if (o.blockHash === undefined && typeof o.blockNumber === 'string' && resolvableTags.has(o.blockNumber.toLowerCase())) {
        return { ...o, blockNumber: swap(o.blockNumber, false) };
      }
    }
    return value;
  };
  const rewrite = (call: RpcCall): RpcCall => {
    const at = pinAtOf(call.method, chain.extraConfirmable);
    if (at?.kind === 'block') {
      const value = call.params[at.at];
      const next = swap(value, at.hash);
      if (next === value) return call;
      const params = [...call.params];
      params[at.at] = next;
      return { ...call, params };
    }
    if (at?.kind === 'filter') {
      const f = call.params[0];
      if (typeof f !== 'object' || f === null || Array.isArray(f)) return call;
      const filter = f as Record<string, unknown>;
      const from = swap(filter.fromBlock, false);
      const to = swap(filter.toBlock, false);
      if (from === filter.fromBlock && to === filter.toBlock) return call;
      const changed = { ...filter, ...(from !== filter.fromBlock && { fromBlock: from }), ...(to !== filter.toBlock && { toBlock: to }) };
      return { ...call, params: [changed, ...call.params.slice(1)] };
    }
    return call;
  };
  let calls: RpcCall[] | undefined;
  payload.calls.forEach((call, i) => {
    const next = rewrite(call);
    if (next !== call) calls ??= payload.calls.slice(0, i);
    calls?.push(next);
  });
  if (!calls) return undefined;
  if (resolved.length === 0 || unresolvable) return undefined;
  if (scanText(payload.raw.toString('utf8')).inexact.length > 0) return undefined;
  const request = (c: RpcCall) => ({ jsonrpc: '2.0', id: c.id, method: c.method, params: c.params });
  const raw = Buffer.from(JSON.stringify(payload.batch ? calls.map(request) : request(calls[0]!)));
  return { payload: { calls, batch: payload.batch, raw }, resolved };
}

/** `safe`, `finalized` or `earliest` in any case (by length first: a hex number or `latest` costs no lower-casing). */
const isTag = (v: unknown): boolean => typeof v === 'string' && (v.length === 4 || v.length === 8 || v.length === 9) && resolvableTags.has(v.toLowerCase());
const isResolvableTag = (v: unknown): boolean => isTag(v) || (typeof v === 'object' && v !== null && isTag((v as { blockNumber?: unknown }).blockNumber));

/** Whether a call names `safe`, `finalized` or `earliest` where its pin sits (a block parameter, an EIP-1898 object, a filter's range). */
function namesResolvableTag(call: RpcCall, custom: CustomMethods): boolean {
  const at = pinAtOf(call.method, custom);
  if (at?.kind === 'block') return isResolvableTag(call.params[at.at]);
  if (at?.kind !== 'filter') return false;
  const f = call.params[0] as { fromBlock?: unknown; toBlock?: unknown } | null | undefined;
  return typeof f === 'object' && f !== null && (isResolvableTag(f.fromBlock) || isResolvableTag(f.toBlock));
}

/** The block number a need comes to, where known (a tag resolved on the chain, or voters). */
export function neededNumber(chain: Chain, need: BlockNeed | undefined, voters?: readonly Upstream[]): bigint | undefined {
  if (!need) return undefined;
  if (need.kind === 'number') return need.block;
  if (need.kind === 'tag') return resolveTag(chain, need.tag, voters);
  return undefined;
}

/**
 * Whether an upstream's vote may count for these calls (every member of a batch) when it is not
 * an absence: for each block-number pin (or resolved tag), the upstream must be known to have the
 * block. An upstream whose head is not known is eligible only while no upstream of the chain has
 * a known head (the head tracker and probes are off). An answer that looks missing is held to
 * knownToHave instead. Hash pins are eligible here; their answers are judged by answersAsMissing.
 */
export function eligible(chain: Chain, u: Upstream, calls: readonly RpcCall[]): boolean {
  const top = highestBlock(chain, calls);
  if (top === undefined) return true;
  const has = hasBlock(u, top);
  if (has !== undefined) return has;
  return !chain.upstreams.some((o) => o.health.head !== undefined);
}

/**
 * Whether an upstream may vouch that the block the calls need holds nothing (an answer that looks
 * missing): its head, as polled or seen in an answer (a lower bound: enough to prove it has the
 * block), is known to be at or above the block. An upstream whose head is unknown never may: its
 * `null` cannot be told from a lagging node's. True for calls that need no known number.
 */
export function knownToHave(chain: Chain, u: Upstream, calls: readonly RpcCall[]): boolean {
  const top = highestBlock(chain, calls);
  return top === undefined || hasBlock(u, top) === true;
}

/**
 * The best credible head: the highest head of an upstream in rotation that is not suspect (not
 * the median: an absence is vouched for only by providers that could have seen the newest block
 * any credible provider has). Undefined before any head.
 */
export function bestCredibleHead(chain: Chain): bigint | undefined {
  let best: bigint | undefined;
  for (const u of chain.upstreams) {
    const h = u.health.head;
    if (h === undefined || u.health.suspect || !inRotation(u)) continue;
    if (best === undefined || h > best) best = h;
  }
  return best;
}

/**
 * Whether an upstream's "not found" (a null, an empty list, an unknown-block error) may count as
 * a vote: its head is at the chain's best credible head, so it could have seen what the newest
 * block holds. False while its head is unknown, and while no upstream of the chain was asked for
 * its head (heads seen only in answers are lower bounds: nothing says which head is the best).
 */
export function atBestHead(chain: Chain, u: Upstream): boolean {
  if (!headsPolled(chain)) return false;
  const head = believedHead(u);
  if (head === undefined) return false;
  const best = bestCredibleHead(chain);
  return best !== undefined && head >= best;
}

/**
 * Whether the calls need a block above every upstream's known head (believed: a suspect's is
 * capped at the chain's head): no provider can vouch for anything about it. False while the
 * chain's heads are not polled or none is known, and for calls that need no known number.
 */
export function aboveEveryHead(chain: Chain, calls: readonly RpcCall[]): boolean {
  if (!headsPolled(chain)) return false;
  const top = highestBlock(chain, calls);
  if (top === undefined) return false;
  let known = false;
  for (const u of chain.upstreams) {
    if (!inRotation(u)) continue;
    const head = believedHead(u);
    if (head === undefined) continue;
    if (head >= top) return false;
    known = true;
  }
  // No head known at all (every poll failed): nothing says the block is in the future.
  return known;
}

/** Whether one of the calls reads a filter (eth_getLogs and kin: a range, fromBlock to toBlock). */
export function holdsRange(chain: Chain, calls: readonly RpcCall[]): boolean {
  for (const call of calls) if (pinAtOf(call.method, chain.extraConfirmable)?.kind === 'filter') return true;
  return false;
}

/** The highest block number the calls need (undefined when none needs a known number). */
export function highestBlock(chain: Chain, calls: readonly RpcCall[]): bigint | undefined {
  let top: bigint | undefined;
  for (const call of calls) {
    const n = neededNumber(chain, blockNeeded(call, chain.extraConfirmable));
    if (n !== undefined && (top === undefined || n > top)) top = n;
  }
  return top;
}

