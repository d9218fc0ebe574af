/**
 * Which calls are confirmable (lib/jsonrpc/README.md "Which requests are confirmable"). Pure.
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
 * where its pin sits and whether it is confirmable. The eight of the original specification are as they were;
 * the rest follow the same rule. Methods not listed are not confirmable unless the
 * config declares them with their pin (confirmableMethods).
 */
export const methodTable: Readonly<Record<string, MethodRule>> = {
  // The eight of the original specification, confirmable when pinned to a block.
  eth_getBlockByNumber: { pin: blockAt(0), confirmable: true, required: [], max: 2, flagAt: 1, why: fixed },
  eth_getBlockTransactionCountByNumber: { pin: blockAt(0), confirmable: true, required: [], max: 1, why: fixed },
  eth_getBalance: { pin: blockAt(1), confirmable: true, required: ['address'], max: 2, why: fixed },
  eth_getCode: { pin: blockAt(1), confirmable: true, required: ['address'], max: 2, why: fixed },
  eth_getTransactionCount: { pin: blockAt(1), confirmable: true, required: ['address'], max: 2, why: fixed },
  // eth_call's optional 3rd and 4th parameters are geth's state and block overrides.
  eth_call: { pin: blockAt(1), confirmable: true, required: ['transaction'], max: 4, why: fixed },
  eth_getStorageAt: { pin: blockAt(2), confirmable: true, required: ['address', 'storage slot'], max: 3, why: fixed },
  eth_getLogs: { pin: { kind: 'filter' }, confirmable: true, required: ['filter'], max: 1, why: fixed },
  // Pinned by a block number, beyond the original eight.
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

/** The original specification's table (confirmable when pinned to a block). */
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
export function preview(value: unknown): string {
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
