/**
 * Which fields of blocks, transactions, receipts and logs are compared (canonical.ts): the ones
 * the execution-apis schema defines for them (`schemaFields`), less the ignored ones
 * (`defaultIgnoredFields`, plus the config's `ignoredFields`, global and per chain).
 */

/** The objects whose fields are compared by the execution-apis schema, and can be ignored. */
export type Shape = 'block' | 'transaction' | 'receipt' | 'log';
export const shapes: readonly Shape[] = ['block', 'transaction', 'receipt', 'log'];
export type IgnoredFields = Readonly<Record<Shape, readonly string[]>>;

/**
 * Fields node clients disagree on for the same block or transaction, so honest upstreams would
 * never form a quorum if they counted. Kept minimal; each is returned only when N answers agree.
 */
export const defaultIgnoredFields: IgnoredFields = Object.freeze({
  // Dropped from the execution-apis Block schema (execution-apis#570); geth, erigon and reth no
  // longer return it, nethermind and some providers still do.
  block: Object.freeze(['totalDifficulty']),
  transaction: Object.freeze([
    // On legacy (type 0) transactions: geth and erigon return it for EIP-155 signatures only,
    // nethermind leaves it out; the signed fields and `hash` still count.
    'chainId',
    // Typed transactions: besu returns `yParity` without `v`, older erigon and nethermind `v`
    // without `yParity`. The same signature bit, covered by `r`, `s` and the transaction `hash`.
    'v',
    'yParity',
  ]),
  receipt: Object.freeze([]),
  log: Object.freeze([]),
});

/**
 * The fields the execution-apis schema (ethereum/execution-apis src/schemas, at commit 033ca6e,
 * 2026-08-07) defines for each object: the only fields compared. Any other field is a client's
 * or a chain's extra (`l1BlockNumber`, `sendRoot`, `l1Fee`, nethermind's AuRa `author`…): left
 * out of the comparison like an ignored field, and returned under a confirmation only when all N
 * agreeing answers carried it alike. Objects inside these (withdrawals, access list and
 * authorization entries, topics) are compared whole: the schema closes them
 * (`additionalProperties: false`) and no client is known to add to them.
 */
export const schemaFields: Readonly<Record<Shape, readonly string[]>> = Object.freeze({
  // Block (block.yaml): London, Shanghai (withdrawals), Cancun (blobs, beacon root), Prague
  // (requestsHash), EIP-7928 (blockAccessListHash). Uncles have the same schema.
  block: Object.freeze([
    'hash', 'parentHash', 'sha3Uncles', 'miner', 'stateRoot', 'transactionsRoot', 'receiptsRoot', 'logsBloom',
    'difficulty', 'number', 'gasLimit', 'gasUsed', 'timestamp', 'extraData', 'mixHash', 'nonce', 'size',
    'baseFeePerGas', 'withdrawalsRoot', 'blobGasUsed', 'excessBlobGas', 'parentBeaconBlockRoot',
    'requestsHash', 'blockAccessListHash', 'transactions', 'withdrawals', 'uncles',
  ]),
  // TransactionInfo (transaction.yaml): the context fields, then the union of the signed
  // transaction types: legacy, EIP-2930, EIP-1559, EIP-4844 (blobs), EIP-7702 (set code).
  transaction: Object.freeze([
    'blockHash', 'blockNumber', 'blockTimestamp', 'from', 'hash', 'transactionIndex',
    'type', 'nonce', 'to', 'gas', 'value', 'input', 'gasPrice', 'maxPriorityFeePerGas', 'maxFeePerGas',
    'maxFeePerBlobGas', 'accessList', 'blobVersionedHashes', 'authorizationList', 'chainId',
    'yParity', 'v', 'r', 's',
  ]),
  // ReceiptInfo (receipt.yaml).
  receipt: Object.freeze([
    'type', 'transactionHash', 'transactionIndex', 'blockHash', 'blockNumber', 'from', 'to',
    'cumulativeGasUsed', 'gasUsed', 'blobGasUsed', 'contractAddress', 'logs', 'logsBloom', 'root',
    'status', 'effectiveGasPrice', 'blobGasPrice',
  ]),
  // Log (receipt.yaml).
  log: Object.freeze([
    'removed', 'logIndex', 'transactionIndex', 'transactionHash', 'blockHash', 'blockNumber',
    'blockTimestamp', 'address', 'data', 'topics',
  ]),
});

/** Per shape, the fields compared: the schema's, less the ignored ones. */
export type Compared = Readonly<Record<Shape, ReadonlySet<string>>>;
const comparedCache = new WeakMap<IgnoredFields, Compared>();

/** The compared fields under a list of ignored fields (built once per list: the chains' lists live as long as the config). */
export function comparedUnder(ignored: IgnoredFields): Compared {
  let out = comparedCache.get(ignored);
  if (!out) {
    const sets = {} as Record<Shape, ReadonlySet<string>>;
    for (const shape of shapes) {
      const skip = new Set(ignored[shape] ?? []);
      sets[shape] = new Set(schemaFields[shape].filter((f) => !skip.has(f)));
    }
    out = Object.freeze(sets);
    comparedCache.set(ignored, out);
  }
  return out;
}

/** defaultIgnoredFields plus the lists given (config: global, then per chain), without repeats. */
export function mergeIgnoredFields(...lists: (Partial<IgnoredFields> | undefined)[]): IgnoredFields {
  const out = {} as Record<Shape, readonly string[]>;
  for (const shape of shapes) {
    out[shape] = Object.freeze([...new Set([defaultIgnoredFields[shape], ...lists.map((l) => l?.[shape] ?? [])].flat())]);
  }
  return Object.freeze(out);
}

