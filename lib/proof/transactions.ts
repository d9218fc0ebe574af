/**
 * Transactions proven against a header's `transactionsRoot`: each transaction of a block (the
 * full objects of eth_getBlockBy*(…, true), or eth_getTransactionBy* one by one) encoded from its
 * JSON fields as the block holds it, its hash checked (the keccak of that encoding), the trie
 * rebuilt, its root compared. Encodings:
 *
 * - legacy: `rlp([nonce, gasPrice, gas, to, value, input, v, r, s])`;
 * - 0x1 (2930): `0x01 || rlp([chainId, nonce, gasPrice, gas, to, value, input, accessList, yParity, r, s])`;
 * - 0x2 (1559): `0x02 || rlp([chainId, nonce, maxPriorityFeePerGas, maxFeePerGas, gas, to, value, input, accessList, yParity, r, s])`;
 * - 0x3 (4844): as 0x2 with `maxFeePerBlobGas, blobVersionedHashes` after the access list;
 * - 0x4 (7702): as 0x2 with `authorizationList` (`[chainId, address, nonce, yParity, r, s]` each) after the access list;
 * - 0x7e (OP Stack deposit): `0x7e || rlp([sourceHash, from, to, mint, value, gas, isSystemTx, input])`.
 *
 * `to` absent or null (a contract creation) is the empty string. Other types are `unsupported`.
 */
import { RLP, type NestedUint8Array } from '@ethereumjs/rlp';
import { dataBytes, keccak, quantity, quantityBytes, sameHex, toHex } from './bytes.js';
import { ProofError } from './failure.js';
import type { ProvenHeader } from './header.js';
import { orderedTrieRoot } from './trie.js';

/** A transaction as eth_getTransactionBy* and full eth_getBlockBy* return it. */
export type TransactionJson = Readonly<Record<string, unknown>>;

/** A transaction's fields as the bytes they are encoded as. */
const q = (tx: TransactionJson, f: string, field: string) => quantityBytes(tx[f], `${field}.${f}`);
/** (also sender.ts: a deposit's own `from`) */
export const d = (tx: TransactionJson, f: string, field: string, size?: number) => dataBytes(tx[f], `${field}.${f}`, size);
const to = (tx: TransactionJson, field: string) => (tx.to === undefined || tx.to === null ? new Uint8Array(0) : dataBytes(tx.to, `${field}.to`, 20));
/** The signature's parity: `yParity`, else `v` (typed transactions write v as 0 or 1). */
const parity = (tx: TransactionJson, field: string) => (tx.yParity === undefined || tx.yParity === null ? q(tx, 'v', field) : q(tx, 'yParity', field));

function accessList(tx: TransactionJson, field: string): NestedUint8Array {
  const list = tx.accessList ?? [];
  if (!Array.isArray(list)) throw ProofError.malformed(`${field}.accessList`, list, 'a list');
  return list.map((entry: { address?: unknown; storageKeys?: unknown }, i) => {
    const f = `${field}.accessList[${i}]`;
    if (!Array.isArray(entry?.storageKeys)) throw ProofError.malformed(`${f}.storageKeys`, entry?.storageKeys, 'a list of keys');
    return [dataBytes(entry.address, `${f}.address`, 20), entry.storageKeys.map((k: unknown, j: number) => dataBytes(k, `${f}.storageKeys[${j}]`, 32))];
  });
}

function authorizationList(tx: TransactionJson, field: string): NestedUint8Array {
  const list = tx.authorizationList;
  if (!Array.isArray(list)) throw ProofError.malformed(`${field}.authorizationList`, list, 'a list');
  return list.map((a: TransactionJson, i) => {
    const f = `${field}.authorizationList[${i}]`;
    return [q(a, 'chainId', f), d(a, 'address', f, 20), q(a, 'nonce', f), parity(a, f), q(a, 'r', f), q(a, 's', f)];
  });
}

/** `type ‖ rlp(items)`: a typed transaction's envelope (EIP-2718). */
export function typed(type: number, items: NestedUint8Array): Uint8Array {
  const body = RLP.encode(items);
  const out = new Uint8Array(body.length + 1);
  out[0] = type;
  out.set(body, 1);
  return out;
}

/**
 * The fields of a signed transaction of `type` (0 to 4) before its signature, in their encoding's
 * order: what the signature signs (sender.ts, with a legacy transaction's EIP-155 chain id), and
 * what the block's encoding holds before `v, r, s`.
 */
export function fieldsBeforeSignature(tx: TransactionJson, type: number, field: string): NestedUint8Array {
  const fees1559 = () => [q(tx, 'chainId', field), q(tx, 'nonce', field), q(tx, 'maxPriorityFeePerGas', field), q(tx, 'maxFeePerGas', field), q(tx, 'gas', field), to(tx, field), q(tx, 'value', field), d(tx, 'input', field), accessList(tx, field)];
  switch (type) {
    case 0:
      return [q(tx, 'nonce', field), q(tx, 'gasPrice', field), q(tx, 'gas', field), to(tx, field), q(tx, 'value', field), d(tx, 'input', field)];
    case 1:
      return [q(tx, 'chainId', field), q(tx, 'nonce', field), q(tx, 'gasPrice', field), q(tx, 'gas', field), to(tx, field), q(tx, 'value', field), d(tx, 'input', field), accessList(tx, field)];
    case 2:
      return fees1559();
    case 3: {
      const hashes = tx.blobVersionedHashes;
      if (!Array.isArray(hashes)) throw ProofError.malformed(`${field}.blobVersionedHashes`, hashes, 'a list of hashes');
      return [...fees1559(), q(tx, 'maxFeePerBlobGas', field), hashes.map((h: unknown, i: number) => dataBytes(h, `${field}.blobVersionedHashes[${i}]`, 32))];
    }
    case 4:
      return [...fees1559(), authorizationList(tx, field)];
    default:
      throw unknownType(tx, field);
  }
}

const unknownType = (tx: TransactionJson, field: string) =>
  new ProofError(`${field}.type: transaction type ${String(tx.type)} has no known encoding`, { reason: 'unsupported', field: `${field}.type`, actual: String(tx.type) });

/** The transaction's type (0 for a legacy one, which names none). */
export const typeOf = (tx: TransactionJson, field: string): number => (tx.type === undefined || tx.type === null ? 0 : Number(quantity(tx.type, `${field}.type`)));

/** The transaction as its block's transactions trie holds it (the bytes its hash is the keccak of). */
export function transactionBytes(tx: TransactionJson, field = 'transaction'): Uint8Array {
  if (tx === null || typeof tx !== 'object') throw ProofError.malformed(field, tx, 'a transaction object (ask the block with full transactions)');
  const type = typeOf(tx, field);
  if (type === 0x7e) {
    return typed(0x7e, [
      d(tx, 'sourceHash', field, 32), d(tx, 'from', field, 20), to(tx, field),
      tx.mint === undefined || tx.mint === null ? new Uint8Array(0) : q(tx, 'mint', field),
      q(tx, 'value', field), q(tx, 'gas', field), tx.isSystemTx === true ? Uint8Array.of(1) : new Uint8Array(0), d(tx, 'input', field),
    ]);
  }
  const fields = fieldsBeforeSignature(tx, type, field);
  if (type === 0) return RLP.encode([...fields, q(tx, 'v', field), q(tx, 'r', field), q(tx, 's', field)]);
  return typed(type, [...fields, parity(tx, field), q(tx, 'r', field), q(tx, 's', field)]);
}

/** The hash of a transaction recomputed from its fields; checks it against its `hash` and returns it. */
export function checkTransactionHash(tx: TransactionJson, field = 'transaction'): string {
  return checkedHash(tx, transactionBytes(tx, field), field);
}

function checkedHash(tx: TransactionJson, bytes: Uint8Array, field: string): string {
  const hash = toHex(keccak(bytes));
  if (typeof tx.hash !== 'string' || !sameHex(tx.hash, hash)) {
    throw ProofError.mismatch('value', `${field}.hash`, hash, String(tx.hash), "not the keccak of the transaction's fields (a field altered)");
  }
  return hash;
}

/**
 * Proves a block's transactions (full objects, in block order) against the header's
 * `transactionsRoot` and returns their hashes, proven. Throws a `ProofError`: `wrong-block` (a
 * transaction naming another block or another index), `value` (a hash that is not the keccak of
 * its fields), `transactions-root` (one dropped, added, reordered or altered).
 */
export async function checkTransactions(header: ProvenHeader, transactions: readonly TransactionJson[]): Promise<string[]> {
  if (!Array.isArray(transactions)) throw ProofError.malformed('transactions', transactions, 'a list of transactions');
  const hashes: string[] = [];
  const encoded: Uint8Array[] = [];
  for (const [i, tx] of transactions.entries()) {
    const field = `transactions[${i}]`;
    const bytes = transactionBytes(tx, field);
    encoded.push(bytes);
    if (tx.blockHash !== undefined && tx.blockHash !== null && (typeof tx.blockHash !== 'string' || !sameHex(tx.blockHash, header.hash))) {
      throw ProofError.mismatch('wrong-block', `${field}.blockHash`, header.hash, String(tx.blockHash), 'not the proven block');
    }
    if (tx.transactionIndex !== undefined && tx.transactionIndex !== null && quantity(tx.transactionIndex, `${field}.transactionIndex`) !== BigInt(i)) {
      throw ProofError.mismatch('wrong-block', `${field}.transactionIndex`, `0x${i.toString(16)}`, String(tx.transactionIndex), 'transactions out of block order');
    }
    hashes.push(checkedHash(tx, bytes, field));
  }
  const root = await orderedTrieRoot(encoded);
  if (root !== header.transactionsRoot) {
    throw ProofError.mismatch('transactions-root', 'transactions', header.transactionsRoot, root,
      `the root of the ${transactions.length} transactions is not the header's transactionsRoot (a transaction dropped, added or altered)`);
  }
  return hashes;
}
