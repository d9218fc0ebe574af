/**
 * The config's type and its validation: raw YAML value → typed config, or the list of every
 * problem, each naming its YAML path and how to fix it. Pure (no file I/O).
 */
import { neverConfirmable, pinnedMethods } from '../lib/jsonrpc/methods.js';
import { shapes, type Shape } from '../lib/verify/canonical.js';
import { countProviders, normalizeUpstreamUrl } from '../lib/upstream/provider.js';
import { defaults } from './defaults.js';

export interface ChainConfig {
  /** Upstream URLs, in priority order, normalized (WHATWG form, no fragment, no empty query). */
  readonly rpcs: readonly string[];
  /**
   * Explicit `provider:` labels, by position in rpcs (undefined where the entry is a plain URL);
   * absent when no entry has one. An upstream's identity defaults to its registrable domain.
   */
  readonly providers?: readonly (string | undefined)[];
  readonly confirmations: number;
  readonly confirmableMethods: readonly string[];
  /** Fields left out of the comparison on this chain, added to the global list and the defaults. */
  readonly ignoredFields: IgnoredFieldsConfig;
}

/** Field names per shape (block, transaction, receipt, log) that are not compared. */
export type IgnoredFieldsConfig = Readonly<Partial<Record<Shape, readonly string[]>>>;

export interface OmnigateConfig {
  readonly port: number;
  readonly confirmations: number;
  readonly refreshInterval: number;
  readonly timeouts: { readonly upstreamMs: number; readonly requestMs: number; readonly hedgeMs: number };
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
  /** How HTTP(S) upstreams are reached (lib/upstream/http-transport.ts); optional for configs built in code. */
  readonly upstreams?: { readonly maxSockets: number; readonly keepAliveMs: number; readonly proxy?: string };
  /** When an upstream whose answers lose agreements is distrusted (README "Disputes"). */
  readonly disputes: { readonly window: number; readonly maxLost: number; readonly sampleEvery: number };
  readonly confirmableMethods: readonly string[];
  /** Fields left out of the comparison on every chain, added to the defaults (lib/verify/canonical.ts). */
  readonly ignoredFields: IgnoredFieldsConfig;
  /** Keyed by the chain id in canonical decimal form (exact, never wrapped). */
  readonly chains: Readonly<Record<string, ChainConfig>>;
}

/** One problem: the YAML path and the message. */
export interface ConfigProblem {
  path: string;
  message: string;
}

const topKeys = ['port', 'confirmations', 'refreshInterval', 'timeouts', 'limits', 'server', 'upstreams', 'redactHeaders', 'disputes', 'confirmableMethods', 'ignoredFields', 'chains'];
const chainKeys = ['rpcs', 'confirmations', 'confirmableMethods', 'ignoredFields'];
const aliases: Record<string, string> = { refresh_interval: 'refreshInterval', rpc: 'rpcs', urls: 'rpcs', confirmation: 'confirmations' };
const urlSchemes = new Set(['http:', 'https:', 'ws:', 'wss:']);
const methodName = /^[a-z][a-z0-9]*_[A-Za-z0-9_]+$/;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const show = (v: unknown) => (typeof v === 'bigint' ? v.toString() : JSON.stringify(v));

export function validateConfig(raw: unknown): { config: OmnigateConfig } | { problems: ConfigProblem[] } {
  const problems: ConfigProblem[] = [];
  const report = (path: string, message: string) => problems.push({ path, message });
  if (!isObj(raw)) {
    report('(root)', 'the config must be a YAML mapping with at least a `chains:` key');
    return { problems };
  }
  unknownKeys(raw, topKeys, '', report);

  const int = (obj: Obj, key: string, path: string, fallback: number, min: number, max: number, hint: string): number => {
    const v = obj[key];
    if (v === undefined || v === null) return fallback;
    const n = typeof v === 'bigint' ? Number(v) : v;
    if (typeof n !== 'number' || !Number.isInteger(n) || n < min || n > max) {
      report(path, `${show(v)} is not an integer from ${min} to ${max}. ${hint}`);
      return fallback;
    }
    return n;
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
  unknownKeys(t, ['upstreamMs', 'requestMs', 'hedgeMs'], 'timeouts', report);
  const timeouts = {
    upstreamMs: int(t, 'upstreamMs', 'timeouts.upstreamMs', defaults.timeouts.upstreamMs, 1, 600_000, 'In milliseconds. Example: upstreamMs: 10000'),
    requestMs: int(t, 'requestMs', 'timeouts.requestMs', defaults.timeouts.requestMs, 1, 3_600_000, 'In milliseconds. Example: requestMs: 30000'),
    hedgeMs: int(t, 'hedgeMs', 'timeouts.hedgeMs', defaults.timeouts.hedgeMs, 0, 600_000, 'In milliseconds, 0 turns hedging off. Example: hedgeMs: 1000'),
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
  unknownKeys(ds, ['window', 'maxLost', 'sampleEvery'], 'disputes', report);
  const disputeWindow = int(ds, 'window', 'disputes.window', defaults.disputes.window, 1, 10_000, 'The votes remembered per upstream. Example: window: 20');
  const disputes = {
    window: disputeWindow,
    maxLost: int(ds, 'maxLost', 'disputes.maxLost', Math.min(defaults.disputes.maxLost, disputeWindow), 0, disputeWindow, `Lost votes (of the last disputes.window = ${disputeWindow}) that make an upstream distrusted, 0 never. Example: maxLost: 5`),
    sampleEvery: int(ds, 'sampleEvery', 'disputes.sampleEvery', defaults.disputes.sampleEvery, 1, 1_000_000, 'One verified request in this many takes a distrusted upstream as a voter. Example: sampleEvery: 10'),
  };
  const confirmableMethods = methodList(raw.confirmableMethods, 'confirmableMethods', report);
  const ignoredFields = fieldLists(raw.ignoredFields, 'ignoredFields', report);

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
      const { urls: rpcs, providers } = urlList(value.rpcs, `${path}.rpcs`, report);
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
        confirmations: chainConfirmations,
        confirmableMethods: methodList(value.confirmableMethods, `${path}.confirmableMethods`, report),
        ignoredFields: fieldLists(value.ignoredFields, `${path}.ignoredFields`, report),
      };
    }
  }
  if (problems.length > 0) return { problems };
  return { config: { port, confirmations, refreshInterval, timeouts, limits, server, upstreams, redactHeaders, disputes, confirmableMethods, ignoredFields, chains } };
}

/** `upstreams.proxy`: an http:// or https:// URL (empty or absent: none; the environment's HTTPS_PROXY, HTTP_PROXY, NO_PROXY apply). */
function proxyUrl(v: unknown, report: (p: string, m: string) => void): { proxy?: string } {
  if (v === undefined || v === null || v === '') return {};
  const hint = 'Use an http:// or https:// proxy URL, e.g. proxy: http://proxy.internal:3128';
  if (typeof v !== 'string') {
    report('upstreams.proxy', `${show(v)} is not a URL. ${hint}`);
    return {};
  }
  let url: URL;
  try {
    url = new URL(v);
  } catch {
    report('upstreams.proxy', `${JSON.stringify(v)} is not a URL. ${hint}`);
    return {};
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    report('upstreams.proxy', `the ${url.protocol} scheme is not supported. ${hint}`);
    return {};
  }
  return { proxy: v };
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
function urlList(value: unknown, path: string, report: (p: string, m: string) => void): { urls: string[]; providers: (string | undefined)[] } {
  const urls: string[] = [];
  const providers: (string | undefined)[] = [];
  if (!Array.isArray(value) || value.length === 0) {
    report(path, 'must be a non-empty list of upstream URLs. Example: rpcs: ["https://rpc.example/v1/KEY", "wss://ws.example/KEY"]');
    return { urls, providers };
  }
  const seen = new Map<string, number>();
  value.forEach((entry, i) => {
    const where = `${path}[${i}]`;
    let item: unknown = entry;
    let provider: string | undefined;
    if (isObj(entry)) {
      unknownKeys(entry, ['url', 'provider'], where, report);
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
    if (typeof item !== 'string') return report(at, `${show(item)} is not a URL string`);
    const url = normalizeUpstreamUrl(item);
    if (!url || !urlSchemes.has(url.protocol) || !url.hostname) {
      return report(at, `"${item}" is not an http(s)/ws(s) URL. Example: "https://rpc.example/v1/KEY"`);
    }
    if (/\$\{|%7B/i.test(item)) return report(at, `"${item}" is a template: put the real key in place of the \${…} placeholder`);
    const first = seen.get(url.href);
    if (first !== undefined) {
      return report(at, `"${item}" is listed twice (the same URL as ${path}[${first}] once the case, default port, fragment and empty query are ignored): a duplicate would vote twice, remove one`);
    }
    seen.set(url.href, i);
    // The WHATWG-normalized form: also what makes a non-ASCII path (or an IDN host) fit a
    // request line and a header (percent-encoded, punycode).
    urls.push(url.href);
    providers.push(provider);
  });
  return { urls, providers };
}

function methodList(value: unknown, path: string, report: (p: string, m: string) => void): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) {
    report(path, 'must be a list of method names. Example: confirmableMethods: [eth_getBlockByHash, eth_getTransactionReceipt]');
    return [];
  }
  const out: string[] = [];
  value.forEach((m, i) => {
    const where = `${path}[${i}]`;
    if (typeof m !== 'string' || !methodName.test(m)) return report(where, `${show(m)} is not a JSON-RPC method name such as eth_getBlockByHash`);
    if (neverConfirmable.has(m)) return report(where, `${m} is never confirmable: its answer depends on the chain head or the node`);
    if (pinnedMethods.includes(m)) return report(where, `${m} is already confirmable when pinned to a block: remove it from the list`);
    out.push(m);
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
