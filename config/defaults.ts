/** Every default of the config file, in one place (config/README.md "Configuration" lists the same). */
export const defaults = {
  /** Port the server listens on (`omnigate serve --port` overrides it; 0 picks a free port). */
  port: 5000,
  /** Upstreams that must agree on a confirmable request, unless the chain or the path says otherwise. */
  confirmations: 1,
  /** Seconds between health probes of each upstream. */
  refreshInterval: 60,
  timeouts: {
    /** One upstream call (connect + answer), in ms. */
    upstreamMs: 10_000,
    /** The whole request, every escalation included, in ms. */
    requestMs: 30_000,
    /**
     * Ask one more upstream when none answered for this long, in ms (0: no hedging). Set in the
     * file, a fixed delay; absent, the delay is adaptive (below) and this value is unused.
     */
    hedgeMs: 1_000,
    /** When hedgeMs is not set, the hedge delay follows the chain's recent quantile of answered calls, within these bounds (ms). */
    hedgeMinMs: 20,
    hedgeMaxMs: 1_000,
    hedgeQuantile: 0.9,
    /** Hedged calls at most, as a share of first calls per chain. */
    hedgeBudget: 0.1,
    /**
     * Time a client has to take a whole answer once it is written, in ms (0: no limit); then its
     * connection is closed, so a client that stops reading cannot hold the answer's bytes.
     */
    sendMs: 60_000,
  },
  limits: {
    /** Largest request body, in bytes (5 MiB). */
    bodyBytes: 5 * 1024 * 1024,
    /** Most calls in one batch (viem batches up to 1,000 calls, ethers up to 100). */
    batchSize: 1000,
    /** Largest upstream answer, in bytes (64 MiB). */
    responseBytes: 64 * 1024 * 1024,
    /** Deepest nesting of arrays and objects in a request body or an upstream answer. */
    jsonDepth: 256,
    /** Upstream answer bytes held in memory at once, all requests together (256 MiB). */
    bufferedBytes: 256 * 1024 * 1024,
    /** Upstreams health-probed at once. */
    probeConcurrency: 32,
    /** HTTP(S) upstream sockets open at once, all upstreams together; calls beyond wait for one. */
    upstreamSockets: 256,
  },
  server: {
    /** Time a client has to send the request headers, in ms (slowloris protection). */
    headersTimeoutMs: 10_000,
    /** Time a client has to send the whole request, in ms (0: timeouts.requestMs + 30 s). */
    requestTimeoutMs: 0,
    /** How long an idle keep-alive connection stays open, in ms. */
    keepAliveTimeoutMs: 5_000,
    /** On SIGTERM/SIGINT: how long in-flight requests may finish before the process exits, in ms. */
    shutdownMs: 10_000,
    /** Processes serving the port (omnigate serve; `auto`: the cores); 1: one process, no cluster. */
    workers: 1 as number | 'auto',
  },
  upstreams: {
    /**
     * The HTTP client of HTTP(S) upstreams: node (node:http, lib/upstream/transport/http.ts), undici
     * (lib/upstream/transport/undici.ts), or auto, the default: undici unless node's client is
     * intercepted when the upstreams are built (nock, OpenTelemetry's http instrumentation;
     * lib/upstream/transport/choose.ts). The cap on upstream sockets covers both.
     */
    client: 'auto' as 'auto' | 'node' | 'undici',
    /** Sockets open at once to each HTTP(S) upstream; calls beyond wait for one. */
    maxSockets: 128,
    /** How long an idle kept-alive upstream socket stays open, in ms (a shorter server Keep-Alive hint wins). */
    keepAliveMs: 30_000,
  },
  /**
   * X-Checked-URLS / X-Forwarded-From name each upstream with its key masked, as logs do. Any web
   * page can read these headers (CORS is `*`), so showing raw URLs is an explicit opt-out (false).
   */
  redactHeaders: true,
  /** Identical confirmable requests in flight share one agreement (lib/verify/README.md "Merged requests"). */
  mergeRequests: true,
  cache: {
    /** The in-memory cache of confirmed answers at final blocks: 64 MiB (0: off). */
    memoryBytes: 64 * 1024 * 1024,
    /** cache.redis, when set: its keys' prefix, each value's lifetime (1 day), the memory above which writes pause (256 MiB), a lookup's longest wait. */
    redis: { prefix: 'omnigate:', ttlSeconds: 86_400, maxBytes: 256 * 1024 * 1024, timeoutMs: 50 },
  },
  disputes: {
    /** The last votes in decided quorums remembered per upstream. */
    window: 20,
    /** Lost votes among them that make the upstream distrusted (0: never); trusted again below half. */
    maxLost: 5,
    /** One verified request (N ≥ 2) in this many per chain takes a distrusted upstream as a voter. */
    sampleEvery: 10,
    /** disputes.file (when set) is rotated to `<file>.1` before it passes this size: 100 MiB. */
    fileMaxBytes: 100 * 1024 * 1024,
  },
  /** How a chain spreads N=1 requests: balanced over the best upstreams, or priority (list order). */
  strategy: 'balanced' as 'balanced' | 'priority',
  /** How confirmable reads are vouched for (lib/prove): proofs where the chain allows them and its self-check passed. */
  verify: 'auto' as 'agreement' | 'proof' | 'auto',
  /** Methods added to the confirmable class on every chain (they carry no block parameter). */
  confirmableMethods: [] as string[],
} as const;
