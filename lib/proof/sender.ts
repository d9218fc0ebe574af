/**
 * A transaction's sender, recovered from its signature (secp256k1 public-key recovery over the
 * transaction's signing payload), so that `from` is proven rather than taken from the provider:
 * the hash a block commits to covers the signature, not the address it recovers to. Pure.
 *
 * The signing payload of each type: legacy, `rlp([nonce, gasPrice, gas, to, value, input])`,
 * with `chainId, 0, 0` appended when `v` says EIP-155 (`v = 35 + 2·chainId + parity`); typed,
 * `type ‖ rlp(the fields before the signature)`. An OP Stack deposit (0x7e) has no signature:
 * its `from` is in its encoding, proven by its hash.
 */
import { RLP } from '@ethereumjs/rlp';
import { secp256k1 } from '@noble/curves/secp256k1';
import { keccak, quantity, quantityBytes, toHex } from './bytes.js';
import { ProofError } from './failure.js';
import { d, fieldsBeforeSignature, typed, typeOf, type TransactionJson } from './transactions.js';

/**
 * The address whose key signed `hash` with (r, s, parity), or undefined when the signature
 * recovers to no key (r or s out of range, r not the x of a curve point). The curve arithmetic
 * is @noble/curves' (audited); the address is the keccak of the key's x ‖ y.
 */
export function recoverAddress(hash: Uint8Array, r: bigint, s: bigint, parity: number): string | undefined {
  if (parity !== 0 && parity !== 1) return undefined;
  let key: Uint8Array;
  try {
    key = new secp256k1.Signature(r, s).addRecoveryBit(parity).recoverPublicKey(hash).toRawBytes(false);
  } catch {
    // r or s outside 1..n−1, r the x of no point, or the point at infinity.
    return undefined;
  }
  // (uncompressed: 0x04 ‖ x ‖ y)
  return toHex(keccak(key.subarray(1)).subarray(12));
}

const bytesOf = (n: bigint) => quantityBytes(`0x${n.toString(16)}`, 'n');

/**
 * The sender of a transaction (its fields as the block holds them, hash checked by the caller),
 * lower case: recovered from the signature over its signing payload; a deposit's own `from`.
 * Throws a `ProofError` (`value` on `from`) when the signature recovers to no key.
 */
export function senderOf(tx: TransactionJson, field = 'transaction'): string {
  const type = typeOf(tx, field);
  if (type === 0x7e) return toHex(d(tx, 'from', field, 20));
  const fields = fieldsBeforeSignature(tx, type, field);
  let payload: Uint8Array;
  let parity: bigint;
  if (type === 0) {
    const v = quantity(tx.v, `${field}.v`);
    if (v === 27n || v === 28n) {
      parity = v - 27n;
      payload = RLP.encode(fields);
    } else if (v >= 35n) {
      // EIP-155: the chain id signed too, v = 35 + 2·chainId + parity
      parity = (v - 35n) & 1n;
      payload = RLP.encode([...fields, bytesOf((v - 35n) >> 1n), new Uint8Array(0), new Uint8Array(0)]);
    } else throw ProofError.malformed(`${field}.v`, tx.v, 'a legacy signature v (27, 28, or EIP-155)');
  } else {
    payload = typed(type, fields);
    parity = quantity(tx.yParity ?? tx.v, `${field}.yParity`);
  }
  const sender = parity > 1n ? undefined : recoverAddress(keccak(payload), quantity(tx.r, `${field}.r`), quantity(tx.s, `${field}.s`), Number(parity));
  if (sender === undefined) throw ProofError.mismatch('value', `${field}.from`, 'the signer of the transaction', String(tx.from), 'its signature recovers to no key');
  return sender;
}
