/**
 * The views other modules derive from the method table (lib/jsonrpc/methods.ts) are exactly the
 * literal lists they held before the table owned them (kept here as the expectation).
 */
import test from 'ava';
import { confirmableMethods, methods, methodTable, neverConfirmable, type MethodRule, type PinAt } from '../../../../lib/jsonrpc/methods.js';
import { writeTable, type WriteRule } from '../../../../lib/jsonrpc/writes.js';
import { supportedMethods } from '../../../../lib/ops/collection.js';
import { knownMethods } from '../../../../lib/ops/metrics.js';
import { emptyBytesMeanMissing, nullMeansMissing } from '../../../../lib/verify/answers/missing.js';
import { resultShape } from '../../../../lib/verify/answers/canonical.js';
import { observedKey } from '../../../../lib/health/heads.js';
import { callMethods, logsMethods } from '../../../../lib/health/quality.js';

const sorted = <T>(record: Readonly<Record<string, T>>): [string, T][] => Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
const sortedSet = (set: Iterable<string>): string[] => [...set].sort();

// The method table as it was (lib/jsonrpc/methods.ts).
const blockAt = (at: number, hash = true): PinAt => ({ kind: 'block', at, hash });
const blockHashAt = (at: number): PinAt => ({ kind: 'blockHash', at });
const txHashAt = (at: number): PinAt => ({ kind: 'txHash', at });
const none: PinAt = { kind: 'none' };
const fixed = 'pinned: the same answer on every honest node once the block is fixed';
const head = 'its answer moves with the chain head, the mempool or the node';
const oldMethodTable: Readonly<Record<string, MethodRule>> = {
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


const oldNeverConfirmable = [
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
];

// The writes as they were (lib/jsonrpc/writes.ts).
const raw = (why: string): WriteRule => ({ hashAt: { param: 0 }, resultIsHash: true, broadcast: true, why });
const oldWriteTable: Readonly<Record<string, WriteRule>> = {
  eth_sendRawTransaction: raw('a signed transaction into the mempool'),
  // Arbitrum, Optimism, Polygon: a raw transaction with conditions on the state (ERC-4337 bundlers).
  eth_sendRawTransactionConditional: raw('a signed transaction with conditions (Arbitrum, Optimism, Polygon)'),
  // EIP-7966: waits for the receipt; its answer is the receipt, so `already known` cannot stand for it.
  eth_sendRawTransactionSync: { hashAt: { param: 0 }, resultIsHash: false, broadcast: true, why: 'a signed transaction, answered with its receipt (EIP-7966)' },
  // Private mempools (Flashbots Protect, Alchemy, bloXroute): `{ tx, maxBlockNumber }`, answered with the hash.
  eth_sendPrivateTransaction: { hashAt: { param: 0, key: 'tx' }, resultIsHash: true, broadcast: true, why: 'a signed transaction for a private mempool (Flashbots, Alchemy)' },
  eth_sendPrivateRawTransaction: raw('a signed transaction for a private mempool (raw form)'),
  eth_cancelPrivateTransaction: { resultIsHash: false, broadcast: true, why: 'cancels a private transaction (Flashbots)' },
  // Builders: the same bundle sent to several is the usual practice; answered with a bundle hash.
  eth_sendBundle: { resultIsHash: false, broadcast: true, why: 'a bundle of signed transactions for a builder (Flashbots and kin)' },
  // Flashbots MEV-Share's bundle, and the cancellation of a bundle by its replacement uuid.
  mev_sendBundle: { resultIsHash: false, broadcast: true, why: 'a bundle of signed transactions for a builder (Flashbots MEV-Share)' },
  eth_cancelBundle: { resultIsHash: false, broadcast: true, why: 'cancels a bundle at a builder (Flashbots and kin)' },
  // zkSync Era: a signed transaction, answered with its hash, storage logs and events.
  zks_sendRawTransactionWithDetailedOutput: { hashAt: { param: 0 }, resultIsHash: false, broadcast: true, why: 'a signed transaction, answered with its effects (zkSync Era)' },
  // ERC-4337 bundlers: a signed user operation, answered with its hash (not a transaction's).
  eth_sendUserOperation: { resultIsHash: false, broadcast: true, why: 'a signed user operation for a bundler (ERC-4337)' },
  // The node signs with its own key and picks the nonce: two nodes would make two transactions.
  eth_sendTransaction: { resultIsHash: false, broadcast: false, why: 'the node signs and sends a transaction (each node its own)' },
  personal_sendTransaction: { resultIsHash: false, broadcast: false, why: 'the node signs and sends a transaction (each node its own)' },
  // Proof-of-work mining (Ethereum Classic and kin): a solution or a hashrate for the node's own work package.
  eth_submitWork: { resultIsHash: false, broadcast: false, why: 'a proof-of-work solution for the work package this node gave' },
  eth_submitHashrate: { resultIsHash: false, broadcast: false, why: 'a miner reports its hashrate to this node' },
};

// The Postman collection as it was (lib/ops/collection.ts).
const BLOCK = '0x1312d00'; // 20,000,000
const FIRST_TX = '0x5c504ed432cb51138bcf09aa5e8a410dd4a1e204ef84bfed1be16dfba1b22060';
const FIRST_TX_BLOCK = '0xb443'; // 46147
const FIRST_TX_BLOCK_HASH = '0x4e3a3754410177e6937ef1f84bba68ea139e8d1a2258c5f85db9f1cd715a1bdd';
const WETH = '0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2';
const USDC = '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48';
const VITALIK = '0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045';
/** USDC.balanceOf(vitalik.eth). */
const BALANCE_OF = { to: USDC, data: `0x70a08231${VITALIK.slice(2).toLowerCase().padStart(64, '0')}` };
/** keccak256("Transfer(address,address,uint256)"). */
const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';
const FILTER_ID = '0x9cef478923ff08bf67fde6c64013158d';
/** WETH.deposit() with value 0, chain 1, nonce 0, signed by the public anvil/hardhat test key #0. */
const RAW_TX =
  '0x02f86f0180843b9aca008506fc23ac0082c35094c02aaa39b223fe8d0a0e5c4f27ead9083c756cc28084d0e30db0c001a0da344fb56a478090f5ab434db4fe6797b5c1d76d6c223d346392d55c34084e8fa04b0eff816bd20109fa01f5deb5f67fe3a860cabc686591258e91f3c26ffde4fd';
const FILTER_NOTE = 'Filter state lives on one node, so a follow-up call may reach an upstream that does not know the id.';

// [method, example params, what it does]
const oldCollection: [string, unknown[], string][] = [
  ['web3_clientVersion', [], 'Returns the client name and version of the answering node.'],
  ['web3_sha3', ['0x68656c6c6f20776f726c64'], 'Returns keccak256 of the given data ("hello world").'],
  ['net_version', [], 'Returns the network id as a decimal string.'],
  ['net_listening', [], 'Returns whether the node is listening for peer connections.'],
  ['net_peerCount', [], 'Returns the number of connected peers.'],
  ['eth_chainId', [], 'Returns the EIP-155 chain id.'],
  ['eth_syncing', [], 'Returns the sync status, or false when the node is synced.'],
  ['eth_blockNumber', [], 'Returns the number of the most recent block.'],
  ['eth_gasPrice', [], 'Returns the current gas price in wei.'],
  ['eth_maxPriorityFeePerGas', [], 'Returns a suggested EIP-1559 priority fee in wei.'],
  ['eth_blobBaseFee', [], 'Returns the current EIP-4844 blob base fee in wei.'],
  ['eth_feeHistory', ['0x4', BLOCK, [25, 75]], 'Returns base fees and priority-fee percentiles for a range of blocks.'],
  ['eth_getBalance', [VITALIK, BLOCK], 'Returns the wei balance of an address at a block.'],
  ['eth_getCode', [WETH, BLOCK], 'Returns the contract code at an address at a block.'],
  ['eth_getStorageAt', [WETH, '0x0', BLOCK], 'Returns one storage slot of a contract at a block.'],
  ['eth_getTransactionCount', [VITALIK, BLOCK], 'Returns the nonce of an address at a block.'],
  ['eth_getProof', [WETH, ['0x0'], BLOCK], 'Returns the EIP-1186 account and storage proof at a block.'],
  ['eth_call', [BALANCE_OF, BLOCK], 'Executes a call without a transaction (here USDC balanceOf) at a block.'],
  ['eth_estimateGas', [{ from: VITALIK, to: WETH, value: '0x1', data: '0xd0e30db0' }], 'Estimates the gas a transaction would use.'],
  ['eth_createAccessList', [BALANCE_OF, BLOCK], 'Returns the EIP-2930 access list a call would use.'],
  ['eth_getBlockByNumber', [BLOCK, false], 'Returns a block by number (false: transaction hashes only).'],
  ['eth_getBlockByHash', [FIRST_TX_BLOCK_HASH, false], 'Returns a block by hash (false: transaction hashes only).'],
  ['eth_getBlockTransactionCountByNumber', [BLOCK], 'Returns the number of transactions in a block, by number.'],
  ['eth_getBlockTransactionCountByHash', [FIRST_TX_BLOCK_HASH], 'Returns the number of transactions in a block, by hash.'],
  ['eth_getUncleCountByBlockNumber', [BLOCK], 'Returns the number of uncles in a block, by number.'],
  ['eth_getUncleCountByBlockHash', [FIRST_TX_BLOCK_HASH], 'Returns the number of uncles in a block, by hash.'],
  ['eth_getUncleByBlockNumberAndIndex', [BLOCK, '0x0'], 'Returns an uncle header by block number and index.'],
  ['eth_getUncleByBlockHashAndIndex', [FIRST_TX_BLOCK_HASH, '0x0'], 'Returns an uncle header by block hash and index.'],
  ['eth_getBlockReceipts', [BLOCK], 'Returns every transaction receipt of a block.'],
  ['eth_getTransactionByHash', [FIRST_TX], 'Returns a transaction by hash.'],
  ['eth_getTransactionByBlockHashAndIndex', [FIRST_TX_BLOCK_HASH, '0x0'], 'Returns a transaction by block hash and index.'],
  ['eth_getTransactionByBlockNumberAndIndex', [FIRST_TX_BLOCK, '0x0'], 'Returns a transaction by block number and index.'],
  ['eth_getTransactionReceipt', [FIRST_TX], 'Returns the receipt of a mined transaction.'],
  ['eth_sendRawTransaction', [RAW_TX], 'Submits a signed transaction and returns its hash.'],
  ['eth_getLogs', [{ address: USDC, fromBlock: BLOCK, toBlock: BLOCK, topics: [TRANSFER_TOPIC] }], 'Returns the logs matching a filter (here USDC transfers in one block).'],
  ['eth_newFilter', [{ address: USDC, topics: [TRANSFER_TOPIC] }], `Creates a log filter and returns its id. ${FILTER_NOTE}`],
  ['eth_newBlockFilter', [], `Creates a new-block filter and returns its id. ${FILTER_NOTE}`],
  ['eth_newPendingTransactionFilter', [], `Creates a pending-transaction filter and returns its id. ${FILTER_NOTE}`],
  ['eth_getFilterChanges', [FILTER_ID], `Returns what a filter saw since the last poll. ${FILTER_NOTE}`],
  ['eth_getFilterLogs', [FILTER_ID], `Returns every log matching a log filter. ${FILTER_NOTE}`],
  ['eth_uninstallFilter', [FILTER_ID], `Removes a filter. ${FILTER_NOTE}`],
];

// lib/verify/answers/missing.ts as it was.
const oldNullMeansMissing = [
  'eth_getBlockByHash',
  'eth_getBlockByNumber',
  'eth_getBlockReceipts',
  'eth_getBlockAccessList',
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
  'eth_getBalance',
  'eth_getCode',
  'eth_getTransactionCount',
  'eth_getStorageAt',
  'eth_getProof',
  'eth_getStorageValues',
  'debug_getRawHeader',
  'debug_getRawBlock',
  'debug_getRawReceipts',
  'debug_getRawTransaction',
];
const oldEmptyBytesMeanMissing = ['debug_getRawHeader', 'debug_getRawBlock', 'debug_getRawTransaction'];

// lib/verify/answers/canonical.ts's resultShape as it was.
interface OldNode {
  shape: string;
  children?: Record<string, OldNode>;
}
const logNode: OldNode = { shape: 'log' };
const transactionNode: OldNode = { shape: 'transaction' };
const receiptNode: OldNode = { shape: 'receipt', children: { logs: logNode } };
const blockNode: OldNode = { shape: 'block', children: { transactions: transactionNode } };
const oldResultShape: Record<string, OldNode> = {
  eth_getBlockByNumber: blockNode,
  eth_getBlockByHash: blockNode,
  eth_getUncleByBlockHashAndIndex: blockNode,
  eth_getUncleByBlockNumberAndIndex: blockNode,
  eth_getTransactionByHash: transactionNode,
  eth_getTransactionByBlockHashAndIndex: transactionNode,
  eth_getTransactionByBlockNumberAndIndex: transactionNode,
  eth_getTransactionReceipt: receiptNode,
  eth_getBlockReceipts: receiptNode,
  eth_getLogs: logNode,
  eth_getFilterLogs: logNode,
};

// lib/health/heads.ts's observedKey as it was.
const oldObservedKey: Record<string, string> = {
  eth_getBlockByNumber: 'number',
  eth_getBlockByHash: 'number',
  eth_getTransactionReceipt: 'blockNumber',
  eth_getTransactionByHash: 'blockNumber',
  eth_getTransactionByBlockHashAndIndex: 'blockNumber',
  eth_getTransactionByBlockNumberAndIndex: 'blockNumber',
};

// lib/health/quality.ts as it was (eth_getLogs was the one logs method, named in methodClassOf).
const oldCallMethods = ['eth_call', 'eth_estimateGas', 'eth_createAccessList', 'eth_simulateV1'];
const oldLogsMethods = ['eth_getLogs'];

test('the read view (methodTable) is the old method table, row for row', (t) => {
  t.deepEqual(sorted(methodTable), sorted(oldMethodTable));
  t.deepEqual(confirmableMethods.slice().sort(), Object.keys(oldMethodTable).filter((m) => oldMethodTable[m]!.confirmable).sort());
});

test('neverConfirmable is the old list plus every write', (t) => {
  t.deepEqual(sortedSet(neverConfirmable), sortedSet(new Set([...oldNeverConfirmable, ...Object.keys(oldWriteTable)])));
});

test('writeTable is the old table of writes, in its order', (t) => {
  t.deepEqual(Object.entries(writeTable), Object.entries(oldWriteTable));
});

test('the collection lists the old methods, examples and descriptions, in their order', (t) => {
  t.deepEqual(
    supportedMethods.map((m) => [m.method, m.params, m.description]),
    oldCollection,
  );
  t.deepEqual(sortedSet(knownMethods), sortedSet(oldCollection.map(([m]) => m)));
});

test('missing.ts: the null and empty-bytes sets are the old ones', (t) => {
  t.deepEqual(sortedSet(nullMeansMissing), sortedSet(oldNullMeansMissing));
  t.deepEqual(sortedSet(emptyBytesMeanMissing), sortedSet(oldEmptyBytesMeanMissing));
});

test('canonical.ts: the result shapes are the old ones', (t) => {
  t.deepEqual(
    [...resultShape].sort(([a], [b]) => (a < b ? -1 : 1)),
    sorted(oldResultShape),
  );
});

test('heads.ts: the keys of a block seen in passing are the old ones', (t) => {
  t.deepEqual([...observedKey].sort(([a], [b]) => (a < b ? -1 : 1)), sorted(oldObservedKey));
});

test('quality.ts: the call and logs classes are the old ones', (t) => {
  t.deepEqual(sortedSet(callMethods), sortedSet(oldCallMethods));
  t.deepEqual(sortedSet(logsMethods), sortedSet(oldLogsMethods));
});

test('the table is consistent: a never row is not confirmable, result/lacking/seenBlock rows are reads of the table, writes are not confirmable', (t) => {
  for (const [m, e] of Object.entries(methods)) {
    if (e.never) t.not(e.confirmable, true, m);
    if (e.result || e.lacking || e.seenBlock) t.true(Object.hasOwn(methodTable, m), m);
    if (e.write) t.not(e.confirmable, true, m);
  }
});
