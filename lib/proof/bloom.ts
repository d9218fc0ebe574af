/**
 * Logs blooms (the 2048-bit filter of a receipt and of a block): built from logs, and asked
 * whether an eth_getLogs filter may match. Each address and topic sets three bits, taken from the
 * first six bytes of its keccak-256; a bloom without all three bits of a value cannot hold a log
 * with that value, which is what lets a header rule a block out of a log query.
 */
import { dataBytes, keccak, toHex } from './bytes.js';
import { ProofError } from './failure.js';

export const BLOOM_BYTES = 256;

/** A log as nodes send it (only the fields the bloom and the receipt encoding read). */
export interface LogJson {
  readonly address: string;
  readonly topics: readonly string[];
  readonly data: string;
  readonly [field: string]: unknown;
}

/** An eth_getLogs filter's matching part: addresses (any of), topics by position (null: any; an array: any of). */
export interface LogFilter {
  readonly address?: string | readonly string[] | null | undefined;
  readonly topics?: readonly (string | readonly string[] | null)[] | null | undefined;
}

function setBits(bloom: Uint8Array, value: Uint8Array): void {
  const h = keccak(value);
  for (let i = 0; i < 6; i += 2) {
    const bit = ((h[i]! << 8) | h[i + 1]!) & 2047;
    bloom[BLOOM_BYTES - 1 - (bit >> 3)]! |= 1 << (bit & 7);
  }
}

/** The bloom of some logs (a receipt's), `0x…` 256 bytes. */
export function logsBloom(logs: readonly LogJson[], field = 'logs'): string {
  const bloom = new Uint8Array(BLOOM_BYTES);
  for (const [i, log] of logs.entries()) {
    if (!Array.isArray(log?.topics)) throw ProofError.malformed(`${field}[${i}].topics`, log?.topics, 'a list of topics');
    setBits(bloom, dataBytes(log.address, `${field}[${i}].address`, 20));
    for (const [k, topic] of log.topics.entries()) setBits(bloom, dataBytes(topic, `${field}[${i}].topics[${k}]`, 32));
  }
  return toHex(bloom);
}

/** The union of blooms (a block's bloom is the union of its receipts'). */
export function orBlooms(blooms: readonly string[]): string {
  const out = new Uint8Array(BLOOM_BYTES);
  for (const [i, b] of blooms.entries()) {
    const bytes = dataBytes(b, `blooms[${i}]`, BLOOM_BYTES);
    for (let k = 0; k < BLOOM_BYTES; k += 1) out[k]! |= bytes[k]!;
  }
  return toHex(out);
}

const asList = (v: string | readonly string[]): readonly string[] => (typeof v === 'string' ? [v] : v);

/** Where a value's three bits sit in a bloom's hex text (`0x` + 512 digits): the digit's index and the bit's mask in it. */
type Bits = readonly [number, number, number, number, number, number];

function bitsOf(value: Uint8Array): Bits {
  const h = keccak(value);
  const out: number[] = [];
  for (let i = 0; i < 6; i += 2) {
    const bit = ((h[i]! << 8) | h[i + 1]!) & 2047;
    const byte = BLOOM_BYTES - 1 - (bit >> 3);
    const inByte = bit & 7;
    // the byte's high digit holds bits 4-7, its low digit bits 0-3
    out.push(2 + 2 * byte + (inByte >= 4 ? 0 : 1), 1 << (inByte & 3));
  }
  return out as unknown as Bits;
}

/**
 * A filter made ready for blooms: each address and topic hashed once, to the bits it sets. `null`
 * where the filter matches anything (no addresses; a wildcard topic position).
 */
export interface BloomQuery {
  readonly addresses: readonly Bits[] | null;
  readonly topics: readonly (readonly Bits[] | null)[];
}

/** Hashes a filter's addresses and topics once, for `bloomMayMatch` over many blocks. */
export function bloomQuery(filter: LogFilter): BloomQuery {
  const address = filter.address;
  const addresses = address === undefined || address === null || asList(address).length === 0
    ? null
    : asList(address).map((a) => bitsOf(dataBytes(a, 'filter.address', 20)));
  const topics = (filter.topics ?? []).map((position, i) =>
    position === null || asList(position).length === 0 ? null : asList(position).map((t) => bitsOf(dataBytes(t, `filter.topics[${i}]`, 32))));
  return { addresses, topics };
}

const digit = (bloom: string, at: number) => {
  const c = bloom.charCodeAt(at);
  return c <= 57 ? c - 48 : (c | 32) - 87; // 0-9, a-f / A-F
};
const hasAll = (bloom: string, bits: Bits) =>
  (digit(bloom, bits[0]) & bits[1]) !== 0 && (digit(bloom, bits[2]) & bits[3]) !== 0 && (digit(bloom, bits[4]) & bits[5]) !== 0;
const EMPTY_BLOOM = /^0x0{512}$/;
const BLOOM_HEX = /^0x[0-9a-fA-F]{512}$/;

/**
 * Whether a block (or receipt) with this bloom may hold a log the query's filter matches: false
 * only when the bloom proves it cannot (no address of the filter is in it, or for some topic
 * position none of the alternatives is, or the bloom is empty: the block has no log).
 */
export function bloomMayMatch(bloom: string, query: BloomQuery): boolean {
  if (typeof bloom !== 'string' || !BLOOM_HEX.test(bloom)) throw ProofError.malformed('logsBloom', bloom, '256 bytes of hex');
  if (EMPTY_BLOOM.test(bloom)) return false;
  if (query.addresses !== null && !query.addresses.some((bits) => hasAll(bloom, bits))) return false;
  for (const position of query.topics) {
    if (position !== null && !position.some((bits) => hasAll(bloom, bits))) return false;
  }
  return true;
}

/**
 * `bloomMayMatch` for one filter: whether a block with this bloom may hold a log the filter
 * (addresses, topics by position, `null` or `[]` as wildcards, as in eth_getLogs) matches. Over
 * many blocks, build the `bloomQuery` once.
 */
export function logsBloomMayMatch(bloom: string, filter: LogFilter): boolean {
  return bloomMayMatch(bloom, bloomQuery(filter));
}
