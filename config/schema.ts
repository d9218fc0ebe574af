/**
 * The config's type and its validation: raw YAML value → typed config, or the list of every
 * problem, each naming its YAML path and how to fix it. Pure (no file I/O).
 */
import { countProviders } from '../lib/upstream/provider.js';
import { scrubberOf } from '../lib/upstream/redact.js';
import { defaults } from './defaults.js';

export type { HeadsConfig, ConfirmableMethod, ChainConfig, UpstreamLimits, IgnoredFieldsConfig, OmnigateConfig, ConfigProblem } from './types.js';
import type { ChainConfig, OmnigateConfig, ConfigProblem, VerifyMode } from './types.js';
import { isIP } from 'node:net';
import { accessSection } from './access.js';
import { attestSection } from './attest.js';
import { fieldLists, headsSection, isObj, methodList, proxyUrl, show, unknownKeys, urlList, urlSecretsIn, writesSection, type Obj } from './sections.js';

const topKeys = ['port', 'host', 'confirmations', 'refreshInterval', 'timeouts', 'limits', 'server', 'upstreams', 'redactHeaders', 'mergeRequests', 'cache', 'disputes', 'confirmableMethods', 'ignoredFields', 'heads', 'verify', 'chains', 'indexer', 'access', 'attest'];
const chainKeys = ['rpcs', 'confirmations', 'confirmableMethods', 'ignoredFields', 'heads', 'strategy', 'writes', 'batchUpstream', 'verify'];

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

export interface ValidateOptions {
  /**
   * The YAML paths of the values whose `${` was written `$${` (config/env.ts): a literal, not a
   * template left unfilled, so an upstream URL there may hold one.
   */
  literal?: ReadonlySet<string>;
}

export function validateConfig(input: unknown, options: ValidateOptions = {}): { config: OmnigateConfig } | { problems: ConfigProblem[] } {
  const problems: ConfigProblem[] = [];
  const raw = exactNumbers(input);
  const r = reader(raw, (path, message) => problems.push({ path, message }), options.literal ?? new Set());
  if (!isObj(raw)) {
    r.report('(root)', 'the config must be a YAML mapping with at least a `chains:` key');
    return { problems };
  }
  // A top-level `x-…` key is the file's own (docker-compose's convention): a place for `&anchors`
  // that chains merge (`<<: *defaults`), read by no one.
  unknownKeys(Object.fromEntries(Object.entries(raw).filter(([key]) => !key.startsWith('x-'))), topKeys, '', r.report);
  const port = r.int(raw, 'port', 'port', defaults.port, 0, 65535, 'Example: port: 5000');
  const host = hostOf(raw.host, r.report);
  const confirmations = r.int(raw, 'confirmations', 'confirmations', defaults.confirmations, 1, 1000, 'Example: confirmations: 2');
  const refreshInterval = r.int(raw, 'refreshInterval', 'refreshInterval', defaults.refreshInterval, 1, 86_400, 'It is in seconds. Example: refreshInterval: 60');
  const timeouts = timeoutsOf(r);
  const limits = limitsOf(r);
  const server = serverOf(r);
  const upstreams = upstreamsOf(r);
  const flag = (key: 'redactHeaders' | 'mergeRequests', fallback: boolean): boolean => {
    const value = raw[key];
    if (value === undefined || value === null) return fallback;
    if (typeof value !== 'boolean') {
      r.report(key, `${show(value)} is not true or false. Example: ${key}: ${fallback}`);
      return fallback;
    }
    return value;
  };
  const redactHeaders = flag('redactHeaders', defaults.redactHeaders);
  const mergeRequests = flag('mergeRequests', defaults.mergeRequests);
  const cache = cacheOf(r);
  const disputes = disputesOf(r);
  const indexer = indexerOf(r);
  const confirmableMethods = methodList(raw.confirmableMethods, 'confirmableMethods', r.report);
  const ignoredFields = fieldLists(raw.ignoredFields, 'ignoredFields', r.report);
  const heads = headsSection(raw.heads, 'heads', r.report);
  const verify = verifyModeOf(raw.verify, 'verify', defaults.verify, r.report);
  const chains = chainsOf(r, confirmations, verify);
  const access = accessSection(raw.access, r.report);
  const attest = attestSection(raw.attest, r.report);
  for (const id of attest?.chains ?? []) if (Object.keys(chains).length > 0 && !Object.hasOwn(chains, id)) r.report('attest.chains', `chain ${id} is not configured (chains: ${Object.keys(chains).join(', ')})`);
  // A right naming a chain the config does not serve is a typo, not a right.
  const rightsAt: [string, { chains?: readonly string[] } | undefined][] = [['access.anonymous', access?.anonymous], ...(access?.keys ?? []).map((k, i): [string, typeof k] => [`access.keys[${i}]`, k])];
  for (const [path, rights] of rightsAt) {
    for (const id of rights?.chains ?? []) if (Object.keys(chains).length > 0 && !Object.hasOwn(chains, id)) r.report(`${path}.chains`, `chain ${id} is not configured (chains: ${Object.keys(chains).join(', ')})`);
  }
  if (problems.length > 0) {
    // A URL in the wrong place (a value quoted by a problem, or a key named in its path) still
    // holds its provider key: the secret parts of every URL in the document are masked.
    const scrub = scrubberOf(urlSecretsIn(raw));
    return { problems: problems.map((p) => ({ path: scrub(p.path), message: scrub(p.message) })) };
  }
  return { config: { port, ...(host !== undefined && { host }), ...(access && { access }), ...(attest && { attest }), confirmations, refreshInterval, timeouts, limits, server, upstreams, redactHeaders, mergeRequests, cache, disputes, indexer, confirmableMethods, ignoredFields, heads, verify, chains } };
}

/** `host`: an IP address or a host name to listen on (absent: every interface). */
function hostOf(value: unknown, report: (path: string, message: string) => void, path = 'host'): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string' && (isIP(value) !== 0 || /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,62})(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}))*$/.test(value))) return value;
  report(path, `${show(value)} is not an address to listen on: an IP address or a host name. Example: host: 127.0.0.1 (this machine only), host: 0.0.0.0 (every interface, e.g. in a container)`);
  return undefined;
}

/** How the section readers read the raw document: each value checked, each problem reported with its path. */
interface Reader {
  raw: Obj;
  report: (path: string, message: string) => void;
  /** ValidateOptions.literal. */
  literal: ReadonlySet<string>;
  /** A whole number from min to max, or the fallback (absent, or reported). */
  int(obj: Obj, key: string, path: string, fallback: number, min: number, max: number, hint: string): number;
  /** A number from min to max (a share, a quantile), or the fallback. */
  share(obj: Obj, key: string, path: string, fallback: number, min: number, max: number, hint: string): number;
  /** A top-level mapping, or {} (absent, or reported). */
  section(key: string): Obj;
}

function reader(raw: unknown, report: Reader['report'], literal: ReadonlySet<string>): Reader {
  const inRange = (integer: boolean) => (obj: Obj, key: string, path: string, fallback: number, min: number, max: number, hint: string): number => {
    const v = obj[key];
    if (v === undefined || v === null) return fallback;
    if (typeof v !== 'number' || !(integer ? Number.isInteger(v) : Number.isFinite(v)) || v < min || v > max) {
      report(path, `${show(v)} is not ${integer ? 'an integer' : 'a number'} from ${min} to ${max}. ${hint}`);
      return fallback;
    }
    return v;
  };
  const doc: Obj = isObj(raw) ? raw : {};
  return {
    raw: doc,
    literal,
    report,
    int: inRange(true),
    share: inRange(false),
    section(key) {
      const v = doc[key];
      if (v === undefined || v === null) return {};
      if (!isObj(v)) {
        report(key, `must be a mapping, got ${show(v)}`);
        return {};
      }
      return v;
    },
  };
}

function timeoutsOf(r: Reader): OmnigateConfig['timeouts'] {
  const t = r.section('timeouts');
  unknownKeys(t, ['upstreamMs', 'requestMs', 'hedgeMs', 'hedgeMinMs', 'hedgeMaxMs', 'hedgeQuantile', 'hedgeBudget', 'sendMs'], 'timeouts', r.report);
  const d = defaults.timeouts;
  const hedgeMinMs = r.int(t, 'hedgeMinMs', 'timeouts.hedgeMinMs', d.hedgeMinMs, 0, 600_000, 'The adaptive hedge delay never goes below it, in milliseconds. Example: hedgeMinMs: 20');
  return {
    upstreamMs: r.int(t, 'upstreamMs', 'timeouts.upstreamMs', d.upstreamMs, 1, 600_000, 'In milliseconds. Example: upstreamMs: 10000'),
    requestMs: r.int(t, 'requestMs', 'timeouts.requestMs', d.requestMs, 1, 3_600_000, 'In milliseconds. Example: requestMs: 30000'),
    hedgeMs: r.int(t, 'hedgeMs', 'timeouts.hedgeMs', d.hedgeMs, 0, 600_000, 'In milliseconds, 0 turns hedging off. Example: hedgeMs: 1000'),
    hedgeAdaptive: t.hedgeMs === undefined || t.hedgeMs === null,
    hedgeMinMs,
    hedgeMaxMs: r.int(t, 'hedgeMaxMs', 'timeouts.hedgeMaxMs', Math.max(d.hedgeMaxMs, hedgeMinMs), hedgeMinMs, 600_000, `The adaptive hedge delay never goes above it, in milliseconds (at least timeouts.hedgeMinMs = ${hedgeMinMs}). Example: hedgeMaxMs: 1000`),
    hedgeQuantile: r.share(t, 'hedgeQuantile', 'timeouts.hedgeQuantile', d.hedgeQuantile, 0.5, 0.999, 'The quantile of answered calls the adaptive hedge delay follows. Example: hedgeQuantile: 0.9'),
    hedgeBudget: r.share(t, 'hedgeBudget', 'timeouts.hedgeBudget', d.hedgeBudget, 0, 1, 'Hedged calls at most, as a share of first calls (0.1 = 10 %). Example: hedgeBudget: 0.1'),
    sendMs: r.int(t, 'sendMs', 'timeouts.sendMs', d.sendMs, 0, 3_600_000, 'Time a client has to take a written answer, in milliseconds, 0 for no limit. Example: sendMs: 60000'),
  };
}

function limitsOf(r: Reader): OmnigateConfig['limits'] {
  const l = r.section('limits');
  unknownKeys(l, ['bodyBytes', 'batchSize', 'responseBytes', 'jsonDepth', 'bufferedBytes', 'probeConcurrency', 'upstreamSockets'], 'limits', r.report);
  const d = defaults.limits;
  const limits = {
    bodyBytes: r.int(l, 'bodyBytes', 'limits.bodyBytes', d.bodyBytes, 1, 1 << 30, 'In bytes. Example: bodyBytes: 5242880'),
    batchSize: r.int(l, 'batchSize', 'limits.batchSize', d.batchSize, 1, 100_000, 'Example: batchSize: 100'),
    responseBytes: r.int(l, 'responseBytes', 'limits.responseBytes', d.responseBytes, 1, 1 << 30, 'In bytes. Example: responseBytes: 67108864'),
    jsonDepth: r.int(l, 'jsonDepth', 'limits.jsonDepth', d.jsonDepth, 1, 2048, 'Nesting levels of arrays and objects. Example: jsonDepth: 256'),
    bufferedBytes: r.int(l, 'bufferedBytes', 'limits.bufferedBytes', d.bufferedBytes, 1, 2 ** 40, 'In bytes. Example: bufferedBytes: 268435456'),
    probeConcurrency: r.int(l, 'probeConcurrency', 'limits.probeConcurrency', d.probeConcurrency, 1, 10_000, 'Upstreams probed at once. Example: probeConcurrency: 32'),
    upstreamSockets: r.int(l, 'upstreamSockets', 'limits.upstreamSockets', d.upstreamSockets, 1, 1_000_000, 'HTTP(S) upstream sockets open at once, all upstreams together. Example: upstreamSockets: 256'),
  };
  if (limits.bufferedBytes < limits.responseBytes) {
    r.report('limits.bufferedBytes', `${limits.bufferedBytes} is below limits.responseBytes (${limits.responseBytes}): one answer of the largest size could never be read. Raise it, e.g. bufferedBytes: ${Math.max(limits.responseBytes * 4, d.bufferedBytes)}`);
  }
  return limits;
}

function serverOf(r: Reader): OmnigateConfig['server'] {
  const sv = r.section('server');
  unknownKeys(sv, ['headersTimeoutMs', 'requestTimeoutMs', 'keepAliveTimeoutMs', 'shutdownMs', 'workers', 'admin'], 'server', r.report);
  const d = defaults.server;
  const workers = sv.workers === 'auto' ? 'auto' : r.int(sv, 'workers', 'server.workers', d.workers === 'auto' ? 1 : d.workers, 1, 1024, 'A count of processes, or auto for the cores. Example: workers: auto');
  const admin = adminOf(sv.admin, r);
  return {
    headersTimeoutMs: r.int(sv, 'headersTimeoutMs', 'server.headersTimeoutMs', d.headersTimeoutMs, 1, 600_000, 'In milliseconds. Example: headersTimeoutMs: 10000'),
    requestTimeoutMs: r.int(sv, 'requestTimeoutMs', 'server.requestTimeoutMs', d.requestTimeoutMs, 0, 3_600_000, 'In milliseconds, 0 for timeouts.requestMs + 30 s. Example: requestTimeoutMs: 60000'),
    keepAliveTimeoutMs: r.int(sv, 'keepAliveTimeoutMs', 'server.keepAliveTimeoutMs', d.keepAliveTimeoutMs, 1, 600_000, 'In milliseconds. Example: keepAliveTimeoutMs: 5000'),
    shutdownMs: r.int(sv, 'shutdownMs', 'server.shutdownMs', d.shutdownMs, 0, 600_000, 'In milliseconds. Example: shutdownMs: 10000'),
    workers,
    ...(admin && { admin }),
  };
}

/** `server.admin`: the admin listener's port and address (default 127.0.0.1: this machine only); absent: none. */
function adminOf(value: unknown, r: Reader): { port: number; host: string } | undefined {
  if (value === undefined || value === null) return undefined;
  if (!isObj(value)) {
    r.report('server.admin', `${show(value)} is not a mapping. Example: admin: { port: 9090, host: 127.0.0.1 }`);
    return undefined;
  }
  unknownKeys(value, ['port', 'host'], 'server.admin', r.report);
  if (value.port === undefined || value.port === null) {
    r.report('server.admin.port', 'is required: the port /chains and /metrics are served on. Example: admin: { port: 9090 }');
    return undefined;
  }
  const port = r.int(value, 'port', 'server.admin.port', 0, 0, 65535, 'Example: admin: { port: 9090 } (0 picks a free port)');
  const host = value.host === undefined || value.host === null ? adminDefaultHost : hostOf(value.host, r.report, 'server.admin.host');
  return host === undefined ? undefined : { port, host };
}

/** Where the admin listener binds when `server.admin.host` is absent: loopback, as /chains and /metrics show the topology. */
export const adminDefaultHost = '127.0.0.1';

function upstreamsOf(r: Reader): NonNullable<OmnigateConfig['upstreams']> {
  const up = r.section('upstreams');
  unknownKeys(up, ['client', 'maxSockets', 'keepAliveMs', 'proxy'], 'upstreams', r.report);
  const client = up.client ?? defaults.upstreams.client;
  if (client !== 'auto' && client !== 'node' && client !== 'undici') {
    r.report(
      'upstreams.client',
      `${show(client)} is not an HTTP client: use auto (undici, or node:http when nock or OpenTelemetry's http instrumentation intercepts it), node (node:http) or undici. Example: client: node`,
    );
  }
  return {
    client: client === 'node' || client === 'undici' ? client : 'auto',
    maxSockets: r.int(up, 'maxSockets', 'upstreams.maxSockets', defaults.upstreams.maxSockets, 1, 100_000, 'Sockets open at once per upstream. Example: maxSockets: 128'),
    keepAliveMs: r.int(up, 'keepAliveMs', 'upstreams.keepAliveMs', defaults.upstreams.keepAliveMs, 1, 3_600_000, 'How long an idle socket stays open, in milliseconds. Example: keepAliveMs: 30000'),
    ...proxyUrl(up.proxy, r.report),
  };
}

/** `cache:` the cache of confirmed answers (lib/cache): this process's memory, and Redis when `cache.redis` is set. */
function cacheOf(r: Reader): NonNullable<OmnigateConfig['cache']> {
  const cs = r.section('cache');
  unknownKeys(cs, ['memoryBytes', 'redis'], 'cache', r.report);
  const memoryBytes = r.int(cs, 'memoryBytes', 'cache.memoryBytes', defaults.cache.memoryBytes, 0, 2 ** 40, 'In bytes, in this process; 0 keeps nothing in memory. Example: memoryBytes: 67108864');
  if (cs.redis === undefined || cs.redis === null) return { memoryBytes };
  if (!isObj(cs.redis)) {
    r.report('cache.redis', `must be a mapping, got ${show(cs.redis)}. Example: redis: { url: redis://127.0.0.1:6379, hmacKey: \${OMNIGATE_CACHE_KEY} }`);
    return { memoryBytes };
  }
  const rs = cs.redis;
  unknownKeys(rs, ['url', 'prefix', 'ttlSeconds', 'maxBytes', 'timeoutMs', 'hmacKey'], 'cache.redis', r.report);
  const d = defaults.cache.redis;
  let url = '';
  if (typeof rs.url !== 'string' || !URL.canParse(rs.url) || !/^rediss?:$/.test(new URL(rs.url).protocol)) {
    r.report('cache.redis.url', `${typeof rs.url === 'string' ? 'is not a redis:// or rediss:// URL' : `${show(rs.url)} is not a URL`} (its value is not shown: it may hold a password). Example: url: redis://127.0.0.1:6379/0`);
  } else url = rs.url;
  let prefix: string = d.prefix;
  if (rs.prefix !== undefined && rs.prefix !== null) {
    if (typeof rs.prefix !== 'string' || rs.prefix.length > 100) r.report('cache.redis.prefix', `${show(rs.prefix)} is not a string of at most 100 characters. One per deployment. Example: prefix: "omnigate:prod:"`);
    else prefix = rs.prefix;
  }
  let hmacKey = '';
  if (typeof rs.hmacKey !== 'string' || rs.hmacKey.length < 16) {
    r.report('cache.redis.hmacKey', 'is missing or shorter than 16 characters (its value is not shown): entries in Redis are authenticated under it, so that a damaged value or a writer without the key cannot plant an answer; every replica sharing the Redis needs the same. Example: hmacKey: ${OMNIGATE_CACHE_KEY} (e.g. openssl rand -hex 32)');
  } else hmacKey = rs.hmacKey;
  return {
    memoryBytes,
    redis: {
      url,
      prefix,
      hmacKey,
      ttlSeconds: r.int(rs, 'ttlSeconds', 'cache.redis.ttlSeconds', d.ttlSeconds, 1, 365 * 86_400, 'Each answer expires after this many seconds. Example: ttlSeconds: 86400'),
      maxBytes: r.int(rs, 'maxBytes', 'cache.redis.maxBytes', d.maxBytes, 1_048_576, 2 ** 40, 'Writes pause while Redis uses more memory than this (bytes). Example: maxBytes: 268435456'),
      timeoutMs: r.int(rs, 'timeoutMs', 'cache.redis.timeoutMs', d.timeoutMs, 1, 10_000, 'The longest a lookup waits for Redis before asking the upstreams. Example: timeoutMs: 50'),
    },
  };
}

function disputesOf(r: Reader): OmnigateConfig['disputes'] {
  const ds = r.section('disputes');
  unknownKeys(ds, ['window', 'maxLost', 'sampleEvery', 'file', 'fileMaxBytes'], 'disputes', r.report);
  let file: string | undefined;
  if (ds.file !== undefined && ds.file !== null) {
    if (typeof ds.file !== 'string' || ds.file.trim() === '' || ds.file.includes('\0')) {
      r.report('disputes.file', `${show(ds.file)} is not a file path. Example: file: /var/log/omnigate/disputes.jsonl (leave it out to record no file)`);
    } else file = ds.file;
  }
  const d = defaults.disputes;
  const window = r.int(ds, 'window', 'disputes.window', d.window, 1, 10_000, 'The votes remembered per upstream. Example: window: 20');
  return {
    window,
    maxLost: r.int(ds, 'maxLost', 'disputes.maxLost', Math.min(d.maxLost, window), 0, window, `Lost votes (of the last disputes.window = ${window}) that make an upstream distrusted, 0 never. Example: maxLost: 5`),
    sampleEvery: r.int(ds, 'sampleEvery', 'disputes.sampleEvery', d.sampleEvery, 1, 1_000_000, 'One verified request in this many takes a distrusted upstream as a voter. Example: sampleEvery: 10'),
    ...(file !== undefined && { file }),
    fileMaxBytes: r.int(ds, 'fileMaxBytes', 'disputes.fileMaxBytes', d.fileMaxBytes, 1024, 2 ** 40, 'In bytes; the file is rotated to <file>.1 before it passes this. Example: fileMaxBytes: 104857600'),
  };
}

/** The largest unix time in seconds the lookback floor may be (Ponder's blockTimestamp is an int4). */
const maxUnixSeconds = 2_147_483_647;

/**
 * `indexer:`. `schema`: where Ponder ≥0.7 writes (its --schema) or publishes views
 * (--views-schema); the others as their environment variables (lib/indexer/env.ts), which
 * override them. Absent keys stay absent: the indexer's own defaults apply.
 */
function indexerOf(r: Reader): OmnigateConfig['indexer'] {
  const ix = r.section('indexer');
  unknownKeys(ix, ['schema', 'statementTimeoutMs', 'connectTimeoutMs', 'lookbackFloor', 'statsIntervalSeconds'], 'indexer', r.report);
  const indexer: { -readonly [K in keyof OmnigateConfig['indexer']]: OmnigateConfig['indexer'][K] } = {};
  if (ix.schema !== undefined && ix.schema !== null) {
    if (typeof ix.schema !== 'string' || !/^[A-Za-z_][\w$]{0,62}$/.test(ix.schema)) {
      r.report('indexer.schema', `${show(ix.schema)} is not a PostgreSQL schema name; give the schema Ponder writes to (its --schema, or --views-schema). Example: schema: rfq`);
    } else indexer.schema = ix.schema;
  }
  const numbers: [key: 'statementTimeoutMs' | 'connectTimeoutMs' | 'lookbackFloor' | 'statsIntervalSeconds', min: number, max: number, hint: string][] = [
    ['statementTimeoutMs', 1, 3_600_000, 'A slower query answers 503, in milliseconds. Example: statementTimeoutMs: 5000'],
    ['connectTimeoutMs', 1, 600_000, 'A dead database answers 503 after it, in milliseconds. Example: connectTimeoutMs: 2000'],
    ['lookbackFloor', 0, maxUnixSeconds, 'Unix time in seconds (not milliseconds): older requests are left out of the request-based lists. Example: lookbackFloor: 1700000000'],
    ['statsIntervalSeconds', 1, 86_400, 'Seconds between refreshes of the indexer\'s gauges. Example: statsIntervalSeconds: 30'],
  ];
  for (const [key, min, max, hint] of numbers) {
    if (ix[key] === undefined || ix[key] === null) continue;
    const v = r.int(ix, key, `indexer.${key}`, Number.NaN, min, max, hint);
    if (!Number.isNaN(v)) indexer[key] = v;
  }
  return indexer;
}

function chainsOf(r: Reader, confirmations: number, verify: VerifyMode): Record<string, ChainConfig> {
  const chains: Record<string, ChainConfig> = {};
  const rawChains = r.raw.chains;
  if (!isObj(rawChains) || Object.keys(rawChains).length === 0) {
    // A list (`chains: [1, 10]`) is the usual slip: say it is a mapping, not that there is none.
    const what = Array.isArray(rawChains) ? 'must be a mapping of chain id to its upstreams, not a list' : 'needs at least one chain';
    r.report('chains', `${what}. Example:\n      chains:\n        1:\n          rpcs: ["https://rpc.example/v1/KEY"]`);
    return chains;
  }
  const seenIds = new Set<string>();
  for (const [key, value] of Object.entries(rawChains)) {
    const path = `chains.${key}`;
    if (!/^\d+$/.test(key)) {
      r.report(path, `"${key}" is not a chain id: use the decimal chain id as the key, e.g. chains.1 for Ethereum mainnet`);
      continue;
    }
    const id = BigInt(key).toString();
    if (chains[id] !== undefined || seenIds.has(id)) {
      r.report(path, `chain ${id} is listed twice (as "${key}" and another spelling): merge the two entries`);
      continue;
    }
    seenIds.add(id);
    if (!isObj(value)) {
      r.report(path, 'must be a mapping with an `rpcs:` list');
      continue;
    }
    chains[id] = chainOf(r, path, value, confirmations, verify);
  }
  return chains;
}

function chainOf(r: Reader, path: string, value: Obj, confirmations: number, verify: VerifyMode): ChainConfig {
  const report = r.report;
  unknownKeys(value, chainKeys, path, report);
  const { urls: rpcs, providers, upstreamLimits, complete } = urlList(value.rpcs, `${path}.rpcs`, report, r.literal);
  const strategy = value.strategy ?? defaults.strategy;
  if (strategy !== 'balanced' && strategy !== 'priority') {
    report(`${path}.strategy`, `${show(strategy)} is not a strategy: use balanced (spread N=1 requests over the best upstreams) or priority (the first healthy one in list order)`);
  }
  const batchUpstream = value.batchUpstream ?? true;
  if (typeof batchUpstream !== 'boolean') {
    report(`${path}.batchUpstream`, `${show(batchUpstream)} is not true or false: true (default) sends a batch's calls to an upstream as one batch, false one by one (for providers that refuse batches)`);
  }
  const chainConfirmations = r.int(value, 'confirmations', `${path}.confirmations`, confirmations, 1, 1000, 'Example: confirmations: 2');
  // Only the chain's own key is an error: a global default above a small chain is a warning
  // at start-up (chainsBelowConfirmations) and a -32003 on its confirmable requests. What
  // counts is independent providers (one vote each), not URLs.
  const explicit = value.confirmations !== undefined && value.confirmations !== null;
  const independent = rpcs.length > 0 ? countProviders(rpcs, providers) : 0;
  if (explicit && complete && independent > 0 && chainConfirmations > independent) {
    const of = independent === rpcs.length ? `rpcs has ${rpcs.length}` : `rpcs has ${rpcs.length} upstreams of ${independent} providers (one vote each)`;
    report(`${path}.confirmations`, `${chainConfirmations} confirmations need at least ${chainConfirmations} upstreams of distinct providers, but ${of}: add upstreams or lower it`);
  }
  return {
    rpcs,
    ...(providers.some((p) => p !== undefined) ? { providers } : {}),
    ...(upstreamLimits.some((l) => Object.keys(l).length > 0) ? { upstreamLimits } : {}),
    strategy: strategy === 'priority' ? 'priority' : 'balanced',
    verify: verifyModeOf(value.verify, `${path}.verify`, verify, report),
    confirmations: chainConfirmations,
    confirmableMethods: methodList(value.confirmableMethods, `${path}.confirmableMethods`, report),
    ignoredFields: fieldLists(value.ignoredFields, `${path}.ignoredFields`, report),
    heads: headsSection(value.heads, `${path}.heads`, report),
    ...writesSection(value.writes, `${path}.writes`, complete ? rpcs.length : 0, report),
    ...(batchUpstream === false && { batchUpstream: false as const }),
  };
}

/**
 * `verify: agreement | proof | auto`: how a chain's confirmable reads are vouched for
 * (lib/prove/README.md): N agreeing answers; answers proven against a header N agreed on; or
 * proofs once the chain's quirks allow them and its self-check passed, agreement until then.
 */
function verifyModeOf(value: unknown, path: string, fallback: VerifyMode, report: (path: string, message: string) => void): VerifyMode {
  if (value === undefined || value === null) return fallback;
  if (value === 'agreement' || value === 'proof' || value === 'auto') return value;
  report(path, `${show(value)} is not a verify mode: use agreement (N agreeing answers), proof (answers proven against a header N providers agreed on) or auto (proof where the chain allows it and its self-check passed)`);
  return fallback;
}

/** Chains whose confirmations (inherited from the global default) exceed their independent providers. */
export function chainsBelowConfirmations(config: OmnigateConfig): { chain: string; confirmations: number; upstreams: number; providers: number }[] {
  return Object.entries(config.chains)
    .map(([chain, c]) => ({ chain, confirmations: c.confirmations, upstreams: c.rpcs.length, providers: countProviders(c.rpcs, c.providers) }))
    .filter((c) => c.confirmations > c.providers);
}
