/**
 * The config's type and its validation: raw YAML value → typed config, or the list of every
 * problem, each naming its YAML path and how to fix it. Pure (no file I/O).
 */
import { countProviders } from '../lib/upstream/provider.js';
import { scrubberOf } from '../lib/upstream/redact.js';
import { defaults } from './defaults.js';

export type { HeadsConfig, ConfirmableMethod, ChainConfig, UpstreamLimits, IgnoredFieldsConfig, OmnigateConfig, ConfigProblem } from './types.js';
import type { HeadsConfig, ConfirmableMethod, ChainConfig, UpstreamLimits, IgnoredFieldsConfig, OmnigateConfig, ConfigProblem } from './types.js';
import { fieldLists, headsSection, isObj, methodList, proxyUrl, show, unknownKeys, urlList, urlSecretsIn, writesSection, type Obj } from './sections.js';

const topKeys = ['port', 'confirmations', 'refreshInterval', 'timeouts', 'limits', 'server', 'upstreams', 'redactHeaders', 'disputes', 'confirmableMethods', 'ignoredFields', 'heads', 'chains', 'indexer'];
const chainKeys = ['rpcs', 'confirmations', 'confirmableMethods', 'ignoredFields', 'heads', 'strategy', 'writes', 'batchUpstream'];

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

/** Chains whose confirmations (inherited from the global default) exceed their independent providers. */
export function chainsBelowConfirmations(config: OmnigateConfig): { chain: string; confirmations: number; upstreams: number; providers: number }[] {
  return Object.entries(config.chains)
    .map(([chain, c]) => ({ chain, confirmations: c.confirmations, upstreams: c.rpcs.length, providers: countProviders(c.rpcs, c.providers) }))
    .filter((c) => c.confirmations > c.providers);
}
