/**
 * Readiness (GET /ready), as opposed to liveness (GET /health): can this instance serve?
 *
 * - Every chain needs at least `confirmations` usable providers (one vote each), or all of its
 *   providers when a global default asks for more than it has. Usable = with an upstream up as
 *   the probes and calls last saw it (`isUp`: right chain id, not a loop, last probe or call
 *   succeeded). Read from the health records: /ready never calls an upstream.
 * - Each extra check (pluggable, e.g. the indexer's database, lib/indexer/db/readiness.ts) must
 *   say ready. A check that throws or takes longer than `checkTimeoutMs` counts as not ready.
 *
 * Ready: 200 `{"status":"ready",…}`; otherwise 503 `{"status":"not ready","reasons":[…],…}`,
 * each reason one sentence naming the chain or the check.
 */
import { isUp, upstreamState } from '../health/health.js';
import type { Registry } from '../upstream/registry.js';
import { maxLagBlocks } from '../upstream/select.js';

export interface ReadinessResult {
  ready: boolean;
  /** Why not, in one sentence (shown in `reasons`). */
  reason?: string;
  /** Anything else worth showing under `checks.<name>` (never a secret). */
  [detail: string]: unknown;
}

/** A readiness check other than the chains (e.g. a database). Must be cheap: /ready calls it on every request. */
export interface ReadinessCheck {
  readonly name: string;
  check(): Promise<ReadinessResult>;
}

export interface ChainReadiness {
  chainId: string;
  ready: boolean;
  /** Upstreams up and on the right chain. */
  usable: number;
  /** The chain's confirmations: what a confirmable request needs. */
  required: number;
  upstreams: number;
  /** How many upstreams are in each state (see `upstreamState`). */
  states: Record<string, number>;
}

export interface Readiness {
  status: 'ready' | 'not ready';
  reasons: string[];
  chains: ChainReadiness[];
  checks: Record<string, ReadinessResult>;
}

/** Time a check gets before it counts as not ready. */
export const checkTimeoutMs = 2_000;

export function chainReadiness(registry: Registry, now = Date.now()): ChainReadiness[] {
  return [...registry.chains.values()].map((chain) => {
    const states: Record<string, number> = {};
    const usableProviders = new Set<string>();
    for (const u of chain.upstreams) {
      const state = upstreamState(u.health, now, maxLagBlocks);
      states[state] = (states[state] ?? 0) + 1;
      if (isUp(u.health)) usableProviders.add(u.provider);
    }
    // One vote per provider: usable counts providers with an upstream up. A chain whose
    // confirmations come from a global default above its providers (warned at start-up) is ready
    // when every one of its providers is usable: the most it can ever confirm.
    const usable = usableProviders.size;
    const required = Math.min(chain.confirmations, chain.providerCount);
    return { chainId: chain.id, ready: usable >= required, usable, required, upstreams: chain.upstreams.length, states };
  });
}

function describeStates(states: Record<string, number>): string {
  return Object.entries(states)
    .map(([state, n]) => `${n} ${state}`)
    .join(', ');
}

async function runCheck(check: ReadinessCheck): Promise<ReadinessResult> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<ReadinessResult>((resolve) => {
    timer = setTimeout(() => resolve({ ready: false, reason: `${check.name}: no answer within ${checkTimeoutMs} ms` }), checkTimeoutMs);
    timer.unref();
  });
  try {
    return await Promise.race([check.check(), timeout]);
  } catch (err) {
    return { ready: false, reason: `${check.name}: ${(err as Error).message}` };
  } finally {
    clearTimeout(timer);
  }
}

export async function readiness(registry: Registry, checks: readonly ReadinessCheck[] = []): Promise<Readiness> {
  const chains = chainReadiness(registry);
  const reasons = chains
    .filter((c) => !c.ready)
    .map((c) => `chain ${c.chainId}: ${c.usable} usable provider${c.usable === 1 ? '' : 's'}, ${c.required} required (${describeStates(c.states)})`);
  const results = await Promise.all(checks.map(runCheck));
  const byName: Record<string, ReadinessResult> = {};
  checks.forEach((check, i) => {
    const result = results[i]!;
    byName[check.name] = result;
    if (!result.ready) reasons.push(result.reason ?? `${check.name}: not ready`);
  });
  return { status: reasons.length === 0 ? 'ready' : 'not ready', reasons, chains, checks: byName };
}
