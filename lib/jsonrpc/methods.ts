/**
 * Which calls are confirmable (spec 4.3 and B2). Pure.
 *
 * A call is confirmable when its method pins the answer to one block and the block it names
 * cannot move: a hex number, `earliest`, or an EIP-1898 `{blockHash}`/`{blockNumber: hex}`.
 * `latest` and `pending` are not (nodes disagree on them), and neither are `safe` and
 * `finalized`: they advance with the chain too, so two honest nodes a few seconds apart give
 * different answers. A missing or null block parameter means `latest`, as Ethereum nodes read it.
 * Tags compare case-insensitively. Any method not in the table falls through to "not
 * confirmable" (answered by one upstream) unless the config lists it as confirmable.
 */
import { InvalidParamsError } from '../errors.js';
import type { RpcCall } from './types.js';

/** Where a pinned method carries its block, and which parameters before it are required. */
interface PinnedMethod {
  /** Index of the block parameter, or 'filter' for eth_getLogs. */
  block: number | 'filter';
  /** Names of the parameters that must be present (in order, from index 0). */
  required: readonly string[];
  /** Largest number of parameters the method takes. */
  max: number;
  /** A required boolean parameter after the block (eth_getBlockByNumber's full-transactions flag). */
  flagAt?: number;
}

const pinned: Record<string, PinnedMethod> = {
  eth_getBlockByNumber: { block: 0, required: [], max: 2, flagAt: 1 },
  eth_getBlockTransactionCountByNumber: { block: 0, required: [], max: 1 },
  eth_getBalance: { block: 1, required: ['address'], max: 2 },
  eth_getCode: { block: 1, required: ['address'], max: 2 },
  eth_getTransactionCount: { block: 1, required: ['address'], max: 2 },
  // eth_call's optional 3rd and 4th parameters are geth's state and block overrides.
  eth_call: { block: 1, required: ['transaction'], max: 4 },
  eth_getStorageAt: { block: 2, required: ['address', 'storage slot'], max: 3 },
  eth_getLogs: { block: 'filter', required: ['filter'], max: 1 },
};

/** Methods whose answer depends on the head, the mempool or the node: never confirmable. */
export const neverConfirmable: ReadonlySet<string> = new Set([
  'eth_blockNumber',
  'eth_syncing',
  'eth_gasPrice',
  'eth_maxPriorityFeePerGas',
  'eth_estimateGas',
  'eth_sendRawTransaction',
]);

/** Methods confirmable when pinned to a block (the seed table). */
export const pinnedMethods: readonly string[] = Object.keys(pinned);

const movingTags = new Set(['latest', 'pending', 'safe', 'finalized']);
const fixedTags = new Set(['earliest']);
const hexQuantity = /^0x[0-9a-f]+$/i;
const hash32 = /^0x[0-9a-f]{64}$/i;

export interface Classification {
  confirmable: boolean;
  /** Why, in a few words (logged; useful when a user wonders why N was 1). */
  reason: string;
}

/**
 * Classifies one call and validates the parameters omnigate reads. Throws InvalidParamsError
 * (-32602) for a parameter list that no node would accept, so a bad call never reaches an upstream.
 * @param extraConfirmable methods the config adds to the confirmable class (no block parameter).
 */
export function classifyCall(call: RpcCall, extraConfirmable: ReadonlySet<string>): Classification {
  // Object.hasOwn: a client's method name "constructor" or "__proto__" must not find Object's members.
  const rule = Object.hasOwn(pinned, call.method) ? pinned[call.method] : undefined;
  if (rule) return classifyPinned(call, rule);
  if (neverConfirmable.has(call.method)) return { confirmable: false, reason: `${call.method} is never confirmable` };
  if (extraConfirmable.has(call.method)) return { confirmable: true, reason: `${call.method} is configured as confirmable` };
  return { confirmable: false, reason: `${call.method} is not in the confirmable list` };
}

/**
 * Methods whose answer is fixed for a chain (every honest node of the chain gives the same one),
 * so they do not make a batch unconfirmable. ethers v6 adds `eth_chainId` to its batches; without
 * this, every batch of pinned reads it sends would fall to one upstream. On their own they stay
 * unconfirmable (one upstream), as spec B2 says.
 */
export const batchNeutral: ReadonlySet<string> = new Set(['eth_chainId', 'net_version']);

/**
 * A batch is confirmable only if every member is, `batchNeutral` members aside (they are then
 * checked by the N upstreams with the rest); a batch of neutral members only is not.
 */
export function classifyCalls(calls: readonly RpcCall[], extraConfirmable: ReadonlySet<string>): Classification {
  if (calls.length === 1) return classifyCall(calls[0]!, extraConfirmable);
  // Every member is checked (and may throw) before any verdict, whatever its position.
  const verdicts = calls.map((call) => inBatch(call, () => classifyCall(call, extraConfirmable)));
  let pinnedMembers = 0;
  for (const [i, c] of verdicts.entries()) {
    const call = calls[i]!;
    if (c.confirmable) pinnedMembers += 1;
    else if (!batchNeutral.has(call.method)) return { confirmable: false, reason: `batch member ${JSON.stringify(call.id)}: ${c.reason}` };
  }
  return pinnedMembers > 0
    ? { confirmable: true, reason: 'every batch member is confirmable or fixed for the chain' }
    : { confirmable: false, reason: 'the batch has only chain constants (eth_chainId, net_version)' };
}

/** Runs a batch member's check; its error names the member and echoes no id (the batch has none). */
function inBatch(call: RpcCall, fn: () => Classification): Classification {
  try {
    return fn();
  } catch (err) {
    throw new InvalidParamsError(`batch id ${JSON.stringify(call.id)}: ${(err as Error).message}`, { id: null });
  }
}

function classifyPinned(call: RpcCall, rule: PinnedMethod): Classification {
  const { params, method } = call;
  const bad = (message: string) => new InvalidParamsError(`Invalid params for ${method}: ${message}`, { id: call.id });
  if (params.length > rule.max) throw bad(`takes at most ${rule.max} parameter${rule.max > 1 ? 's' : ''}, got ${params.length}`);
  rule.required.forEach((name, index) => {
    if (params[index] === undefined || params[index] === null) throw bad(`params[${index}] (${name}) is required`);
  });
  if (rule.block === 'filter') return classifyFilter(params[0], bad);
  if (rule.flagAt !== undefined && typeof params[rule.flagAt] !== 'boolean') {
    throw bad(`params[${rule.flagAt}] (full transactions flag) must be true or false`);
  }
  return classifyBlock(params[rule.block], `params[${rule.block}]`, true, bad);
}

function classifyBlock(
  value: unknown,
  where: string,
  allowObject: boolean,
  bad: (m: string) => Error,
): Classification {
  if (value === undefined || value === null) return { confirmable: false, reason: `${where} is missing, which means latest` };
  if (typeof value === 'string') {
    const tag = value.toLowerCase();
    if (movingTags.has(tag)) return { confirmable: false, reason: `${where} is "${value}", which moves with the chain head` };
    if (fixedTags.has(tag) || hexQuantity.test(value)) return { confirmable: true, reason: `${where} pins block ${value}` };
  } else if (allowObject && typeof value === 'object' && !Array.isArray(value)) {
    const obj = value as Record<string, unknown>;
    if (typeof obj.blockHash === 'string' && hash32.test(obj.blockHash) && obj.blockNumber === undefined) {
      return { confirmable: true, reason: `${where} pins block hash ${obj.blockHash}` };
    }
    if (obj.blockHash === undefined && typeof obj.blockNumber === 'string') {
      return classifyBlock(obj.blockNumber, `${where}.blockNumber`, false, bad);
    }
  }
  const shapes = allowObject ? 'a hex block number, a block tag or an EIP-1898 object {"blockHash"} / {"blockNumber"}' : 'a hex block number or a block tag';
  throw bad(`${where} must be ${shapes}, got ${preview(value)}`);
}

function classifyFilter(filter: unknown, bad: (m: string) => Error): Classification {
  if (typeof filter !== 'object' || filter === null || Array.isArray(filter)) throw bad('params[0] must be a filter object');
  const f = filter as Record<string, unknown>;
  if (f.blockHash !== undefined) {
    if (f.fromBlock !== undefined || f.toBlock !== undefined) throw bad('a filter with blockHash cannot also have fromBlock or toBlock (EIP-234)');
    if (typeof f.blockHash !== 'string' || !hash32.test(f.blockHash)) throw bad(`blockHash must be a 32-byte hex hash, got ${preview(f.blockHash)}`);
    return { confirmable: true, reason: `filter pins block hash ${f.blockHash}` };
  }
  const from = classifyBlock(f.fromBlock, 'fromBlock', false, bad);
  const to = classifyBlock(f.toBlock, 'toBlock', false, bad);
  if (!from.confirmable) return from;
  if (!to.confirmable) return to;
  return { confirmable: true, reason: 'filter pins fromBlock and toBlock' };
}

/** A short JSON preview of a client value for an error message; never throws on deep nesting. */
function preview(value: unknown): string {
  if (typeof value === 'object' && value !== null) {
    const kind = Array.isArray(value) ? 'an array' : 'an object';
    let text: string;
    try {
      text = JSON.stringify(value);
    } catch {
      return kind;
    }
    return text.length > 80 ? `${kind} ${text.slice(0, 80)}…` : text;
  }
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 80)}…` : text;
}
