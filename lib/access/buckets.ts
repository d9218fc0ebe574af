/**
 * The budgets of client keys: per key, a per-second token bucket (capacity `burst`, refilled at
 * `perSecond` credits a second), a per-day budget (`perDay` credits per calendar UTC day: it
 * resets at 00:00 UTC, so a client knows when, and a refusal's Retry-After is the time to
 * midnight) and a count of requests in flight (`concurrent`).
 *
 * The protocol is reserve, then settle:
 *
 * - `take(key, limits, credits)` checks the three limits and, only when all three allow it, takes
 *   `credits` (the estimate: the method's weight × N) from both buckets and one slot of
 *   concurrency, atomically. Refused, it takes nothing and says how long to wait
 *   (`retryAfterSeconds`, the longest of the limits that refused) and why.
 * - `settle(reservation, credits)` charges the difference between the answer's real cost and the
 *   estimate (a refund when it cost less, a cache hit for instance), and frees the slot.
 *
 * Concurrent requests therefore spend against reserved estimates and cannot overspend by more
 * than what their answers cost beyond their estimate. A bucket holding at least the smaller of
 * the estimate and its capacity admits the request and may go below zero (an estimate larger than
 * the burst is admitted from a full bucket, then repaid before the next). A day's budget admits
 * only what fits whole. A settle applies to the day it was reserved in, and not at all once that
 * day is over.
 *
 * Two stores have the same interface: `MemoryCreditStore` (one process) and `RedisCreditStore`
 * (every replica shares one budget: one Lua script checks and takes both buckets and the slot at
 * once). Both read the time from an injected clock (`now`, ms), so tests need no waits; replicas
 * sharing Redis use their own clocks, which are assumed in step to a fraction of a second (NTP).
 * Around 00:00 UTC, replicas either side of midnight take from two days' counters: each counter
 * still never passes `perDay`, and what the one behind grants from the old day is what was left
 * of that day, which a client could as well have spent just before midnight on one clock. No
 * grant beyond one day's budget per day.
 *
 * Redis down or slower than `timeoutMs`: the key is served from a local memory bucket of the same
 * limits (each replica then enforces the whole budget on its own, so while Redis is away the
 * replicas together may grant up to their number times it; a cluster's workers are given their
 * primary's store instead, so that one replica's workers still spend one budget), logged once
 * per episode and counted (`counts.fallbacks`). Neither refusing every client (fail closed) nor granting without a limit
 * (fail open) while Redis is away.
 */
import { createHash, randomBytes } from 'node:crypto';
import { redisClient } from '../cache/redis.js';
import type { Redis } from 'ioredis';
import type { Logger } from '../log.js';
import { silentLogger } from '../log.js';
import { redactRedisUrl } from '../upstream/redact.js';

/** A key's limits; an absent or zero limit is no limit. */
export interface BucketLimits {
  /** Credits added to the per-second bucket each second. */
  perSecond?: number;
  /** The per-second bucket's capacity (default: perSecond). */
  burst?: number;
  /** Credits per calendar UTC day. */
  perDay?: number;
  /** Requests of the key in flight at once. */
  concurrent?: number;
}

/** Which limit refused a request: the one with the longest wait when several did. */
export type Refusal = 'second' | 'day' | 'concurrent';

/** What `take` reserved, handed back to `settle`. */
export interface Reservation {
  key: string;
  limits: BucketLimits;
  /** The credits taken (the estimate). */
  credits: number;
  /** The UTC day (days since 1970-01-01) the credits were taken from. */
  day: number;
  /** The concurrency slot's id. */
  lease: string;
  /** Taken from this process's local bucket (Redis was down or slow). */
  local: boolean;
}

/** What a key has left; Infinity for a limit that is not set, NaN when not known (Redis failed at the settle). */
export interface Remaining {
  /** Whole credits in the per-second bucket (0 while it is in debt). */
  remainingSecond: number;
  /** Credits left today. */
  remainingDay: number;
}

export interface Verdict extends Remaining {
  allowed: boolean;
  /** Undefined when allowed. */
  refusal: Refusal | undefined;
  /** Whole seconds to wait before asking again (0 when allowed). */
  retryAfterSeconds: number;
  /** Undefined when refused. */
  reservation: Reservation | undefined;
}

export interface CreditStore {
  take(key: string, limits: BucketLimits, credits: number): Promise<Verdict>;
  settle(reservation: Reservation, credits: number): Promise<Remaining>;
  close(): Promise<void>;
}

const dayMs = 86_400_000;
/** The UTC day of a time, in days since the epoch. */
export const utcDay = (now: number): number => Math.floor(now / dayMs);
/** Whole seconds from `now` to the next 00:00 UTC (at least 1). */
export const secondsToMidnight = (now: number): number => Math.max(1, Math.ceil(((utcDay(now) + 1) * dayMs - now) / 1000));

/** A limit as a number: 0 for none. */
const limitOf = (value: number | undefined): number => (value !== undefined && Number.isFinite(value) && value > 0 ? value : 0);
const capOf = (limits: BucketLimits): number => limitOf(limits.burst) || limitOf(limits.perSecond);

let leaseCounter = 0;
const leasePrefix = randomBytes(6).toString('base64url');
const newLease = (): string => `${leasePrefix}:${(leaseCounter += 1)}`;

function remainingOf(limits: BucketLimits, tokens: number, used: number): Remaining {
  return {
    remainingSecond: limitOf(limits.perSecond) > 0 ? Math.max(0, Math.floor(tokens)) : Infinity,
    remainingDay: limitOf(limits.perDay) > 0 ? Math.max(0, limitOf(limits.perDay) - used) : Infinity,
  };
}

interface KeyState {
  /** The per-second bucket's credits at `at`. */
  tokens: number;
  at: number;
  /** The bucket's capacity and refill rate at its last use (0: no per-second limit). */
  cap: number;
  rate: number;
  day: number;
  used: number;
  inFlight: number;
}

/** Every this many takes, the memory store forgets the keys whose state is a fresh key's. */
const sweepEvery = 4096;

/** The budgets in this process's memory. */
export class MemoryCreditStore implements CreditStore {
  private readonly keys = new Map<string, KeyState>();
  private readonly now: () => number;
  private takes = 0;

  constructor(options: { now?: () => number } = {}) {
    this.now = options.now ?? Date.now;
  }

  /** Keys held (tests, and a bound on memory: see sweep). */
  get size(): number {
    return this.keys.size;
  }

  async take(key: string, limits: BucketLimits, credits: number): Promise<Verdict> {
    return this.takeNow(key, limits, credits);
  }

  /** `take`, synchronously (the Redis store's fallback). */
  takeNow(key: string, limits: BucketLimits, credits: number): Verdict {
    const now = this.now();
    if (++this.takes % sweepEvery === 0) this.sweep(now);
    const state = this.stateOf(key, limits, now);
    const rate = limitOf(limits.perSecond);
    const cap = capOf(limits);
    const perDay = limitOf(limits.perDay);
    const concurrent = limitOf(limits.concurrent);
    let wait = 0;
    let refusal: Refusal | undefined;
    if (concurrent > 0 && state.inFlight >= concurrent) {
      wait = 1;
      refusal = 'concurrent';
    }
    if (rate > 0) {
      const need = Math.min(credits, cap);
      if (state.tokens < need) {
        const w = Math.max(1, Math.ceil((need - state.tokens) / rate));
        if (w > wait) {
          wait = w;
          refusal = 'second';
        }
      }
    }
    if (perDay > 0 && state.used + credits > perDay) {
      const w = secondsToMidnight(now);
      if (w > wait) {
        wait = w;
        refusal = 'day';
      }
    }
    if (refusal !== undefined) {
      const left = remainingOf(limits, state.tokens, state.used);
      return { allowed: false, refusal, retryAfterSeconds: wait, remainingSecond: left.remainingSecond, remainingDay: left.remainingDay, reservation: undefined };
    }
    if (rate > 0) state.tokens -= credits;
    if (perDay > 0) state.used += credits;
    state.inFlight += 1;
    const left = remainingOf(limits, state.tokens, state.used);
    return {
      allowed: true,
      refusal: undefined,
      retryAfterSeconds: 0,
      remainingSecond: left.remainingSecond,
      remainingDay: left.remainingDay,
      reservation: { key, limits, credits, day: state.day, lease: newLease(), local: true },
    };
  }

  async settle(reservation: Reservation, credits: number): Promise<Remaining> {
    return this.settleNow(reservation, credits);
  }

  settleNow(reservation: Reservation, credits: number): Remaining {
    const { key, limits } = reservation;
    const state = this.stateOf(key, limits, this.now());
    const delta = credits - reservation.credits;
    if (limitOf(limits.perSecond) > 0) state.tokens = Math.min(capOf(limits), state.tokens - delta);
    if (limitOf(limits.perDay) > 0 && reservation.day === state.day) state.used = Math.max(0, state.used + delta);
    state.inFlight = Math.max(0, state.inFlight - 1);
    return remainingOf(limits, state.tokens, state.used);
  }

  async close(): Promise<void> {
    this.keys.clear();
  }

  /**
   * Forgets the keys nothing is in flight for whose bucket has refilled and whose day is over or
   * unspent: their next take finds what a new key finds. Memory then holds the keys in use, not
   * every key ever seen.
   */
  sweep(now = this.now()): void {
    const day = utcDay(now);
    for (const [key, state] of this.keys) {
      if (state.inFlight > 0) continue;
      if (state.day === day && state.used > 0) continue;
      if (state.cap > 0 && state.tokens + (Math.max(0, now - state.at) * state.rate) / 1000 < state.cap) continue;
      this.keys.delete(key);
    }
  }

  /** The key's state refilled to `now`, its day turned over at midnight. */
  private stateOf(key: string, limits: BucketLimits, now: number): KeyState {
    const cap = capOf(limits);
    const rate = limitOf(limits.perSecond);
    const day = utcDay(now);
    let state = this.keys.get(key);
    if (state === undefined) {
      state = { tokens: cap, at: now, cap: rate > 0 ? cap : 0, rate, day, used: 0, inFlight: 0 };
      this.keys.set(key, state);
      return state;
    }
    state.cap = rate > 0 ? cap : 0;
    state.rate = rate;
    if (rate > 0 && now > state.at) state.tokens = Math.min(cap, state.tokens + ((now - state.at) * rate) / 1000);
    if (now > state.at) state.at = now;
    if (day !== state.day) {
      state.day = day;
      state.used = 0;
    }
    return state;
  }
}

export interface RedisCreditSettings {
  /** redis://[user:password@]host:port[/db] (rediss:// for TLS). */
  url: string;
  /** Prefix of every key (one per deployment). */
  prefix: string;
  /** The longest a take or settle waits for Redis before the local bucket decides, ms. */
  timeoutMs: number;
  /** How long a concurrency slot is held at most when its settle never comes (a replica died), ms: above the request deadline. */
  leaseMs: number;
}

/** How long a day's counter is kept (it is read only on its day; two days cover any clock skew). */
const dayTtlSeconds = 2 * 86_400;

/**
 * KEYS: the second bucket (hash t, at), the day counter, the slots (sorted set: lease → expiry).
 * The bucket's `at` never goes back: a replica whose clock is behind another's refills nothing
 * until its clock passes it (else taking in turn through replicas whose clocks differ would
 * refill the difference at every turn).
 * ARGV: now ms, credits, rate, cap, perDay, concurrent, day TTL s, lease, lease ms, s to midnight.
 * Returns {1|0, refusal, wait s, tokens, used}: numbers as strings (Lua numbers are doubles).
 */
const takeScript = `
local now = tonumber(ARGV[1])
local credits = tonumber(ARGV[2])
local rate = tonumber(ARGV[3])
local cap = tonumber(ARGV[4])
local perDay = tonumber(ARGV[5])
local conc = tonumber(ARGV[6])
local leaseMs = tonumber(ARGV[9])
local wait = 0
local refusal = ''
if conc > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
  if redis.call('ZCARD', KEYS[3]) >= conc then
    wait = 1
    refusal = 'concurrent'
  end
end
local tokens = 0
local at = now
if rate > 0 then
  local s = redis.call('HMGET', KEYS[1], 't', 'at')
  tokens = cap
  if s[1] then
    tokens = math.min(cap, tonumber(s[1]) + math.max(0, now - tonumber(s[2])) * rate / 1000)
    at = math.max(now, tonumber(s[2]))
  end
  local need = math.min(credits, cap)
  if tokens < need then
    local w = math.max(1, math.ceil((need - tokens) / rate))
    if w > wait then
      wait = w
      refusal = 'second'
    end
  end
end
local used = 0
if perDay > 0 then
  used = tonumber(redis.call('GET', KEYS[2]) or '0')
  if used + credits > perDay then
    local w = tonumber(ARGV[10])
    if w > wait then
      wait = w
      refusal = 'day'
    end
  end
end
if refusal ~= '' then
  return {0, refusal, tostring(wait), tostring(tokens), tostring(used)}
end
if rate > 0 then
  tokens = tokens - credits
  redis.call('HSET', KEYS[1], 't', tostring(tokens), 'at', tostring(at))
  redis.call('PEXPIRE', KEYS[1], math.ceil((cap - tokens) / rate * 1000) + 1000)
end
if perDay > 0 then
  used = used + credits
  redis.call('SET', KEYS[2], tostring(used), 'EX', tonumber(ARGV[7]))
end
if conc > 0 then
  redis.call('ZADD', KEYS[3], now + leaseMs, ARGV[8])
  redis.call('PEXPIRE', KEYS[3], leaseMs)
end
return {1, '', '0', tostring(tokens), tostring(used)}
`;

/**
 * KEYS: as takeScript's (the day counter of the reservation's day).
 * ARGV: now ms, credits minus the estimate, rate, cap, perDay, lease, 1 when the reservation's day is today, day TTL s.
 * Returns {tokens, used}.
 */
const settleScript = `
local now = tonumber(ARGV[1])
local delta = tonumber(ARGV[2])
local rate = tonumber(ARGV[3])
local cap = tonumber(ARGV[4])
local perDay = tonumber(ARGV[5])
local tokens = 0
if rate > 0 then
  local s = redis.call('HMGET', KEYS[1], 't', 'at')
  tokens = cap
  local at = now
  if s[1] then
    tokens = math.min(cap, tonumber(s[1]) + math.max(0, now - tonumber(s[2])) * rate / 1000)
    at = math.max(now, tonumber(s[2]))
  end
  tokens = math.min(cap, tokens - delta)
  redis.call('HSET', KEYS[1], 't', tostring(tokens), 'at', tostring(at))
  redis.call('PEXPIRE', KEYS[1], math.ceil((cap - tokens) / rate * 1000) + 1000)
end
local used = 0
if perDay > 0 then
  used = tonumber(redis.call('GET', KEYS[2]) or '0')
  if ARGV[7] == '1' and delta ~= 0 then
    used = math.max(0, used + delta)
    redis.call('SET', KEYS[2], tostring(used), 'EX', tonumber(ARGV[8]))
  end
end
redis.call('ZREM', KEYS[3], ARGV[6])
return {tostring(tokens), tostring(used)}
`;

/** A key's name in Redis: a hash, so that no client key (should one be passed) is stored. */
const idOf = (key: string): string => createHash('sha256').update(key).digest('base64url').slice(0, 22);

/** The budgets in Redis, shared by every replica that names the same URL and prefix. */
export class RedisCreditStore implements CreditStore {
  readonly client: Redis;
  /** Takes and settles that Redis answered; that failed or timed out (decided locally); episodes of Redis away. */
  readonly counts = { redis: 0, errors: 0, fallbacks: 0 };
  private readonly local: MemoryCreditStore;
  /**
   * Where a key is served from while Redis is away: this process's memory, or the store given
   * (a cluster's primary, so that its workers spend one budget then too).
   */
  private readonly fallback: CreditStore | undefined;
  private readonly now: () => number;
  private readonly log: Logger;
  /** Whether the last call to Redis failed (the local bucket decides until one succeeds). */
  private away = false;

  constructor(
    readonly settings: RedisCreditSettings,
    options: { logger?: Logger; now?: () => number; fallback?: CreditStore | undefined } = {},
  ) {
    this.log = options.logger ?? silentLogger;
    this.now = options.now ?? Date.now;
    this.local = new MemoryCreditStore({ now: this.now });
    this.fallback = options.fallback;
    // (a request never waits for a Redis that is not there: its local bucket decides at once)
    this.client = redisClient(settings.url, settings.timeoutMs);
    this.client.on('error', () => this.goAway('error'));
    this.client.defineCommand('omnigateTake', { numberOfKeys: 3, lua: takeScript });
    this.client.defineCommand('omnigateSettle', { numberOfKeys: 3, lua: settleScript });
  }

  async take(key: string, limits: BucketLimits, credits: number): Promise<Verdict> {
    if (this.client.status !== 'ready') {
      this.goAway('not connected');
      return this.takeAway(key, limits, credits);
    }
    const now = this.now();
    const day = utcDay(now);
    const lease = newLease();
    const keys = this.keysOf(key, day);
    const reply = await this.bounded<[number, string, string, string, string]>(
      (this.client as unknown as Scripts).omnigateTake(
        keys[0], keys[1], keys[2],
        String(now), String(credits), String(limitOf(limits.perSecond)), String(capOf(limits)), String(limitOf(limits.perDay)),
        String(limitOf(limits.concurrent)), String(dayTtlSeconds), lease, String(this.settings.leaseMs), String(secondsToMidnight(now)),
      ),
    );
    if (reply === undefined) return this.takeAway(key, limits, credits);
    const left = remainingOf(limits, Number(reply[3]), Number(reply[4]));
    if (reply[0] !== 1) {
      return { allowed: false, refusal: reply[1] as Refusal, retryAfterSeconds: Number(reply[2]), remainingSecond: left.remainingSecond, remainingDay: left.remainingDay, reservation: undefined };
    }
    return {
      allowed: true,
      refusal: undefined,
      retryAfterSeconds: 0,
      remainingSecond: left.remainingSecond,
      remainingDay: left.remainingDay,
      reservation: { key, limits, credits, day, lease, local: false },
    };
  }

  async settle(reservation: Reservation, credits: number): Promise<Remaining> {
    if (reservation.local) return this.fallback !== undefined ? this.fallback.settle(reservation, credits) : this.local.settleNow(reservation, credits);
    const { key, limits } = reservation;
    const now = this.now();
    const keys = this.keysOf(key, reservation.day);
    const reply = await this.bounded<[string, string]>(
      (this.client as unknown as Scripts).omnigateSettle(
        keys[0], keys[1], keys[2],
        String(now), String(credits - reservation.credits), String(limitOf(limits.perSecond)), String(capOf(limits)), String(limitOf(limits.perDay)),
        reservation.lease, reservation.day === utcDay(now) ? '1' : '0', String(dayTtlSeconds),
      ),
    );
    // Lost: the slot frees itself after leaseMs; the difference is not charged; what is left is not known (NaN).
    if (reply === undefined) return { remainingSecond: NaN, remainingDay: NaN };
    return remainingOf(limits, Number(reply[0]), Number(reply[1]));
  }

  async close(): Promise<void> {
    this.client.disconnect();
    await this.local.close();
  }

  /** A take while Redis is away: from the fallback store, else this process's memory. */
  private takeAway(key: string, limits: BucketLimits, credits: number): Verdict | Promise<Verdict> {
    return this.fallback !== undefined ? this.fallback.take(key, limits, credits) : this.local.takeNow(key, limits, credits);
  }

  /** The Redis keys of a key's second bucket, day counter and slots. */
  private keysOf(key: string, day: number): [string, string, string] {
    const base = `${this.settings.prefix}credits:${idOf(key)}`;
    return [`${base}:s`, `${base}:d:${day}`, `${base}:c`];
  }

  /** The reply, or undefined when Redis failed or took longer than timeoutMs. */
  private async bounded<T>(call: Promise<unknown>): Promise<T | undefined> {
    let timer: NodeJS.Timeout | undefined;
    try {
      const reply = await Promise.race([
        call,
        new Promise<'timeout'>((resolve) => {
          timer = setTimeout(resolve, this.settings.timeoutMs, 'timeout');
        }),
      ]);
      if (reply === 'timeout') {
        call.catch(() => {});
        this.goAway('timeout');
        return undefined;
      }
      this.counts.redis += 1;
      if (this.away) {
        this.away = false;
        this.log.info({ redis: redactRedisUrl(this.settings.url) }, 'credits: Redis answers again: budgets shared again');
      }
      return reply as T;
    } catch (err) {
      this.goAway((err as Error).message);
      return undefined;
    } finally {
      clearTimeout(timer);
    }
  }

  private goAway(why: string): void {
    this.counts.errors += 1;
    if (this.away) return;
    this.away = true;
    this.counts.fallbacks += 1;
    this.log.warn({ redis: redactRedisUrl(this.settings.url), err: why }, 'credits: Redis unreachable, not yet connected or slow: each replica enforces the budgets on its own until it is back');
  }
}

interface Scripts {
  omnigateTake(...args: string[]): Promise<unknown>;
  omnigateSettle(...args: string[]): Promise<unknown>;
}

