/**
 * Requests and refusals per client key, as plain tallies read when /metrics is scraped:
 * `omnigate_access_requests_total{key}`, `omnigate_access_refusals_total{key,reason}` and
 * `omnigate_access_credits_total{key}`. `key` is
 * the grant's label (the configured label, `key-<8 hex of its SHA-256>`, `anonymous`, or `none`
 * for a request refused before a key was known): never the key. Label values are bounded by the
 * config (the keys' labels) and by the refusal reasons.
 */
import { Counter, type Registry } from 'prom-client';
import type { Refusal } from './rights.js';

export class AccessCounts {
  readonly requests = new Map<string, number>();
  /** By label, then reason. */
  readonly refusals = new Map<string, Map<Refusal, number>>();
  /** Credits charged, by label (keys with a budget only). */
  readonly credits = new Map<string, number>();

  constructor(registry?: Registry) {
    if (!registry) return;
    const requests = this.requests;
    const refusals = this.refusals;
    const credits = this.credits;
    new Counter({
      name: 'omnigate_access_requests_total',
      help: 'RPC requests by client key (its label; anonymous: the keyless tier), refused ones included.',
      labelNames: ['key'] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const [key, n] of requests) this.inc({ key }, n);
      },
    });
    new Counter({
      name: 'omnigate_access_refusals_total',
      help: 'Requests and batch members refused by the access rules, by client key (none: no key or an unknown one) and reason (missing, unknown, scheme, chain, method, write, confirmations, admin; over the budget: second, day, concurrent).',
      labelNames: ['key', 'reason'] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const [key, byReason] of refusals) for (const [reason, n] of byReason) this.inc({ key, reason }, n);
      },
    });
    new Counter({
      name: 'omnigate_access_credits_total',
      help: 'Credits charged to client keys with a budget (what their answers cost: method weight x upstream calls, or the cache hit price), by key label.',
      labelNames: ['key'] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const [key, n] of credits) this.inc({ key }, n);
      },
    });
  }

  request(label: string): void {
    this.requests.set(label, (this.requests.get(label) ?? 0) + 1);
  }

  spent(label: string, n: number): void {
    this.credits.set(label, (this.credits.get(label) ?? 0) + n);
  }

  refused(label: string, reason: Refusal): void {
    let byReason = this.refusals.get(label);
    if (byReason === undefined) this.refusals.set(label, (byReason = new Map()));
    byReason.set(reason, (byReason.get(reason) ?? 0) + 1);
  }
}
