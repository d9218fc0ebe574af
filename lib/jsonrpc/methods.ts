/**
 * Which calls are confirmable (spec 4.3 and B2). Pure.
 *
 * A call is confirmable when its method pins the answer to one block and the block it names
 * cannot move: a hex number, `earliest`, or an EIP-1898 `{blockHash}`/`{blockNumber: hex}`.
 * `latest` and `pending` are not (nodes disagree on them), and neither are `safe` and
 * `finalized`: they advance with the chain too, so two honest nodes a few seconds apart give
 * different answers. A missing or null block parameter means `latest`, as Ethereum nodes read it.
 * Tags compare case-insensitively. The same rule holds for every read of the method table
 * below, pinned by a block number, a block hash or a transaction hash (a hash cannot move).
 * Any method not in the table falls through to "not confirmable" (answered by one upstream)
 * unless the config declares it as confirmable with where its pin is (`declaredMethod`).
 * `pinOf` tells where a call's pin is (for heads and eligibility).
 */
import { InvalidParamsError, MethodNotFoundError } from '../errors.js';
import { goAliasOf } from './parse.js';
import type { RpcCall } from './types.js';
import { writeTable } from './writes.js';

/**
 * Where a method's pin sits:
 * - `block`: a block number or tag at `at`; `hash: true` where a block hash is accepted there too
 *   (the spec's BlockNumberOrTagOrHash: a 32-byte hex string or an EIP-1898 object);
 * - `blockHash` / `txHash`: a 32-byte hash at `at`;
 * - `filter`: eth_getLogs's filter (`fromBlock`/`toBlock`, or `blockHash`);
 * - `none`: the answer depends on no block the call names (chain state, the node, a write).
 */
export type PinAt =
  | { kind: 'block'; at: number; hash: boolean }
  | { kind: 'blockHash'; at: number }
  | { kind: 'txHash'; at: number }
  | { kind: 'filter' }
  | { kind: 'none' };

/** One row of the method table. */
export interface MethodRule {
  pin: PinAt;
  /** Confirmable when the pin is fixed; false: always one upstream (`why` says why). */
  confirmable: boolean;
  /** Names of the parameters that must be present (in order, from index 0); checked for pinned methods. */
  required?: readonly string[];
  /** Largest number of parameters the method takes; checked for pinned methods. */
  max?: number;
  /** A required boolean parameter after the block (the full-transactions flag). */
  flagAt?: number;
  /** Why, in a few words (the table of lib/jsonrpc/README.md; the reason logged for an unconfirmable method). */
  why: string;
}

const blockAt = (at: number, hash = true): PinAt => ({ kind: 'block', at, hash });
const blockHashAt = (at: number): PinAt => ({ kind: 'blockHash', at });
const txHashAt = (at: number): PinAt => ({ kind: 'txHash', at });
const none: PinAt = { kind: 'none' };
const fixed = 'pinned: the same answer on every honest node once the block is fixed';
const head = 'its answer moves with the chain head, the mempool or the node';

/**
 * Every read method of the execution-apis spec (and the debug_/trace_ reads nodes serve), with
 * where its pin sits and whether it is confirmable. The seed's eight (spec 4.3) are as they were;
 * the rest follow the same rule (spec B2). Methods not listed are not confirmable unless the
 * config declares them with their pin (confirmableMethods).
 */
export const methodTable: Readonly<Record<string, MethodRule>> = {
  // The seed's eight (spec 4.3, B2).
  eth_getBlockByNumber: { pin: blockAt(0), confirmable: true, required: [], max: 2, flagAt: 1, why: fixed },
  eth_getBlockTransactionCountByNumber: { pin: blockAt(0), confirmable: true, required: [], max: 1, why: fixed },
  eth_getBalance: { pin: blockAt(1), confirmable: true, required: ['address'], max: 2, why: fixed },
  eth_getCode: { pin: blockAt(1), confirmable: true, required: ['address'], max: 2, why: fixed },
  eth_getTransactionCount: { pin: blockAt(1), confirmable: true, required: ['address'], max: 2, why: fixed },
  // eth_call's optional 3rd and 4th parameters are geth's state and block overrides.
  eth_call: { pin: blockAt(1), confirmable: true, required: ['transaction'], max: 4, why: fixed },
  eth_getStorageAt: { pin: blockAt(2), confirmable: true, required: ['address', 'storage slot'], max: 3, why: fixed },
  eth_getLogs: { pin: { kind: 'filter' }, confirmable: true, required: ['filter'], max: 1, why: fixed },
  // Pinned by a block number the seed does not list.
  eth_getBlockReceipts: { pin: blockAt(0), confirmable: true, required: ['block'], max: 1, why: fixed },
  eth_getBlockAccessList: { pin: blockAt(0), confirmable: true, required: ['block'], max: 1, why: fixed },
  eth_getProof: { pin: blockAt(2), confirmable: true, required: ['address', 'storage keys'], max: 3, why: fixed },
  eth_getStorageValues: { pin: blockAt(1), confirmable: true, required: ['requests'], max: 2, why: fixed },
  eth_getTransactionByBlockNumberAndIndex: { pin: blockAt(0, false), confirmable: true, required: ['block', 'index'], max: 2, why: fixed },
  eth_getUncleByBlockNumberAndIndex: { pin: blockAt(0, false), confirmable: true, required: ['block', 'index'], max: 2, why: fixed },
  eth_getUncleCountByBlockNumber: { pin: blockAt(0, false), confirmable: true, required: ['block'], max: 1, why: fixed },
  eth_createAccessList: { pin: blockAt(1), confirmable: true, required: ['transaction'], max: 3, why: fixed },
  eth_simulateV1: { pin: blockAt(1), confirmable: true, required: ['payload'], max: 2, why: fixed },
  debug_getRawHeader: { pin: blockAt(0), confirmable: true, required: ['block'], max: 1, why: fixed },
  debug_getRawBlock: { pin: blockAt(0), confirmable: true, required: ['block'], max: 1, why: fixed },
  debug_getRawReceipts: { pin: blockAt(0), confirmable: true, required: ['block'], max: 1, why: fixed },
  // Pinned by a block hash.
  eth_getBlockByHash: { pin: blockHashAt(0), confirmable: true, required: ['block hash'], max: 2, flagAt: 1, why: fixed },
  eth_getBlockTransactionCountByHash: { pin: blockHashAt(0), confirmable: true, required: ['block hash'], max: 1, why: fixed },
  eth_getTransactionByBlockHashAndIndex: { pin: blockHashAt(0), confirmable: true, required: ['block hash', 'index'], max: 2, why: fixed },
  eth_getUncleByBlockHashAndIndex: { pin: blockHashAt(0), confirmable: true, required: ['block hash', 'index'], max: 2, why: fixed },
  eth_getUncleCountByBlockHash: { pin: blockHashAt(0), confirmable: true, required: ['block hash'], max: 1, why: fixed },
  // Pinned by a transaction hash (the block is the one that holds it).
  eth_getTransactionByHash: { pin: txHashAt(0), confirmable: true, required: ['transaction hash'], max: 1, why: fixed },
  eth_getTransactionReceipt: { pin: txHashAt(0), confirmable: true, required: ['transaction hash'], max: 1, why: fixed },
  debug_getRawTransaction: { pin: txHashAt(0), confirmable: true, required: ['transaction hash'], max: 1, why: fixed },
  // Pinned, yet not confirmable by default: the answer differs between honest clients.
  eth_estimateGas: { pin: blockAt(1, false), confirmable: false, why: 'an estimate: clients search for the gas limit differently' },
  eth_feeHistory: { pin: blockAt(1, false), confirmable: false, why: 'reward percentiles are computed differently between clients' },
  debug_traceBlockByNumber: { pin: blockAt(0, false), confirmable: false, why: 'tracer output differs between clients (add it to confirmableMethods for one client kind)' },
  debug_traceBlockByHash: { pin: blockHashAt(0), confirmable: false, why: 'tracer output differs between clients (add it to confirmableMethods for one client kind)' },
  debug_traceTransaction: { pin: txHashAt(0), confirmable: false, why: 'tracer output differs between clients (add it to confirmableMethods for one client kind)' },
  debug_traceCall: { pin: blockAt(1), confirmable: false, why: 'tracer output differs between clients (add it to confirmableMethods for one client kind)' },
  trace_block: { pin: blockAt(0, false), confirmable: false, why: 'parity-style traces: only some clients serve them (add it to confirmableMethods)' },
  trace_transaction: { pin: txHashAt(0), confirmable: false, why: 'parity-style traces: only some clients serve them (add it to confirmableMethods)' },
  trace_replayBlockTransactions: { pin: blockAt(0, false), confirmable: false, why: 'parity-style traces: only some clients serve them (add it to confirmableMethods)' },
  trace_replayTransaction: { pin: txHashAt(0), confirmable: false, why: 'parity-style traces: only some clients serve them (add it to confirmableMethods)' },
  trace_call: { pin: blockAt(2, false), confirmable: false, why: 'parity-style traces: only some clients serve them (add it to confirmableMethods)' },
  // Chain state, the node, the mempool, node-local filters, writes: no pin.
  eth_blockNumber: { pin: none, confirmable: false, why: head },
  eth_syncing: { pin: none, confirmable: false, why: head },
  eth_gasPrice: { pin: none, confirmable: false, why: head },
  eth_maxPriorityFeePerGas: { pin: none, confirmable: false, why: head },
  eth_blobBaseFee: { pin: none, confirmable: false, why: head },
  eth_baseFee: { pin: none, confirmable: false, why: head },
  eth_chainId: { pin: none, confirmable: false, why: 'fixed for the chain: one upstream suffices (neutral in a batch)' },
  net_version: { pin: none, confirmable: false, why: 'fixed for the chain: one upstream suffices (neutral in a batch)' },
  eth_config: { pin: none, confirmable: false, why: 'the node\'s fork configuration' },
  eth_capabilities: { pin: none, confirmable: false, why: 'the node\'s capabilities' },
  eth_coinbase: { pin: none, confirmable: false, why: 'the node\'s own account' },
  eth_accounts: { pin: none, confirmable: false, why: 'the node\'s own accounts' },
  eth_newFilter: { pin: none, confirmable: false, why: 'a filter lives on one node' },
  eth_newBlockFilter: { pin: none, confirmable: false, why: 'a filter lives on one node' },
  eth_newPendingTransactionFilter: { pin: none, confirmable: false, why: 'a filter lives on one node' },
  eth_uninstallFilter: { pin: none, confirmable: false, why: 'a filter lives on one node' },
  eth_getFilterChanges: { pin: none, confirmable: false, why: 'a filter lives on one node' },
  eth_getFilterLogs: { pin: none, confirmable: false, why: 'a filter lives on one node' },
  txpool_content: { pin: none, confirmable: false, why: 'the node\'s mempool' },
  txpool_contentFrom: { pin: none, confirmable: false, why: 'the node\'s mempool' },
  txpool_status: { pin: none, confirmable: false, why: 'the node\'s mempool' },
  eth_sendRawTransaction: { pin: none, confirmable: false, why: 'a write' },
  eth_sendTransaction: { pin: none, confirmable: false, why: 'a write' },
  eth_sign: { pin: none, confirmable: false, why: 'a signature by the node\'s key' },
  eth_signTransaction: { pin: none, confirmable: false, why: 'a signature by the node\'s key' },
  eth_fillTransaction: { pin: none, confirmable: false, why: 'fills in from the node\'s state at the head' },
  testing_buildBlockV1: { pin: none, confirmable: false, why: 'builds a block from the node\'s mempool' },
};

/** Methods whose answer depends on the head, the mempool or the node: never confirmable, not even by config. */
export const neverConfirmable: ReadonlySet<string> = new Set([
  'eth_blockNumber',
  'eth_syncing',
  'eth_gasPrice',
  'eth_maxPriorityFeePerGas',
  'eth_blobBaseFee',
  'eth_baseFee',
  'eth_estimateGas',
  'eth_sendRawTransaction',
  'eth_sendTransaction',
  'eth_newFilter',
  'eth_newBlockFilter',
  'eth_newPendingTransactionFilter',
  'eth_uninstallFilter',
  'eth_getFilterChanges',
  'eth_getFilterLogs',
  'txpool_content',
  'txpool_contentFrom',
  'txpool_status',
  'testing_buildBlockV1',
  // Every write (writes.ts): asked of one upstream, or of K in broadcast mode, never of N to agree.
  ...Object.keys(writeTable),
]);

/** The seed table of spec 4.3 (confirmable when pinned to a block). */
export const pinnedMethods: readonly string[] = [
  'eth_getBlockByNumber',
  'eth_getBlockTransactionCountByNumber',
  'eth_getBalance',
  'eth_getCode',
  'eth_getTransactionCount',
  'eth_call',
  'eth_getStorageAt',
  'eth_getLogs',
];

/** Every method the table makes confirmable when its pin is fixed. */
export const confirmableMethods: readonly string[] = Object.keys(methodTable).filter((m) => methodTable[m]!.confirmable);

/** The rule of a method in the table (own properties only: "constructor" finds nothing). */
export function ruleOf(method: string): MethodRule | undefined {
  return Object.hasOwn(methodTable, method) ? methodTable[method] : undefined;
}

/**
 * A method the config makes confirmable, with the pin it declares (config `confirmableMethods`),
 * by method name. `none`: the answer is fixed whatever the block (e.g. a chain constant).
 */
export type CustomMethods = ReadonlyMap<string, PinAt>;

/** Where a call's pin is, for heads and eligibility (helper `heads`). */
export type Pin =
  | { kind: 'number'; block: bigint }
  | { kind: 'tag'; tag: string }
  | { kind: 'blockHash'; hash: string }
  | { kind: 'txHash'; hash: string }
  | { kind: 'none' };

/**
 * Tags that move with the chain, yet are resolved to a number once the heads are tracked: the
 * classify stage rewrites them to the chain's robust safe/finalized head (resolveTags in
 * lib/verify/eligibility.ts), and the call is then pinned to that number. Until the heads are
 * known they are not confirmable.
 */
export const resolvableTags: ReadonlySet<string> = new Set(['safe', 'finalized']);

const movingTags = new Set(['latest', 'pending', 'safe', 'finalized']);
const fixedTags = new Set(['earliest']);
const hexQuantity = /^0x[0-9a-f]+$/i;
/** The keys of an EIP-1898 object and the pin keys of a filter (no other spelling: goAliasOf). */
const eip1898Keys = ['blockNumber', 'blockHash', 'requireCanonical'] as const;
const filterPinKeys = ['fromBlock', 'toBlock', 'blockHash'] as const;
const hash32 = /^0x[0-9a-f]{64}$/i;

export interface Classification {
  confirmable: boolean;
  /** Why, in a few words (logged; useful when a user wonders why N was 1). */
  reason: string;
}

/**
 * Classifies one call and validates the parameters omnigate reads. Throws InvalidParamsError
 * (-32602) for a parameter list that no node would accept, so a bad call never reaches an upstream.
 * @param custom methods the config makes confirmable, each with its declared pin.
 */
/**
 * Methods omnigate refuses: a subscription's notifications would come on the WebSocket connection
 * omnigate shares between every request to a ws upstream, where no client hears them, for as long
 * as the connection lasts (any client could open such streams at will, at the provider's price);
 * over HTTP a node refuses them anyway.
 */
export const refusedMethods: ReadonlySet<string> = new Set(['eth_subscribe', 'eth_unsubscribe']);

export function classifyCall(call: RpcCall, custom: CustomMethods): Classification {
  if (refusedMethods.has(call.method)) {
    throw new MethodNotFoundError(`${call.method} is not served: subscriptions need a WebSocket connection of the client's own (omnigate answers over HTTP, its upstream connections are shared)`, { id: call.id });
  }
  if (neverConfirmable.has(call.method)) return { confirmable: false, reason: `${call.method} is never confirmable` };
  if (call.alias !== undefined) return { confirmable: false, reason: `the request has a key ${JSON.stringify(call.alias)} that Go nodes read as jsonrpc, id, method or params: they may answer another call` };
  const rule = ruleOf(call.method);
  const declared = Object.hasOwn(Object.prototype, call.method) ? undefined : custom.get(call.method);
  if (rule && (rule.confirmable || declared)) return classifyPinned(call, rule);
  if (rule) return { confirmable: false, reason: `${call.method} is not confirmable: ${rule.why}` };
  if (declared) {
    if (declared.kind === 'none') return { confirmable: true, reason: `${call.method} is configured as confirmable whatever the block` };
    return classifyPinned(call, { pin: declared, confirmable: true, why: 'configured' });
  }
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
export function classifyCalls(calls: readonly RpcCall[], custom: CustomMethods): Classification {
  if (calls.length === 1) return classifyCall(calls[0]!, custom);
  // Every member is checked (and may throw) before any verdict, whatever its position.
  const verdicts = calls.map((call) => inBatch(call, () => classifyCall(call, custom)));
  let pinnedMembers = 0;
  for (const [i, c] of verdicts.entries()) {
    const call = calls[i]!;
    if (c.confirmable) pinnedMembers += 1;
    else if (!batchNeutral.has(call.method) || call.alias !== undefined) return { confirmable: false, reason: `batch member ${JSON.stringify(call.id)}: ${c.reason}` };
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

function classifyPinned(call: RpcCall, rule: MethodRule): Classification {
  const { params, method } = call;
  const bad = (message: string) => new InvalidParamsError(`Invalid params for ${method}: ${message}`, { id: call.id });
  if (rule.max !== undefined && params.length > rule.max) throw bad(`takes at most ${rule.max} parameter${rule.max > 1 ? 's' : ''}, got ${params.length}`);
  (rule.required ?? []).forEach((name, index) => {
    if (params[index] === undefined || params[index] === null) throw bad(`params[${index}] (${name}) is required`);
  });
  if (rule.flagAt !== undefined && typeof params[rule.flagAt] !== 'boolean') {
    throw bad(`params[${rule.flagAt}] (full transactions flag) must be true or false`);
  }
  const pin = rule.pin;
  switch (pin.kind) {
    case 'filter':
      return classifyFilter(params[0], bad);
    case 'block':
      return classifyBlock(params[pin.at], `params[${pin.at}]`, pin.hash, bad);
    case 'blockHash':
    case 'txHash': {
      const value = params[pin.at];
      const what = pin.kind === 'blockHash' ? 'block hash' : 'transaction hash';
      if (typeof value !== 'string' || !hash32.test(value)) throw bad(`params[${pin.at}] (${what}) must be a 32-byte hex hash, got ${preview(value)}`);
      return { confirmable: true, reason: `params[${pin.at}] pins ${what} ${value}` };
    }
    case 'none':
      return { confirmable: true, reason: `${method} is fixed whatever the block` };
  }
}

function classifyBlock(
  value: unknown,
  where: string,
  allowHash: boolean,
  bad: (m: string) => Error,
): Classification {
  if (value === undefined || value === null) return { confirmable: false, reason: `${where} is missing, which means latest` };
  if (typeof value === 'string') {
    const tag = value.toLowerCase();
    // `safe`/`finalized` come here already resolved to a number when the heads are tracked (resolvableTags).
    if (movingTags.has(tag)) return { confirmable: false, reason: `${where} is "${value}", which moves with the chain head` };
    if (allowHash && hash32.test(value)) return { confirmable: true, reason: `${where} pins block hash ${value}` };
    if (fixedTags.has(tag) || hexQuantity.test(value)) return { confirmable: true, reason: `${where} pins block ${value}` };
  } else if (allowHash && typeof value === 'object' && !Array.isArray(value)) {
    const obj = value as Record<string, unknown>;
    const alias = goAliasOf(obj, eip1898Keys);
    if (alias !== undefined) throw bad(`${where} has a key ${JSON.stringify(alias)} that Go nodes read as one of ${eip1898Keys.join(', ')}: spell it exactly`);
    if (typeof obj.blockHash === 'string' && hash32.test(obj.blockHash) && obj.blockNumber === undefined) {
      return { confirmable: true, reason: `${where} pins block hash ${obj.blockHash}` };
    }
    if (obj.blockHash === undefined && typeof obj.blockNumber === 'string') {
      return classifyBlock(obj.blockNumber, `${where}.blockNumber`, false, bad);
    }
  }
  const shapes = allowHash ? 'a hex block number, a block tag, a block hash or an EIP-1898 object {"blockHash"} / {"blockNumber"}' : 'a hex block number or a block tag';
  throw bad(`${where} must be ${shapes}, got ${preview(value)}`);
}

function classifyFilter(filter: unknown, bad: (m: string) => Error): Classification {
  if (typeof filter !== 'object' || filter === null || Array.isArray(filter)) throw bad('params[0] must be a filter object');
  const f = filter as Record<string, unknown>;
  const alias = goAliasOf(f, filterPinKeys);
  if (alias !== undefined) throw bad(`the filter has a key ${JSON.stringify(alias)} that Go nodes read as one of ${filterPinKeys.join(', ')}: spell it exactly`);
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

/**
 * Where a call's pin is (for heads and eligibility): the block number it names (`earliest` is 0),
 * a tag, a block hash, a transaction hash, or none (a method without a pin, or one not in the
 * table nor declared). eth_getLogs: its blockHash, else its toBlock (the highest block it needs).
 * Never throws: a malformed pin is `none` (classifyCall refuses the call anyway).
 */
export function pinOf(call: RpcCall, custom: CustomMethods = new Map()): Pin {
  const at = pinAtOf(call.method, custom);
  if (!at) return { kind: 'none' };
  const params = call.params;
  switch (at.kind) {
    case 'none':
      return { kind: 'none' };
    case 'blockHash':
    case 'txHash': {
      const value = params[at.at];
      return typeof value === 'string' && hash32.test(value) ? { kind: at.kind, hash: value } : { kind: 'none' };
    }
    case 'block':
      return blockPin(params[at.at], at.hash);
    case 'filter': {
      const f = params[0];
      if (typeof f !== 'object' || f === null || Array.isArray(f)) return { kind: 'none' };
      const filter = f as Record<string, unknown>;
      if (typeof filter.blockHash === 'string') return hash32.test(filter.blockHash) ? { kind: 'blockHash', hash: filter.blockHash } : { kind: 'none' };
      return blockPin(filter.toBlock, false);
    }
  }
}

/** Where a method's pin sits: the table's, else the one the config declares; undefined for neither. */
export function pinAtOf(method: string, custom: CustomMethods = new Map()): PinAt | undefined {
  return ruleOf(method)?.pin ?? (Object.hasOwn(Object.prototype, method) ? undefined : custom.get(method));
}

function blockPin(value: unknown, allowHash: boolean): Pin {
  if (value === undefined || value === null) return { kind: 'tag', tag: 'latest' };
  if (typeof value === 'string') {
    const tag = value.toLowerCase();
    if (movingTags.has(tag)) return { kind: 'tag', tag };
    if (tag === 'earliest') return { kind: 'number', block: 0n };
    if (allowHash && hash32.test(value)) return { kind: 'blockHash', hash: value };
    if (hexQuantity.test(value)) return { kind: 'number', block: BigInt(value) };
    return { kind: 'none' };
  }
  if (allowHash && typeof value === 'object' && !Array.isArray(value)) {
    const obj = value as Record<string, unknown>;
    if (typeof obj.blockHash === 'string') return hash32.test(obj.blockHash) ? { kind: 'blockHash', hash: obj.blockHash } : { kind: 'none' };
    return blockPin(obj.blockNumber, false);
  }
  return { kind: 'none' };
}

/**
 * A `confirmableMethods` entry of the config, checked against the table: the method and the pin
 * it declares, or what is wrong with it and the fix. Forms: `eth_foo` (only for a method of the
 * table: its pin is the table's), `{ method: eth_foo, block: 1 }`, `{ method, blockHash: 0 }`,
 * `{ method, txHash: 0 }`, `{ method, pin: none }` (an answer fixed whatever the block).
 */
export function declaredMethod(entry: unknown): { method: string; pin: PinAt } | { error: string } {
  const example = '{ method: eth_foo, block: 1 } (or blockHash: 0, txHash: 0, or pin: none for an answer fixed whatever the block)';
  let method: unknown;
  let pin: PinAt | undefined;
  if (typeof entry === 'string') {
    method = entry;
  } else if (entry !== null && typeof entry === 'object' && !Array.isArray(entry)) {
    const obj = entry as Record<string, unknown>;
    method = obj.method;
    const keys = Object.keys(obj).filter((k) => k !== 'method');
    if (keys.length !== 1 || !['block', 'blockHash', 'txHash', 'pin'].includes(keys[0]!)) {
      return { error: `must name the method and exactly one of block, blockHash, txHash or pin, got keys ${JSON.stringify(Object.keys(obj))}. Example: ${example}` };
    }
    const key = keys[0]!;
    const value = obj[key]; // a number (config/schema.ts validateConfig turns the YAML loader's bigints into numbers)
    if (key === 'pin') {
      if (value !== 'none') return { error: `pin must be none (a method whose answer is fixed whatever the block), got ${preview(value)}. Example: ${example}` };
      pin = { kind: 'none' };
    } else {
      if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 9) return { error: `${key} must be the index of that parameter (0 to 9), got ${preview(value)}. Example: ${example}` };
      pin = key === 'block' ? { kind: 'block', at: value, hash: true } : { kind: key as 'blockHash' | 'txHash', at: value };
    }
  } else {
    return { error: `must be a method name of the method table or ${example}, got ${preview(entry)}` };
  }
  if (typeof method !== 'string' || !/^[a-z][a-z0-9]*_[A-Za-z0-9_]+$/.test(method)) return { error: `${preview(method)} is not a JSON-RPC method name such as eth_getBlockByHash` };
  if (neverConfirmable.has(method)) return { error: `${method} is never confirmable: its answer depends on the chain head or the node` };
  const rule = ruleOf(method);
  if (rule) {
    if (rule.pin.kind === 'none') return { error: `${method} has no pin (${rule.why}): it cannot be confirmed, remove it` };
    if (pin && !samePin(pin, rule.pin)) return { error: `${method} has its pin at ${describePin(rule.pin)}, not at ${describePin(pin)}: write just ${method}` };
    return { method, pin: rule.pin };
  }
  if (!pin) return { error: `${method} is not in the method table, so omnigate does not know where its block parameter is: write { method: ${method}, block: <index> } (or blockHash: <index>, txHash: <index>, or pin: none for an answer fixed whatever the block)` };
  return { method, pin };
}

function samePin(a: PinAt, b: PinAt): boolean {
  if (a.kind !== b.kind) return false;
  return a.kind === 'filter' || a.kind === 'none' || (a as { at: number }).at === (b as { at: number }).at;
}

/** A pin's place in words, e.g. "block: 1" (the config's form). */
export function describePin(pin: PinAt): string {
  switch (pin.kind) {
    case 'filter':
      return 'the filter (fromBlock/toBlock or blockHash)';
    case 'none':
      return 'pin: none';
    default:
      return `${pin.kind}: ${pin.at}`;
  }
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
  const text = typeof value === 'bigint' ? String(value) : (JSON.stringify(value) ?? String(value));
  return text.length > 80 ? `${text.slice(0, 80)}…` : text;
}
