/**
 * The write methods: calls that change something outside the node that answers them (a
 * transaction in the mempool, a bundle at a builder, a mined block). Pure. The writes are the rows
 * of the method table (methods.ts) with a `write` rule; every one is in neither `methodTable`'s
 * confirmable rows nor ever confirmable (a write is asked of one upstream, or of K at once in
 * broadcast mode).
 *
 * What a write may never do (lib/verify/write.ts applies it): be hedged, or be sent to another
 * upstream once its bytes may have reached one (UpstreamCallError.sent). A write whose bytes may
 * have reached an upstream that never answered ends in -32017 (outcome unknown) with the
 * transaction hash when it has one, so the client can look it up.
 *
 * `hashAt`: where the signed transaction is, whose hash (transactionHash: keccak-256 of the bytes,
 * or of a blob transaction's body) is the answer of the method, and what an `already known`
 * answer stands for. `broadcast`: the same
 * bytes mean the same thing on every upstream, so the chain's broadcast mode may send them to K
 * upstreams at once (not so for a transaction the node signs: each node would make its own).
 */
import { RLP, type NestedUint8Array } from '@ethereumjs/rlp';
import { keccak_256 } from '@noble/hashes/sha3';
import { methods, methodsWhere, type WriteRule } from './methods.js';
import type { RpcCall } from './types.js';

export type { WriteRule };

/** Every write method omnigate knows (the rows of the method table with a `write` rule). A method not listed is a read. */
export const writeTable: Readonly<Record<string, WriteRule>> = Object.fromEntries(methodsWhere((e) => e.write !== undefined).map((m) => [m, methods[m]!.write!]));

/** The rule of a write method (own properties only). */
export function writeRuleOf(method: string): WriteRule | undefined {
  return Object.hasOwn(writeTable, method) ? writeTable[method] : undefined;
}

/** Whether any call of the request is a write (a batch with one write member is a write). */
export function isWrite(calls: readonly RpcCall[]): boolean {
  for (const call of calls) if (Object.hasOwn(writeTable, call.method)) return true;
  return false;
}

/** Whether every write of the request may be broadcast (the reads of a batch go along). */
export function mayBroadcast(calls: readonly RpcCall[]): boolean {
  return calls.every((c) => writeRuleOf(c.method)?.broadcast !== false);
}

const hexBytes = /^0x(?:[0-9a-f]{2})+$/i;

/**
 * The transaction hash of a write call, `0x` + 64 hex digits; undefined when the method carries no
 * signed transaction, the parameter is not hex bytes (the node will say what is wrong with it), or
 * the transaction is of a type whose hash is not known here (transactionHash).
 */
export function txHashOf(call: RpcCall): string | undefined {
  const at = writeRuleOf(call.method)?.hashAt;
  if (!at) return undefined;
  let value = call.params[at.param];
  if (at.key !== undefined) value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[at.key] : undefined;
  if (typeof value !== 'string' || !hexBytes.test(value)) return undefined;
  return transactionHash(Buffer.from(value.slice(2), 'hex'));
}

const keccakHex = (bytes: Uint8Array) => `0x${Buffer.from(keccak_256(bytes)).toString('hex')}`;

/**
 * The hash of signed transaction bytes as a node sends them: keccak-256 of the bytes for a legacy
 * transaction and EIP-2718 types 1, 2 and 4. A blob transaction (type 3, EIP-4844) travels in its
 * network form, `0x03 || rlp([tx_payload_body, blobs, commitments, proofs])` (EIP-7594 adds a
 * wrapper version), and its hash is keccak-256 of `0x03 || rlp(tx_payload_body)`: the blobs are
 * not hashed. Any other type (zkSync's 0x71, whose hash covers its EIP-712 digest; types of other
 * chains): undefined, never a hash that is not the transaction's.
 */
export function transactionHash(bytes: Buffer): string | undefined {
  const type = bytes[0];
  if (type === undefined) return undefined;
  if (type >= 0xc0 || type === 0x01 || type === 0x02 || type === 0x04) return keccakHex(bytes);
  if (type !== 0x03) return undefined;
  let outer: Uint8Array | NestedUint8Array;
  try {
    outer = RLP.decode(bytes.subarray(1)); // the whole payload, canonical, nothing after it
  } catch {
    return undefined; // the node will say what is wrong with it
  }
  if (!Array.isArray(outer)) return undefined;
  const body = outer[0];
  // Its first item a list: the network form; else (chain id first) the transaction itself.
  if (!Array.isArray(body)) return keccakHex(bytes);
  return keccakHex(Buffer.concat([bytes.subarray(0, 1), RLP.encode(body)]));
}

/**
 * A node's answer that the transaction is already in its pool (or chain): the write reached it.
 * geth and its forks (op-geth, bor): "already known" (txpool ErrAlreadyKnown), older geth "known
 * transaction: <hash>"; erigon: "already known", "ALREADY_EXISTS", "INTERNAL_ERROR: existing tx
 * with same hash"; nethermind: "AlreadyKnown" (its AcceptTxResult name); besu: "Known
 * transaction"; reth and anvil: "already imported", "transaction already imported"; OpenEthereum
 * and Parity-derived nodes: "Transaction with the same hash was already imported."; Infura and
 * Alchemy relay the node's "already known". Not here: "nonce too low" (a different transaction
 * may have used the nonce) and "replacement transaction underpriced" (a different transaction
 * holds the nonce): those are the node's answer, relayed as such.
 */
export const alreadyKnownMessage =
  /already known|alreadyknown|known transaction|already_exists|already exists|already imported|already in (the )?(pool|mempool|txpool)|existing tx with same hash|same hash was already/i;

export function isAlreadyKnown(error: { code?: unknown; message?: unknown } | undefined): boolean {
  return typeof error?.message === 'string' && alreadyKnownMessage.test(error.message);
}
