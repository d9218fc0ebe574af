/**
 * The cache of confirmed answers in this process's memory: least recently used first out,
 * bounded in bytes (`cache.memoryBytes`). An entry keeps what a later request is answered with:
 * the bytes the first client got, their hash, and the quorum that confirmed them (which
 * providers, when, at which final block; for a proven answer, the header it was proven against).
 */
import type { Upstream } from '../upstream/registry.js';
import type { ProvenBy } from './redis.js';

export interface CacheEntry {
  /** The confirmed answer's bytes, as its first client got them (its id inside). */
  readonly body: Buffer;
  /** X-Json-Hash of the answer. */
  readonly hash: string;
  /** The agreeing upstreams, in the order of the verdict: the first is the one whose bytes were kept. */
  readonly quorum: readonly Upstream[];
  /** The N that confirmed it: it serves requests for N or fewer. */
  readonly confirmations: number;
  /** When it was confirmed (ms since the epoch): the Age header. */
  readonly at: number;
  /** The final block it is about. */
  readonly block: bigint;
  /**
   * A proven answer (lib/prove): the header it was proven against; the quorum is then the proven
   * provider and the header's. Absent: the quorum's answers agreed.
   */
  readonly proof?: ProvenBy | undefined;
}

/** What an entry costs beyond its bytes and key (the record, the quorum list, the map's slot). */
const overhead = 256;

export class MemoryCache {
  private readonly entries = new Map<string, { entry: CacheEntry; size: number }>();
  /** Bytes held (answers, keys and overheads). */
  bytes = 0;
  /** Entries dropped to make room. */
  evictions = 0;
  /** Entries larger than `maxEntryBytes`, never kept. */
  refused = 0;

  /** `maxEntryBytes` (default an eighth of the budget): one answer never takes the whole cache. */
  constructor(
    readonly maxBytes: number,
    readonly maxEntryBytes: number = Math.floor(maxBytes / 8),
  ) {
    if (!(maxBytes > 0)) throw new TypeError('MemoryCache: maxBytes must be a positive number of bytes');
  }

  get size(): number {
    return this.entries.size;
  }

  /** The entry of `key`, now the most recently used. */
  get(key: string): CacheEntry | undefined {
    const held = this.entries.get(key);
    if (held === undefined) return undefined;
    this.entries.delete(key);
    this.entries.set(key, held);
    return held.entry;
  }

  /** Keeps `entry` under `key`, unless one confirmed by more providers is there already. */
  set(key: string, entry: CacheEntry): void {
    const size = entry.body.length + 2 * key.length + overhead;
    if (size > this.maxEntryBytes) {
      this.refused += 1;
      return;
    }
    const old = this.entries.get(key);
    if (old !== undefined) {
      if (old.entry.confirmations > entry.confirmations) return;
      this.entries.delete(key);
      this.bytes -= old.size;
    }
    while (this.bytes + size > this.maxBytes) {
      const oldest = this.entries.entries().next();
      if (oldest.done) break;
      this.entries.delete(oldest.value[0]);
      this.bytes -= oldest.value[1].size;
      this.evictions += 1;
    }
    this.entries.set(key, { entry, size });
    this.bytes += size;
  }

  /** Drops the entry of `key`; whether there was one. */
  delete(key: string): boolean {
    const held = this.entries.get(key);
    if (held === undefined) return false;
    this.entries.delete(key);
    this.bytes -= held.size;
    return true;
  }

  clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }
}
