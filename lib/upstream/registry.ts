/**
 * The live upstreams of every chain: built once from the config, each with its transport
 * (HTTP pool or WebSocket) and its health record. close() releases every pool and socket.
 */
import type { Agent } from 'node:http';
import type { OmnigateConfig } from '../../config/schema.js';
import { mergeIgnoredFields, type IgnoredFields } from '../verify/answers/compared-fields.js';
import type { CustomMethods } from '../jsonrpc/methods.js';
import { newHealth, type Health } from '../health/health.js';
import { createHttpTransport } from './transport/http.js';
import { createUndiciTransport } from './transport/undici.js';
import { chooseClient, type HttpClient } from './transport/choose.js';
import { newHopToken, viaEntry } from './loop.js';
import { countProviders, providerOf } from './provider.js';
import { holdOffThread } from '../verify/answers/off-thread.js';
import { echoerOf, redactUrl, scrubberOf, secretsOf } from './redact.js';
import type { Transport } from './transport/contract.js';
import { createWsTransport } from './transport/ws.js';
import { SocketPool } from './transport/sockets.js';
import { defaultMaxSockets, proxyFor } from './transport/agent.js';

export interface Upstream {
  readonly chainId: string;
  /** Position in the chain's rpcs list (the ranking's tie-break). */
  readonly index: number;
  /** The configured URL, provider key included: only transports see it (and the response headers, when `redactHeaders: false`). */
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
  /** Keeps provider keys out of what an upstream sends back (error messages, reasons). */
  readonly secrets: UpstreamSecrets;
  /** This upstream's token in the Via header of our calls (loop.ts). */
  readonly hopToken: string;
  /** Share of balanced load, calls in flight at most, calls per second at most (rpcs entry; select.ts arrange). */
  readonly weight?: number;
  readonly maxConcurrent?: number;
  readonly maxRps?: number;
  /** `per-transaction`: configured as numbering eth_getLogs logIndex per transaction (lib/prove/headers.ts: counted, not logged). */
  readonly logIndex?: 'per-transaction';
}

export interface UpstreamSecrets {
  /** The text with every configured upstream's secrets (redact.ts secretsOf) replaced by `***`. */
  scrub(text: string): string;
  /** Whether an answer holds one of this upstream's own secrets (it echoed its URL or key). */
  echoedIn(body: Buffer): boolean;
  /**
   * The secrets themselves, for a thread that judges large answers away from the event loop
   * (lib/verify/answers/off-thread.ts) with the same scrub and echoedIn: every configured upstream's
   * (what scrub hides) and this upstream's own (what echoedIn looks for). Without them, every
   * answer of the upstream is judged in the main thread.
   */
  readonly texts?: { readonly all: readonly string[]; readonly own: readonly string[] };
}

export interface Chain {
  readonly id: string;
  readonly confirmations: number;
  /** Config-added confirmable methods: global plus this chain's. */
  /** Methods the config makes confirmable, with where their pin is. */
  readonly extraConfirmable: CustomMethods;
  /** Fields not compared: the defaults plus the config's global and this chain's lists. */
  readonly ignoredFields: IgnoredFields;
  readonly upstreams: readonly Upstream[];
  /** Distinct providers among the upstreams (the most confirmations the chain can give). */
  readonly providerCount: number;
  /** How N=1 requests are spread over the best upstreams (select.ts arrange; absent: priority). */
  readonly strategy?: 'balanced' | 'priority';
  /** Writes (lib/verify/write.ts): sent to `broadcast` upstreams at once (absent or 1: one; Infinity: all). */
  readonly writes?: { readonly broadcast: number };
  /** false: a batch's member calls go upstream one by one, never as one upstream batch (lib/upstream/transport/coalesce.ts); absent: coalesced. */
  readonly batchUpstream?: false;
}

export interface Registry {
  readonly chains: ReadonlyMap<string, Chain>;
  /** The upstream through which one of these Via tokens (loop.ts) is ours: a call come back. */
  loopThrough(tokens: readonly string[]): Upstream | undefined;
  /** The cap on open sockets of the HTTP(S) upstreams on omnigate's own node:http agents and undici pools (`limits.upstreamSockets`; createRegistry sets it). */
  readonly sockets?: SocketPool;
  close(): Promise<void>;
}

/** Agents handed in by an embedding program (rpcPipeline's deps), instead of omnigate's own. */
export interface AgentChoice {
  /** The agent of an HTTP(S) upstream, by its configured URL (undefined: the next rule). */
  agents?: (url: string) => Agent | undefined;
  /** The agent of every HTTP(S) upstream `agents` left out. */
  agent?: Agent;
  /** Derive each upstream's loop token from this seed (the processes of one cluster share it: lib/upstream/loop.ts). */
  hopSeed?: Buffer;
}

/**
 * The labels of a chain's upstreams (their redacted URLs). URLs that differ only in their secret
 * parts (two keys of one provider) would show as one upstream in /chains, the headers and the
 * metric series: each such label gets `#1`, `#2`, … in configured order (a fragment, never sent,
 * so the name still reads as the URL).
 */
export function distinctLabels(urls: readonly string[]): string[] {
  const labels = urls.map(redactUrl);
  const counts = new Map<string, number>();
  for (const l of labels) counts.set(l, (counts.get(l) ?? 0) + 1);
  const seen = new Map<string, number>();
  return labels.map((l) => {
    if (counts.get(l)! < 2) return l;
    const n = (seen.get(l) ?? 0) + 1;
    seen.set(l, n);
    return `${l}#${n}`;
  });
}

/**
 * Every secret a config's upstream calls carry, to be scrubbed wherever a text may quote one: the
 * upstreams' URLs' (redact.ts secretsOf) and the user-info of the proxies they go through
 * (`upstreams.proxy`, else HTTP(S)_PROXY/ALL_PROXY as NO_PROXY leaves them), sent as
 * Proxy-Authorization and quoted back by a proxy's page as an upstream's is.
 */
export function configSecrets(config: Pick<OmnigateConfig, 'chains' | 'upstreams'>): string[] {
  const rpcs = Object.values(config.chains).flatMap((c) => c.rpcs);
  const proxies = new Set<string>();
  for (const url of rpcs) {
    if (/^wss?:/i.test(url)) continue;
    try {
      const proxy = proxyFor(url, config.upstreams?.proxy);
      if (proxy) proxies.add(proxy);
    } catch {
      // Not a proxy URL: refused when the upstream's transport is made (agent.ts), never quoted.
    }
  }
  return [...rpcs.flatMap(secretsOf), ...[...proxies].flatMap(proxySecretsOf)];
}

/** A proxy URL's user-info (its password), as redact.ts secretsOf gives it (the Basic form included): not its host. */
function proxySecretsOf(proxy: string): string[] {
  const url = new URL(proxy);
  if (!url.username && !url.password) return [];
  return secretsOf(`${url.protocol}//${url.username}${url.password ? `:${url.password}` : ''}@${url.host}/`);
}

export function createRegistry(config: OmnigateConfig, choice: AgentChoice = {}): Registry {
  const chains = new Map<string, Chain>();
  const byToken = new Map<string, Upstream>();
  // The HTTP client: decided once, when the upstreams are built (a test's nock is active by then).
  const client = chooseClient(config.upstreams?.client);
  // A message of one upstream may quote another's URL (a proxy in front of several): scrub all.
  // The thread that judges large answers (lib/verify/answers/off-thread.ts) ends when no registry holds it.
  const release = holdOffThread();
  const all = configSecrets(config);
  const scrub = scrubberOf(all);
  // One cap for every upstream of every chain, node:http's agents and undici's pools alike (a caller's agents are not counted).
  const sockets = new SocketPool(config.limits.upstreamSockets);
  // Each HTTP(S) upstream's share of the cap: guaranteed to it; above it, it borrows what the cap does not use (`shareOfCap`).
  const httpUpstreams = Object.values(config.chains).reduce((n, c) => n + c.rpcs.filter((u) => !/^wss?:/i.test(u)).length, 0);
  const share = shareOfCap(sockets.cap, httpUpstreams);
  for (const [id, chain] of Object.entries(config.chains)) {
    const labels = distinctLabels(chain.rpcs);
    const upstreams = chain.rpcs.map((url, index): Upstream => {
      // Word-like parts (`mainnet` in a query) would match honest answers: random-looking ones only.
      const ownTexts = secretsOf(url).filter((s) => (/\d/.test(s) && /[a-z]/i.test(s)) || s.length >= 16);
      const hopToken = newHopToken(choice.hopSeed, `${id}\n${index}\n${url}`);
      const via = viaEntry(hopToken);
      const upstream: Upstream = {
        chainId: id,
        index,
        url,
        label: labels[index]!,
        provider: providerOf(url, chain.providers?.[index]),
        transport: /^wss?:/i.test(url)
          ? createWsTransport(url, { maxBytes: config.limits.responseBytes, via, scrub })
          : httpTransport(url, via, config, choice, client, sockets, share),
        health: newHealth(),
        secrets: { scrub, echoedIn: echoerOf(ownTexts), texts: { all, own: ownTexts } },
        hopToken,
        ...chain.upstreamLimits?.[index],
      };
      byToken.set(hopToken, upstream);
      return upstream;
    });
    chains.set(id, {
      id,
      confirmations: chain.confirmations,
      // The chain's declarations after the global ones (methods.ts CustomMethods).
      extraConfirmable: new Map([...config.confirmableMethods, ...chain.confirmableMethods].map((m) => [m.method, m.pin])),
      ignoredFields: mergeIgnoredFields(config.ignoredFields, chain.ignoredFields),
      upstreams,
      providerCount: countProviders(chain.rpcs, chain.providers),
      strategy: chain.strategy,
      ...(chain.writes && { writes: chain.writes }),
      ...(chain.batchUpstream === false && { batchUpstream: false as const }),
    });
  }
  return {
    chains,
    sockets,
    loopThrough(tokens) {
      for (const token of tokens) {
        const upstream = byToken.get(token);
        if (upstream) return upstream;
      }
      return undefined;
    },
    async close() {
      release();
      await Promise.all([...chains.values()].flatMap((c) => c.upstreams.map((u) => u.transport.close())));
    },
  };
}

/**
 * The transport of one HTTP(S) upstream: node:http with a handed-in agent, else the client that
 * `upstreams.client` means (choose.ts) with the config's sizes and proxy. The socket cap
 * (`sockets`) covers both clients, but not a handed-in agent.
 */
function httpTransport(url: string, via: string, config: OmnigateConfig, choice: AgentChoice, client: HttpClient, sockets: SocketPool, share: number): Transport {
  const agent = choice.agents?.(url) ?? choice.agent;
  if (agent) return createHttpTransport(url, { via, sockets, agent });
  const { keepAliveMs, proxy } = config.upstreams ?? {};
  // Its own limit, within the cap; its share of the cap guaranteed, the rest on room the cap lends (admission.ts).
  const maxSockets = Math.min(config.upstreams?.maxSockets || defaultMaxSockets, sockets.cap);
  const options = { via, maxSockets, share: Math.min(maxSockets, share), ...(keepAliveMs ? { keepAliveMs } : {}), ...(proxy ? { proxy } : {}) };
  return client === 'undici' ? createUndiciTransport(url, { ...options, sockets }) : createHttpTransport(url, { ...options, sockets });
}

/** The fewest sockets an upstream's share of the cap allows it (many upstreams share a small cap: the cap still holds). */
export const minShareOfCap = 8;

/**
 * The sockets one HTTP(S) upstream is guaranteed: its share of the gateway's cap
 * (`limits.upstreamSockets` ÷ the HTTP(S) upstreams of every chain), at least `minShareOfCap`.
 * Above it, up to `upstreams.maxSockets`, an upstream borrows only room the cap does not use, and
 * its borrowed sockets are the first reclaimed for an upstream within its share (sockets.ts): with
 * the upstreams' sizes summing to more than the cap and no such order, a busy upstream's new
 * connection took an idle one of another upstream that was about to carry that upstream's next
 * call, which then opened one in turn: under load, a connection per call.
 */
export function shareOfCap(cap: number, httpUpstreams: number): number {
  if (!Number.isFinite(cap) || httpUpstreams === 0) return Infinity;
  return Math.max(minShareOfCap, Math.floor(cap / httpUpstreams));
}
