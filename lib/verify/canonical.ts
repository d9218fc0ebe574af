/**
 * The canonical form two answers are compared in (spec B4). Pure and total.
 *
 * - A result is compared as `{"result":R}`, an error as `{"error":{"code":C,"data":D}}`: the
 *   message is human text that differs between node clients, so it does not count.
 * - Keys are sorted recursively and there is no whitespace (the form json-stable-stringify gives).
 * - Hex strings (`0x…`) are lower-cased: an address in checksum case and the same address in
 *   lower case are the same answer.
 * - Blocks, transactions, receipts and logs keep only the fields of the Ethereum JSON-RPC spec
 *   (execution-apis); provider extras such as `l1BlockNumber` or `totalDifficulty` are returned
 *   to the client but do not count. A field whose value is null counts as absent.
 *
 * X-Json-Hash is the SHA-256 hex of this form, so it does not depend on which upstream's bytes
 * are returned or on the request id.
 */
import { hash } from 'node:crypto';

/** Spec field lists, sorted as canonical keys are (UTF-16 code units, as Array#sort does). */
const sorted = (fields: string[]): readonly string[] => Object.freeze([...fields].sort());

const blockFields = sorted([
  'baseFeePerGas', 'blobGasUsed', 'difficulty', 'excessBlobGas', 'extraData', 'gasLimit', 'gasUsed', 'hash',
  'logsBloom', 'miner', 'mixHash', 'nonce', 'number', 'parentBeaconBlockRoot', 'parentHash', 'receiptsRoot',
  'requestsHash', 'sha3Uncles', 'size', 'stateRoot', 'timestamp', 'transactions', 'transactionsRoot', 'uncles',
  'withdrawals', 'withdrawalsRoot',
]);
const transactionFields = sorted([
  'accessList', 'authorizationList', 'blobVersionedHashes', 'blockHash', 'blockNumber', 'chainId', 'from', 'gas',
  'gasPrice', 'hash', 'input', 'maxFeePerBlobGas', 'maxFeePerGas', 'maxPriorityFeePerGas', 'nonce', 'r', 's', 'to',
  'transactionIndex', 'type', 'v', 'value', 'yParity',
]);
const receiptFields = sorted([
  'blobGasPrice', 'blobGasUsed', 'blockHash', 'blockNumber', 'contractAddress', 'cumulativeGasUsed',
  'effectiveGasPrice', 'from', 'gasUsed', 'logs', 'logsBloom', 'root', 'status', 'to', 'transactionHash',
  'transactionIndex', 'type',
]);
const logFields = sorted([
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

/**
 * Set while comparable() builds its value when some object has an array-index key ("0", "7"):
 * V8 enumerates such keys numerically whatever the insertion order, so the native
 * JSON.stringify fast path of canonicalForm() would not give sorted keys for it.
 */
let indexKeys = false;
const arrayIndex = /^(?:0|[1-9]\d{0,9})$/;

/** The object's keys in canonical (sorted) order; notes array-index keys. */
function sortedKeys(value: object): string[] {
  const keys = Object.keys(value).sort();
  if (!indexKeys) {
    for (const k of keys) {
      const c = k.charCodeAt(0);
      if (c >= 48 && c <= 57 && arrayIndex.test(k)) {
        indexKeys = true;
        break;
      }
    }
  }
  return keys;
}

/**
 * Lower-cases hex strings, everywhere in the value. Objects are rebuilt with their keys inserted
 * in sorted order. They are ordinary objects (a null-prototype object starts in V8's slow
 * dictionary mode, which JSON.stringify then walks slowly); an answer's own "__proto__" key is
 * defined as a data property, so it stays data and never sets the prototype.
 */
function plain(value: unknown): unknown {
  if (typeof value === 'string') return lowerHex(value);
  if (Array.isArray(value)) return value.map(plain);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of sortedKeys(value)) put(out, k, plain((value as Record<string, unknown>)[k]));
    return out;
  }
  return value;
}

/** out[key] = v, as an own data property even for "__proto__". */
function put(out: Record<string, unknown>, key: string, v: unknown): void {
  if (key === '__proto__') Object.defineProperty(out, key, { value: v, enumerable: true, writable: true, configurable: true });
  else out[key] = v;
}

/**
 * A hex string in lower case (answers differ only in the case of checksummed addresses); any
 * other string as it is. Most hex in an answer is lower case already: then toLowerCase gives the
 * same string back and the hex test is skipped.
 */
function lowerHex(value: string): string {
  if (value.charCodeAt(0) !== 48 || value.charCodeAt(1) !== 120) return value; // not "0x…"
  const lower = value.toLowerCase();
  return lower === value || hexString.test(value) ? lower : value;
}

/**
 * Keeps the spec fields of an object (dropping nulls); leaves anything else to `plain`. Walks the
 * field list (sorted), not the object's keys: no key list to build and sort per object, and a
 * spec field name is never an array index or an Object.prototype member.
 */
function pick(value: unknown, fields: readonly string[], inner?: (key: string, v: unknown) => unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return plain(value);
  const out: Record<string, unknown> = {};
  for (const k of fields) {
    const v = (value as Record<string, unknown>)[k];
    if (v === null || v === undefined) continue;
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

/**
 * The canonical text of one answer: exactly canonicalJson(comparable(method, answer)), faster.
 * comparable() inserts keys in sorted order, so V8's own JSON.stringify already writes them
 * sorted; only when an object has array-index keys (enumerated numerically) does it fall back.
 */
export function canonicalForm(method: string, answer: Answer): string {
  indexKeys = false;
  const value = comparable(method, answer);
  return indexKeys ? canonicalJson(value) : JSON.stringify(value);
}

/**
 * Canonical JSON text of a value: keys sorted (by UTF-16 code units, as Array#sort does), no
 * whitespace, `undefined` members left out (in arrays: null). It gives exactly what
 * json-stable-stringify gives for JSON data (the unit tests check that on generated values), in
 * about a third of the time: it is the hot path of every answer, 2.5 MB log lists included.
 */
export function canonicalJson(value: unknown): string {
  return write(value) ?? 'null';
}

function write(value: unknown): string | undefined {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? String(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object': {
      if (value === null) return 'null';
      if (Array.isArray(value)) {
        let out = '[';
        for (let i = 0; i < value.length; i++) {
          if (i > 0) out += ',';
          out += write(value[i]) ?? 'null';
        }
        return `${out}]`;
      }
      if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return write((value as { toJSON(): unknown }).toJSON());
      const keys = Object.keys(value).sort();
      let out = '{';
      for (const key of keys) {
        const member = write((value as Record<string, unknown>)[key]);
        if (member === undefined) continue;
        if (out.length > 1) out += ',';
        out += `${JSON.stringify(key)}:${member}`;
      }
      return `${out}}`;
    }
    case 'bigint':
      throw new TypeError('canonicalJson: a bigint is not JSON');
    default:
      return undefined;
  }
}

/** SHA-256 hex of a string's UTF-8 bytes (one-shot crypto.hash: a third of createHash's cost on short texts). */
export function sha256Hex(text: string): string {
  return hash('sha256', text, 'hex');
}
