/**
 * The config's type: what validateConfig (schema.ts) gives, every default filled in
 * (config/defaults.ts), deep-frozen by the loader (index.ts).
 */
import type { PinAt } from '../lib/jsonrpc/methods.js';
import type { Shape } from '../lib/verify/answers/compared-fields.js';
import type { KeyObject } from 'node:crypto';

/** The `heads:` keys, globally and per chain; absent keys take the defaults (lib/health/heads.ts headSettings). */
export interface HeadsConfig {
  /** The head tracker's cadence, in ms. */
  readonly intervalMs?: number;
  /**
   * The chain's head is the highest upstream head at most this many blocks above the median head;
   * an upstream more than this many blocks above the chain's head is suspect.
   */
  readonly suspectBlocks?: number;
  /** For upstreams without the safe/finalized tags: safe = finalized = latest − this. */
  readonly finalityDepth?: number;
  /** How long a pinned read waits for enough upstreams to reach its block, in ms. */
  readonly waitMs?: number;
}

/** A confirmableMethods entry: the method and where its pin is (lib/jsonrpc/methods.ts). */
export interface ConfirmableMethod {
  readonly method: string;
  readonly pin: PinAt;
}

export interface ChainConfig {
  /** Upstream URLs, in priority order, normalized (WHATWG form, no fragment, no empty query). */
  readonly rpcs: readonly string[];
  /**
   * Explicit `provider:` labels, by position in rpcs (undefined where the entry is a plain URL);
   * absent when no entry has one. An upstream's identity defaults to its registrable domain.
   */
  readonly providers?: readonly (string | undefined)[];
  readonly confirmations: number;
  readonly confirmableMethods: readonly ConfirmableMethod[];
  /** Fields left out of the comparison on this chain, added to the global list and the defaults. */
  readonly ignoredFields: IgnoredFieldsConfig;
  /** This chain's head tracking and wait (lib/health/heads.ts); over the global `heads:`. */
  readonly heads: HeadsConfig;
  /** How N=1 requests are spread (lib/upstream/select.ts arrange): `balanced` (default) or `priority`. */
  readonly strategy: 'balanced' | 'priority';
  /** How confirmable reads are vouched for (lib/prove): the chain's own, else the global `verify`. */
  readonly verify: VerifyMode;
  /** Writes (lib/verify/write.ts): `broadcast` upstreams get each write at once (1: one; Infinity: `all`); absent: one. */
  readonly writes?: { readonly broadcast: number };
  /** Per-upstream `weight`, `maxConcurrent`, `maxRps`, `logIndex`, by position in rpcs; absent when no entry has one. */
  readonly upstreamLimits?: readonly UpstreamLimits[];
  /** false: a batch's member calls are never sent to an upstream as one batch (lib/upstream/transport/coalesce.ts); absent: they are. */
  readonly batchUpstream?: false;
}

/** A provider's share and quota, from a `{ url, weight, maxConcurrent, maxRps, logIndex }` rpcs entry. */
export interface UpstreamLimits {
  readonly weight?: number;
  readonly maxConcurrent?: number;
  readonly maxRps?: number;
  /** `per-transaction`: the provider is known to number eth_getLogs logIndex per transaction (lib/prove: not logged as a surprise). */
  readonly logIndex?: 'per-transaction';
}

/** Field names per shape (block, transaction, receipt, log) that are not compared. */
export type IgnoredFieldsConfig = Readonly<Partial<Record<Shape, readonly string[]>>>;

/**
 * What a client key (or the anonymous tier) may do (lib/access/rights.ts applies it). Absent
 * lists allow every chain or method.
 */
export interface AccessRights {
  /** Chain ids (canonical decimal) it may call; absent: every chain. */
  readonly chains?: readonly string[];
  /** The only methods it may call; absent: every method. */
  readonly methods?: readonly string[];
  /** Methods it may not call (over `methods`). */
  readonly denyMethods: readonly string[];
  /** Whether it may call the write methods (eth_sendRawTransaction and kin). */
  readonly writes: boolean;
  /** The smallest N it is served with: a path's `<n>` below it is refused, a chain's default below it is raised to it. */
  readonly minConfirmations?: number;
  /** The largest N: a path's `<n>` above it is refused, a chain's default above it is lowered to it. */
  readonly maxConfirmations?: number;
  /** Whether its `Cache-Control: no-cache` is honoured (else it is answered from the cache like any request). */
  readonly cacheBypass: boolean;
  /** Whether it may read /chains and /metrics (with `access.adminRoutes: keys`). */
  readonly admin: boolean;
  /**
   * Its budget, read by the budget stage (absent: unlimited); validated here, not enforced by
   * lib/access: credits earned per second (the bucket's rate) and at most per UTC day, requests
   * in flight at once, what an answer from the cache costs, and per-method costs over the
   * built-in weights.
   */
  readonly creditsPerSecond?: number;
  readonly creditsPerDay?: number;
  readonly maxConcurrent?: number;
  readonly cacheHitCredits?: number;
  readonly methodCredits?: Readonly<Record<string, number>>;
}

/**
 * A client key: its label (metrics, logs) and its SHA-256 (the key itself is never kept: a
 * `key:` value is hashed when the config is read), or the file holding it, read when the
 * pipeline is built.
 */
export interface AccessKey extends AccessRights {
  /** As metrics and logs name it; absent: `key-` and the first 8 hex digits of its SHA-256. */
  readonly label?: string;
  /** The key's SHA-256, lower-case hex. */
  readonly keySha256?: string;
  /** A file holding the key (one line), read by lib/access when the pipeline is built. */
  readonly keyFile?: string;
}

/** `access:`: client keys and their rights (lib/access). Absent: every request is served, as without it. */
export interface AccessConfig {
  readonly keys: readonly AccessKey[];
  /** The rights of a request without a key; absent: such a request is refused (401). */
  readonly anonymous?: AccessRights;
  /** `keys`: /chains and /metrics need a key with `admin: true`; `open`: anyone may read them. */
  readonly adminRoutes: 'keys' | 'open';
  /**
   * The Redis the replicas share the keys' budgets in (lib/access/budget.ts); absent: `cache.redis`'s
   * url and prefix when set, else each process keeps its own budgets in memory.
   */
  readonly redis?: { readonly url: string; readonly prefix: string; readonly timeoutMs: number };
}

/** `attest:` as validated (config/attest.ts): the key parsed (`key:`) or the file that holds it (lib/attest). */
export interface AttestConfig {
  /** The private key, parsed when the config was read (its text is not kept). */
  readonly key?: KeyObject;
  /** A file holding the private key (PEM or seed), read by lib/attest when the pipeline is built (a cluster's primary reads it for its workers). */
  readonly keyFile?: string;
  /** The id statements and X-Attestation-Key carry; absent: the key's default id (lib/attest/keys.ts). */
  readonly keyId?: string;
  /** The chains whose answers are signed; absent: every chain. */
  readonly chains?: readonly string[];
}

export interface OmnigateConfig {
  readonly port: number;
  /** The address to listen on; absent: every interface (Node's default, `::` or `0.0.0.0`). */
  readonly host?: string;
  /** Client keys and rights (lib/access); absent: no keys, every request served. */
  readonly access?: AccessConfig;
  /** The key that signs confirmed answers (lib/attest); absent: answers carry no attestation. */
  readonly attest?: AttestConfig;
  readonly confirmations: number;
  readonly refreshInterval: number;
  readonly timeouts: {
    readonly upstreamMs: number;
    readonly requestMs: number;
    /** The fixed hedge delay: the default (1000) when absent from the file, then hedgeAdaptive is true. */
    readonly hedgeMs: number;
    /** hedgeMs is not set: the delay follows the chain's hedgeQuantile of answered calls (quality.ts hedgeDelay). */
    readonly hedgeAdaptive: boolean;
    readonly hedgeMinMs: number;
    readonly hedgeMaxMs: number;
    readonly hedgeQuantile: number;
    /** Hedged calls at most, as a share of first calls per chain (quality.ts HedgeBudget). */
    readonly hedgeBudget: number;
    /** Time a client has to take a written answer, ms (0: no limit). */
    readonly sendMs: number;
  };
  readonly limits: {
    readonly bodyBytes: number;
    readonly batchSize: number;
    readonly responseBytes: number;
    readonly jsonDepth: number;
    readonly bufferedBytes: number;
    readonly probeConcurrency: number;
    readonly upstreamSockets: number;
  };
  readonly server: {
    readonly headersTimeoutMs: number;
    readonly requestTimeoutMs: number;
    readonly keepAliveTimeoutMs: number;
    readonly shutdownMs: number;
    /** Processes serving the port (`omnigate serve --workers` overrides it): a count, or `auto` (the cores). */
    readonly workers: number | 'auto';
    /**
     * The admin listener (`--admin-port`/`--admin-host` override it): when set, /chains and
     * /metrics are served there only (the main port answers them 404); /health and /ready on both.
     */
    readonly admin?: { readonly port: number; readonly host: string };
  };
  readonly redactHeaders: boolean;
  /** Identical confirmable requests in flight share one agreement (lib/verify/merge.ts); absent: true. */
  readonly mergeRequests?: boolean;
  /** The cache of confirmed answers at final blocks (lib/cache); absent: the defaults. */
  readonly cache?: {
    /** Bytes the in-memory cache may hold (0: none). */
    readonly memoryBytes: number;
    /** The shared level in Redis (lib/cache/redis.ts); absent: none. */
    readonly redis?: {
      readonly url: string;
      readonly prefix: string;
      readonly ttlSeconds: number;
      readonly maxBytes: number;
      readonly timeoutMs: number;
      readonly hmacKey: string;
    };
  };
  /** How HTTP(S) upstreams are reached (lib/upstream/transport/http.ts or undici.ts); optional for configs built in code (client absent: auto). */
  readonly upstreams?: { readonly client?: 'auto' | 'node' | 'undici'; readonly maxSockets: number; readonly keepAliveMs: number; readonly proxy?: string };
  /** When an upstream whose answers lose agreements is distrusted (lib/verify/README.md "How agreement works", 9). */
  readonly disputes: {
    readonly window: number;
    readonly maxLost: number;
    readonly sampleEvery: number;
    /** Each dispute (no quorum, answers differ) appended as one JSON line (lib/verify/README.md "Disputes file"). */
    readonly file?: string;
    /** disputes.file is rotated to `<file>.1` before it passes this many bytes. */
    readonly fileMaxBytes: number;
  };
  readonly confirmableMethods: readonly ConfirmableMethod[];
  /** Fields left out of the comparison on every chain, added to the defaults (lib/verify/answers/canonical.ts). */
  readonly ignoredFields: IgnoredFieldsConfig;
  /** Head tracking and the wait for heads on every chain (lib/health/heads.ts: defaults per chain id). */
  readonly heads: HeadsConfig;
  /**
   * The indexer API's settings (each overridden by its environment variable, lib/indexer/env.ts;
   * DATABASE_URL and NODE_ENV come from the environment only): `schema` holds the Ponder tables
   * (absent: the search path), the database's statement and connect timeouts, the lookback floor
   * of the request-based lists (unix seconds), and the refresh interval of the indexer's gauges.
   */
  readonly indexer: {
    readonly schema?: string;
    readonly statementTimeoutMs?: number;
    readonly connectTimeoutMs?: number;
    readonly lookbackFloor?: number;
    readonly statsIntervalSeconds?: number;
  };
  /** The default of every chain's `verify` (default `auto`). */
  readonly verify: VerifyMode;
  /** Keyed by the chain id in canonical decimal form (exact, never wrapped). */
  readonly chains: Readonly<Record<string, ChainConfig>>;
}

/** One problem: the YAML path and the message. */
export interface ConfigProblem {
  path: string;
  message: string;
}

/**
 * `agreement`: N agreeing answers; `proof`: answers proven against a block header N providers
 * agreed on (lib/prove); `auto`: proof where the chain's quirks allow it and its self-check at
 * start passed, agreement until then.
 */
export type VerifyMode = 'agreement' | 'proof' | 'auto';
