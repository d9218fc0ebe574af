/**
 * The config's type and its validation: raw YAML value → typed config, or the list of every
 * problem, each naming its YAML path and how to fix it. Pure (no file I/O).
 */
import { declaredMethod, type PinAt } from '../lib/jsonrpc/methods.js';
import { shapes, type Shape } from '../lib/verify/canonical.js';
import { countProviders, normalizeUpstreamUrl } from '../lib/upstream/provider.js';
import { redactUrl, scrubberOf, secretsOf } from '../lib/upstream/redact.js';
import { defaults } from './defaults.js';

/** A confirmableMethods entry: the method and where its pin is (lib/jsonrpc/methods.ts). */
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
  /** Writes (lib/verify/write.ts): `broadcast` upstreams get each write at once (1: one; Infinity: `all`); absent: one. */
  readonly writes?: { readonly broadcast: number };
  /** Per-upstream `weight`, `maxConcurrent`, `maxRps`, by position in rpcs; absent when no entry has one. */
  readonly upstreamLimits?: readonly UpstreamLimits[];
  /** false: a batch's member calls are never sent to an upstream as one batch (lib/upstream/transport/coalesce.ts); absent: they are. */
  readonly batchUpstream?: false;
}

/** A provider's share and quota, from a `{ url, weight, maxConcurrent, maxRps }` rpcs entry. */
export interface UpstreamLimits {
  readonly weight?: number;
  readonly maxConcurrent?: number;
  readonly maxRps?: number;
}

/** Field names per shape (block, transaction, receipt, log) that are not compared. */
export type IgnoredFieldsConfig = Readonly<Partial<Record<Shape, readonly string[]>>>;

export interface OmnigateConfig {
  readonly port: number;
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
  };
  readonly server: {
    readonly headersTimeoutMs: number;
    readonly requestTimeoutMs: number;
    readonly keepAliveTimeoutMs: number;
    readonly shutdownMs: number;
  };
  readonly redactHeaders: boolean;
  /** How HTTP(S) upstreams are reached (lib/upstream/transport/http.ts); optional for configs built in code. */
  readonly upstreams?: { readonly maxSockets: number; readonly keepAliveMs: number; readonly proxy?: string };
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
  /** Fields left out of the comparison on every chain, added to the defaults (lib/verify/canonical.ts). */
  readonly ignoredFields: IgnoredFieldsConfig;
  /** Head tracking and the wait for heads on every chain (lib/health/heads.ts: defaults per chain id). */
  readonly heads: HeadsConfig;
  /** The indexer API (issue 19): `schema` holds the Ponder tables; absent, they are found in the search path. */
  readonly indexer: { readonly schema?: string };
  /** Keyed by the chain id in canonical decimal form (exact, never wrapped). */
  readonly chains: Readonly<Record<string, ChainConfig>>;
}

/** One problem: the YAML path and the message. */
export interface ConfigProblem {
  path: string;
  message: string;
}

const topKeys = ['port', 'confirmations', 'refreshInterval', 'timeouts', 'limits', 'server', 'upstreams', 'redactHeaders', 'disputes', 'confirmableMethods', 'ignoredFields', 'heads', 'chains', 'indexer'];
const chainKeys = ['rpcs', 'confirmations', 'confirmableMethods', 'ignoredFields', 'heads', 'strategy', 'writes', 'batchUpstream'];
const aliases: Record<string, string> = { refresh_interval: 'refreshInterval', rpc: 'rpcs', urls: 'rpcs', confirmation: 'confirmations' };
const urlSchemes = new Set(['http:', 'https:', 'ws:', 'wss:']);

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const show = (v: unknown) => (typeof v === 'bigint' ? v.toString() : JSON.stringify(v));
/**
 * A URL as a problem quotes it: with its secret parts masked (redact.ts redactUrl), or not at
 * all when it does not parse (no telling the key from the rest). The path and line name it.
 */
const showUrl = (text: string) => (URL.canParse(text) ? JSON.stringify(redactUrl(text)) : 'the value (not shown: it may hold a key)');
/** A value where a URL string belongs, as a problem names it: a list or a mapping by its kind only. */
const showNotUrl = (v: unknown) => (Array.isArray(v) ? 'a list' : isObj(v) ? 'a mapping' : show(v));

/**
 * Whole numbers as every check below reads them: JS numbers. The YAML loader reads whole numbers
 * as bigint (config/index.ts: nothing is rounded on the way, so a chain id key beyond 2^53 stays
 * exact); here, each bigint a JS number holds exactly becomes that number, the one way numbers
 * reach the checks, from a file or from code. One beyond ±(2^53 − 1) stays a bigint, which no
 * setting takes: it is refused, quoted with its exact digits. A copy (the caller's value is not
 * changed); shared and self-referencing parts (YAML aliases) stay shared, walked once.
 */
function exactNumbers(value: unknown, copies = new Map<object, unknown>()): unknown {
  if (typeof value === 'bigint') {
    const n = Number(value);
    return Number.isSafeInteger(n) ? n : value;
  }
  if (typeof value !== 'object' || value === null) return value;
  const copied = copies.get(value);
  if (copied !== undefined) return copied;
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    copies.set(value, out);
    for (const v of value) out.push(exactNumbers(v, copies));
    return out;
  }
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) return value;
  const out: Obj = {};
  copies.set(value, out);
  // defineProperty: a key such as "__proto__" stays a key (YAML allows it), not a prototype.
  for (const [k, v] of Object.entries(value)) Object.defineProperty(out, k, { value: exactNumbers(v, copies), enumerable: true, writable: true, configurable: true });
  return out;
}

export function validateConfig(input: unknown): { config: OmnigateConfig } | { problems: ConfigProblem[] } {
  const problems: ConfigProblem[] = [];
  const report = (path: string, message: string) => problems.push({ path, message });
  const raw = exactNumbers(input);
  if (!isObj(raw)) {
    report('(root)', 'the config must be a YAML mapping with at least a `chains:` key');
    return { problems };
  }
  unknownKeys(raw, topKeys, '', report);

  const int = (obj: Obj, key: string, path: string, fallback: number, min: number, max: number, hint: string): number => {
    const v = obj[key];
    if (v === undefined || v === null) return fallback;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) {
      report(path, `${show(v)} is not an integer from ${min} to ${max}. ${hint}`);
      return fallback;
    }
    return v;
  };
  const section = (key: string): Obj => {
    const v = raw[key];
    if (v === undefined || v === null) return {};
    if (!isObj(v)) {
      report(key, `must be a mapping, got ${show(v)}`);
      return {};
    }
    return v;
  };

  const port = int(raw, 'port', 'port', defaults.port, 0, 65535, 'Example: port: 5000');
  const confirmations = int(raw, 'confirmations', 'confirmations', defaults.confirmations, 1, 1000, 'Example: confirmations: 2');
  const refreshInterval = int(raw, 'refreshInterval', 'refreshInterval', defaults.refreshInterval, 1, 86_400, 'It is in seconds. Example: refreshInterval: 60');
  const t = section('timeouts');
  unknownKeys(t, ['upstreamMs', 'requestMs', 'hedgeMs', 'hedgeMinMs', 'hedgeMaxMs', 'hedgeQuantile', 'hedgeBudget', 'sendMs'], 'timeouts', report);
  const share = (obj: Obj, key: string, path: string, fallback: number, min: number, max: number, hint: string): number => {
    const v = obj[key];
    if (v === undefined || v === null) return fallback;
    if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max) {
      report(path, `${show(v)} is not a number from ${min} to ${max}. ${hint}`);
      return fallback;
    }
    return v;
  };
  const hedgeMinMs = int(t, 'hedgeMinMs', 'timeouts.hedgeMinMs', defaults.timeouts.hedgeMinMs, 0, 600_000, 'The adaptive hedge delay never goes below it, in milliseconds. Example: hedgeMinMs: 20');
  const timeouts = {
    upstreamMs: int(t, 'upstreamMs', 'timeouts.upstreamMs', defaults.timeouts.upstreamMs, 1, 600_000, 'In milliseconds. Example: upstreamMs: 10000'),
    requestMs: int(t, 'requestMs', 'timeouts.requestMs', defaults.timeouts.requestMs, 1, 3_600_000, 'In milliseconds. Example: requestMs: 30000'),
    hedgeMs: int(t, 'hedgeMs', 'timeouts.hedgeMs', defaults.timeouts.hedgeMs, 0, 600_000, 'In milliseconds, 0 turns hedging off. Example: hedgeMs: 1000'),
    hedgeAdaptive: t.hedgeMs === undefined || t.hedgeMs === null,
    hedgeMinMs,
    hedgeMaxMs: int(t, 'hedgeMaxMs', 'timeouts.hedgeMaxMs', Math.max(defaults.timeouts.hedgeMaxMs, hedgeMinMs), hedgeMinMs, 600_000, `The adaptive hedge delay never goes above it, in milliseconds (at least timeouts.hedgeMinMs = ${hedgeMinMs}). Example: hedgeMaxMs: 1000`),
    hedgeQuantile: share(t, 'hedgeQuantile', 'timeouts.hedgeQuantile', defaults.timeouts.hedgeQuantile, 0.5, 0.999, 'The quantile of answered calls the adaptive hedge delay follows. Example: hedgeQuantile: 0.9'),
    hedgeBudget: share(t, 'hedgeBudget', 'timeouts.hedgeBudget', defaults.timeouts.hedgeBudget, 0, 1, 'Hedged calls at most, as a share of first calls (0.1 = 10 %). Example: hedgeBudget: 0.1'),
    sendMs: int(t, 'sendMs', 'timeouts.sendMs', defaults.timeouts.sendMs, 0, 3_600_000, 'Time a client has to take a written answer, in milliseconds, 0 for no limit. Example: sendMs: 60000'),
  };
  const l = section('limits');
  unknownKeys(l, ['bodyBytes', 'batchSize', 'responseBytes', 'jsonDepth', 'bufferedBytes', 'probeConcurrency'], 'limits', report);
  const limits = {
    bodyBytes: int(l, 'bodyBytes', 'limits.bodyBytes', defaults.limits.bodyBytes, 1, 1 << 30, 'In bytes. Example: bodyBytes: 5242880'),
    batchSize: int(l, 'batchSize', 'limits.batchSize', defaults.limits.batchSize, 1, 100_000, 'Example: batchSize: 100'),
    responseBytes: int(l, 'responseBytes', 'limits.responseBytes', defaults.limits.responseBytes, 1, 1 << 30, 'In bytes. Example: responseBytes: 67108864'),
    jsonDepth: int(l, 'jsonDepth', 'limits.jsonDepth', defaults.limits.jsonDepth, 1, 2048, 'Nesting levels of arrays and objects. Example: jsonDepth: 256'),
    bufferedBytes: int(l, 'bufferedBytes', 'limits.bufferedBytes', defaults.limits.bufferedBytes, 1, 2 ** 40, 'In bytes. Example: bufferedBytes: 268435456'),
    probeConcurrency: int(l, 'probeConcurrency', 'limits.probeConcurrency', defaults.limits.probeConcurrency, 1, 10_000, 'Upstreams probed at once. Example: probeConcurrency: 32'),
  };
  if (limits.bufferedBytes < limits.responseBytes) {
    report('limits.bufferedBytes', `${limits.bufferedBytes} is below limits.responseBytes (${limits.responseBytes}): one answer of the largest size could never be read. Raise it, e.g. bufferedBytes: ${Math.max(limits.responseBytes * 4, defaults.limits.bufferedBytes)}`);
  }
  const sv = section('server');
  unknownKeys(sv, ['headersTimeoutMs', 'requestTimeoutMs', 'keepAliveTimeoutMs', 'shutdownMs'], 'server', report);
  const d = defaults.server;
  const server = {
    headersTimeoutMs: int(sv, 'headersTimeoutMs', 'server.headersTimeoutMs', d.headersTimeoutMs, 1, 600_000, 'In milliseconds. Example: headersTimeoutMs: 10000'),
    requestTimeoutMs: int(sv, 'requestTimeoutMs', 'server.requestTimeoutMs', d.requestTimeoutMs, 0, 3_600_000, 'In milliseconds, 0 for timeouts.requestMs + 30 s. Example: requestTimeoutMs: 60000'),
    keepAliveTimeoutMs: int(sv, 'keepAliveTimeoutMs', 'server.keepAliveTimeoutMs', d.keepAliveTimeoutMs, 1, 600_000, 'In milliseconds. Example: keepAliveTimeoutMs: 5000'),
    shutdownMs: int(sv, 'shutdownMs', 'server.shutdownMs', d.shutdownMs, 0, 600_000, 'In milliseconds. Example: shutdownMs: 10000'),
  };
  const up = section('upstreams');
  unknownKeys(up, ['maxSockets', 'keepAliveMs', 'proxy'], 'upstreams', report);
  const upstreams = {
    maxSockets: int(up, 'maxSockets', 'upstreams.maxSockets', defaults.upstreams.maxSockets, 1, 100_000, 'Sockets open at once per upstream. Example: maxSockets: 128'),
    keepAliveMs: int(up, 'keepAliveMs', 'upstreams.keepAliveMs', defaults.upstreams.keepAliveMs, 1, 3_600_000, 'How long an idle socket stays open, in milliseconds. Example: keepAliveMs: 30000'),
    ...proxyUrl(up.proxy, report),
  };
  let redactHeaders: boolean = defaults.redactHeaders;
  if (raw.redactHeaders !== undefined && raw.redactHeaders !== null) {
    if (typeof raw.redactHeaders !== 'boolean') report('redactHeaders', `${show(raw.redactHeaders)} is not true or false`);
    else redactHeaders = raw.redactHeaders;
  }
  const ds = section('disputes');
  unknownKeys(ds, ['window', 'maxLost', 'sampleEvery', 'file', 'fileMaxBytes'], 'disputes', report);
  let disputeFile: string | undefined;
  if (ds.file !== undefined && ds.file !== null) {
    if (typeof ds.file !== 'string' || ds.file.trim() === '' || ds.file.includes('\0')) {
      report('disputes.file', `${show(ds.file)} is not a file path. Example: file: /var/log/omnigate/disputes.jsonl (leave it out to record no file)`);
    } else disputeFile = ds.file;
  }
  const disputeWindow = int(ds, 'window', 'disputes.window', defaults.disputes.window, 1, 10_000, 'The votes remembered per upstream. Example: window: 20');
  // indexer.schema: where Ponder ≥0.7 writes (its --schema) or publishes views (--views-schema).
  const ix = section('indexer');
  unknownKeys(ix, ['schema'], 'indexer', report);
  const indexer: { schema?: string } = {};
  if (ix.schema !== undefined && ix.schema !== null) {
    if (typeof ix.schema !== 'string' || !/^[A-Za-z_][\w$]{0,62}$/.test(ix.schema)) {
      report('indexer.schema', `${show(ix.schema)} is not a PostgreSQL schema name; give the schema Ponder writes to (its --schema, or --views-schema). Example: schema: rfq`);
    } else indexer.schema = ix.schema;
  }
  const disputes = {
    window: disputeWindow,
    maxLost: int(ds, 'maxLost', 'disputes.maxLost', Math.min(defaults.disputes.maxLost, disputeWindow), 0, disputeWindow, `Lost votes (of the last disputes.window = ${disputeWindow}) that make an upstream distrusted, 0 never. Example: maxLost: 5`),
    sampleEvery: int(ds, 'sampleEvery', 'disputes.sampleEvery', defaults.disputes.sampleEvery, 1, 1_000_000, 'One verified request in this many takes a distrusted upstream as a voter. Example: sampleEvery: 10'),
    ...(disputeFile !== undefined && { file: disputeFile }),
    fileMaxBytes: int(ds, 'fileMaxBytes', 'disputes.fileMaxBytes', defaults.disputes.fileMaxBytes, 1024, 2 ** 40, 'In bytes; the file is rotated to <file>.1 before it passes this. Example: fileMaxBytes: 104857600'),
  };
  const confirmableMethods = methodList(raw.confirmableMethods, 'confirmableMethods', report);
  const ignoredFields = fieldLists(raw.ignoredFields, 'ignoredFields', report);
  const heads = headsSection(raw.heads, 'heads', report);

  const chains: Record<string, ChainConfig> = {};
  const rawChains = raw.chains;
  if (!isObj(rawChains) || Object.keys(rawChains).length === 0) {
    report('chains', 'needs at least one chain. Example:\n      chains:\n        1:\n          rpcs: ["https://rpc.example/v1/KEY"]');
  } else {
    const seenIds = new Set<string>();
    for (const [key, value] of Object.entries(rawChains)) {
      const path = `chains.${key}`;
      if (!/^\d+$/.test(key)) {
        report(path, `"${key}" is not a chain id: use the decimal chain id as the key, e.g. chains.1 for Ethereum mainnet`);
        continue;
      }
      const id = BigInt(key).toString();
      if (chains[id] !== undefined || seenIds.has(id)) {
        report(path, `chain ${id} is listed twice (as "${key}" and another spelling): merge the two entries`);
        continue;
      }
      seenIds.add(id);
      if (!isObj(value)) {
        report(path, 'must be a mapping with an `rpcs:` list');
        continue;
      }
      unknownKeys(value, chainKeys, path, report);
      const { urls: rpcs, providers, upstreamLimits } = urlList(value.rpcs, `${path}.rpcs`, report);
      const strategy = value.strategy ?? defaults.strategy;
      if (strategy !== 'balanced' && strategy !== 'priority') {
        report(`${path}.strategy`, `${show(strategy)} is not a strategy: use balanced (spread N=1 requests over the best upstreams) or priority (the first healthy one in list order)`);
      }
      const batchUpstream = value.batchUpstream ?? true;
      if (typeof batchUpstream !== 'boolean') {
        report(`${path}.batchUpstream`, `${show(batchUpstream)} is not true or false: true (default) sends a batch's calls to an upstream as one batch, false one by one (for providers that refuse batches)`);
      }
      const chainConfirmations = int(value, 'confirmations', `${path}.confirmations`, confirmations, 1, 1000, 'Example: confirmations: 2');
      // Only the chain's own key is an error: a global default above a small chain is a warning
      // at start-up (chainsBelowConfirmations) and a -32003 on its confirmable requests. What
      // counts is independent providers (one vote each), not URLs.
      const explicit = value.confirmations !== undefined && value.confirmations !== null;
      const independent = rpcs.length > 0 ? countProviders(rpcs, providers) : 0;
      if (explicit && independent > 0 && chainConfirmations > independent) {
        const of = independent === rpcs.length ? `rpcs has ${rpcs.length}` : `rpcs has ${rpcs.length} upstreams of ${independent} providers (one vote each)`;
        report(`${path}.confirmations`, `${chainConfirmations} confirmations need at least ${chainConfirmations} upstreams of distinct providers, but ${of}: add upstreams or lower it`);
      }
      chains[id] = {
        rpcs,
        ...(providers.some((p) => p !== undefined) ? { providers } : {}),
        ...(upstreamLimits.some((l) => Object.keys(l).length > 0) ? { upstreamLimits } : {}),
        strategy: strategy === 'priority' ? 'priority' : 'balanced',
        confirmations: chainConfirmations,
        confirmableMethods: methodList(value.confirmableMethods, `${path}.confirmableMethods`, report),
        ignoredFields: fieldLists(value.ignoredFields, `${path}.ignoredFields`, report),
        heads: headsSection(value.heads, `${path}.heads`, report),
        ...writesSection(value.writes, `${path}.writes`, rpcs.length, report),
        ...(batchUpstream === false && { batchUpstream: false as const }),
      };
    }
  }
  if (problems.length > 0) {
    // A URL in the wrong place (a value quoted by a problem, or a key named in its path) still
    // holds its provider key: the secret parts of every URL in the document are masked.
    const scrub = scrubberOf(urlSecretsIn(raw));
    return { problems: problems.map((p) => ({ path: scrub(p.path), message: scrub(p.message) })) };
  }
  return { config: { port, confirmations, refreshInterval, timeouts, limits, server, upstreams, redactHeaders, disputes, indexer, confirmableMethods, ignoredFields, heads, chains } };
}

/**
 * The secret parts (redact.ts secretsOf) of every `scheme://…` URL in a raw config, keys included.
 * Each list and mapping is read once (a YAML alias may make one hold itself).
 */
function urlSecretsIn(value: unknown, out: string[] = [], seen = new Set<object>()): string[] {
  if (typeof value === 'string') {
    const text = value.trim();
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text) && URL.canParse(text)) out.push(...secretsOf(text));
  } else if (typeof value === 'object' && value !== null) {
    if (seen.has(value)) return out;
    seen.add(value);
    if (Array.isArray(value)) for (const v of value) urlSecretsIn(v, out, seen);
    else if (isObj(value)) for (const [k, v] of Object.entries(value)) urlSecretsIn(v, urlSecretsIn(k, out, seen), seen);
  }
  return out;
}

/** `upstreams.proxy`: an http:// or https:// URL (empty or absent: none; the environment's HTTPS_PROXY, HTTP_PROXY, NO_PROXY apply). */
function proxyUrl(v: unknown, report: (p: string, m: string) => void): { proxy?: string } {
  if (v === undefined || v === null || v === '') return {};
  const hint = 'Use an http:// or https:// proxy URL, e.g. proxy: http://proxy.internal:3128';
  if (typeof v !== 'string') {
    report('upstreams.proxy', `${showNotUrl(v)} is not a URL. ${hint}`);
    return {};
  }
  let url: URL;
  try {
    url = new URL(v);
  } catch {
    // Not quoted: its user-info (the proxy's password) cannot be told from the rest.
    report('upstreams.proxy', `the value (not shown: it may hold a password) is not a URL. ${hint}`);
    return {};
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    report('upstreams.proxy', `the ${url.protocol} scheme is not supported. ${hint}`);
    return {};
  }
  return { proxy: v };
}

/** `chains.<id>.writes: { broadcast: all | <K> | off }` → `{ writes: { broadcast } }`, or nothing when off. */
function writesSection(value: unknown, path: string, upstreams: number, report: (p: string, m: string) => void): { writes?: { broadcast: number } } {
  if (value === undefined || value === null) return {};
  if (!isObj(value)) {
    report(path, 'must be a mapping. Example: writes: { broadcast: all } (or broadcast: 2)');
    return {};
  }
  unknownKeys(value, ['broadcast'], path, report);
  const b = value.broadcast;
  if (b === undefined || b === null || b === 'off' || b === false || b === 1) return {};
  if (b === 'all') return { writes: { broadcast: Infinity } };
  if (typeof b !== 'number' || !Number.isInteger(b) || b < 1) {
    report(`${path}.broadcast`, `${show(b)} is not a broadcast mode: use all (every upstream), a number of upstreams K ≥ 2, or off (one upstream, the default)`);
    return {};
  }
  if (upstreams > 0 && b > upstreams) {
    report(`${path}.broadcast`, `${b} upstreams asked, but rpcs has ${upstreams}: lower it or use all`);
    return {};
  }
  return { writes: { broadcast: b } };
}

function unknownKeys(obj: Obj, known: readonly string[], base: string, report: (p: string, m: string) => void): void {
  for (const key of Object.keys(obj)) {
    if (known.includes(key)) continue;
    const path = base ? `${base}.${key}` : key;
    const alias = Object.hasOwn(aliases, key) ? aliases[key] : undefined;
    const near = alias && known.includes(alias) ? alias : known.find((k) => k.toLowerCase() === key.toLowerCase());
    report(path, `unknown key${near ? `: did you mean "${near}"?` : `; known keys here: ${known.join(', ')}`}`);
  }
}

const providerLabel = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/;

/**
 * The rpcs list: each entry a URL string or `{ url, provider }`. URLs are normalized
 * (normalizeUpstreamUrl); two entries equal once normalized are an error, not merged: the user
 * meant two voters and has one.
 */
function urlList(value: unknown, path: string, report: (p: string, m: string) => void): { urls: string[]; providers: (string | undefined)[]; upstreamLimits: UpstreamLimits[] } {
  const urls: string[] = [];
  const providers: (string | undefined)[] = [];
  const upstreamLimits: UpstreamLimits[] = [];
  if (!Array.isArray(value) || value.length === 0) {
    report(path, 'must be a non-empty list of upstream URLs. Example: rpcs: ["https://rpc.example/v1/KEY", "wss://ws.example/KEY"]');
    return { urls, providers, upstreamLimits };
  }
  const seen = new Map<string, number>();
  value.forEach((entry, i) => {
    const where = `${path}[${i}]`;
    let item: unknown = entry;
    let provider: string | undefined;
    const limits: { weight?: number; maxConcurrent?: number; maxRps?: number } = {};
    if (isObj(entry)) {
      unknownKeys(entry, ['url', 'provider', 'weight', 'maxConcurrent', 'maxRps'], where, report);
      const w = entry.weight;
      if (w !== undefined && w !== null) {
        if (typeof w !== 'number' || !Number.isFinite(w) || w <= 0 || w > 1000) return report(`${where}.weight`, `${show(w)} is not a weight: a number above 0, at most 1000 (its share of balanced load; 1 by default). Example: weight: 3`);
        limits.weight = w;
      }
      for (const key of ['maxConcurrent', 'maxRps'] as const) {
        const v = entry[key];
        if (v === undefined || v === null) continue;
        if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > 1_000_000) {
          return report(`${where}.${key}`, `${show(v)} is not an integer from 1 to 1000000 (${key === 'maxConcurrent' ? 'calls in flight' : 'calls per second'} at most; at the cap the upstream is skipped). Example: ${key}: 50`);
        }
        limits[key] = v;
      }
      item = entry.url;
      if (item === undefined) return report(`${where}.url`, 'is missing. Example: { url: "https://rpc.example/v1/KEY", provider: example }');
      const p = entry.provider;
      if (p !== undefined && p !== null) {
        if (typeof p !== 'string' || !providerLabel.test(p)) {
          return report(`${where}.provider`, `${show(p)} is not a provider label: a short name such as "alchemy" (letters, digits, . _ : -, at most 64)`);
        }
        provider = p;
      }
    }
    const at = isObj(entry) ? `${where}.url` : where;
    if (typeof item !== 'string') return report(at, `${showNotUrl(item)} is not a URL string`);
    const url = normalizeUpstreamUrl(item);
    if (!url || !urlSchemes.has(url.protocol) || !url.hostname) {
      const noScheme = !url && !item.includes('://') ? ' (it has no scheme: write https://, http://, wss:// or ws:// before the host)' : '';
      return report(at, `${showUrl(item)} is not an http(s)/ws(s) URL${noScheme}. Example: "https://rpc.example/v1/KEY"`);
    }
    if (/\$\{|%7B/i.test(item)) return report(at, `${showUrl(item)} is a template: put the real key in place of the \${…} placeholder`);
    const first = seen.get(url.href);
    if (first !== undefined) {
      return report(at, `${showUrl(item)} is listed twice (the same URL as ${path}[${first}] once the case, default port, fragment and empty query are ignored): a duplicate would vote twice, remove one`);
    }
    seen.set(url.href, i);
    // The WHATWG-normalized form: also what makes a non-ASCII path (or an IDN host) fit a
    // request line and a header (percent-encoded, punycode).
    urls.push(url.href);
    providers.push(provider);
    upstreamLimits.push(limits);
  });
  return { urls, providers, upstreamLimits };
}

function methodList(value: unknown, path: string, report: (p: string, m: string) => void): ConfirmableMethod[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    report(path, 'must be a list of methods, each a method of the method table or one with where its pin is. Example: confirmableMethods: [eth_getBlockByHash, { method: eth_foo, block: 1 }]');
    return [];
  }
  const out: ConfirmableMethod[] = [];
  value.forEach((m, i) => {
    const d = declaredMethod(m);
    if ('error' in d) return report(`${path}[${i}]`, d.error);
    out.push(d);
  });
  return out;
}

/** Chains whose confirmations (inherited from the global default) exceed their independent providers. */
export function chainsBelowConfirmations(config: OmnigateConfig): { chain: string; confirmations: number; upstreams: number; providers: number }[] {
  return Object.entries(config.chains)
    .map(([chain, c]) => ({ chain, confirmations: c.confirmations, upstreams: c.rpcs.length, providers: countProviders(c.rpcs, c.providers) }))
    .filter((c) => c.confirmations > c.providers);
}

const fieldName = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** `ignoredFields: { block: [..], transaction: [..], receipt: [..], log: [..] }`, each list optional. */
function fieldLists(value: unknown, path: string, report: (p: string, m: string) => void): IgnoredFieldsConfig {
  if (value === undefined || value === null) return {};
  if (!isObj(value)) {
    report(path, 'must be a mapping of shape to field names. Example: ignoredFields: { block: [totalDifficulty], log: [blockTimestamp] }');
    return {};
  }
  unknownKeys(value, shapes, path, report);
  const out: Partial<Record<Shape, string[]>> = {};
  for (const shape of shapes) {
    const list = value[shape];
    if (list === undefined || list === null) continue;
    const where = `${path}.${shape}`;
    if (!Array.isArray(list)) {
      report(where, `must be a list of field names. Example: ${shape}: [${shape === 'log' ? 'blockTimestamp' : 'totalDifficulty'}]`);
      continue;
    }
    out[shape] = [];
    list.forEach((f, i) => {
      if (typeof f !== 'string' || !fieldName.test(f)) return report(`${where}[${i}]`, `${show(f)} is not a field name such as totalDifficulty`);
      out[shape]!.push(f);
    });
  }
  return out;
}

/**
 * `heads: { intervalMs, suspectBlocks, finalityDepth, waitMs }`, globally or per chain; each key
 * optional (lib/health/heads.ts headSettings gives the defaults, some per chain id).
 */
function headsSection(value: unknown, path: string, report: (p: string, m: string) => void): HeadsConfig {
  if (value === undefined || value === null) return {};
  if (!isObj(value)) {
    report(path, `must be a mapping. Example: ${path}: { intervalMs: 4000, waitMs: 12000 }`);
    return {};
  }
  unknownKeys(value, ['intervalMs', 'suspectBlocks', 'finalityDepth', 'waitMs'], path, report);
  const out: { -readonly [K in keyof HeadsConfig]: number } = {};
  const keys: [keyof HeadsConfig, number, number, string][] = [
    ['intervalMs', 100, 3_600_000, 'In milliseconds, between two head polls of each upstream. Example: intervalMs: 4000'],
    ['suspectBlocks', 1, 1_000_000_000, 'Blocks above the chain head (itself at most this far above the median head) that make an upstream suspect. Example: suspectBlocks: 128'],
    ['finalityDepth', 0, 1_000_000_000, 'Blocks below latest taken as safe and finalized where a node has no such tags. Example: finalityDepth: 64'],
    ['waitMs', 0, 600_000, 'In milliseconds, how long a pinned read waits for heads to reach its block. Example: waitMs: 12000'],
  ];
  for (const [key, min, max, hint] of keys) {
    const v = value[key];
    if (v === undefined || v === null) continue;
    if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) report(`${path}.${key}`, `${show(v)} is not an integer from ${min} to ${max}. ${hint}`);
    else out[key] = v;
  }
  return out;
}
