/**
 * The method table: every JSON-RPC method omnigate knows, and all it knows of each
 * (lib/jsonrpc/README.md "The method table"). Pure. The one owner of per-method knowledge: the
 * other modules derive their sets and maps from `methods` once, at module load (writes.ts
 * `writeTable`, lib/ops/collection.ts, lib/verify/answers/missing.ts, lib/verify/answers/canonical.ts,
 * lib/health/heads.ts, lib/health/quality.ts); adding a method touches this file only.
 *
 * Which calls are confirmable (lib/jsonrpc/README.md "Which requests are confirmable"):
 * a call is confirmable when its method pins the answer to one block and the block it names
 * cannot move: a hex number, or an EIP-1898 `{blockHash}`/`{blockNumber: hex}`.
 * `latest` and `pending` are not (nodes disagree on them), and neither are `safe` and
 * `finalized`: they advance with the chain too, so two honest nodes a few seconds apart give
 * different answers. Nor is `earliest` as sent: the lowest block the answering node has, its
 * history expiry cutoff on a pruned node; the classify stage asks for block 0x0 instead. A missing or null block parameter means `latest`, as Ethereum nodes read it.
 * Tags compare case-insensitively. The same rule holds for every read of the method table
 * below, pinned by a block number, a block hash or a transaction hash (a hash cannot move).
 * Any method not in the read table (`methodTable`: the rows with a pin) falls through to "not
 * confirmable" (answered by one upstream) unless the config declares it as confirmable with where
 * its pin is (`declaredMethod`). `pinOf` tells where a call's pin is (for heads and eligibility).
 */
import {
  BALANCE_OF, BLOCK, FILTER_ID, FILTER_NOTE, FIRST_TX, FIRST_TX_BLOCK, FIRST_TX_BLOCK_HASH, RAW_TX, TRANSFER_TOPIC, USDC, VITALIK, WETH,
} from './examples.js';

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

/** One row of the read table (`methodTable`). */
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

/**
 * A write: a call that changes something outside the node that answers it (writes.ts).
 * `hashAt`: where the signed transaction is, whose hash is the answer of the method, and what an
 * `already known` answer stands for. `broadcast`: the same bytes mean the same thing on every
 * upstream, so the chain's broadcast mode may send them to K upstreams at once.
 */
export interface WriteRule {
  /** Where the signed transaction's hex bytes are: a param index, or a param index and a key. */
  hashAt?: { param: number; key?: string };
  /** Whether the method's result is the transaction hash (an `already known` answer may then stand for it). */
  resultIsHash: boolean;
  /** The chain's broadcast mode applies (the same bytes are the same write everywhere). */
  broadcast: boolean;
  /** Why it is a write (the table of lib/jsonrpc/README.md "Writes"). */
  why: string;
}

/** The execution-apis object a result is (or each element of a list result): its fields are compared by the schema (lib/verify/answers/canonical.ts). */
export type ResultShape = 'block' | 'transaction' | 'receipt' | 'log';
/** The class a request's latency is measured in (lib/health/quality.ts). */
export type MethodClass = 'read' | 'call' | 'logs';

/** What the table knows of a method beyond its read rule. */
export interface MethodFacts {
  /** Never confirmable, not even by config: the answer depends on the head, the mempool or the node (every write is too). */
  never?: true;
  /** A write (writes.ts `writeTable`). */
  write?: WriteRule;
  /** The object the result is, or each element of a list result, compared by the schema (canonical.ts). */
  result?: ResultShape;
  /** A result that means "this node lacks it" (missing.ts): null, or null and empty bytes `0x`. */
  lacking?: 'null' | 'nullOrEmptyBytes';
  /** The result key that holds the block a result was read from, a head seen in passing (heads.ts). */
  seenBlock?: 'number' | 'blockNumber';
  /** Latency class (quality.ts); default `read`. */
  class?: Exclude<MethodClass, 'read'>;
  /** In the Postman collection (and the metrics' method label): mainnet example params and what it does. */
  example?: { params: unknown[]; description: string };
}

/** A method of the table: its read rule when it has one (in `methodTable`), and its facts. */
export type MethodEntry = MethodFacts & (MethodRule | { pin?: undefined; confirmable?: undefined; why?: undefined });

const blockAt = (at: number, hash = true): PinAt => ({ kind: 'block', at, hash });
const blockHashAt = (at: number): PinAt => ({ kind: 'blockHash', at });
const txHashAt = (at: number): PinAt => ({ kind: 'txHash', at });
const none: PinAt = { kind: 'none' };
const fixed = 'pinned: the same answer on every honest node once the block is fixed';
const head = 'its answer moves with the chain head, the mempool or the node';
const chainConstant = 'fixed for the chain: one upstream suffices (neutral in a batch)';
const tracer = 'tracer output differs between clients (add it to confirmableMethods for one client kind)';
const parity = 'parity-style traces: only some clients serve them (add it to confirmableMethods)';
const filter = 'a filter lives on one node';
const ex = (params: unknown[], description: string) => ({ example: { params, description } });
const raw = (why: string): WriteRule => ({ hashAt: { param: 0 }, resultIsHash: true, broadcast: true, why });
const signs = 'the node signs and sends a transaction (each node its own)';

/**
 * Every method omnigate knows. The read rows (with a pin: every read method of the
 * execution-apis spec, and the debug_/trace_ reads nodes serve) make `methodTable`; the eight of
 * the original specification are `pinnedMethods`. A method not listed is a read, not
 * confirmable unless the config declares it with its pin (confirmableMethods). The rows with an
 * `example` are the Postman collection's, in this order.
 */
export const methods: Readonly<Record<string, MethodEntry>> = {
  // The node and the chain.
  web3_clientVersion: { ...ex([], 'Returns the client name and version of the answering node.') },
  web3_sha3: { ...ex(['0x68656c6c6f20776f726c64'], 'Returns keccak256 of the given data ("hello world").') },
  net_version: { pin: none, confirmable: false, why: chainConstant, ...ex([], 'Returns the network id as a decimal string.') },
  net_listening: { ...ex([], 'Returns whether the node is listening for peer connections.') },
  net_peerCount: { ...ex([], 'Returns the number of connected peers.') },
  eth_chainId: { pin: none, confirmable: false, why: chainConstant, ...ex([], 'Returns the EIP-155 chain id.') },
  eth_syncing: { pin: none, confirmable: false, why: head, never: true, ...ex([], 'Returns the sync status, or false when the node is synced.') },
  eth_blockNumber: { pin: none, confirmable: false, why: head, never: true, ...ex([], 'Returns the number of the most recent block.') },
  eth_config: { pin: none, confirmable: false, why: 'the node\'s fork configuration' },
  eth_capabilities: { pin: none, confirmable: false, why: 'the node\'s capabilities' },
  eth_coinbase: { pin: none, confirmable: false, why: 'the node\'s own account' },
  eth_accounts: { pin: none, confirmable: false, why: 'the node\'s own accounts' },
  // Fees.
  eth_gasPrice: { pin: none, confirmable: false, why: head, never: true, ...ex([], 'Returns the current gas price in wei.') },
  eth_maxPriorityFeePerGas: { pin: none, confirmable: false, why: head, never: true, ...ex([], 'Returns a suggested EIP-1559 priority fee in wei.') },
  eth_blobBaseFee: { pin: none, confirmable: false, why: head, never: true, ...ex([], 'Returns the current EIP-4844 blob base fee in wei.') },
  eth_baseFee: { pin: none, confirmable: false, why: head, never: true },
  eth_feeHistory: { pin: blockAt(1, false), confirmable: false, why: 'reward percentiles are computed differently between clients',
    ...ex(['0x4', BLOCK, [25, 75]], 'Returns base fees and priority-fee percentiles for a range of blocks.') },
  // State at a block (a state read is never null for a block the node has: null means it lacks it).
  eth_getBalance: { pin: blockAt(1), confirmable: true, required: ['address'], max: 2, why: fixed, lacking: 'null',
    ...ex([VITALIK, BLOCK], 'Returns the wei balance of an address at a block.') },
  eth_getCode: { pin: blockAt(1), confirmable: true, required: ['address'], max: 2, why: fixed, lacking: 'null',
    ...ex([WETH, BLOCK], 'Returns the contract code at an address at a block.') },
  eth_getStorageAt: { pin: blockAt(2), confirmable: true, required: ['address', 'storage slot'], max: 3, why: fixed, lacking: 'null',
    ...ex([WETH, '0x0', BLOCK], 'Returns one storage slot of a contract at a block.') },
  eth_getTransactionCount: { pin: blockAt(1), confirmable: true, required: ['address'], max: 2, why: fixed, lacking: 'null',
    ...ex([VITALIK, BLOCK], 'Returns the nonce of an address at a block.') },
  eth_getProof: { pin: blockAt(2), confirmable: true, required: ['address', 'storage keys'], max: 3, why: fixed, lacking: 'null',
    ...ex([WETH, ['0x0'], BLOCK], 'Returns the EIP-1186 account and storage proof at a block.') },
  eth_getStorageValues: { pin: blockAt(1), confirmable: true, required: ['requests'], max: 2, why: fixed, lacking: 'null' },
  // Calls (eth_call's optional 3rd and 4th parameters are geth's state and block overrides).
  eth_call: { pin: blockAt(1), confirmable: true, required: ['transaction'], max: 4, why: fixed, class: 'call',
    ...ex([BALANCE_OF, BLOCK], 'Executes a call without a transaction (here USDC balanceOf) at a block.') },
  eth_estimateGas: { pin: blockAt(1, false), confirmable: false, why: 'an estimate: clients search for the gas limit differently', never: true, class: 'call',
    ...ex([{ from: VITALIK, to: WETH, value: '0x1', data: '0xd0e30db0' }], 'Estimates the gas a transaction would use.') },
  eth_createAccessList: { pin: blockAt(1), confirmable: true, required: ['transaction'], max: 3, why: fixed, class: 'call',
    ...ex([BALANCE_OF, BLOCK], 'Returns the EIP-2930 access list a call would use.') },
  eth_simulateV1: { pin: blockAt(1), confirmable: true, required: ['payload'], max: 2, why: fixed, class: 'call' },
  // Blocks.
  eth_getBlockByNumber: { pin: blockAt(0), confirmable: true, required: [], max: 2, flagAt: 1, why: fixed, result: 'block', lacking: 'null', seenBlock: 'number',
    ...ex([BLOCK, false], 'Returns a block by number (false: transaction hashes only).') },
  eth_getBlockByHash: { pin: blockHashAt(0), confirmable: true, required: ['block hash'], max: 2, flagAt: 1, why: fixed, result: 'block', lacking: 'null', seenBlock: 'number',
    ...ex([FIRST_TX_BLOCK_HASH, false], 'Returns a block by hash (false: transaction hashes only).') },
  eth_getBlockTransactionCountByNumber: { pin: blockAt(0), confirmable: true, required: [], max: 1, why: fixed, lacking: 'null',
    ...ex([BLOCK], 'Returns the number of transactions in a block, by number.') },
  eth_getBlockTransactionCountByHash: { pin: blockHashAt(0), confirmable: true, required: ['block hash'], max: 1, why: fixed, lacking: 'null',
    ...ex([FIRST_TX_BLOCK_HASH], 'Returns the number of transactions in a block, by hash.') },
  eth_getUncleCountByBlockNumber: { pin: blockAt(0, false), confirmable: true, required: ['block'], max: 1, why: fixed, lacking: 'null',
    ...ex([BLOCK], 'Returns the number of uncles in a block, by number.') },
  eth_getUncleCountByBlockHash: { pin: blockHashAt(0), confirmable: true, required: ['block hash'], max: 1, why: fixed, lacking: 'null',
    ...ex([FIRST_TX_BLOCK_HASH], 'Returns the number of uncles in a block, by hash.') },
  eth_getUncleByBlockNumberAndIndex: { pin: blockAt(0, false), confirmable: true, required: ['block', 'index'], max: 2, why: fixed, result: 'block', lacking: 'null',
    ...ex([BLOCK, '0x0'], 'Returns an uncle header by block number and index.') },
  eth_getUncleByBlockHashAndIndex: { pin: blockHashAt(0), confirmable: true, required: ['block hash', 'index'], max: 2, why: fixed, result: 'block', lacking: 'null',
    ...ex([FIRST_TX_BLOCK_HASH, '0x0'], 'Returns an uncle header by block hash and index.') },
  eth_getBlockReceipts: { pin: blockAt(0), confirmable: true, required: ['block'], max: 1, why: fixed, result: 'receipt', lacking: 'null',
    ...ex([BLOCK], 'Returns every transaction receipt of a block.') },
  eth_getBlockAccessList: { pin: blockAt(0), confirmable: true, required: ['block'], max: 1, why: fixed, lacking: 'null' },
  // Raw reads: a header, block or signed transaction is never empty bytes (reth answers `0x` for one it lacks).
  debug_getRawHeader: { pin: blockAt(0), confirmable: true, required: ['block'], max: 1, why: fixed, lacking: 'nullOrEmptyBytes' },
  debug_getRawBlock: { pin: blockAt(0), confirmable: true, required: ['block'], max: 1, why: fixed, lacking: 'nullOrEmptyBytes' },
  debug_getRawReceipts: { pin: blockAt(0), confirmable: true, required: ['block'], max: 1, why: fixed, lacking: 'null' },
  debug_getRawTransaction: { pin: txHashAt(0), confirmable: true, required: ['transaction hash'], max: 1, why: fixed, lacking: 'nullOrEmptyBytes' },
  // Transactions and receipts (the block is the one that holds it).
  eth_getTransactionByHash: { pin: txHashAt(0), confirmable: true, required: ['transaction hash'], max: 1, why: fixed, result: 'transaction', lacking: 'null', seenBlock: 'blockNumber',
    ...ex([FIRST_TX], 'Returns a transaction by hash.') },
  eth_getTransactionByBlockHashAndIndex: { pin: blockHashAt(0), confirmable: true, required: ['block hash', 'index'], max: 2, why: fixed, result: 'transaction', lacking: 'null', seenBlock: 'blockNumber',
    ...ex([FIRST_TX_BLOCK_HASH, '0x0'], 'Returns a transaction by block hash and index.') },
  eth_getTransactionByBlockNumberAndIndex: { pin: blockAt(0, false), confirmable: true, required: ['block', 'index'], max: 2, why: fixed, result: 'transaction', lacking: 'null', seenBlock: 'blockNumber',
    ...ex([FIRST_TX_BLOCK, '0x0'], 'Returns a transaction by block number and index.') },
  eth_getTransactionReceipt: { pin: txHashAt(0), confirmable: true, required: ['transaction hash'], max: 1, why: fixed, result: 'receipt', lacking: 'null', seenBlock: 'blockNumber',
    ...ex([FIRST_TX], 'Returns the receipt of a mined transaction.') },
  // Writes (writes.ts): asked of one upstream, or of K in broadcast mode, never of N to agree.
  eth_sendRawTransaction: { pin: none, confirmable: false, why: 'a write', write: raw('a signed transaction into the mempool'),
    ...ex([RAW_TX], 'Submits a signed transaction and returns its hash.') },
  // Arbitrum, Optimism, Polygon: a raw transaction with conditions on the state (ERC-4337 bundlers).
  eth_sendRawTransactionConditional: { write: raw('a signed transaction with conditions (Arbitrum, Optimism, Polygon)') },
  // EIP-7966: waits for the receipt; its answer is the receipt, so `already known` cannot stand for it.
  eth_sendRawTransactionSync: { write: { hashAt: { param: 0 }, resultIsHash: false, broadcast: true, why: 'a signed transaction, answered with its receipt (EIP-7966)' } },
  // Private mempools (Flashbots Protect, Alchemy, bloXroute): `{ tx, maxBlockNumber }`, answered with the hash.
  eth_sendPrivateTransaction: { write: { hashAt: { param: 0, key: 'tx' }, resultIsHash: true, broadcast: true, why: 'a signed transaction for a private mempool (Flashbots, Alchemy)' } },
  eth_sendPrivateRawTransaction: { write: raw('a signed transaction for a private mempool (raw form)') },
  eth_cancelPrivateTransaction: { write: { resultIsHash: false, broadcast: true, why: 'cancels a private transaction (Flashbots)' } },
  // Builders: the same bundle sent to several is the usual practice; answered with a bundle hash.
  eth_sendBundle: { write: { resultIsHash: false, broadcast: true, why: 'a bundle of signed transactions for a builder (Flashbots and kin)' } },
  // Flashbots MEV-Share's bundle, and the cancellation of a bundle by its replacement uuid.
  mev_sendBundle: { write: { resultIsHash: false, broadcast: true, why: 'a bundle of signed transactions for a builder (Flashbots MEV-Share)' } },
  eth_cancelBundle: { write: { resultIsHash: false, broadcast: true, why: 'cancels a bundle at a builder (Flashbots and kin)' } },
  // zkSync Era: a signed transaction, answered with its hash, storage logs and events.
  zks_sendRawTransactionWithDetailedOutput: { write: { hashAt: { param: 0 }, resultIsHash: false, broadcast: true, why: 'a signed transaction, answered with its effects (zkSync Era)' } },
  // ERC-4337 bundlers: a signed user operation, answered with its hash (not a transaction's).
  eth_sendUserOperation: { write: { resultIsHash: false, broadcast: true, why: 'a signed user operation for a bundler (ERC-4337)' } },
  // The node signs with its own key and picks the nonce: two nodes would make two transactions.
  eth_sendTransaction: { pin: none, confirmable: false, why: 'a write', write: { resultIsHash: false, broadcast: false, why: signs } },
  personal_sendTransaction: { write: { resultIsHash: false, broadcast: false, why: signs } },
  // Proof-of-work mining (Ethereum Classic and kin): a solution or a hashrate for the node's own work package.
  eth_submitWork: { write: { resultIsHash: false, broadcast: false, why: 'a proof-of-work solution for the work package this node gave' } },
  eth_submitHashrate: { write: { resultIsHash: false, broadcast: false, why: 'a miner reports its hashrate to this node' } },
  // Logs, and the filters that live on one node.
  eth_getLogs: { pin: { kind: 'filter' }, confirmable: true, required: ['filter'], max: 1, why: fixed, result: 'log', class: 'logs',
    ...ex([{ address: USDC, fromBlock: BLOCK, toBlock: BLOCK, topics: [TRANSFER_TOPIC] }], 'Returns the logs matching a filter (here USDC transfers in one block).') },
  eth_newFilter: { pin: none, confirmable: false, why: filter, never: true,
    ...ex([{ address: USDC, topics: [TRANSFER_TOPIC] }], `Creates a log filter and returns its id. ${FILTER_NOTE}`) },
  eth_newBlockFilter: { pin: none, confirmable: false, why: filter, never: true, ...ex([], `Creates a new-block filter and returns its id. ${FILTER_NOTE}`) },
  eth_newPendingTransactionFilter: { pin: none, confirmable: false, why: filter, never: true, ...ex([], `Creates a pending-transaction filter and returns its id. ${FILTER_NOTE}`) },
  eth_getFilterChanges: { pin: none, confirmable: false, why: filter, never: true, ...ex([FILTER_ID], `Returns what a filter saw since the last poll. ${FILTER_NOTE}`) },
  eth_getFilterLogs: { pin: none, confirmable: false, why: filter, never: true, result: 'log', ...ex([FILTER_ID], `Returns every log matching a log filter. ${FILTER_NOTE}`) },
  eth_uninstallFilter: { pin: none, confirmable: false, why: filter, never: true, ...ex([FILTER_ID], `Removes a filter. ${FILTER_NOTE}`) },
  // Traces: pinned, yet not confirmable by default (the answer differs between honest clients).
  debug_traceBlockByNumber: { pin: blockAt(0, false), confirmable: false, why: tracer },
  debug_traceBlockByHash: { pin: blockHashAt(0), confirmable: false, why: tracer },
  debug_traceTransaction: { pin: txHashAt(0), confirmable: false, why: tracer },
  debug_traceCall: { pin: blockAt(1), confirmable: false, why: tracer },
  trace_block: { pin: blockAt(0, false), confirmable: false, why: parity },
  trace_transaction: { pin: txHashAt(0), confirmable: false, why: parity },
  trace_replayBlockTransactions: { pin: blockAt(0, false), confirmable: false, why: parity },
  trace_replayTransaction: { pin: txHashAt(0), confirmable: false, why: parity },
  trace_call: { pin: blockAt(2, false), confirmable: false, why: parity },
  // The mempool, the node's keys, block building: no pin.
  txpool_content: { pin: none, confirmable: false, why: 'the node\'s mempool', never: true },
  txpool_contentFrom: { pin: none, confirmable: false, why: 'the node\'s mempool', never: true },
  txpool_status: { pin: none, confirmable: false, why: 'the node\'s mempool', never: true },
  eth_sign: { pin: none, confirmable: false, why: 'a signature by the node\'s key' },
  eth_signTransaction: { pin: none, confirmable: false, why: 'a signature by the node\'s key' },
  eth_fillTransaction: { pin: none, confirmable: false, why: 'fills in from the node\'s state at the head' },
  testing_buildBlockV1: { pin: none, confirmable: false, why: 'builds a block from the node\'s mempool', never: true },
};

const names = Object.keys(methods);

/** The methods whose entry satisfies `has` (a view derived once, at module load). */
export function methodsWhere(has: (entry: MethodEntry) => boolean): string[] {
  return names.filter((m) => has(methods[m]!));
}

/** The read table: the rule of every method with a pin (`pin`, `confirmable`, `required`, `max`, `flagAt`, `why`). */
export const methodTable: Readonly<Record<string, MethodRule>> = Object.fromEntries(
  methodsWhere((e) => e.pin !== undefined).map((m) => {
    const { pin, confirmable, required, max, flagAt, why } = methods[m] as MethodRule;
    const rule: MethodRule = { pin, confirmable, ...(required && { required }), ...(max !== undefined && { max }), ...(flagAt !== undefined && { flagAt }), why };
    return [m, rule];
  }),
);

/** Methods whose answer depends on the head, the mempool or the node, and every write: never confirmable, not even by config. */
export const neverConfirmable: ReadonlySet<string> = new Set(methodsWhere((e) => e.never === true || e.write !== undefined));

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
 * Tags the classify stage rewrites to a number (resolveTags in lib/verify/eligibility.ts), the
 * call then pinned to it: `safe` and `finalized`, which move with the chain, to the chain's
 * robust safe/finalized head once the heads are tracked (until then they are not confirmable);
 * `earliest`, which each node reads as the lowest block it has (its history cutoff, once it
 * expired history), to block 0, so that the upstreams are asked about the genesis block and a
 * node that expired it says so (provider trouble) rather than answer from its cutoff.
 */
export const resolvableTags: ReadonlySet<string> = new Set(['safe', 'finalized', 'earliest']);

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
