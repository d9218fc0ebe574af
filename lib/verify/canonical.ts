/**
 * The canonical form two answers are compared in (spec B4). Pure and total.
 *
 * - A result is compared as `{"result":R}`, an error as `{"error":{"code":C,"data":D}}`: the
 *   message is human text that differs between node clients, so it does not count.
 * - Keys are sorted recursively and there is no whitespace (json-stable-stringify).
 * - Hex strings (`0x…`) are lower-cased: an address in checksum case and the same address in
 *   lower case are the same answer.
 * - Blocks, transactions, receipts and logs keep only the fields of the Ethereum JSON-RPC spec
 *   (execution-apis); provider extras such as `l1BlockNumber` or `totalDifficulty` are returned
 *   to the client but do not count. A field whose value is null counts as absent.
 *
 * X-Json-Hash is the SHA-256 hex of this form, so it does not depend on which upstream's bytes
 * are returned or on the request id.
 */
import { createHash } from 'node:crypto';
import stringify from 'json-stable-stringify';

const blockFields = new Set([
  'baseFeePerGas', 'blobGasUsed', 'difficulty', 'excessBlobGas', 'extraData', 'gasLimit', 'gasUsed', 'hash',
  'logsBloom', 'miner', 'mixHash', 'nonce', 'number', 'parentBeaconBlockRoot', 'parentHash', 'receiptsRoot',
  'requestsHash', 'sha3Uncles', 'size', 'stateRoot', 'timestamp', 'transactions', 'transactionsRoot', 'uncles',
  'withdrawals', 'withdrawalsRoot',
]);
const transactionFields = new Set([
  'accessList', 'authorizationList', 'blobVersionedHashes', 'blockHash', 'blockNumber', 'chainId', 'from', 'gas',
  'gasPrice', 'hash', 'input', 'maxFeePerBlobGas', 'maxFeePerGas', 'maxPriorityFeePerGas', 'nonce', 'r', 's', 'to',
  'transactionIndex', 'type', 'v', 'value', 'yParity',
]);
const receiptFields = new Set([
  'blobGasPrice', 'blobGasUsed', 'blockHash', 'blockNumber', 'contractAddress', 'cumulativeGasUsed',
  'effectiveGasPrice', 'from', 'gasUsed', 'logs', 'logsBloom', 'root', 'status', 'to', 'transactionHash',
  'transactionIndex', 'type',
]);
const logFields = new Set([
  'address', 'blockHash', 'blockNumber', 'data', 'logIndex', 'removed', 'topics', 'transactionHash', 'transactionIndex',
]);

type Shape = 'block' | 'transaction' | 'receipt' | 'receipts' | 'logs' | 'any';

/** The shape of each method's result that has spec fields to keep. */
const resultShape: Record<string, Shape> = {
  eth_getBlockByNumber: 'block',
  eth_getBlockByHash: 'block',
  eth_getUncleByBlockHashAndIndex: 'block',
  eth_getUncleByBlockNumberAndIndex: 'block',
  eth_getTransactionByHash: 'transaction',
  eth_getTransactionByBlockHashAndIndex: 'transaction',
  eth_getTransactionByBlockNumberAndIndex: 'transaction',
  eth_getTransactionReceipt: 'receipt',
  eth_getBlockReceipts: 'receipts',
  eth_getLogs: 'logs',
  eth_getFilterLogs: 'logs',
};

const hexString = /^0x[0-9a-fA-F]*$/;

/** Lower-cases hex strings, everywhere in the value. */
function plain(value: unknown): unknown {
  if (typeof value === 'string') return hexString.test(value) ? value.toLowerCase() : value;
  if (Array.isArray(value)) return value.map(plain);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = plain(v);
    return out;
  }
  return value;
}

/** Keeps the spec fields of an object (dropping nulls); leaves anything else to `plain`. */
function pick(value: unknown, fields: ReadonlySet<string>, inner?: (key: string, v: unknown) => unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return plain(value);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (!fields.has(k) || v === null || v === undefined) continue;
    out[k] = inner ? inner(k, v) : plain(v);
  }
  return out;
}

const asTransaction = (v: unknown) => pick(v, transactionFields);
const asLog = (v: unknown) => pick(v, logFields);
const asLogs = (v: unknown) => (Array.isArray(v) ? v.map(asLog) : plain(v));
const asReceipt = (v: unknown) => pick(v, receiptFields, (k, x) => (k === 'logs' ? asLogs(x) : plain(x)));
const asBlock = (v: unknown) =>
  pick(v, blockFields, (k, x) => (k === 'transactions' && Array.isArray(x) ? x.map(asTransaction) : plain(x)));

const shapers: Record<Shape, (v: unknown) => unknown> = {
  block: asBlock,
  transaction: asTransaction,
  receipt: asReceipt,
  receipts: (v) => (Array.isArray(v) ? v.map(asReceipt) : plain(v)),
  logs: asLogs,
  any: plain,
};

/** What an upstream said about one call: a result or a JSON-RPC error. */
export type Answer = { result: unknown } | { error: { code: unknown; data?: unknown } };

/** The comparable value of one answer: `{result}` reduced to spec fields, or `{error:{code,data}}`. */
export function comparable(method: string, answer: Answer): unknown {
  if ('error' in answer) {
    const { code, data } = answer.error;
    return { error: data === undefined || data === null ? { code } : { code, data: plain(data) } };
  }
  const shape = Object.hasOwn(resultShape, method) ? resultShape[method]! : 'any';
  return { result: shapers[shape](answer.result) };
}

/** Canonical JSON text of a value: sorted keys, no whitespace. */
export function canonicalJson(value: unknown): string {
  return stringify(value) ?? 'null';
}

/** SHA-256 hex of a string's UTF-8 bytes. */
export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}
