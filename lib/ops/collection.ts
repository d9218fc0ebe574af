/**
 * The Postman v2.1 collection served at `GET /collection.json`: every supported
 * method, once for `/rpc/{{chainId}}` (folder `eth`) and once for
 * `/confirmations/{{n}}/rpc/{{chainId}}` (folder `eth (confirmations)`, only the methods whose
 * answer confirmations can check). Built once, in code. Pure: no I/O.
 *
 * The examples are mainnet data: the first Ethereum transaction (block 46147 = 0xb443), WETH,
 * USDC and vitalik.eth. Block-pinned examples use block 0x1312d00 (20,000,000), so they are
 * confirmable (a hex block, not "latest").
 */
import { neverConfirmable, pinnedMethods, ruleOf } from '../jsonrpc/methods.js';

export interface SupportedMethod {
  method: string;
  params: unknown[];
  description: string;
}

export interface PostmanVariable {
  key: string;
  value: string;
  type: 'string';
  description: string;
}

export interface PostmanUrl {
  raw: string;
  host: string[];
  path: string[];
}

export interface PostmanRequest {
  method: 'POST';
  header: { key: string; value: string }[];
  body: { mode: 'raw'; raw: string; options: { raw: { language: 'json' } } };
  url: PostmanUrl;
  description: string;
}

export interface PostmanRequestItem {
  name: string;
  request: PostmanRequest;
  response: unknown[];
}

export interface PostmanFolder {
  name: string;
  description: string;
  item: PostmanRequestItem[];
}

export interface PostmanCollection {
  info: { name: 'omnigate'; schema: typeof schemaUrl; description: string };
  variable: PostmanVariable[];
  item: PostmanFolder[];
}

export interface CollectionOptions {
  /** Default for `{{baseUrl}}` (a trailing slash is dropped). Default `http://localhost:5000`. */
  baseUrl?: string;
  /** Default for `{{chainId}}`. Default `'1'`. */
  chainId?: string;
  /** Default for `{{n}}`, a positive integer. Default 2. */
  confirmations?: number;
  /**
   * Path the routes are mounted under, as in `/gateway` for `app.use('/gateway', rpc)`: each
   * request URL is then `{{baseUrl}}/gateway/rpc/{{chainId}}`. Default '' (the root).
   */
  pathPrefix?: string;
}

const schemaUrl = 'https://schema.getpostman.com/json/collection/v2.1.0/collection.json';

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
const table: [string, unknown[], string][] = [
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

/** The standard execution-layer JSON-RPC methods omnigate forwards, with mainnet example params. */
export const supportedMethods: readonly SupportedMethod[] = table.map(([method, params, description]) => ({ method, params, description }));

/** Methods users commonly configure as confirmable (`confirmableMethods`); shown in the confirmations folder too. */
const commonlyConfigured = ['eth_getBlockByHash', 'eth_getTransactionReceipt', 'eth_getTransactionByHash'];

function confirmability(method: string): string {
  if (pinnedMethods.includes(method)) return 'Confirmable when pinned to a block (hex number, earliest or block hash), not with latest or pending.';
  if (neverConfirmable.has(method)) return 'Never confirmable: answered by one upstream.';
  const rule = ruleOf(method);
  if (rule?.confirmable) return rule.pin.kind === 'blockHash' || rule.pin.kind === 'txHash' ? 'Confirmable: pinned by a hash.' : 'Confirmable when pinned to a block (hex number, earliest or block hash), not with latest or pending.';
  if (rule) return `Answered by one upstream: ${rule.why}.`;
  return 'Answered by one upstream unless the config lists it as confirmable.';
}

function requestItem(m: SupportedMethod, path: string[]): PostmanRequestItem {
  const raw = JSON.stringify({ jsonrpc: '2.0', id: 1, method: m.method, params: m.params }, null, 2);
  return {
    name: m.method,
    request: {
      method: 'POST',
      header: [{ key: 'Content-Type', value: 'application/json' }],
      body: { mode: 'raw', raw, options: { raw: { language: 'json' } } },
      url: { raw: ['{{baseUrl}}', ...path].join('/'), host: ['{{baseUrl}}'], path: [...path] },
      description: `${m.description} ${confirmability(m.method)}`,
    },
    response: [],
  };
}

/**
 * Builds the Postman Collection v2.1 of every supported method. The options only set the
 * defaults of the collection variables `baseUrl`, `chainId` and `n`.
 * @throws RangeError when `confirmations` is not a positive integer.
 * @example
 * ```ts
 * const collection = buildCollection({ baseUrl: 'https://rpc.example.com', chainId: '10', confirmations: 3 });
 * res.setHeader('Content-Type', 'application/json');
 * res.end(JSON.stringify(collection));
 * ```
 */
export function buildCollection(options: CollectionOptions = {}): PostmanCollection {
  const n = options.confirmations ?? 2;
  if (!Number.isSafeInteger(n) || n < 1) throw new RangeError(`confirmations must be a positive integer, got ${n}`);
  const prefix = (options.pathPrefix ?? '').split('/').filter((s) => s !== '');
  const confirmable = supportedMethods.filter((m) => pinnedMethods.includes(m.method) || commonlyConfigured.includes(m.method));
  return {
    info: {
      name: 'omnigate',
      schema: schemaUrl,
      description:
        'Verifying JSON-RPC load balancer for EVM chains. Folder "eth" calls /rpc/{{chainId}}, where a confirmable ' +
        'call is checked against the chain\'s configured number of upstreams; folder "eth (confirmations)" calls ' +
        '/confirmations/{{n}}/rpc/{{chainId}}, where {{n}} upstreams must agree.',
    },
    variable: [
      { key: 'baseUrl', value: (options.baseUrl ?? 'http://localhost:5000').replace(/\/+$/, ''), type: 'string', description: 'omnigate base URL' },
      { key: 'chainId', value: options.chainId ?? '1', type: 'string', description: 'EVM chain id of the configured chain' },
      { key: 'n', value: String(n), type: 'string', description: 'number of upstreams that must agree' },
    ],
    item: [
      {
        name: 'eth',
        description: 'Every supported method on /rpc/{{chainId}}.',
        item: supportedMethods.map((m) => requestItem(m, [...prefix, 'rpc', '{{chainId}}'])),
      },
      {
        name: 'eth (confirmations)',
        description:
          'Methods whose answers confirmations can check, on /confirmations/{{n}}/rpc/{{chainId}}. Block-pinned ' +
          'examples use a hex block number; the by-hash methods are confirmed only when the config lists them.',
        item: confirmable.map((m) => requestItem(m, [...prefix, 'confirmations', '{{n}}', 'rpc', '{{chainId}}'])),
      },
    ],
  };
}
