/**
 * The balancer as one mountable handler. The stage list below is the pipeline:
 * parse → classify → select upstreams → fetch in parallel → canonicalize and hash → verify →
 * emit headers. The stages from classify to verify handle one call: runMembers runs them on the
 * request for a single call, and once per member, concurrently, for a batch (each member is
 * classified, confirmed, failed and timed on its own); emit writes the one answer or the array.
 * Each stage factory and the error handler are exported on their own too.
 *
 * @example
 * // connect
 * const rpc = rpcPipeline(config);
 * connect().use(rpc).listen(5000);
 * // express, next to other routes
 * express().use('/gateway', rpcPipeline(config)).listen(5000); // POST /gateway/rpc/1
 * // on shutdown
 * await rpc.close();
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { OmnigateConfig } from '../config/schema.js';
import { compose, type Middleware } from '../lib/pipeline/compose.js';
import { answerOf, findContext, toppedUp } from '../lib/pipeline/context.js';
import { defaults } from '../config/defaults.js';
import { createMetrics, type CacheStats, methodLabel, type Metrics } from '../lib/ops/metrics.js';
import { BlockNotAvailableError, ShuttingDownError, UpstreamsFailedError } from '../lib/errors.js';
import { exposedHeaders } from '../lib/pipeline/headers.js';
import { silentLogger, type Logger } from '../lib/log.js';
import { routeOf } from '../lib/pipeline/route.js';
import { endHeadWaits, headSettings, setChainHeadSettings } from '../lib/health/heads.js';
import { startHeadTracker, type HeadTracker } from '../lib/health/tracker.js';
import { startProber, type Prober } from '../lib/health/probe.js';
import { createRegistry, type AgentChoice, type Registry } from '../lib/upstream/registry.js';
import { openDisputeFile } from '../lib/verify/dispute-log.js';
import { canonicalize } from './canonicalize.js';
import { classify, type ClassifyOptions } from './classify.js';
import { emitHeaders } from './emit-headers.js';
import { rpcErrorHandler } from './error-handler.js';
import { fetchParallel } from './fetch-parallel.js';
import { parseJsonRpc } from './parse-jsonrpc.js';
import { runMembers } from './run-members.js';
import { selectUpstreams } from './select-upstreams.js';
import { serviceRoutes } from './service-routes.js';
import { verify } from './verify.js';
import { prove } from './prove.js';
import { initProofMode } from '../lib/prove/mode.js';
import { startSelfChecks } from '../lib/prove/self-check.js';
import { createProofMetrics } from '../lib/prove/metrics.js';
import { HeaderBook } from '../lib/prove/book.js';
import { ProofRuns } from '../lib/prove/merge.js';
import { eligibilityPolicy } from '../lib/verify/eligibility-policy.js';
import { hedgePolicy, hedgeSettings } from '../lib/verify/hedge-policy.js';
import { composePolicies } from '../lib/verify/loop-policy.js';
import { InFlight } from '../lib/verify/merge.js';
import { AnswerCache } from '../lib/cache/answers.js';
import { MemoryCache } from '../lib/cache/memory.js';
import { RedisStore } from '../lib/cache/redis.js';
import type { ReadinessCheck } from '../lib/ops/readiness.js';
import { cache } from './cache.js';
import { createAccess } from '../lib/access/access.js';
import { authorize, authorizeCall, identifyClient } from './authorize.js';
import { Budgets, budgetRedis, hasBudgets } from '../lib/access/budget.js';
import { RedisCreditStore, type CreditStore } from '../lib/access/buckets.js';
import { reserveBudget, settleBudget, settleFailed } from './budget.js';
import { createAttester } from '../lib/attest/attester.js';

export { authorize, authorizeCall, canonicalize, prove, classify, emitHeaders, fetchParallel, identifyClient, parseJsonRpc, reserveBudget, rpcErrorHandler, runMembers, selectUpstreams, serviceRoutes, settleBudget, settleFailed, verify };

export interface RpcPipelineDeps {
  logger?: Logger;
  /** Also export process metrics (CPU, memory, event loop) at /metrics. */
  processMetrics?: boolean;
  /** Upstreams to use instead of building them from the config (tests, embedding). */
  registry?: Registry;
  /**
   * The node:http Agent of every HTTP(S) upstream, instead of omnigate's own keep-alive agent
   * per upstream (config `upstreams`): a proxy agent, an instrumented one. The caller closes it.
   */
  agent?: AgentChoice['agent'];
  /** The agent of one HTTP(S) upstream by its configured URL; undefined falls back to `agent`. */
  agents?: AgentChoice['agents'];
  /**
   * Extra readiness checks for GET /ready, next to the chains' usable upstreams (e.g. the
   * indexer's database: `watchDatabase(db)` from the indexer).
   */
  readiness?: readonly ReadinessCheck[];
  /**
   * The finalized route's block shared with other processes when no Redis is configured
   * (`omnigate serve --workers N`: the cluster's primary keeps it, lib/server/cluster.ts). With
   * `cache.redis`, Redis is the authority and this is not used.
   */
  sharedFinalized?: ClassifyOptions['sharedFinalized'];
  /** The text GET /metrics serves instead of this pipeline's registry (a cluster's metrics, aggregated by its primary). */
  metricsText?: () => Promise<string>;
  /** Derive the upstreams' loop tokens from this seed, shared by the processes of a cluster (lib/upstream/loop.ts). */
  hopSeed?: Buffer;
  /**
   * Where the client keys' budgets are kept when no Redis keeps them (`access.redis`,
   * `cache.redis`): a store shared with other processes (a cluster's primary), instead of this
   * process's memory.
   */
  creditStore?: CreditStore;
}

export type RpcPipeline = Middleware & {
  readonly registry: Registry;
  readonly metrics: Metrics;
  /**
   * Starts the health probes (every `refreshInterval` seconds, first round at once). Not
   * started by rpcPipeline() itself, so mounting a handler never sends traffic on its own;
   * `omnigate serve` starts them.
   */
  startHealthChecks(): Prober;
  /**
   * Starts the head tracker (lib/health/heads.ts: each upstream's latest, safe and finalized
   * heads every `heads.intervalMs`, first round at once). Not started by rpcPipeline() itself;
   * `omnigate serve` starts it.
   */
  startHeadTracking(): HeadTracker;
  /**
   * Starts the self-check of every chain in `verify: auto` (lib/prove/self-check.ts): one header
   * hash, one account proof, one receipts root on a recent final block; passed, the chain's reads
   * are proven from then on. Until then (and when it fails) the chain is on agreement. Not started
   * by rpcPipeline() itself; `omnigate serve` starts it with the health checks. `done` resolves
   * after the first round.
   */
  startProofChecks(): { stop(): void; done: Promise<void> };
  /**
   * Stops the probes and closes every upstream pool and socket. From then on an RPC request is
   * answered -32015 (HTTP 503, `Connection: close`), not sent upstream; so is one in flight whose
   * calls it cut, or that waited for heads (no head comes any more). Close the HTTP server first
   * so that requests in flight finish. Safe to call twice.
   */
  close(): Promise<void>;
};

export function rpcPipeline(config: OmnigateConfig, deps: RpcPipelineDeps = {}): RpcPipeline {
  const logger = deps.logger ?? silentLogger;
  let closing: Promise<void> | undefined;
  /**
   * Set the moment close() is called, before it closes anything: the upstream calls it ends are
   * told to their requests at once (Transport.call), and those requests must already read it.
   */
  let closed = false;
  const shuttingDown = (cause?: unknown) =>
    new ShuttingDownError('omnigate is shutting down: the pipeline is closed, retry on another instance', {
      headers: { Connection: 'close' },
      cause,
    });
  const registry =
    deps.registry ??
    createRegistry(config, { ...(deps.agent ? { agent: deps.agent } : {}), ...(deps.agents ? { agents: deps.agents } : {}), ...(deps.hopSeed ? { hopSeed: deps.hopSeed } : {}) });
  // Identical confirmable requests in flight share one agreement (lib/verify/merge.ts).
  const inFlight = config.mergeRequests === false ? undefined : new InFlight();
  // Confirmed answers at final blocks, remembered (lib/cache).
  const cacheConfig = config.cache ?? { memoryBytes: defaults.cache.memoryBytes };
  const shared = cacheConfig.redis ? new RedisStore(cacheConfig.redis, { logger }) : undefined;
  const memory = cacheConfig.memoryBytes > 0 ? new MemoryCache(cacheConfig.memoryBytes) : undefined;
  const answers = memory || shared ? new AnswerCache(memory, shared) : undefined;
  const metrics = createMetrics(registry, { processMetrics: deps.processMetrics ?? false, ...(inFlight && { mergedRequests: inFlight.merged }), ...(answers && { cache: () => cacheStats(answers) }) });
  // The door (lib/access): built only with `access:`; without it no stage below looks for a key.
  const access = config.access ? createAccess(config.access, { registry: metrics.registry }) : undefined;
  // The budgets in credits: built only when a key (or the anonymous tier) has one.
  const budgets = access && hasBudgets(access.keyring) ? new Budgets(access.keyring, access.counts, { redis: budgetRedis(config, config.timeouts.requestMs), store: deps.creditStore, logger }) : undefined;
  for (const chain of registry.chains.values()) setChainHeadSettings(chain, headSettings(chain.id, config.heads, config.chains[chain.id]?.heads));
  // The signer of confirmed answers (lib/attest): built only with `attest:` (a keyFile is read now).
  const attester = config.attest ? createAttester(config.attest) : undefined;
  const disputeFile = config.disputes.file ? openDisputeFile(config.disputes.file, { maxBytes: config.disputes.fileMaxBytes, logger }) : undefined;
  const loopPolicy = composePolicies(hedgePolicy(hedgeSettings(config.timeouts)), eligibilityPolicy);
  // Each chain's verify mode (agreement | proof | auto: lib/prove/mode.ts), shown in /chains.
  for (const chain of registry.chains.values()) initProofMode(chain, config.chains[chain.id]?.verify ?? config.verify ?? 'agreement');
  const proofMetrics = createProofMetrics(metrics.registry);
  const stages = [
    // (request bodies held to limits.bufferedBytes too, apart from the upstream answers)
    parseJsonRpc({ registry, bodyLimit: config.limits.bodyBytes, bodyBudget: config.limits.bufferedBytes, maxBatchSize: config.limits.batchSize, maxDepth: config.limits.jsonDepth, logger, ...(access && { identify: identifyClient(access) }) }),
    // After parse, so that the refusal echoes the client's id.
    function refuseWhenClosed(_req, _res, next) {
      next(closed ? shuttingDown() : undefined);
    } satisfies Middleware,
    // The key's chain and N (lib/access), once parse has resolved the key (identifyClient).
    ...(access ? [authorize(access)] : []),
    // The key's estimate reserved from its budget before any upstream call (429 over it).
    ...(budgets ? [reserveBudget(budgets)] : []),
    // Once per call: on the request for a single call, on each member's own context for a batch.
    runMembers([
      // A method the client key may not call: refused alone, a batch's other members answered.
      ...(access ? [authorizeCall(access)] : []),
      // The finalized route's block shared by the replicas through Redis, when configured.
      // (without Redis, the floor a cluster's primary keeps for its workers, when given)
      classify(shared ? { sharedFinalized: (chainId, n, block) => shared.raiseFloor(`${chainId}:${n}`, block) } : deps.sharedFinalized ? { sharedFinalized: deps.sharedFinalized } : {}),
      // Answered from the cache of confirmed answers, or by the stages that ask the upstreams.
      cache(
        { ...(answers && { cache: answers }), judgeTimeoutMs: config.timeouts.upstreamMs },
        compose([
          selectUpstreams({ sampleEvery: config.disputes.sampleEvery }),
          fetchParallel({
            upstreamTimeoutMs: config.timeouts.upstreamMs,
            requestTimeoutMs: config.timeouts.requestMs,
            maxResponseBytes: config.limits.responseBytes,
            maxDepth: config.limits.jsonDepth,
            bufferedBytes: config.limits.bufferedBytes,
          }),
          canonicalize(),
          // Proof mode (lib/prove): a provable read proven against a header N agreed on, else verify.
          prove(
            // Final agreed headers are kept in the cache levels too; identical requests share one proof run.
            { disputes: config.disputes, policy: loopPolicy, metrics: proofMetrics, headers: new HeaderBook(4096, answers), runs: new ProofRuns(inFlight?.merged), merge: inFlight !== undefined },
            // Hedging (delay, budget, missing votes) is lib/verify/hedge-policy.ts's, from `timeouts:`.
            verify({ metrics, ...(inFlight && { inFlight }), disputes: config.disputes, ...(disputeFile && { disputeFile }), policy: loopPolicy }),
          ),
        ]),
      ),
    ]),
    // The real cost settled and the slot freed; emitHeaders writes what it cost and what is left.
    ...(budgets ? [settleBudget(budgets)] : []),
    emitHeaders({ redactHeaders: config.redactHeaders, sendMs: config.timeouts.sendMs, ...(attester && { attester }) }),
  ];
  const run = compose(stages);
  const onError = rpcErrorHandler({ logger });
  // (the app's own list as given: it may add checks later)
  const creditRedis = budgets?.store instanceof RedisCreditStore ? budgets.store : undefined;
  const checks = shared || creditRedis ? [...(deps.readiness ?? []), ...(shared ? [redisReadiness(shared)] : []), ...(creditRedis ? [budgetReadiness(creditRedis)] : [])] : deps.readiness;
  const services = serviceRoutes({
    registry,
    metrics,
    ...(checks ? { readiness: checks } : {}),
    ...(deps.metricsText ? { metricsText: deps.metricsText } : {}),
    clientKeys: access !== undefined,
    ...(access && access.adminRoutes === 'keys' && { guard: (req: Parameters<Middleware>[0], path: string) => access.admin(req, path) }),
  });

  const handler: Middleware = function rpcPipeline(req, res, next) {
    // A request in flight when close() ran loses its upstream sockets, or its wait for heads
    // (no head comes any more): say why.
    const fail = (err?: unknown) => {
      if (!err) return next();
      const error = closed && (err instanceof UpstreamsFailedError || err instanceof BlockNotAvailableError) ? shuttingDown(err) : err;
      // An error answer settles its budget too (and says what it cost).
      const settling = budgets ? settleFailed(budgets, req, res) : undefined;
      if (settling === undefined) return onError(error, req, res, next);
      const answer = () => onError(error, req, res, next);
      void settling.then(answer, answer);
    };
    const route = routeOf(req);
    // A key in the path is a route of its own only where keys are configured.
    if (!route || (route.key !== undefined && !access)) return services(req, res, fail);
    // CORS: emitHeaders and the error handler write the headers of answers; a preflight is here.
    if (req.method === 'OPTIONS') {
      res.statusCode = 204;
      res.setHeader('Access-Control-Allow-Origin', '*');
      res.setHeader('Access-Control-Expose-Headers', exposedHeaders);
      res.setHeader('Access-Control-Allow-Methods', 'POST, OPTIONS');
      res.setHeader('Access-Control-Allow-Headers', req.headers['access-control-request-headers'] ?? 'content-type, x-request-id, authorization, x-api-key');
      res.setHeader('Access-Control-Max-Age', '86400');
      return res.end();
    }
    // (the request as this handler got it: a host app's may not be the response's own `req`)
    (res as Timed)[taken] = req;
    (res as Timed)[startedAt] = performance.now();
    // (on, not once: 'finish' comes once, and once would wrap the listener per request)
    res.on('finish', finished);
    run(req, res, fail);
  };
  /** A response written: counted, and logged. One function for every request of this pipeline (`this` is the response). */
  const finished = function (this: ServerResponse): void {
    const req = (this as Timed)[taken]!;
    const ctx = findContext(req);
    metrics.requests.inc(
      ctx?.chain?.id ?? 'none',
      ctx?.payload?.batch ? 'batch' : methodLabel(ctx?.payload?.calls),
      ctx?.verdict || ctx?.members || ctx?.cached?.hit ? 'ok' : (ctx?.errorCode ?? 'unknown'),
    );
    logRequest(req, this.statusCode, performance.now() - (this as Timed)[startedAt]!);
  };
  let prober: Prober | undefined;
  let tracker: HeadTracker | undefined;
  let selfChecks: ReturnType<typeof startSelfChecks> | undefined;
  return Object.assign(handler, {
    registry,
    metrics,
    startHealthChecks() {
      if (closed) throw new Error('rpcPipeline: startHealthChecks() after close(): the upstream pools are closed');
      prober ??= startProber(registry, {
        intervalSeconds: config.refreshInterval,
        timeoutMs: Math.min(5_000, config.timeouts.upstreamMs),
        logger,
        concurrency: config.limits.probeConcurrency,
      });
      return prober;
    },
    startHeadTracking() {
      if (closed) throw new Error('rpcPipeline: startHeadTracking() after close(): the upstream pools are closed');
      tracker ??= startHeadTracker(registry, { timeoutMs: Math.min(5_000, config.timeouts.upstreamMs), logger, concurrency: config.limits.probeConcurrency });
      return tracker;
    },
    startProofChecks() {
      if (closed) throw new Error('rpcPipeline: startProofChecks() after close(): the upstream pools are closed');
      selfChecks ??= startSelfChecks(registry.chains.values(), {
        intervalSeconds: config.refreshInterval,
        timeoutMs: Math.min(5_000, config.timeouts.upstreamMs),
        maxBytes: config.limits.responseBytes,
        logger,
      });
      return selfChecks;
    },
    close() {
      closed = true;
      closing ??= (async () => {
        selfChecks?.stop();
        prober?.stop();
        tracker?.stop();
        // The requests waiting for heads (a read above them) end now, not after heads.waitMs.
        for (const chain of registry.chains.values()) endHeadWaits(chain);
        await registry.close();
        await answers?.close();
        await disputeFile?.flush(); // the disputes of the last requests are in the file
        await budgets?.close(); // last: the settles of the requests the closed sockets ended may still reach Redis
      })();
      return closing;
    },
  });
}

/** The request the pipeline took and when, on its response (read once the answer is written: its count and log line). */
const taken = Symbol('omnigate.request');
const startedAt = Symbol('omnigate.startedAt');
type Timed = ServerResponse & { [taken]?: IncomingMessage; [startedAt]?: number };

function logRequest(req: Parameters<Middleware>[0], status: number, ms: number): void {
  const ctx = findContext(req);
  if (!ctx || ctx.log.isLevelEnabled?.('info') === false) return;
  ctx.log.info(
    {
      chain: ctx.chain?.id,
      key: ctx.access?.label,
      methods: ctx.payload?.calls.map(loggedMethod),
      confirmable: ctx.confirmable,
      required: ctx.required,
      checked: answerOf(ctx)?.members.map((m) => m.upstream.label),
      ...(ctx.cached && { cache: ctx.cached.hit ? 'hit' : toppedUp(ctx.cached, ctx.verdict) ? 'topup' : 'miss' }),
      called: ctx.agreement?.called.length,
      ...(ctx.budget && { credits: ctx.budget.credits }),
      status,
      error: ctx.errorCode,
      ms: Math.round(ms * 10) / 10,
    },
    'rpc request',
  );
}

/**
 * A call's method as the request's log line shows it: a client may send any string, as long as
 * the body; a log line per request must not grow with it (nor a slow log's buffer).
 */
function loggedMethod(call: { method: string }): string {
  return call.method.length <= 64 ? call.method : `${call.method.slice(0, 64)}… (${call.method.length} characters)`;
}

/** What /metrics shows of the cache (lib/ops/metrics.ts reads it at scrape time). */
function cacheStats(answers: AnswerCache): CacheStats {
  const { memory, shared } = answers;
  return {
    hits: answers.hits,
    misses: answers.misses,
    stored: answers.stored,
    toppedUp: answers.toppedUp,
    disputed: answers.disputed,
    bytes: memory?.bytes ?? 0,
    entries: memory?.size ?? 0,
    evictions: memory?.evictions ?? 0,
    ...(shared && { redis: { up: shared.state === 'ready', full: shared.full, ...shared.counts } }),
  };
}

/**
 * Redis in GET /ready: always ready (the gateway serves from the upstreams while Redis is down),
 * with its state shown under checks.cache.
 */
function redisReadiness(shared: RedisStore): ReadinessCheck {
  return {
    name: 'cache',
    check: async () => ({
      ready: true,
      redis: shared.state,
      ...(shared.state !== 'ready' && { note: 'Redis is unreachable: confirmed answers are not shared until it is back (requests are served from the upstreams)' }),
      ...(shared.full && { note: 'Redis is above cache.redis.maxBytes: new answers are not stored' }),
    }),
  };
}

/**
 * The budgets' Redis in GET /ready: always ready (while Redis is away each replica enforces the
 * budgets on its own), with its state shown under checks.budgets.
 */
function budgetReadiness(store: RedisCreditStore): ReadinessCheck {
  return {
    name: 'budgets',
    check: async () => {
      const up = store.client.status === 'ready';
      return {
        ready: true,
        redis: up ? 'ready' : store.client.status,
        ...(!up && { note: 'Redis is unreachable: each replica enforces the key budgets on its own until it is back' }),
      };
    },
  };
}
