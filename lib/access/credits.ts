/**
 * What an answer costs in credits, and the headers that tell the client.
 *
 * An answer costs its method's weight times the upstream calls it took (N=3 costs three times
 * N=1; a hedge or a missing vote's extra call counts too), at least `minimum`; an answer from the
 * cache costs `cacheHit`, whatever the method. The default weights follow the relative costs
 * providers publish for the same methods (Alchemy's compute units per method: `eth_chainId` 0,
 * `eth_blockNumber` 10, `eth_getBalance` 20, `eth_call` 26, `eth_getLogs` 60,
 * `eth_sendRawTransaction` 40), in the same unit, with every method at 1 at least; a method not in
 * the table weighs `defaultWeight` (20, an ordinary read). The operator overrides any of them.
 *
 * `CreditEngine` joins the weights to a store of budgets (buckets.ts): `reserve` takes the
 * estimate (weight × N, summed over a batch's calls) before the upstream calls, `settle` charges
 * the real cost after the answer (a refund when it cost less).
 */
import type { BucketLimits, CreditStore, Remaining, Reservation, Verdict } from './buckets.js';

/** Credits per upstream call, by method. */
export const defaultWeights: Readonly<Record<string, number>> = Object.freeze({
  // Answered from what a node knows at once.
  eth_chainId: 1,
  net_version: 1,
  net_listening: 1,
  eth_syncing: 1,
  eth_protocolVersion: 1,
  web3_clientVersion: 1,
  // Light: the head and fee oracles.
  eth_blockNumber: 10,
  eth_feeHistory: 10,
  eth_maxPriorityFeePerGas: 10,
  eth_blobBaseFee: 10,
  eth_uninstallFilter: 10,
  eth_accounts: 10,
  eth_gasPrice: 20,
  // Reads of one item of state or history.
  eth_getBalance: 20,
  eth_getCode: 20,
  eth_getStorageAt: 20,
  eth_getTransactionCount: 20,
  eth_getProof: 20,
  eth_getBlockByNumber: 20,
  eth_getBlockByHash: 20,
  eth_getTransactionByHash: 20,
  eth_getTransactionReceipt: 20,
  eth_getTransactionByBlockHashAndIndex: 20,
  eth_getTransactionByBlockNumberAndIndex: 20,
  eth_getBlockTransactionCountByHash: 20,
  eth_getBlockTransactionCountByNumber: 20,
  eth_getUncleByBlockHashAndIndex: 20,
  eth_getUncleByBlockNumberAndIndex: 20,
  eth_getUncleCountByBlockHash: 20,
  eth_getUncleCountByBlockNumber: 20,
  eth_newFilter: 20,
  eth_newBlockFilter: 20,
  eth_newPendingTransactionFilter: 20,
  eth_getFilterChanges: 20,
  // Execution: the node runs code.
  eth_call: 26,
  eth_estimateGas: 26,
  eth_createAccessList: 26,
  eth_simulateV1: 40,
  // Ranges: the node scans many blocks.
  eth_getLogs: 60,
  eth_getFilterLogs: 60,
  eth_getBlockReceipts: 60,
  // Writes.
  eth_sendRawTransaction: 40,
  eth_sendRawTransactionSync: 40,
  // Traces re-execute whole transactions or blocks.
  debug_traceTransaction: 100,
  debug_traceCall: 100,
  debug_traceBlockByNumber: 300,
  debug_traceBlockByHash: 300,
  trace_transaction: 100,
  trace_block: 300,
  trace_filter: 300,
});

/** The operator's overrides; each absent field keeps its default. */
export interface CostSettings {
  /** Credits per upstream call for these methods (over the default table). */
  weights?: Readonly<Record<string, number>>;
  /** A method in neither table (default 20). */
  defaultWeight?: number;
  /** An answer from the cache of confirmed answers (default 1). */
  cacheHit?: number;
  /** The least an answer costs, an error answered without an upstream call included (default 1). */
  minimum?: number;
}

const noOverrides: CostSettings = {};

/** The credits of one upstream call of `method`. */
export function weightOf(method: string, overrides: CostSettings = noOverrides): number {
  const own = overrides.weights?.[method];
  if (own !== undefined) return own;
  const known = Object.hasOwn(defaultWeights, method) ? defaultWeights[method] : undefined;
  return known ?? overrides.defaultWeight ?? 20;
}

/** What an answer of `method` cost: its weight × the upstream calls it took, or the cache hit's price. */
export function costOf(method: string, upstreamCalls: number, cacheHit: boolean, overrides: CostSettings = noOverrides): number {
  const minimum = overrides.minimum ?? 1;
  if (cacheHit) return overrides.cacheHit ?? 1;
  return Math.max(minimum, weightOf(method, overrides) * Math.max(0, upstreamCalls));
}

/** The estimate reserved before the calls: each method's weight × N (at least the minimum each). */
export function estimateOf(methods: string | readonly string[], n: number, overrides: CostSettings = noOverrides): number {
  if (typeof methods === 'string') return costOf(methods, Math.max(1, n), false, overrides);
  let sum = 0;
  for (const method of methods) sum += costOf(method, Math.max(1, n), false, overrides);
  return sum;
}

/** One answered call of a request, for its real cost. */
export interface Spent {
  method: string;
  upstreamCalls: number;
  cacheHit: boolean;
}

/** The budgets of client keys priced in credits: reserve the estimate, settle the real cost. */
export class CreditEngine {
  constructor(
    readonly store: CreditStore,
    readonly costs: CostSettings = noOverrides,
  ) {}

  /** Reserves the estimate of `methods` at `n` confirmations for `key`. */
  reserve(key: string, limits: BucketLimits, methods: string | readonly string[], n: number): Promise<Verdict> {
    return this.store.take(key, limits, estimateOf(methods, n, this.costs));
  }

  /** The real cost of what was answered, settled against the reservation. */
  async settle(reservation: Reservation, spent: readonly Spent[]): Promise<Remaining & { credits: number }> {
    let credits = 0;
    for (const s of spent) credits += costOf(s.method, s.upstreamCalls, s.cacheHit, this.costs);
    const left = await this.store.settle(reservation, credits);
    return { credits, remainingSecond: left.remainingSecond, remainingDay: left.remainingDay };
  }
}

/** The answer's cost (0 when refused). */
export const creditsHeader = 'X-Credits';
/** Whole credits in the key's per-second bucket. */
export const remainingSecondHeader = 'X-Credits-Remaining-Second';
/** Credits left in the key's day (until 00:00 UTC). */
export const remainingDayHeader = 'X-Credits-Remaining-Day';

/**
 * The headers of an answer: its cost and what the key has left (a limit not set, or not known,
 * is left out); with `retryAfterSeconds` above 0 (a refusal: HTTP 429), `Retry-After` too.
 */
export function creditHeaders(credits: number, left: Remaining, retryAfterSeconds = 0): Array<[string, string]> {
  const headers: Array<[string, string]> = [[creditsHeader, String(credits)]];
  if (Number.isFinite(left.remainingSecond)) headers.push([remainingSecondHeader, String(Math.floor(left.remainingSecond))]);
  if (Number.isFinite(left.remainingDay)) headers.push([remainingDayHeader, String(Math.floor(left.remainingDay))]);
  if (retryAfterSeconds > 0) headers.push(['Retry-After', String(Math.ceil(retryAfterSeconds))]);
  return headers;
}
