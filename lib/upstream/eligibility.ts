/**
 * Eligibility: the predicates the agreement loop calls (pure functions of a call and the heads
 * tracked by heads.ts), the bounded wait for heads, and the -32016 error. A pinned read counts a
 * vote only from an upstream known to have the block: for a block number (a block parameter,
 * EIP-1898 `blockNumber`, eth_getLogs `toBlock`, a resolved `safe`/`finalized`), an upstream whose
 * head is at or above it; for a hash, whether the upstream has it shows only in its answer, and
 * an answer "as if it lacks the block" (answersAsMissing) is not a vote for "empty" when another
 * upstream has it.
 */
import { BlockNotAvailableError } from '../errors.js';
import type { RpcCall } from '../jsonrpc/types.js';
import { believedHead, chainHead, chainHeadSettings, inRotation, lowerMedian, onHeads } from './heads.js';
import type { Chain, Upstream } from './registry.js';

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
 * Where each method carries its block: an index into params, or 'filter' (eth_getLogs). Our own
 * table until the method table of issue 25 (lib/jsonrpc/methods.ts) exports the pins.
 */
const blockAt: Readonly<Record<string, number | 'filter'>> = {
  eth_getBlockByNumber: 0,
  eth_getBlockTransactionCountByNumber: 0,
  eth_getTransactionByBlockNumberAndIndex: 0,
  eth_getUncleByBlockNumberAndIndex: 0,
  eth_getUncleCountByBlockNumber: 0,
  eth_getBlockReceipts: 0,
  eth_getBalance: 1,
  eth_getCode: 1,
  eth_getTransactionCount: 1,
  eth_call: 1,
  eth_createAccessList: 1,
  eth_estimateGas: 1,
  eth_getStorageAt: 2,
  eth_getProof: 2,
  eth_getLogs: 'filter',
};

const blockHashAt: Readonly<Record<string, number>> = {
  eth_getBlockByHash: 0,
  eth_getBlockTransactionCountByHash: 0,
  eth_getTransactionByBlockHashAndIndex: 0,
  eth_getUncleByBlockHashAndIndex: 0,
  eth_getUncleCountByBlockHash: 0,
};

const txHashAt: Readonly<Record<string, number>> = {
  eth_getTransactionByHash: 0,
  eth_getTransactionReceipt: 0,
};

const hash32 = /^0x[0-9a-f]{64}$/i;

function needOf(value: unknown): BlockNeed {
  if (typeof value === 'string') {
    const tag = value.toLowerCase();
    if (tag === 'earliest') return { kind: 'number', block: 0n };
    if (tag === 'safe' || tag === 'finalized') return { kind: 'tag', tag };
    if (/^0x[0-9a-f]+$/i.test(value)) return { kind: 'number', block: BigInt(value) };
    if (hash32.test(value)) return { kind: 'hash', hash: value, of: 'block' }; // eth_getBlockReceipts takes a hash too
    return { kind: 'head' };
  }
  if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
    const o = value as { blockHash?: unknown; blockNumber?: unknown };
    if (typeof o.blockHash === 'string') return { kind: 'hash', hash: o.blockHash, of: 'block' };
    if (o.blockNumber !== undefined) return needOf(o.blockNumber);
  }
  return { kind: 'head' };
}

/**
 * The block a call needs; undefined for a method not tied to a block (eth_chainId, …).
 * eth_getLogs needs its `toBlock` (the highest block of its range) or its `blockHash`.
 */
export function blockNeeded(call: RpcCall): BlockNeed | undefined {
  const m = call.method;
  if (Object.hasOwn(blockAt, m)) {
    const at = blockAt[m]!;
    if (at === 'filter') {
      const f = call.params[0] as { blockHash?: unknown; toBlock?: unknown } | undefined;
      if (typeof f !== 'object' || f === null) return { kind: 'head' };
      if (typeof f.blockHash === 'string') return { kind: 'hash', hash: f.blockHash, of: 'block' };
      return needOf(f.toBlock);
    }
    return needOf(call.params[at]);
  }
  if (Object.hasOwn(blockHashAt, m)) {
    const hash = call.params[blockHashAt[m]!];
    return typeof hash === 'string' ? { kind: 'hash', hash, of: 'block' } : undefined;
  }
  if (Object.hasOwn(txHashAt, m)) {
    const hash = call.params[txHashAt[m]!];
    return typeof hash === 'string' ? { kind: 'hash', hash, of: 'transaction' } : undefined;
  }
  return undefined;
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
 * of them is unknown); without, the chain's (the median of its upstreams'). Also `earliest`
 * (0) and a hex number; `latest`/`pending` move: undefined.
 */
export function resolveTag(chain: Chain, tag: string, voters?: readonly Upstream[]): bigint | undefined {
  const t = tag.toLowerCase();
  if (t === 'earliest') return 0n;
  if (/^0x[0-9a-f]+$/i.test(tag)) return BigInt(tag);
  if (t !== 'safe' && t !== 'finalized') return undefined;
  if (!voters) {
    const values = chain.upstreams.flatMap((u) => (inRotation(u) && u.health[t] !== undefined ? [u.health[t]!] : []));
    return lowerMedian(values);
  }
  let low: bigint | undefined;
  for (const u of voters) {
    const v = u.health[t];
    if (v === undefined) return undefined;
    if (low === undefined || v < low) low = v;
  }
  return low;
}

/** The block number a need comes to, where known (a tag resolved on the chain, or voters). */
export function neededNumber(chain: Chain, need: BlockNeed | undefined, voters?: readonly Upstream[]): bigint | undefined {
  if (!need) return undefined;
  if (need.kind === 'number') return need.block;
  if (need.kind === 'tag') return resolveTag(chain, need.tag, voters);
  return undefined;
}

/**
 * Whether an upstream's vote may count for these calls (every member of a batch): for each
 * block-number pin (or resolved tag), the upstream must be known to have the block. An upstream
 * whose head is not known is eligible only while no upstream of the chain has a known head (the
 * head tracker and probes are off: today's behaviour). Hash pins are eligible here; their answers
 * are judged by answersAsMissing.
 */
export function eligible(chain: Chain, u: Upstream, calls: readonly RpcCall[]): boolean {
  const top = highestBlock(chain, calls);
  if (top === undefined) return true;
  const has = hasBlock(u, top);
  if (has !== undefined) return has;
  return !chain.upstreams.some((o) => o.health.head !== undefined);
}

/** The highest block number the calls need (undefined when none needs a known number). */
export function highestBlock(chain: Chain, calls: readonly RpcCall[]): bigint | undefined {
  let top: bigint | undefined;
  for (const call of calls) {
    const n = neededNumber(chain, blockNeeded(call));
    if (n !== undefined && (top === undefined || n > top)) top = n;
  }
  return top;
}

/**
 * Results that mean "this node does not have it": null for these methods (a node that lacks the
 * block or transaction answers null, as it would for one that does not exist).
 */
const nullMeansMissing: ReadonlySet<string> = new Set([
  'eth_getBlockByHash',
  'eth_getBlockByNumber',
  'eth_getBlockReceipts',
  'eth_getBlockTransactionCountByHash',
  'eth_getBlockTransactionCountByNumber',
  'eth_getTransactionByHash',
  'eth_getTransactionReceipt',
  'eth_getTransactionByBlockHashAndIndex',
  'eth_getTransactionByBlockNumberAndIndex',
  'eth_getUncleByBlockHashAndIndex',
  'eth_getUncleByBlockNumberAndIndex',
  'eth_getUncleCountByBlockHash',
  'eth_getUncleCountByBlockNumber',
]);

/**
 * Error messages of a node that lacks the block or its state (case-insensitive), by client:
 * - go-ethereum (and Bor, op-geth): "header not found" (a state read at a number it does not
 *   have), "unknown block" (eth_getLogs / eth_call by a hash it does not have), "missing trie
 *   node" and "historical state … is not available" (state pruned);
 * - Erigon, Besu, Reth: "block not found" (Reth also "unknown block", "header not found");
 * - Nethermind: "… could not be found" (e.g. "Block 0x… could not be found") and "header not found";
 * - Anvil: "block … not found", "BlockOutOfRange", "is in the future".
 */
export const missingBlockErrors: readonly RegExp[] = [
  /header not found/i,
  /unknown block/i,
  /block(?: [^\s]+)? not found/i,
  /could not be found/i,
  /missing trie node/i,
  /historical state .*(?:not available|unavailable)/i,
  /block ?out ?of ?range/i,
  /block .*in the future/i,
];

/**
 * Whether an answer reads as "this node lacks the block": a null result of a method that
 * returns null for an unknown block or transaction, or an unknown-block error (missingBlockErrors).
 * Such an answer is not a vote for "empty" when another upstream has the block.
 */
export function answersAsMissing(call: RpcCall, answer: { result?: unknown; error?: { message?: unknown } }): boolean {
  if (answer.error !== undefined) {
    const message = typeof answer.error?.message === 'string' ? answer.error.message : '';
    return missingBlockErrors.some((re) => re.test(message));
  }
  return answer.result === null && nullMeansMissing.has(call.method);
}

/** A "missing" answer is short (a null or an error message): a longer body is not parsed. */
const missingMaxBytes = 4096;

/**
 * answersAsMissing on the raw answer of a single call (the loop's `assessed.body`): parsed only
 * when short, so a real answer costs one length check.
 */
export function answerBodyAsMissing(call: RpcCall, body: Buffer): boolean {
  if (body.length > missingMaxBytes) return false;
  try {
    const answer = JSON.parse(body.toString('utf8')) as unknown;
    return typeof answer === 'object' && answer !== null && !Array.isArray(answer) && answersAsMissing(call, answer as { result?: unknown; error?: { message?: unknown } });
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------------
// Waiting, and the error when the wait ends without enough upstreams

/** Distinct providers among the eligible upstreams (one vote each). */
export function eligibleProviders(chain: Chain, calls: readonly RpcCall[], among: readonly Upstream[] = chain.upstreams): number {
  const providers = new Set<string>();
  for (const u of among) if (inRotation(u) && eligible(chain, u, calls)) providers.add(u.provider);
  return providers.size;
}

/**
 * Waits at most `waitMs` (default: the chain's heads.waitMs) until `required` providers are
 * eligible for the calls, waking on each head refresh (no polling). Resolves true when they
 * are, false at the end of the wait or on abort.
 */
export function waitForEligible(
  chain: Chain,
  calls: readonly RpcCall[],
  required: number,
  options: { waitMs?: number; signal?: AbortSignal; among?: readonly Upstream[] } = {},
): Promise<boolean> {
  const check = () => eligibleProviders(chain, calls, options.among) >= required;
  if (check()) return Promise.resolve(true);
  if (options.signal?.aborted) return Promise.resolve(false);
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
    });
    const timer = setTimeout(() => done(check()), options.waitMs ?? chainHeadSettings(chain).waitMs);
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
  const eligibleCount = eligibleProviders(chain, calls);
  const head = chainHead(chain);
  return new BlockNotAvailableError(
    `${shown} is not yet available on ${required} upstream${required === 1 ? '' : 's'} (${eligibleCount} ha${eligibleCount === 1 ? 's' : 've'} it after waiting ${Math.round(waitedMs)} ms): retry shortly`,
    {
      ...(id !== undefined ? { id } : {}),
      headers: { 'Retry-After': String(Math.max(1, Math.ceil(chainHeadSettings(chain).waitMs / 1000))) },
      data: {
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
      },
    },
  );
}

const hex = (n: bigint | undefined) => (n === undefined ? null : `0x${n.toString(16)}`);
