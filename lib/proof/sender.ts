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
import { RLP, type NestedUint8Array } from '@ethereumjs/rlp';
import { dataBytes, keccak, quantity, quantityBytes, toHex } from './bytes.js';
import { ProofError } from './failure.js';
import type { TransactionJson } from './transactions.js';

const P = 2n ** 256n - 2n ** 32n - 977n;
const N = 0xfffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141n;
const GX = 0x79be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798n;
const GY = 0x483ada7726a3c4655da4fbfc0e1108a8fd17b448a68554199c47d08ffb10d4b8n;

const mod = (a: bigint, m = P): bigint => {
  const r = a % m;
  return r < 0n ? r + m : r;
};

function pow(base: bigint, exp: bigint, m: bigint): bigint {
  let result = 1n;
  let b = mod(base, m);
  let e = exp;
  while (e > 0n) {
    if (e & 1n) result = (result * b) % m;
    b = (b * b) % m;
    e >>= 1n;
  }
  return result;
}

const inverse = (a: bigint, m: bigint): bigint => pow(a, m - 2n, m);

/** A point in Jacobian coordinates (x = X/Z², y = Y/Z³); Z = 0 is the point at infinity. */
type Jacobian = [bigint, bigint, bigint];
const INFINITY: Jacobian = [0n, 1n, 0n];

function double([x, y, z]: Jacobian): Jacobian {
  if (z === 0n || y === 0n) return INFINITY;
  const a = (x * x) % P;
  const b = (y * y) % P;
  const c = (b * b) % P;
  const d = mod(2n * (((x + b) * (x + b)) % P - a - c));
  const e = (3n * a) % P;
  const f = (e * e) % P;
  const x3 = mod(f - 2n * d);
  const y3 = mod(e * mod(d - x3) - 8n * c);
  const z3 = (2n * y * z) % P;
  return [x3, y3, z3];
}

function add(p: Jacobian, q: Jacobian): Jacobian {
  const [x1, y1, z1] = p;
  const [x2, y2, z2] = q;
  if (z1 === 0n) return q;
  if (z2 === 0n) return p;
  const z1z1 = (z1 * z1) % P;
  const z2z2 = (z2 * z2) % P;
  const u1 = (x1 * z2z2) % P;
  const u2 = (x2 * z1z1) % P;
  const s1 = (((y1 * z2) % P) * z2z2) % P;
  const s2 = (((y2 * z1) % P) * z1z1) % P;
  if (u1 === u2) return s1 === s2 ? double(p) : INFINITY;
  const h = mod(u2 - u1);
  const r = mod(s2 - s1);
  const hh = (h * h) % P;
  const hhh = (hh * h) % P;
  const v = (u1 * hh) % P;
  const x3 = mod(r * r - hhh - 2n * v);
  const y3 = mod(r * mod(v - x3) - s1 * hhh);
  const z3 = (((h * z1) % P) * z2) % P;
  return [x3, y3, z3];
}

/** a·A + b·B (Straus: one pass over the bits of both scalars). */
function twoMultiples(a: bigint, pa: Jacobian, b: bigint, pb: Jacobian): Jacobian {
  const both = add(pa, pb);
  let acc = INFINITY;
  for (let i = 255n; i >= 0n; i--) {
    acc = double(acc);
    const bitA = (a >> i) & 1n;
    const bitB = (b >> i) & 1n;
    if (bitA && bitB) acc = add(acc, both);
    else if (bitA) acc = add(acc, pa);
    else if (bitB) acc = add(acc, pb);
  }
  return acc;
}

/**
 * The address whose key signed `hash` with (r, s, parity), or undefined when the signature
 * recovers to no key (r or s out of range, r not the x of a curve point).
 */
export function recoverAddress(hash: Uint8Array, r: bigint, s: bigint, parity: number): string | undefined {
  if (r <= 0n || r >= N || s <= 0n || s >= N || (parity !== 0 && parity !== 1)) return undefined;
  const alpha = mod(r * r * r + 7n);
  const beta = pow(alpha, (P + 1n) / 4n, P);
  if ((beta * beta) % P !== alpha) return undefined;
  const y = (beta & 1n) === BigInt(parity) ? beta : P - beta;
  const e = BigInt(toHex(hash)) % N;
  const rInv = inverse(r, N);
  const u1 = mod(-e * rInv, N);
  const u2 = (s * rInv) % N;
  const [x, yq, z] = twoMultiples(u1, [GX, GY, 1n], u2, [r, y, 1n]);
  if (z === 0n) return undefined;
  const zInv = inverse(z, P);
  const zInv2 = (zInv * zInv) % P;
  const ax = (x * zInv2) % P;
  const ay = (((yq * zInv2) % P) * zInv) % P;
  const key = new Uint8Array(64);
  key.set(word(ax), 0);
  key.set(word(ay), 32);
  return toHex(keccak(key).subarray(12));
}

function word(n: bigint): Uint8Array {
  const out = new Uint8Array(32);
  let v = n;
  for (let i = 31; i >= 0; i--) {
    out[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  return out;
}

const q = (tx: TransactionJson, f: string, field: string) => quantityBytes(tx[f], `${field}.${f}`);
const d = (tx: TransactionJson, f: string, field: string, size?: number) => dataBytes(tx[f], `${field}.${f}`, size);
const to = (tx: TransactionJson, field: string) => (tx.to === undefined || tx.to === null ? new Uint8Array(0) : dataBytes(tx.to, `${field}.to`, 20));
const bytesOf = (n: bigint) => quantityBytes(`0x${n.toString(16)}`, 'n');

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
    const parity = a.yParity === undefined || a.yParity === null ? q(a, 'v', f) : q(a, 'yParity', f);
    return [q(a, 'chainId', f), d(a, 'address', f, 20), q(a, 'nonce', f), parity, q(a, 'r', f), q(a, 's', f)];
  });
}

function typed(type: number, items: NestedUint8Array): Uint8Array {
  const body = RLP.encode(items);
  const out = new Uint8Array(body.length + 1);
  out[0] = type;
  out.set(body, 1);
  return out;
}

/**
 * The sender of a transaction (its fields as the block holds them, hash checked by the caller),
 * lower case: recovered from the signature over its signing payload; a deposit's own `from`.
 * Throws a `ProofError` (`value` on `from`) when the signature recovers to no key.
 */
export function senderOf(tx: TransactionJson, field = 'transaction'): string {
  const type = tx.type === undefined || tx.type === null ? 0 : Number(quantity(tx.type, `${field}.type`));
  if (type === 0x7e) return toHex(d(tx, 'from', field, 20));
  const fees1559 = () => [q(tx, 'chainId', field), q(tx, 'nonce', field), q(tx, 'maxPriorityFeePerGas', field), q(tx, 'maxFeePerGas', field), q(tx, 'gas', field), to(tx, field), q(tx, 'value', field), d(tx, 'input', field), accessList(tx, field)];
  let payload: Uint8Array;
  let parity: bigint;
  switch (type) {
    case 0: {
      const v = quantity(tx.v, `${field}.v`);
      const fields: NestedUint8Array = [q(tx, 'nonce', field), q(tx, 'gasPrice', field), q(tx, 'gas', field), to(tx, field), q(tx, 'value', field), d(tx, 'input', field)];
      if (v === 27n || v === 28n) {
        parity = v - 27n;
        payload = RLP.encode(fields);
      } else if (v >= 35n) {
        parity = (v - 35n) & 1n;
        payload = RLP.encode([...fields, bytesOf((v - 35n) >> 1n), new Uint8Array(0), new Uint8Array(0)]);
      } else throw ProofError.malformed(`${field}.v`, tx.v, 'a legacy signature v (27, 28, or EIP-155)');
      break;
    }
    case 1:
      payload = typed(1, [q(tx, 'chainId', field), q(tx, 'nonce', field), q(tx, 'gasPrice', field), q(tx, 'gas', field), to(tx, field), q(tx, 'value', field), d(tx, 'input', field), accessList(tx, field)]);
      parity = quantity(tx.yParity ?? tx.v, `${field}.yParity`);
      break;
    case 2:
      payload = typed(2, fees1559());
      parity = quantity(tx.yParity ?? tx.v, `${field}.yParity`);
      break;
    case 3: {
      const hashes = tx.blobVersionedHashes;
      if (!Array.isArray(hashes)) throw ProofError.malformed(`${field}.blobVersionedHashes`, hashes, 'a list of hashes');
      payload = typed(3, [...fees1559(), q(tx, 'maxFeePerBlobGas', field), hashes.map((h: unknown, i: number) => dataBytes(h, `${field}.blobVersionedHashes[${i}]`, 32))]);
      parity = quantity(tx.yParity ?? tx.v, `${field}.yParity`);
      break;
    }
    case 4:
      payload = typed(4, [...fees1559(), authorizationList(tx, field)]);
      parity = quantity(tx.yParity ?? tx.v, `${field}.yParity`);
      break;
    default:
      throw new ProofError(`${field}.type: transaction type ${String(tx.type)} has no known encoding`, { reason: 'unsupported', field: `${field}.type`, actual: String(tx.type) });
  }
  const sender = parity > 1n ? undefined : recoverAddress(keccak(payload), quantity(tx.r, `${field}.r`), quantity(tx.s, `${field}.s`), Number(parity));
  if (sender === undefined) throw ProofError.mismatch('value', `${field}.from`, 'the signer of the transaction', String(tx.from), 'its signature recovers to no key');
  return sender;
}
