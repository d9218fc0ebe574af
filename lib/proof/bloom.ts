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

function hasBits(bloom: Uint8Array, value: Uint8Array): boolean {
  const h = keccak(value);
  for (let i = 0; i < 6; i += 2) {
    const bit = ((h[i]! << 8) | h[i + 1]!) & 2047;
    if ((bloom[BLOOM_BYTES - 1 - (bit >> 3)]! & (1 << (bit & 7))) === 0) return false;
  }
  return true;
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

/**
 * Whether a block (or receipt) with this bloom may hold a log the filter matches: false only when
 * the bloom proves it cannot (no address of the filter is in it, or for some topic position none
 * of the alternatives is, or the bloom is empty: the block has no log). An empty list is a
 * wildcard, as in eth_getLogs.
 */
export function logsBloomMayMatch(bloom: string, filter: LogFilter): boolean {
  const bytes = dataBytes(bloom, 'logsBloom', BLOOM_BYTES);
  if (bytes.every((b) => b === 0)) return false; // the bloom of no logs at all
  const address = filter.address;
  if (address !== undefined && address !== null) {
    const list = asList(address);
    if (list.length > 0 && !list.some((a) => hasBits(bytes, dataBytes(a, 'filter.address', 20)))) return false;
  }
  for (const [i, position] of (filter.topics ?? []).entries()) {
    if (position === null) continue;
    const list = asList(position);
    if (list.length === 0) continue;
    if (!list.some((topic) => hasBits(bytes, dataBytes(topic, `filter.topics[${i}]`, 32)))) return false;
  }
  return true;
}
