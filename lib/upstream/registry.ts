/**
 * The live upstreams of every chain: built once from the config, each with its transport
 * (HTTP pool or WebSocket) and its health record. close() releases every pool and socket.
 */
import type { OmnigateConfig } from '../../config/schema.js';
import { newHealth, type Health } from './health.js';
import { createHttpTransport } from './http-transport.js';
import { countProviders, providerOf } from './provider.js';
import { redactUrl } from './redact.js';
import type { Transport } from './transport.js';
import { createWsTransport } from './ws-transport.js';

export interface Upstream {
  readonly chainId: string;
  /** Position in the chain's rpcs list (the ranking's tie-break). */
  readonly index: number;
  /** The configured URL, provider key included: only transports and the seed headers see it. */
  readonly url: string;
  /** The URL with secrets hidden: what logs, /chains and error data show. */
  readonly label: string;
  /**
   * Who runs it (provider.ts): one vote per provider. The explicit `provider:` label, else the
   * registrable domain, else host:port. Several upstreams may share one.
   */
  readonly provider: string;
  readonly transport: Transport;
  readonly health: Health;
}

export interface Chain {
  readonly id: string;
  readonly confirmations: number;
  /** Config-added confirmable methods: global plus this chain's. */
  readonly extraConfirmable: ReadonlySet<string>;
  readonly upstreams: readonly Upstream[];
  /** Distinct providers among the upstreams (the most confirmations the chain can give). */
  readonly providerCount: number;
}

export interface Registry {
  readonly chains: ReadonlyMap<string, Chain>;
  close(): Promise<void>;
}

export function createRegistry(config: OmnigateConfig): Registry {
  const chains = new Map<string, Chain>();
  for (const [id, chain] of Object.entries(config.chains)) {
    const upstreams = chain.rpcs.map((url, index): Upstream => ({
      chainId: id,
      index,
      url,
      label: redactUrl(url),
      provider: providerOf(url, chain.providers?.[index]),
      transport: /^wss?:/i.test(url)
        ? createWsTransport(url, { maxBytes: config.limits.responseBytes })
        : createHttpTransport(url),
      health: newHealth(),
    }));
    chains.set(id, {
      id,
      confirmations: chain.confirmations,
      extraConfirmable: new Set([...config.confirmableMethods, ...chain.confirmableMethods]),
      upstreams,
      providerCount: countProviders(chain.rpcs, chain.providers),
    });
  }
  return {
    chains,
    async close() {
      await Promise.all([...chains.values()].flatMap((c) => c.upstreams.map((u) => u.transport.close())));
    },
  };
}
