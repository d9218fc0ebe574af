/**
 * One spelling of hex values whatever Ponder wrote. Ponder 0.4 stores viem's EIP-55 checksummed
 * addresses, Ponder 0.12 and later lower case; hashes, ids and request bytes are lower case in
 * both. The API serves what the reference (Ponder 0.4) served: addresses EIP-55 checksummed,
 * every other hex lower case.
 *
 * EIP-55 is written out here over @noble/hashes' keccak-256 (a dependency already, for the
 * hashes of writes): viem's `checksumAddress` did the same, but importing viem raised the
 * server's RSS by tens of MB, and it was only a development dependency (an install without dev
 * dependencies could not start). The unit tests hold this against viem's.
 */
import { keccak_256 } from '@noble/hashes/sha3';

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;
/** The most recent addresses checksummed (lists repeat the same relayers and tokens). */
const cache = new Map<string, string>();
const cacheSize = 8192;

/** An address in its EIP-55 form; anything that is not a 20-byte hex string is returned as is. */
export function eip55(value: string): string {
  if (!ADDRESS.test(value)) return value;
  const lower = value.slice(2).toLowerCase();
  const known = cache.get(lower);
  if (known !== undefined) return known;
  // Each hex letter is upper case where the matching nibble of keccak-256(the lower-case hex, as ASCII) is 8 or more.
  const hash = keccak_256(Buffer.from(lower, 'latin1'));
  let out = '0x';
  for (let i = 0; i < 40; i += 1) {
    const nibble = i % 2 === 0 ? hash[i >> 1]! >> 4 : hash[i >> 1]! & 0x0f;
    out += nibble >= 8 ? lower[i]!.toUpperCase() : lower[i]!;
  }
  if (cache.size >= cacheSize) cache.delete(cache.keys().next().value!);
  cache.set(lower, out);
  return out;
}

/** Hashes, ids and byte strings: lower case. */
export function lowerHex(value: string): string {
  return value.toLowerCase();
}
