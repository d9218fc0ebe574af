/**
 * The balancer's non-RPC routes: GET /health (liveness), GET /ready (readiness: 200 or 503 with
 * the reasons, lib/ops/readiness.ts), GET /chains (chains and upstream health, URLs redacted),
 * GET /metrics (Prometheus text) and GET /collection.json (Postman v2.1). /chains and /metrics may
 * be closed to all but admin keys (`guard`, from lib/access).
 * Anything else goes to next().
 */
import { describeProofMode } from '../lib/prove/mode.js';
import { describeQuality, type MethodClass } from '../lib/health/quality.js';
import type { Middleware } from '../lib/pipeline/compose.js';
import { buildCollection } from '../lib/ops/collection.js';
import { MethodNotAllowedError } from '../lib/errors.js';
import { mountPrefix } from '../lib/pipeline/url.js';
import type { Metrics } from '../lib/ops/metrics.js';
import { readiness, type ReadinessCheck } from '../lib/ops/readiness.js';
import { chainHead } from '../lib/health/heads.js';
import { upstreamState } from '../lib/health/health.js';
import type { Registry, Upstream } from '../lib/upstream/registry.js';
import { maxLagBlocks, slowClasses } from '../lib/upstream/select.js';
import { pathOf } from '../lib/pipeline/url.js';

export interface ServiceRoutesOptions {
  registry: Registry;
  metrics?: Metrics;
  startedAt?: number;
  readiness?: readonly ReadinessCheck[];
  /**
   * The door of /chains and /metrics (lib/access: an admin key): the refusal of a request, or
   * undefined to serve it. Absent: they are open. /health, /ready and /collection.json stay open.
   */
  guard?: (req: Parameters<Middleware>[0], path: string) => Error | undefined;
  /** The text GET /metrics serves instead of `metrics`' registry (a cluster's, aggregated by its primary). */
  metricsText?: () => Promise<string>;
  /** Client keys are asked for (`access:`): the collection's requests send one (`X-Api-Key: {{apiKey}}`). */
  clientKeys?: boolean;
}

export function serviceRoutes(options: ServiceRoutesOptions): Middleware {
  const startedAt = options.startedAt ?? Date.now();
  const guard = options.guard;
  const metrics = options.metrics;
  const metricsText = options.metricsText ?? (() => metrics!.registry.metrics());
  const clientKeys = options.clientKeys ?? false;
  const routes: Record<string, (host: string, prefix: string) => unknown> = {
    '/health': () => ({ status: 'ok', uptimeSeconds: Math.round((Date.now() - startedAt) / 1000), chains: options.registry.chains.size }),
    '/chains': () => describeChains(options.registry),
    '/collection.json': (host, prefix) => buildCollection({ baseUrl: `http://${host}`, pathPrefix: prefix, clientKeys }),
  };
  return function serviceRoutes(req, res, next) {
    const path = pathOf(req).replace(/(.)\/$/, '$1');
    const route = Object.hasOwn(routes, path) ? routes[path] : undefined;
    if (!route && !(path === '/metrics' && metrics) && path !== '/ready') return next();
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      return next(new MethodNotAllowedError(`Method not allowed: ${req.method} ${path} (use GET)`, { headers: { Allow: 'GET, HEAD' }, id: null }));
    }
    if (guard && (path === '/chains' || path === '/metrics')) {
      const refused = guard(req, path);
      if (refused) return next(refused);
    }
    if (path === '/ready') {
      readiness(options.registry, options.readiness).then((r) => {
        const text = `${JSON.stringify(r, null, 2)}\n`;
        res.statusCode = r.status === 'ready' ? 200 : 503;
        res.setHeader('Content-Type', 'application/json');
        res.setHeader('Content-Length', Buffer.byteLength(text));
        res.setHeader('Cache-Control', 'no-store');
        res.end(req.method === 'HEAD' ? undefined : text);
      }, next);
      return;
    }
    if (!route) {
      metricsText().then((text) => {
        res.statusCode = 200;
        res.setHeader('Content-Type', metrics!.registry.contentType);
        res.setHeader('Cache-Control', 'no-store');
        res.end(req.method === 'HEAD' ? undefined : text);
      }, next);
      return;
    }
    const text = `${JSON.stringify(route(req.headers.host ?? 'localhost', mountPrefix(req)), null, 2)}\n`;
    res.statusCode = 200;
    res.setHeader('Content-Type', 'application/json');
    res.setHeader('Content-Length', Buffer.byteLength(text));
    res.setHeader('Cache-Control', 'no-store');
    res.end(req.method === 'HEAD' ? undefined : text);
  };
}

/**
 * The provider as /chains shows it: an explicit label as written; a derived identity (a part of
 * the host) only if the redacted URL shows it too, so a key in a host name never leaks here.
 */
function shownProvider(u: Upstream): string {
  return u.label.includes(u.provider) || !u.url.includes(u.provider) ? u.provider : '***';
}

function describeChains(registry: Registry) {
  const now = Date.now();
  // The method classes in which the ranking puts each upstream behind as slow now (lib/upstream/select.ts).
  const slow = new Map<Upstream, MethodClass[]>();
  for (const chain of registry.chains.values()) for (const [u, classes] of slowClasses(chain.upstreams, now)) slow.set(u, classes);
  return [...registry.chains.values()].map((chain) => ({
    chainId: chain.id,
    confirmations: chain.confirmations,
    providers: chain.providerCount,
    confirmableMethods: [...chain.extraConfirmable.keys()],
    // How its confirmable reads are vouched for (lib/prove/mode.ts): configured, applied, why.
    verify: describeProofMode(chain),
    // The chain's robust heads (lib/health/heads.ts: never the maximum), decimal strings.
    heads: { latest: dec(chainHead(chain)), safe: dec(chainHead(chain, 'safe')), finalized: dec(chainHead(chain, 'finalized')) },
    strategy: chain.strategy ?? 'priority',
    upstreams: chain.upstreams.map((u) => ({
      url: u.label,
      provider: shownProvider(u),
      transport: /^wss?:/i.test(u.url) ? 'ws' : 'http',
      state: upstreamState(u.health, now, maxLagBlocks),
      slow: slow.get(u) ?? [],
      lastProbe: u.health.lastProbeAt ? new Date(u.health.lastProbeAt).toISOString() : null,
      head: u.health.head === undefined ? null : u.health.head.toString(),
      lag: u.health.lag,
      heads: { latest: dec(u.health.head), safe: dec(u.health.safe), finalized: dec(u.health.finalized) },
      suspect: u.health.suspect,
      reportedChainId: u.health.wrongChainId ?? null,
      latencyMs: u.health.latencyMs === undefined ? null : Math.round(u.health.latencyMs * 10) / 10,
      successes: u.health.successes,
      failures: u.health.failures,
      consecutiveFailures: u.health.consecutiveFailures,
      agreements: u.health.agreements,
      disagreements: u.health.disagreements,
      distrusted: u.health.distrusted,
      recentLost: u.health.recentLost,
      proofsChecked: u.health.proofsChecked,
      proofsFailed: u.health.proofsFailed,
      logIndexPerTx: u.health.logIndexPerTx,
      lastError: u.health.lastError ?? null,
      // Its provider's rate limits (lib/health/rate-limits.ts): the end of the back-off while on it, the count, the episodes since its last success.
      rateLimitedUntil: u.health.rateLimitedUntil > now ? new Date(u.health.rateLimitedUntil).toISOString() : null,
      rateLimits: u.health.rateLimits,
      rateLimitEpisodes: u.health.rateLimitEpisodes,
      // Measured quality (lib/health/quality.ts): score (ms, lower is better), latency quantiles per method class.
      quality: describeQuality(u.health),
      ...(u.weight === undefined ? {} : { weight: u.weight }),
      ...(u.maxConcurrent === undefined ? {} : { maxConcurrent: u.maxConcurrent }),
      ...(u.maxRps === undefined ? {} : { maxRps: u.maxRps }),
      ...(u.logIndex === undefined ? {} : { logIndex: u.logIndex }),
    })),
  }));
}

const dec = (n: bigint | undefined) => (n === undefined ? null : n.toString());
