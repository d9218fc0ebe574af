/**
 * One spelling of hex values whatever Ponder wrote. Ponder 0.4 stores viem's EIP-55 checksummed
 * addresses, Ponder 0.12 and later lower case; hashes, ids and request bytes are lower case in
 * both. The API serves what the reference (Ponder 0.4) served: addresses EIP-55 checksummed
 * (viem's `checksumAddress`, which caches the 8,192 most recent), every other hex lower case.
 */
import { checksumAddress, type Address } from 'viem';

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/** An address in its EIP-55 form; anything that is not a 20-byte hex string is returned as is. */
export function eip55(value: string): string {
  return ADDRESS.test(value) ? checksumAddress(value as Address) : value;
}

/** Hashes, ids and byte strings: lower case. */
export function lowerHex(value: string): string {
  return value.toLowerCase();
}
