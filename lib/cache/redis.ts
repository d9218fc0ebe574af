/**
 * The shared level of the cache of confirmed answers: Redis (`cache.redis`), through ioredis, so
 * that every worker and replica answers from what one of them confirmed.
 *
 * - Authenticated: each value carries an HMAC-SHA256, under `cache.redis.hmacKey`, of its key
 *   and every byte after the MAC (the answer, its hash, its quorum, when, at which block; for a
 *   proven answer, the header it was proven against). A
 *   value whose MAC does not verify (damaged, or written by someone without the key) is refused,
 *   counted and deleted: it is never served.
 * - Bounded: every value expires (`ttlSeconds`), keys share a prefix per deployment, and writes
 *   pause while Redis's used memory is above `maxBytes` (read every few seconds).
 * - Never in the way: a lookup waits at most `timeoutMs`; Redis down or slow is a miss, writes are
 *   dropped, and ioredis reconnects by itself (`state` says which).
 * - No secret in Redis: the quorum is stored as HMACs of the upstream URLs (provider keys
 *   included) under `hmacKey` (upstreamId), which this process maps back to its own upstreams.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';
import type { Logger } from '../log.js';
import { silentLogger } from '../log.js';
import { redactRedisUrl } from '../upstream/redact.js';

export interface RedisCacheSettings {
  /** redis://[user:password@]host:port[/db] (rediss:// for TLS). */
  url: string;
  /** Prefix of every key (one per deployment). */
  prefix: string;
  /** Lifetime of each value, seconds. */
  ttlSeconds: number;
  /** Writes pause while Redis's used memory is above this many bytes. */
  maxBytes: number;
  /** The longest a lookup waits for Redis, ms. */
  timeoutMs: number;
  /** The key the values are authenticated under (at least 16 characters). */
  hmacKey: string;
}

/** What the shared level stores of an entry (the quorum as keyed URL hashes: see RedisStore.upstreamId). */
export interface SharedEntry {
  body: Buffer;
  hash: string;
  quorum: string[];
  confirmations: number;
  at: number;
  block: bigint;
  /** A proven answer (lib/prove): the agreed header it was proven against; absent: N agreeing answers. */
  proof?: ProvenBy | undefined;
}

/** What vouches for a proven entry: the hash and number of the header N providers agreed on. */
export interface ProvenBy {
  readonly verifiedBy: 'proof';
  readonly headerHash: string;
  readonly blockNumber: bigint;
}

export type RedisState = 'connecting' | 'ready' | 'down';

/** The id of an upstream URL in Redis: no provider key leaves the process. */
/**
 * An ioredis client for a gateway's bounded waits: no offline queue and no retry of a command (a
 * request never waits in a queue for a Redis that is not there: its caller decides at once), a
 * connect timeout of ten bounded waits (1 s at least), reconnecting for ever with a back-off to
 * 2 s. ioredis is loaded on the first call, not at import: a gateway without Redis never pays for
 * the module (tens of MB).
 */
export function redisClient(url: string, timeoutMs: number): Redis {
  const { Redis: Client } = createRequire(import.meta.url)('ioredis') as typeof import('ioredis');
  return new Client(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: Math.max(1_000, timeoutMs * 10),
    retryStrategy: (times) => Math.min(100 * times, 2_000),
    lazyConnect: false,
  });
}


/** The value's layout: 1, an answer N providers agreed on; 2, a proven one (its header named). */
const version = 1;
const provenVersion = 2;
/** How long a chain's shared finalized block is kept after it last moved (a week). */
const floorTtlSeconds = 7 * 86_400;
/**
 * KEYS[1]: the block's key; ARGV[1]: this replica's block (-1: none); ARGV[2]: the TTL; ARGV[3]:
 * this replica's value (`<block>.<MAC>`). Returns the value of the higher block, stored. A value
 * not of that form (written by someone else) is never kept over this replica's block.
 */
const raiseScript = `
local cur = redis.call('GET', KEYS[1])
local mine = tonumber(ARGV[1])
if cur then
  local n = tonumber(string.match(cur, '^(%d+)%.'))
  if n and n >= mine then return cur end
end
if mine < 0 then return cur end
redis.call('SET', KEYS[1], ARGV[3], 'EX', tonumber(ARGV[2]))
return ARGV[3]
`;
/** KEYS[1]: a key; ARGV[1]: the value refused. Deleted only if it still holds that value. */
const dropScript = `
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 0
`;
const macBytes = 32;

export class RedisStore {
  readonly client: Redis;
  state: RedisState = 'connecting';
  /** Whether writes are paused: used memory above maxBytes at the last reading. */
  full = false;
  /** Lookups that found a value, found none, failed or timed out; values refused (bad MAC or shape); writes that failed. */
  readonly counts = { hits: 0, misses: 0, errors: 0, refused: 0, writeErrors: 0 };
  private readonly memoryTimer: NodeJS.Timeout;
  private readonly log: Logger;

  /**
   * How an entry's quorum names an upstream: an HMAC-SHA256 of its URL under `hmacKey`, cut to
   * 22 base64url characters, the same in every replica sharing the key. Keyed, not a plain hash:
   * a URL holds the provider key, and a plain hash would let whoever reads Redis test guessed
   * keys (a short or numeric one) against it offline.
   */
  upstreamId(url: string): string {
    return createHmac('sha256', this.settings.hmacKey).update('upstream\0').update(url).digest('base64url').slice(0, 22);
  }

  constructor(
    readonly settings: RedisCacheSettings,
    options: { logger?: Logger } = {},
  ) {
    this.log = options.logger ?? silentLogger;
    // (a request never waits for a Redis that is not there: it is a miss at once)
    this.client = redisClient(settings.url, settings.timeoutMs);
    this.client.on('ready', () => {
      if (this.state !== 'ready') this.log.info({ redis: this.shownUrl() }, 'cache: Redis ready');
      this.state = 'ready';
      void this.readMemory();
    });
    this.client.on('error', (err: Error) => {
      if (this.state !== 'down') this.log.warn({ redis: this.shownUrl(), err: err.message }, 'cache: Redis unreachable: serving from the upstreams until it is back');
      this.state = 'down';
    });
    this.client.on('end', () => (this.state = 'down'));
    this.memoryTimer = setInterval(() => void this.readMemory(), 5_000);
    this.memoryTimer.unref();
  }

  /** The URL without its password (for logs): upstream/redact.ts redactRedisUrl. */
  shownUrl(): string {
    return redactRedisUrl(this.settings.url);
  }

  /** The entry stored under `key`, or undefined: none, refused, Redis down or slower than timeoutMs. */
  async get(key: string): Promise<SharedEntry | undefined> {
    if (this.state !== 'ready') {
      this.counts.misses += 1;
      return undefined;
    }
    const full = this.settings.prefix + key;
    let timer: NodeJS.Timeout | undefined;
    try {
      const value = await Promise.race([
        this.client.getBuffer(full),
        new Promise<'timeout'>((resolve) => {
          timer = setTimeout(() => resolve('timeout'), this.settings.timeoutMs);
        }),
      ]);
      if (value === 'timeout') {
        this.counts.errors += 1;
        return undefined;
      }
      if (value === null) {
        this.counts.misses += 1;
        return undefined;
      }
      const entry = this.open(full, value);
      if (entry === undefined) {
        this.counts.refused += 1;
        this.log.warn({ key: full }, 'cache: a Redis value failed its authentication or shape check: refused and deleted');
        this.client.del(full).catch(() => {});
        return undefined;
      }
      this.counts.hits += 1;
      return entry;
    } catch {
      this.counts.errors += 1;
      return undefined;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Stores `entry` under `key` with the TTL, unless Redis is down or over its byte budget. */
  set(key: string, entry: SharedEntry): void {
    if (this.state !== 'ready' || this.full) return;
    const full = this.settings.prefix + key;
    this.client.set(full, this.seal(full, entry), 'EX', this.settings.ttlSeconds).catch(() => {
      this.counts.writeErrors += 1;
    });
  }

  /** Deletes the entry stored under `key` (dropped when Redis is down: it expires by its TTL). */
  delete(key: string): void {
    if (this.state !== 'ready') return;
    this.client.del(this.settings.prefix + key).catch(() => {
      this.counts.writeErrors += 1;
    });
  }

  /**
   * The finalized route's block for `key` (a chain and N), shared by the replicas: raised to
   * `block` when that is higher, atomically (a script: two replicas raising at once never lower
   * it), and returned. Undefined when Redis is down or slower than timeoutMs (the caller keeps its
   * own). The value carries an HMAC-SHA256 of its key and block, under `hmacKey`, as the cached
   * answers do: one that does not verify (written without the key: a block no N providers
   * reported as finalized, to which `latest` would be pinned) is refused, counted and deleted.
   */
  async raiseFloor(key: string, block: bigint | undefined): Promise<bigint | undefined> {
    if (this.state !== 'ready') return undefined;
    const full = `${this.settings.prefix}finalized:${key}`;
    let timer: NodeJS.Timeout | undefined;
    try {
      const value = await Promise.race([
        this.client.eval(raiseScript, 1, full, block === undefined ? '-1' : block.toString(), String(floorTtlSeconds), block === undefined ? '' : this.sealFloor(full, block)) as Promise<string | null>,
        new Promise<'timeout'>((resolve) => {
          timer = setTimeout(() => resolve('timeout'), this.settings.timeoutMs);
        }),
      ]);
      if (value === 'timeout' || value === null) return undefined;
      const floor = this.openFloor(full, value);
      if (floor === undefined) {
        this.counts.refused += 1;
        this.log.warn({ key: full }, 'cache: the finalized route\'s block in Redis failed its authentication or shape check: refused and deleted');
        await this.client.eval(dropScript, 1, full, value);
      }
      return floor;
    } catch {
      return undefined;
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    clearInterval(this.memoryTimer);
    this.client.disconnect();
  }

  /** The stored form of the finalized route's block: `<block>.<MAC hex>`. */
  private sealFloor(full: string, block: bigint): string {
    const text = block.toString();
    return `${text}.${this.mac(full, Buffer.from(text)).toString('hex')}`;
  }

  /** The block of a stored finalized-route value, or undefined when its MAC or shape is wrong. */
  private openFloor(full: string, value: string): bigint | undefined {
    const m = /^(\d{1,30})\.([0-9a-f]{64})$/.exec(value);
    if (!m) return undefined;
    return timingSafeEqual(Buffer.from(m[2]!, 'hex'), this.mac(full, Buffer.from(m[1]!))) ? BigInt(m[1]!) : undefined;
  }

  private mac(full: string, rest: Buffer): Buffer {
    return createHmac('sha256', this.settings.hmacKey).update(full).update('\0').update(rest).digest();
  }

  private seal(full: string, entry: SharedEntry): Buffer {
    // (a proven entry is a layout of its own: a process that reads only layout 1 refuses it rather than serve it as agreed)
    const proof = entry.proof;
    const meta = Buffer.from(JSON.stringify(proof === undefined ? { h: entry.hash, q: entry.quorum, n: entry.confirmations, at: entry.at, b: entry.block.toString() } : { h: entry.hash, q: entry.quorum, n: entry.confirmations, at: entry.at, b: entry.block.toString(), ph: proof.headerHash, pb: proof.blockNumber.toString() }));
    const head = Buffer.alloc(5);
    head.writeUInt8(proof === undefined ? version : provenVersion, 0);
    head.writeUInt32BE(meta.length, 1);
    const rest = Buffer.concat([head, meta, entry.body]);
    return Buffer.concat([this.mac(full, rest), rest]);
  }

  /** The entry of a stored value, or undefined when its MAC or shape is wrong. */
  private open(full: string, value: Buffer): SharedEntry | undefined {
    if (value.length < macBytes + 5) return undefined;
    const mac = value.subarray(0, macBytes);
    const rest = value.subarray(macBytes);
    if (!timingSafeEqual(mac, this.mac(full, rest))) return undefined;
    const layout = rest.readUInt8(0);
    if (layout !== version && layout !== provenVersion) return undefined;
    const metaLength = rest.readUInt32BE(1);
    if (5 + metaLength > rest.length) return undefined;
    try {
      const meta = JSON.parse(rest.subarray(5, 5 + metaLength).toString('utf8')) as { h: unknown; q: unknown; n: unknown; at: unknown; b: unknown; ph: unknown; pb: unknown };
      const { h, q, n, at, b, ph, pb } = meta;
      if (typeof h !== 'string' || !Array.isArray(q) || !q.every((x) => typeof x === 'string') || typeof n !== 'number' || typeof at !== 'number' || typeof b !== 'string') return undefined;
      let proof: ProvenBy | undefined;
      if (layout === provenVersion) {
        if (typeof ph !== 'string' || !/^0x[0-9a-f]{64}$/.test(ph) || typeof pb !== 'string' || !/^\d{1,30}$/.test(pb)) return undefined;
        proof = { verifiedBy: 'proof', headerHash: ph, blockNumber: BigInt(pb) };
      }
      return { body: Buffer.from(rest.subarray(5 + metaLength)), hash: h, quorum: q as string[], confirmations: n, at, block: BigInt(b), proof };
    } catch {
      return undefined;
    }
  }

  private async readMemory(): Promise<void> {
    if (this.state !== 'ready') return;
    try {
      const info = await this.client.info('memory');
      const used = Number(/^used_memory:(\d+)/m.exec(info)?.[1]);
      if (!Number.isFinite(used)) return;
      const full = used > this.settings.maxBytes;
      if (full !== this.full) this.log.warn({ usedBytes: used, maxBytes: this.settings.maxBytes }, full ? 'cache: Redis is above cache.redis.maxBytes: writes paused' : 'cache: Redis is below cache.redis.maxBytes again: writes resumed');
      this.full = full;
    } catch {
      // (the next reading tries again)
    }
  }
}
