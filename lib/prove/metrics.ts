/**
 * The proof mode's metrics: proofs checked and failed per provider, the upstream bytes each
 * proven answer took (its header agreement's share included when it was not in the book), where
 * each proof run's header came from (the book, the cache levels, the upstreams), and the
 * eth_getLogs answers of a provider that numbers logs per transaction.
 */
import { Counter, Histogram, type Registry } from 'prom-client';
import type { Upstream } from '../upstream/registry.js';

export interface ProofMetrics {
  proof(upstream: Upstream, ok: boolean): void;
  bytes(chain: string, bytes: number): void;
  /**
   * Where a proof run's header came from: `book` (this process's LRU), `cache` (the cache's memory
   * or Redis, rechecked), or asked of the upstreams: `agreed`, `topped-up` (a cached entry of a
   * smaller N, only the missing votes asked), `refused` (a cached value failed its check).
   */
  header(chain: string, source: HeaderSource): void;
  logIndexPerTx(upstream: Upstream): void;
}

export type HeaderSource = 'book' | 'cache' | 'agreed' | 'topped-up' | 'refused';

export function createProofMetrics(registry: Registry): ProofMetrics {
  const proofs = new Counter({
    name: 'omnigate_proofs_total',
    help: 'Answers (and headers) checked against an agreed header, by provider and outcome (checked: proven; failed: the provider was charged).',
    labelNames: ['chain', 'upstream', 'outcome'] as const,
    registers: [registry],
  });
  const bytes = new Histogram({
    name: 'omnigate_proof_bytes',
    help: 'Upstream answer bytes fetched per proven answer (header agreement, proofs, receipts).',
    labelNames: ['chain'] as const,
    buckets: [256, 1024, 4096, 16_384, 65_536, 262_144, 1_048_576, 4_194_304],
    registers: [registry],
  });
  const headers = new Counter({
    name: 'omnigate_proof_headers_total',
    help: 'Headers proof runs used, by where they came from (book, cache: kept; agreed, topped-up, refused: asked of the upstreams, refused meaning a cached value failed its check).',
    labelNames: ['chain', 'source'] as const,
    registers: [registry],
  });
  const perTx = new Counter({
    name: 'omnigate_log_index_per_tx_total',
    help: 'eth_getLogs answers that held the proven logs numbered per transaction instead of per block, by provider (not charged; the proven numbering served).',
    labelNames: ['chain', 'upstream'] as const,
    registers: [registry],
  });
  return {
    header: (chain, source) => headers.inc({ chain, source }),
    logIndexPerTx: (u) => perTx.inc({ chain: u.chainId, upstream: u.label }),
    proof: (u, ok) => proofs.inc({ chain: u.chainId, upstream: u.label, outcome: ok ? 'checked' : 'failed' }),
    bytes: (chain, n) => bytes.observe({ chain }, n),
  };
}
