/**
 * The validators of the config's sections and values (config/schema.ts validateConfig calls them):
 * each reads one raw YAML value and reports every problem with its YAML path and the fix, and the
 * shared ways a problem quotes a value (a URL with its secrets masked, a list by its kind only).
 */
import { declaredMethod } from '../lib/jsonrpc/methods.js';
import { shapes } from '../lib/verify/answers/compared-fields.js';
import { normalizeUpstreamUrl } from '../lib/upstream/provider.js';
import { redactUrl, secretsOf } from '../lib/upstream/redact.js';
import { userInfoDecodes } from '../lib/upstream/transport/call.js';
import type { Shape } from '../lib/verify/answers/compared-fields.js';
import type { ConfirmableMethod, HeadsConfig, IgnoredFieldsConfig, UpstreamLimits } from './types.js';

/** Misspellings users write for a key, and the key they mean. */
export const aliases: Record<string, string> = { refresh_interval: 'refreshInterval', rpc: 'rpcs', urls: 'rpcs', confirmation: 'confirmations' };
const urlSchemes = new Set(['http:', 'https:', 'ws:', 'wss:']);

export type Obj = Record<string, unknown>;
export const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
export const show = (v: unknown) => (typeof v === 'bigint' ? v.toString() : JSON.stringify(v));
/**
 * A URL as a problem quotes it: with its secret parts masked (redact.ts redactUrl), or not at
 * all when it does not parse (no telling the key from the rest). The path and line name it.
 */
export const showUrl = (text: string) => (URL.canParse(text) ? JSON.stringify(redactUrl(text)) : 'the value (not shown: it may hold a key)');
/** A value where a URL string belongs, as a problem names it: a list or a mapping by its kind only. */
export const showNotUrl = (v: unknown) => (Array.isArray(v) ? 'a list' : isObj(v) ? 'a mapping' : show(v));

/**
 * The secret parts (redact.ts secretsOf) of every `scheme://…` URL in a raw config, keys included.
 * Each list and mapping is read once (a YAML alias may make one hold itself).
 */
export function urlSecretsIn(value: unknown, out: string[] = [], seen = new Set<object>()): string[] {
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
export function proxyUrl(v: unknown, report: (p: string, m: string) => void): { proxy?: string } {
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
  if (!userInfoDecodes(url)) {
    report('upstreams.proxy', `the value (not shown: it may hold a password) has a user or password with a % that is not a percent escape: write a % in it as %25`);
    return {};
  }
  return { proxy: v };
}

/** `chains.<id>.writes: { broadcast: all | <K> | off }` → `{ writes: { broadcast } }`, or nothing when off. */
export function writesSection(value: unknown, path: string, upstreams: number, report: (p: string, m: string) => void): { writes?: { broadcast: number } } {
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

export function unknownKeys(obj: Obj, known: readonly string[], base: string, report: (p: string, m: string) => void): void {
  for (const key of Object.keys(obj)) {
    if (known.includes(key)) continue;
    const path = base ? `${base}.${key}` : key;
    const alias = Object.hasOwn(aliases, key) ? aliases[key] : undefined;
    const near = alias && known.includes(alias) ? alias : known.find((k) => k.toLowerCase() === key.toLowerCase());
    report(path, `unknown key${near ? `: did you mean "${near}"?` : `; known keys here: ${known.join(', ')}`}`);
  }
}

export const providerLabel = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,63}$/;

/**
 * The rpcs list: each entry a URL string or `{ url, provider }`. URLs are normalized
 * (normalizeUpstreamUrl); two entries equal once normalized are an error, not merged: the user
 * meant two voters and has one. Every problem of an entry is reported (a bad weight does not hide
 * a bad maxRps); `complete` is false when any entry had one, so that the checks that count the
 * upstreams (a chain's confirmations, writes.broadcast) do not count a list short of the entries
 * already reported, which would add a false "rpcs has 2" to a file that lists 3.
 */
export function urlList(value: unknown, path: string, report: (p: string, m: string) => void, literal: ReadonlySet<string> = new Set()): { urls: string[]; providers: (string | undefined)[]; upstreamLimits: UpstreamLimits[]; complete: boolean } {
  const urls: string[] = [];
  const providers: (string | undefined)[] = [];
  const upstreamLimits: UpstreamLimits[] = [];
  let complete = true;
  const outer = report;
  report = (p, m) => {
    complete = false;
    outer(p, m);
  };
  if (!Array.isArray(value) || value.length === 0) {
    report(path, 'must be a non-empty list of upstream URLs. Example: rpcs: ["https://rpc.example/v1/KEY", "wss://ws.example/KEY"]');
    return { urls, providers, upstreamLimits, complete };
  }
  const seen = new Map<string, number>();
  value.forEach((entry, i) => {
    const where = `${path}[${i}]`;
    let item: unknown = entry;
    let provider: string | undefined;
    const limits: { weight?: number; maxConcurrent?: number; maxRps?: number; logIndex?: 'per-transaction' } = {};
    if (isObj(entry)) {
      unknownKeys(entry, ['url', 'provider', 'weight', 'maxConcurrent', 'maxRps', 'logIndex'], where, report);
      const w = entry.weight;
      if (w !== undefined && w !== null) {
        if (typeof w !== 'number' || !Number.isFinite(w) || w <= 0 || w > 1000) report(`${where}.weight`, `${show(w)} is not a weight: a number above 0, at most 1000 (its share of balanced load; 1 by default). Example: weight: 3`);
        else limits.weight = w;
      }
      for (const key of ['maxConcurrent', 'maxRps'] as const) {
        const v = entry[key];
        if (v === undefined || v === null) continue;
        if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > 1_000_000) {
          report(`${where}.${key}`, `${show(v)} is not an integer from 1 to 1000000 (${key === 'maxConcurrent' ? 'calls in flight' : 'calls per second'} at most; at the cap the upstream is skipped). Example: ${key}: 50`);
        } else limits[key] = v;
      }
      const numbering = entry.logIndex;
      if (numbering !== undefined && numbering !== null) {
        if (numbering !== 'per-transaction' && numbering !== 'per-block') {
          report(`${where}.logIndex`, `${show(numbering)} is not a log numbering: per-block (the spec's, the default) or per-transaction (the provider numbers eth_getLogs logIndex from 0 in each transaction). Example: logIndex: per-transaction`);
        } else if (numbering === 'per-transaction') limits.logIndex = numbering;
      }
      const p = entry.provider;
      if (p !== undefined && p !== null) {
        if (typeof p !== 'string' || !providerLabel.test(p)) {
          report(`${where}.provider`, `${show(p)} is not a provider label: a short name such as "alchemy" (letters, digits, . _ : -, at most 64)`);
        } else provider = p;
      }
      item = entry.url;
      if (item === undefined) return report(`${where}.url`, 'is missing. Example: { url: "https://rpc.example/v1/KEY", provider: example }');
    }
    const at = isObj(entry) ? `${where}.url` : where;
    if (typeof item !== 'string') return report(at, `${showNotUrl(item)} is not a URL string`);
    const url = normalizeUpstreamUrl(item);
    if (!url || !urlSchemes.has(url.protocol) || !url.hostname) {
      const noScheme = !url && !item.includes('://') ? ' (it has no scheme: write https://, http://, wss:// or ws:// before the host)' : '';
      return report(at, `${showUrl(item)} is not an http(s)/ws(s) URL${noScheme}. Example: "https://rpc.example/v1/KEY"`);
    }
    // A `${` written `$${` (at a path in `literal`) is the user's, not a placeholder.
    if ((literal.has(at) ? /%7B/i : /\$\{|%7B/i).test(item)) return report(at, `${showUrl(item)} is a template: put the real key in place of the \${…} placeholder`);
    // The user-info is sent percent-decoded (Authorization: Basic): an escape that does not decode would stop the start.
    if (!userInfoDecodes(url)) {
      return report(at, `${showUrl(item)} has a user or password with a % that is not a percent escape: write a % in it as %25`);
    }
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
  return { urls, providers, upstreamLimits, complete };
}

export function methodList(value: unknown, path: string, report: (p: string, m: string) => void): ConfirmableMethod[] {
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


export const fieldName = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** `ignoredFields: { block: [..], transaction: [..], receipt: [..], log: [..] }`, each list optional. */
export function fieldLists(value: unknown, path: string, report: (p: string, m: string) => void): IgnoredFieldsConfig {
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
export function headsSection(value: unknown, path: string, report: (p: string, m: string) => void): HeadsConfig {
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
