/**
 * Whether a confirmed answer may be remembered: it is about a block the chain has finalized, so
 * it can never change. The finalized block is the chain's robust finalized head (lib/health/heads.ts
 * chainHead: the median of the upstreams' reports, never one upstream's word).
 * - A read pinned by block number (eth_getLogs: its `toBlock`): the block is at or below it.
 * - A read pinned by a block or transaction hash: the block the answer names (`blockNumber`, or a
 *   block's `number`) is at or below it. A hash pin's absence (`null`, `[]`) is never kept: the
 *   chain could still fill it.
 * - Never a node's error, a `null` result, a read of the head (`latest`, `pending`) or of a tag
 *   not resolved to a number.
 */
import { chainHead } from '../health/heads.js';
import type { RpcCall } from '../jsonrpc/types.js';
import type { Chain } from '../upstream/registry.js';
import { blockNeeded } from '../verify/eligibility.js';

/** Answers larger than this are not parsed to find their block (a hash pin's); they are not kept. */
const parseLimit = 1 << 20;
/** An answer smaller than this is read whole to refuse a null result or an error. */
const smallAnswer = 64 * 1024;

/** The final block `body` (the confirmed answer to `call`) is about, or undefined when it may not be kept. */
export function finalBlockOf(chain: Chain, call: RpcCall, body: Buffer): bigint | undefined {
  const finalized = chainHead(chain, 'finalized');
  if (finalized === undefined) return undefined;
  const need = blockNeeded(call, chain.extraConfirmable);
  if (need === undefined) return undefined;
  if (need.kind === 'number') {
    if (need.block > finalized) return undefined;
    // A large answer is a result (errors and nulls are small); a small one is read to be sure.
    if (body.length < smallAnswer && !isResult(read(body))) return undefined;
    return need.block;
  }
  if (need.kind !== 'hash' || body.length > parseLimit) return undefined;
  const value = read(body);
  if (!isResult(value)) return undefined;
  const block = blockOfResult((value as { result: unknown }).result);
  return block !== undefined && block <= finalized ? block : undefined;
}

function read(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
}

/** A response object with a result that is not null (and no error). */
function isResult(value: unknown): boolean {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const v = value as { result?: unknown; error?: unknown };
  return v.error === undefined && v.result !== undefined && v.result !== null;
}

/** The block a hash-pinned result is in: a transaction's or receipt's `blockNumber`, a block's `number`, the first receipt's of a list. */
function blockOfResult(result: unknown): bigint | undefined {
  const item = Array.isArray(result) ? result[0] : result;
  if (item === null || typeof item !== 'object') return undefined;
  const { blockNumber, number } = item as { blockNumber?: unknown; number?: unknown };
  const hex = typeof blockNumber === 'string' ? blockNumber : typeof number === 'string' ? number : undefined;
  return hex !== undefined && /^0x[0-9a-fA-F]{1,64}$/.test(hex) ? BigInt(hex) : undefined;
}
