/**
 * Receipts proven against a header's `receiptsRoot`: each receipt of eth_getBlockReceipts (or of
 * eth_getTransactionReceipt, one per transaction of the block) encoded as the block's trie holds
 * it, the trie rebuilt, its root compared. Encodings: legacy (`rlp([status, cumulativeGasUsed,
 * logsBloom, logs])`, with the post-state root instead of the status before Byzantium), the typed
 * receipts (type byte, then the same list: 0x1, 0x2, 0x3, 0x4, and Arbitrum's 0x64–0x6a), and OP
 * Stack deposit receipts (0x7e, the list followed by `depositNonce` from Regolith on and
 * `depositReceiptVersion` from Canyon on, when the receipt has them).
 *
 * Before the root, each receipt is checked on its own so that a failure names the receipt: it
 * belongs to the block (`blockHash`, `blockNumber`, its `transactionIndex` is its position), and
 * its `logsBloom` is the bloom of its logs. Then the root: a receipt dropped, added, reordered or
 * altered anywhere (a log's address, topic or data, the status, the gas) is `receipts-root`.
 */
import { RLP, type NestedUint8Array } from '@ethereumjs/rlp';
import { dataBytes, quantity, quantityBytes, quantityHex, sameHex } from './bytes.js';
import { BLOOM_BYTES, logsBloom, orBlooms, type LogJson } from './bloom.js';
import { ProofError } from './failure.js';
import type { ProvenHeader } from './header.js';
import { orderedTrieRoot } from './trie.js';

/** A receipt as eth_getBlockReceipts / eth_getTransactionReceipt return it. */
export interface ReceiptJson {
  readonly type?: string;
  readonly status?: string | null;
  readonly root?: string | null;
  readonly cumulativeGasUsed: string;
  readonly logsBloom: string;
  readonly logs: readonly LogJson[];
  readonly [field: string]: unknown;
}

const DEPOSIT = 0x7e;
/** Receipt types encoded as `type || rlp(list)` (EIP-2718): 2930, 1559, 4844, 7702, and Arbitrum's own. */
const TYPED = new Set([0x01, 0x02, 0x03, 0x04, 0x64, 0x65, 0x66, 0x68, 0x69, 0x6a]);

function logItems(logs: readonly LogJson[], field: string): NestedUint8Array {
  if (!Array.isArray(logs)) throw ProofError.malformed(`${field}.logs`, logs, 'a list of logs');
  return logs.map((log, i) => {
    const f = `${field}.logs[${i}]`;
    if (!Array.isArray(log?.topics)) throw ProofError.malformed(`${f}.topics`, log?.topics, 'a list of topics');
    return [
      dataBytes(log.address, `${f}.address`, 20),
      log.topics.map((t: string, k: number) => dataBytes(t, `${f}.topics[${k}]`, 32)),
      dataBytes(log.data, `${f}.data`),
    ];
  });
}

/** The receipt as its block's receipts trie holds it; `field` names it in errors (e.g. `receipts[3]`). */
export function receiptBytes(receipt: ReceiptJson, field = 'receipt'): Uint8Array {
  if (receipt === null || typeof receipt !== 'object') throw ProofError.malformed(field, receipt, 'a receipt object');
  const type = receipt.type === undefined || receipt.type === null ? 0 : Number(quantity(receipt.type, `${field}.type`));
  const outcome = receipt.root !== undefined && receipt.root !== null && (receipt.status === undefined || receipt.status === null)
    ? dataBytes(receipt.root, `${field}.root`, 32)
    : quantityBytes(receipt.status, `${field}.status`);
  const items: NestedUint8Array = [
    outcome,
    quantityBytes(receipt.cumulativeGasUsed, `${field}.cumulativeGasUsed`),
    dataBytes(receipt.logsBloom, `${field}.logsBloom`, BLOOM_BYTES),
    logItems(receipt.logs, field),
  ];
  if (type === 0) return RLP.encode(items);
  if (type === DEPOSIT) {
    if (receipt.depositNonce !== undefined && receipt.depositNonce !== null) {
      items.push(quantityBytes(receipt.depositNonce, `${field}.depositNonce`));
      if (receipt.depositReceiptVersion !== undefined && receipt.depositReceiptVersion !== null) {
        items.push(quantityBytes(receipt.depositReceiptVersion, `${field}.depositReceiptVersion`));
      }
    }
  } else if (!TYPED.has(type)) {
    throw new ProofError(`${field}.type: receipt type ${receipt.type} has no known encoding`, { reason: 'unsupported', field: `${field}.type`, actual: String(receipt.type) });
  }
  const body = RLP.encode(items);
  const out = new Uint8Array(body.length + 1);
  out[0] = type;
  out.set(body, 1);
  return out;
}

/** The root of the receipts trie these receipts (in block order) make. */
export function receiptsRoot(receipts: readonly ReceiptJson[]): Promise<string> {
  return orderedTrieRoot(receipts.map((r, i) => receiptBytes(r, `receipts[${i}]`)));
}

/** Checks that a receipt (or log) names the header's block: hash and number, where the answer has them. */
function checkBlockOf(item: Readonly<Record<string, unknown>>, header: ProvenHeader, field: string): void {
  const hash = item.blockHash;
  if (hash !== undefined && hash !== null && (typeof hash !== 'string' || !sameHex(hash, header.hash))) {
    throw ProofError.mismatch('wrong-block', `${field}.blockHash`, header.hash, String(hash), 'not the proven block');
  }
  const number = item.blockNumber;
  if (number !== undefined && number !== null && quantity(number, `${field}.blockNumber`) !== header.number) {
    throw ProofError.mismatch('wrong-block', `${field}.blockNumber`, `0x${header.number.toString(16)}`, String(number), 'not the proven block');
  }
}

/**
 * Proves a block's receipts (all of them, in block order) against the header's `receiptsRoot`
 * and returns them. Throws a `ProofError`: `wrong-block` (a receipt or log of another block or at
 * another index), `logs-bloom` (a receipt's bloom is not its logs'), `receipts-root`.
 */
export async function checkReceipts(header: ProvenHeader, receipts: readonly ReceiptJson[]): Promise<readonly ReceiptJson[]> {
  if (!Array.isArray(receipts)) throw ProofError.malformed('receipts', receipts, 'a list of receipts');
  for (const [i, r] of receipts.entries()) {
    const field = `receipts[${i}]`;
    if (r === null || typeof r !== 'object') throw ProofError.malformed(field, r, 'a receipt object');
    checkBlockOf(r, header, field);
    if (r.transactionIndex !== undefined && quantity(r.transactionIndex, `${field}.transactionIndex`) !== BigInt(i)) {
      throw ProofError.mismatch('wrong-block', `${field}.transactionIndex`, `0x${i.toString(16)}`, String(r.transactionIndex), 'receipts out of block order');
    }
    if (!Array.isArray(r.logs)) throw ProofError.malformed(`${field}.logs`, r.logs, 'a list of logs');
    for (const [k, log] of r.logs.entries()) {
      if (log === null || typeof log !== 'object') throw ProofError.malformed(`${field}.logs[${k}]`, log, 'a log object');
      checkBlockOf(log, header, `${field}.logs[${k}]`);
    }
    const bloom = logsBloom(r.logs, `${field}.logs`);
    if (typeof r.logsBloom !== 'string' || !sameHex(r.logsBloom, bloom)) {
      throw ProofError.mismatch('logs-bloom', `${field}.logsBloom`, bloom, String(r.logsBloom), "not the bloom of the receipt's logs");
    }
  }
  const root = await receiptsRoot(receipts);
  if (root !== header.receiptsRoot) {
    throw ProofError.mismatch('receipts-root', 'receipts', header.receiptsRoot, root,
      `the root of the ${receipts.length} receipts is not the header's receiptsRoot (a receipt dropped, added or altered)`);
  }
  return receipts;
}

/**
 * Checks the fields of proven receipts that the receipts trie does not hold, against what proves
 * them: `gasUsed` (the difference of consecutive `cumulativeGasUsed`), each log's `logIndex`
 * (counted over the block), `transactionIndex` and `transactionHash` (the receipt's), and, given
 * the block's proven transactions (their hashes and `to`), each receipt's `transactionHash` and
 * `to`. Run after `checkReceipts`; throws `value` naming the field. `from`, `contractAddress` and
 * `effectiveGasPrice` are not checked (they need the sender, recovered from the signature).
 */
export function checkReceiptDetails(receipts: readonly ReceiptJson[], transactions?: readonly { readonly hash: string; readonly to: string | null }[]): void {
  let previousGas = 0n;
  let logIndex = 0n;
  for (const [i, r] of receipts.entries()) {
    const field = `receipts[${i}]`;
    const cumulative = quantity(r.cumulativeGasUsed, `${field}.cumulativeGasUsed`);
    if (r.gasUsed !== undefined && quantity(r.gasUsed, `${field}.gasUsed`) !== cumulative - previousGas) {
      throw ProofError.mismatch('value', `${field}.gasUsed`, quantityHex(cumulative - previousGas), String(r.gasUsed), 'not the difference of the cumulative gas');
    }
    previousGas = cumulative;
    const tx = transactions?.[i];
    if (tx !== undefined) {
      if (typeof r.transactionHash !== 'string' || !sameHex(r.transactionHash, tx.hash)) {
        throw ProofError.mismatch('value', `${field}.transactionHash`, tx.hash.toLowerCase(), String(r.transactionHash), 'not the proven transaction');
      }
      const to = r.to === undefined ? undefined : r.to;
      if (to !== undefined && !((to === null && tx.to === null) || (typeof to === 'string' && tx.to !== null && sameHex(to, tx.to)))) {
        throw ProofError.mismatch('value', `${field}.to`, String(tx.to), String(to), "not the proven transaction's recipient");
      }
    }
    for (const [k, log] of r.logs.entries()) {
      const f = `${field}.logs[${k}]`;
      if (log.logIndex !== undefined && quantity(log.logIndex, `${f}.logIndex`) !== logIndex) {
        throw ProofError.mismatch('value', `${f}.logIndex`, quantityHex(logIndex), String(log.logIndex), 'not its place among the block\'s logs');
      }
      if (log.transactionIndex !== undefined && quantity(log.transactionIndex, `${f}.transactionIndex`) !== BigInt(i)) {
        throw ProofError.mismatch('value', `${f}.transactionIndex`, quantityHex(BigInt(i)), String(log.transactionIndex), "not its receipt's index");
      }
      const txHash = tx?.hash ?? r.transactionHash;
      if (log.transactionHash !== undefined && typeof txHash === 'string' && (typeof log.transactionHash !== 'string' || !sameHex(log.transactionHash, txHash))) {
        throw ProofError.mismatch('value', `${f}.transactionHash`, txHash.toLowerCase(), String(log.transactionHash), "not its receipt's transaction");
      }
      if (log.removed !== undefined && log.removed !== false) {
        throw ProofError.mismatch('value', `${f}.removed`, 'false', String(log.removed), 'a log of a proven block is not removed');
      }
      logIndex += 1n;
    }
  }
}

/**
 * Binds proven receipts (`checkReceipts`) to the block's proven transactions (their hashes and
 * `to`, lib/proof/transactions.ts): the receipts trie holds no transaction hash, so without this
 * a receipt's `transactionHash` is the provider's word, and a receipt could be labelled with the
 * hash of another transaction of the block, or of one never mined. One receipt per transaction;
 * each receipt's `transactionHash` is its transaction's, its `to` (when given) the transaction's
 * recipient, its `gasUsed` (when given) the difference of consecutive cumulative gas, and each of
 * its logs' `transactionHash` and `transactionIndex` (when given) its own. Throws `value` naming
 * the field. (The log numbering is checkReceiptDetails'.)
 */
export function checkReceiptsOfTransactions(receipts: readonly ReceiptJson[], transactions: readonly { readonly hash: string; readonly to: string | null }[]): void {
  if (receipts.length !== transactions.length) {
    throw ProofError.mismatch('value', 'receipts', `${transactions.length} receipts, one per transaction`, `${receipts.length} receipts`, "not the block's transactions");
  }
  let previousGas = 0n;
  for (const [i, r] of receipts.entries()) {
    const field = `receipts[${i}]`;
    const tx = transactions[i]!;
    const cumulative = quantity(r.cumulativeGasUsed, `${field}.cumulativeGasUsed`);
    if (r.gasUsed !== undefined && quantity(r.gasUsed, `${field}.gasUsed`) !== cumulative - previousGas) {
      throw ProofError.mismatch('value', `${field}.gasUsed`, quantityHex(cumulative - previousGas), String(r.gasUsed), 'not the difference of the cumulative gas');
    }
    previousGas = cumulative;
    if (typeof r.transactionHash !== 'string' || !sameHex(r.transactionHash, tx.hash)) {
      throw ProofError.mismatch('value', `${field}.transactionHash`, tx.hash.toLowerCase(), String(r.transactionHash), 'not the proven transaction at its index');
    }
    const to = r.to;
    if (to !== undefined && !((to === null && tx.to === null) || (typeof to === 'string' && tx.to !== null && sameHex(to, tx.to)))) {
      throw ProofError.mismatch('value', `${field}.to`, String(tx.to), String(to), "not the proven transaction's recipient");
    }
    for (const [k, log] of r.logs.entries()) {
      const f = `${field}.logs[${k}]`;
      if (log.transactionHash !== undefined && (typeof log.transactionHash !== 'string' || !sameHex(log.transactionHash, tx.hash))) {
        throw ProofError.mismatch('value', `${f}.transactionHash`, tx.hash.toLowerCase(), String(log.transactionHash), "not its receipt's transaction");
      }
      if (log.transactionIndex !== undefined && quantity(log.transactionIndex, `${f}.transactionIndex`) !== BigInt(i)) {
        throw ProofError.mismatch('value', `${f}.transactionIndex`, quantityHex(BigInt(i)), String(log.transactionIndex), "not its receipt's index");
      }
    }
  }
}

/** The receipt fields compared by `checkReceiptAnswer`, with how: hex data, quantity, or a list of logs. */
const ANSWER_FIELDS: readonly (readonly [string, 'hex' | 'quantity'])[] = [
  ['transactionHash', 'hex'], ['transactionIndex', 'quantity'], ['blockHash', 'hex'], ['blockNumber', 'quantity'],
  ['type', 'quantity'], ['status', 'quantity'], ['root', 'hex'], ['cumulativeGasUsed', 'quantity'], ['gasUsed', 'quantity'],
  ['logsBloom', 'hex'], ['to', 'hex'],
];
const LOG_FIELDS: readonly (readonly [string, 'hex' | 'quantity'])[] = [
  ['address', 'hex'], ['data', 'hex'], ['blockHash', 'hex'], ['blockNumber', 'quantity'], ['transactionHash', 'hex'],
  ['transactionIndex', 'quantity'], ['logIndex', 'quantity'],
];

function sameValue(a: unknown, b: unknown, how: 'hex' | 'quantity'): boolean {
  if (a === null || b === null) return a === b;
  if (typeof a !== 'string' || typeof b !== 'string') return false;
  if (how === 'hex') return sameHex(a, b);
  try {
    return quantity(a, 'a') === quantity(b, 'b');
  } catch {
    return false;
  }
}

/**
 * Checks a provider's eth_getTransactionReceipt answer against the block's proven receipts
 * (`checkReceipts`, then `checkReceiptDetails`): the answer must be for `askedHash` (the
 * request's), and the receipt at its `transactionIndex` must be for that transaction and equal it in every field the proof covers (outcome,
 * gas, bloom, logs and their numbering, type, block, recipient; a field the answer leaves out is
 * not compared, except the consensus ones). Returns the proven receipt; a difference is `value`,
 * naming the field.
 */
export function checkReceiptAnswer(receipts: readonly ReceiptJson[], answer: ReceiptJson, askedHash?: string): ReceiptJson {
  if (answer === null || typeof answer !== 'object') throw ProofError.malformed('result', answer, 'a receipt object');
  if (askedHash !== undefined && (typeof answer.transactionHash !== 'string' || !sameHex(answer.transactionHash, askedHash))) {
    throw ProofError.mismatch('value', 'result.transactionHash', askedHash.toLowerCase(), String(answer.transactionHash), 'not the receipt asked for');
  }
  const index = quantity(answer.transactionIndex, 'result.transactionIndex');
  const proven = receipts[Number(index)];
  if (proven === undefined || index >= BigInt(receipts.length)) {
    throw ProofError.mismatch('value', 'result.transactionIndex', `below 0x${receipts.length.toString(16)}`, String(answer.transactionIndex), 'the block has no such transaction');
  }
  for (const [field, how] of ANSWER_FIELDS) {
    const mine = proven[field];
    const theirs = answer[field];
    if (theirs === undefined && mine !== undefined && !['status', 'root', 'cumulativeGasUsed', 'logsBloom'].includes(field)) continue;
    if (mine === undefined && theirs === undefined) continue;
    if (!sameValue(mine, theirs, how)) throw ProofError.mismatch('value', `result.${field}`, String(mine), String(theirs), 'not the proven receipt');
  }
  if (!Array.isArray(answer.logs) || answer.logs.length !== proven.logs.length) {
    throw ProofError.mismatch('value', 'result.logs', `${proven.logs.length} logs`, Array.isArray(answer.logs) ? `${answer.logs.length} logs` : String(answer.logs), 'not the proven receipt');
  }
  for (const [k, log] of answer.logs.entries()) {
    const mine = proven.logs[k]!;
    for (const [field, how] of LOG_FIELDS) {
      if (log?.[field] === undefined && field !== 'address' && field !== 'data') continue;
      if (!sameValue(mine[field], log?.[field], how)) throw ProofError.mismatch('value', `result.logs[${k}].${field}`, String(mine[field]), String(log?.[field]), 'not the proven log');
    }
    const topics = log?.topics;
    if (!Array.isArray(topics) || topics.length !== mine.topics.length || topics.some((t, i) => typeof t !== 'string' || !sameHex(t, mine.topics[i]!))) {
      throw ProofError.mismatch('value', `result.logs[${k}].topics`, mine.topics.join(','), String(topics), 'not the proven log');
    }
  }
  return proven;
}

/** The bloom of a block made of these receipts (the union of theirs); equal to the header's for proven receipts. */
export const blockBloom = (receipts: readonly ReceiptJson[]): string => orBlooms(receipts.map((r) => r.logsBloom));
