/**
 * Bytes as the proofs read them: JSON-RPC hex strings (`0x…`, either case) to bytes and back,
 * quantities to their minimal big-endian bytes (the RLP form of an integer: zero is empty), and
 * keccak-256. Every reader says which field it read, so a malformed answer fails with the field's
 * name, not with a bare "bad hex".
 */
import { keccak_256 } from '@noble/hashes/sha3';
import { ProofError } from './failure.js';

const HEX = /^0x(?:[0-9a-fA-F]{2})*$/;
/** Lenient quantities: some nodes write leading zeros (`0x01`); the value is what is compared. */
const LOOSE_QUANTITY = /^0x[0-9a-fA-F]+$/;

const hexChars = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

/** `0x…` lower case. */
export function toHex(bytes: Uint8Array): string {
  let out = '0x';
  for (let i = 0; i < bytes.length; i += 1) out += hexChars[bytes[i]!];
  return out;
}

/** The bytes of a hex data field (even length); `size`, when given, is the exact length it must have. */
export function dataBytes(value: unknown, field: string, size?: number): Uint8Array {
  if (typeof value !== 'string' || !HEX.test(value)) throw ProofError.malformed(field, value, size === undefined ? 'hex data' : `${size} bytes of hex`);
  const bytes = Uint8Array.from(Buffer.from(value.slice(2), 'hex'));
  if (size !== undefined && bytes.length !== size) throw ProofError.malformed(field, value, `${size} bytes of hex`);
  return bytes;
}

/** A quantity field (`0x0`, `0x1a`; leading zeros tolerated) as a bigint. */
export function quantity(value: unknown, field: string): bigint {
  if (typeof value !== 'string' || !LOOSE_QUANTITY.test(value)) throw ProofError.malformed(field, value, 'a hex quantity');
  return BigInt(value);
}

/** A quantity field as the minimal big-endian bytes RLP encodes an integer with (zero: no bytes). */
export function quantityBytes(value: unknown, field: string): Uint8Array {
  return bigintBytes(quantity(value, field));
}

/** Minimal big-endian bytes of a non-negative integer (zero: no bytes). */
function bigintBytes(n: bigint): Uint8Array {
  if (n === 0n) return new Uint8Array(0);
  let hex = n.toString(16);
  if (hex.length % 2 === 1) hex = `0${hex}`;
  return Uint8Array.from(Buffer.from(hex, 'hex'));
}

/** The integer of big-endian bytes (empty: zero). */
export function bytesBigint(bytes: Uint8Array): bigint {
  return bytes.length === 0 ? 0n : BigInt(toHex(bytes));
}

/** A quantity written canonically (`0x0`, `0x1a`). */
export const quantityHex = (n: bigint): string => `0x${n.toString(16)}`;

export const keccak = (bytes: Uint8Array): Uint8Array => keccak_256(bytes);

/** Two hex strings equal as bytes (case ignored). */
export const sameHex = (a: string, b: string): boolean => a.length === b.length && a.toLowerCase() === b.toLowerCase();

/** keccak-256 of the empty string: the code hash of an account without code. */
export const EMPTY_CODE_HASH = '0xc5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470';
/** The root of an empty trie (keccak of the RLP of the empty string). */
export const EMPTY_TRIE_ROOT = '0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421';
