/**
 * The budgets in credits applied to requests: each grant's budget fields (`creditsPerSecond`,
 * `creditsPerDay`, `maxConcurrent`, `cacheHitCredits`, `methodCredits` on a key or the anonymous
 * tier) become bucket limits and weights once, when the pipeline is built; a request of a grant
 * with a budget reserves its estimate before its upstream calls (refused: a 429 with
 * Retry-After), and settles the real cost after its answer. Grants without a budget have no plan:
 * their requests are not looked at.
 *
 * The store is this process's memory, or Redis (one budget shared by every replica naming the
 * same URL and prefix). With the memory store a reservation and a settle are synchronous
 * (`takeNow`, `settleNow`): no promise per request.
 */
import type { AccessConfig } from '../../config/types.js';
import { BudgetExceededError, type GatewayError } from '../errors.js';
import type { Logger } from '../log.js';
import { MemoryCreditStore, RedisCreditStore, type BucketLimits, type CreditStore, type RedisCreditSettings, type Reservation, type Verdict } from './buckets.js';
import { costOf, type CostSettings } from './credits.js';
import type { Grant, Keyring } from './keyring.js';
import type { AccessCounts } from './metrics.js';

/** A grant's budget: its limits, its prices, and the name its budget is kept under. */
export interface Plan {
  /** The grant's label: the store's key (hashed in Redis) and the metrics' label. */
  readonly label: string;
  readonly limits: BucketLimits;
  readonly costs: CostSettings;
}

/** A request's reservation, then what it cost and what its key has left (set by the settle). */
export interface Charge {
  readonly plan: Plan;
  readonly reservation: Reservation;
  settled: boolean;
  credits: number;
  /** Whole credits in the per-second bucket; Infinity: no such limit; NaN: not known. */
  remainingSecond: number;
  remainingDay: number;
}

/** The credit headers' names (also in lib/pipeline/headers.ts's CORS list). */
export const creditsHeader = 'X-Credits';
export const remainingSecondHeader = 'X-Credits-Remaining-Second';
export const remainingDayHeader = 'X-Credits-Remaining-Day';

/** Whether any grant of the keyring has a budget field (else the budget stage is not built). */
export function hasBudgets(keyring: Keyring): boolean {
  return keyring.grants.some((g) => planOf(g) !== undefined) || (keyring.anonymous !== undefined && planOf(keyring.anonymous) !== undefined);
}

function planOf(grant: Grant): Plan | undefined {
  const e = grant.entry;
  if (e.creditsPerSecond === undefined && e.creditsPerDay === undefined && e.maxConcurrent === undefined) return undefined;
  const limits: BucketLimits = {};
  if (e.creditsPerSecond !== undefined) limits.perSecond = e.creditsPerSecond;
  if (e.creditsPerDay !== undefined) limits.perDay = e.creditsPerDay;
  if (e.maxConcurrent !== undefined) limits.concurrent = e.maxConcurrent;
  const costs: CostSettings = {};
  if (e.cacheHitCredits !== undefined) costs.cacheHit = e.cacheHitCredits;
  if (e.methodCredits !== undefined) costs.weights = e.methodCredits;
  return { label: grant.label, limits, costs };
}

/**
 * Where the budgets are kept: Redis settings, or none (this process's memory). The cache's Redis
 * comes with its `timeoutMs` too: the operator's word for how slow that Redis may be (a fixed
 * 50 ms under a Redis the cache waits 200 ms for would grant every request from each replica's
 * own bucket).
 */
export function budgetRedis(config: { access?: AccessConfig; cache?: { redis?: { url: string; prefix: string; timeoutMs?: number } } }, requestMs: number): RedisCreditSettings | undefined {
  const own = config.access?.redis;
  const shared = own ?? config.cache?.redis;
  if (shared === undefined) return undefined;
  return {
    url: shared.url,
    prefix: shared.prefix,
    timeoutMs: shared.timeoutMs ?? 50,
    // A slot whose settle never comes (its replica died) frees itself once no request can still be running.
    leaseMs: requestMs + 30_000,
  };
}

export class Budgets {
  readonly store: CreditStore;
  /** The store when it is memory: its synchronous take and settle. */
  private readonly memory: MemoryCreditStore | undefined;
  private readonly plans = new Map<Grant, Plan>();

  constructor(
    keyring: Keyring,
    private readonly counts: AccessCounts,
    options: { redis?: RedisCreditSettings | undefined; store?: CreditStore | undefined; logger?: Logger; now?: () => number } = {},
  ) {
    for (const grant of keyring.anonymous ? [...keyring.grants, keyring.anonymous] : keyring.grants) {
      const plan = planOf(grant);
      if (plan) this.plans.set(grant, plan);
    }
    const clock = options.now ? { now: options.now } : {};
    if (options.redis) {
      // (a cluster's worker: its primary's store holds the budgets while Redis is away)
      this.store = new RedisCreditStore(options.redis, { ...clock, ...(options.logger && { logger: options.logger }), fallback: options.store });
      this.memory = undefined;
    } else if (options.store) {
      // Given by the embedder (a cluster's primary keeps one store for all its workers).
      this.store = options.store;
      this.memory = undefined;
    } else {
      this.memory = new MemoryCreditStore(clock);
      this.store = this.memory;
    }
  }

  /** The grant's budget, or undefined: its requests are not charged. */
  plan(grant: Grant): Plan | undefined {
    return this.plans.get(grant);
  }

  /**
   * Reserves `estimate` credits for a request of the plan's grant: its charge, or the 429 (counted
   * as a refusal of the grant's label, reason second, day or concurrent). Synchronous with the
   * memory store.
   */
  reserve(plan: Plan, estimate: number, id: string | number | null): Charge | GatewayError | Promise<Charge | GatewayError> {
    if (this.memory !== undefined) return this.verdict(plan, this.memory.takeNow(plan.label, plan.limits, estimate), id);
    return this.reserveShared(plan, estimate, id);
  }

  private async reserveShared(plan: Plan, estimate: number, id: string | number | null): Promise<Charge | GatewayError> {
    return this.verdict(plan, await this.store.take(plan.label, plan.limits, estimate), id);
  }

  private verdict(plan: Plan, v: Verdict, id: string | number | null): Charge | GatewayError {
    if (v.reservation !== undefined) {
      return { plan, reservation: v.reservation, settled: false, credits: 0, remainingSecond: v.remainingSecond, remainingDay: v.remainingDay };
    }
    const refusal = v.refusal ?? 'concurrent';
    this.counts.refused(plan.label, refusal);
    const headers: Record<string, string> = { 'Retry-After': String(Math.max(1, Math.ceil(v.retryAfterSeconds))), [creditsHeader]: '0' };
    if (Number.isFinite(v.remainingSecond)) headers[remainingSecondHeader] = String(Math.floor(v.remainingSecond));
    if (Number.isFinite(v.remainingDay)) headers[remainingDayHeader] = String(Math.floor(v.remainingDay));
    const what = refusal === 'second' ? 'its credits per second are spent' : refusal === 'day' ? 'its credits for today (UTC) are spent' : 'it has as many requests in flight as it may';
    return new BudgetExceededError(`Over budget: the key "${plan.label}": ${what}; retry after ${headers['Retry-After']} s`, {
      id,
      data: { reason: refusal, key: plan.label, retryAfter: Number(headers['Retry-After']) },
      headers,
    });
  }

  /** What one answered call cost under the plan's prices. */
  costOf(plan: Plan, method: string, upstreamCalls: number, cacheHit: boolean): number {
    return costOf(method, upstreamCalls, cacheHit, plan.costs);
  }

  /** The estimate of one call: its weight × N. */
  estimateOf(plan: Plan, method: string, n: number): number {
    return costOf(method, n < 1 ? 1 : n, false, plan.costs);
  }

  /**
   * Settles a charge with what the answer cost (once: a second call does nothing) and frees its
   * slot; the charge then holds the cost and what is left. Synchronous with the memory store.
   */
  settle(charge: Charge, credits: number): void | Promise<void> {
    if (charge.settled) return;
    charge.settled = true;
    charge.credits = credits;
    this.counts.spent(charge.plan.label, credits);
    if (this.memory !== undefined) {
      const left = this.memory.settleNow(charge.reservation, credits);
      charge.remainingSecond = left.remainingSecond;
      charge.remainingDay = left.remainingDay;
      return;
    }
    return this.settleShared(charge, credits);
  }

  private async settleShared(charge: Charge, credits: number): Promise<void> {
    const left = await this.store.settle(charge.reservation, credits);
    charge.remainingSecond = left.remainingSecond;
    charge.remainingDay = left.remainingDay;
  }

  close(): Promise<void> {
    return this.store.close();
  }
}

/** Appends the credit headers of a settled charge to a flat name/value list (a limit not set, or not known, is left out). */
export function pushCreditHeaders(list: string[], charge: Charge): void {
  list.push(creditsHeader, String(charge.credits));
  if (Number.isFinite(charge.remainingSecond)) list.push(remainingSecondHeader, String(Math.max(0, Math.floor(charge.remainingSecond))));
  if (Number.isFinite(charge.remainingDay)) list.push(remainingDayHeader, String(Math.max(0, Math.floor(charge.remainingDay))));
}
