/**
 * Cleaning the public chain list before it is served. Pure (no I/O).
 *
 * Public chain lists carry entries that are not usable upstreams: templates that need a key
 * (`https://mainnet.infura.io/v3/${INFURA_API_KEY}`), loopback and private hosts
 * (`http://127.0.0.1:8545`), text that is not a URL (`rpcWorking:false`,
 * `website:https://…`), other schemes, credentials in the URL, and the same URL spelled twice.
 * Each dropped URL (or chain) is counted under its reason, so the start-up log can say what was
 * left out. Chain ids are kept as exact decimal strings: never wrapped, never rounded.
 */
import { BlockList } from 'node:net';
import { ConfigError } from '../errors.js';

/** Why a URL or a chain was left out. */
export const dropReasons = [
  /** A template or placeholder: `${API_KEY}`, `{API_KEY}`, `<key>`, `YOUR_API_KEY`. */
  'template',
  /** Not a URL: not a string, `rpcWorking:false`, `website:https://…`, no `scheme://host`. */
  'notUrl',
  /** A scheme other than http, https, ws, wss. */
  'scheme',
  /** User-info (`https://user:password@host`) in the URL. */
  'credentials',
  /** Loopback, private, link-local, unspecified or local-only host. */
  'privateHost',
  /** The same URL again in the same chain (host case and trailing slash ignored). */
  'duplicate',
  /** An entry without a usable chain id (not a non-negative integer, or a number above 2^53 that was already rounded). */
  'badEntry',
  /** A chain marked `status: deprecated` (retired testnets and networks). */
  'deprecatedChain',
  /** A chain with no URL left after cleaning (or none listed). */
  'noUrls',
] as const;

export type DropReason = (typeof dropReasons)[number];
export type UrlDropReason = Extract<DropReason, 'template' | 'notUrl' | 'scheme' | 'credentials' | 'privateHost' | 'duplicate'>;

export interface CleanStats {
  /** Entries in the raw data. */
  entries: number;
  /** URLs examined (those of deprecated chains and bad entries are not). */
  urlsSeen: number;
  /** Chains kept. */
  chains: number;
  /** URLs kept. */
  urls: number;
}

export interface CleanChainlist {
  /** Chain id (exact decimal) → usable URLs, in the list's order; ids in ascending order. */
  chains: Map<string, string[]>;
  /** Chain id → name, for the chains that have one (kept and dropped). */
  names: Map<string, string>;
  /** Chain id → why the whole chain was dropped (`deprecatedChain` or `noUrls`). */
  droppedChains: Map<string, Extract<DropReason, 'deprecatedChain' | 'noUrls'>>;
  /** Count per reason; every reason is present. */
  dropped: Record<DropReason, number>;
  stats: CleanStats;
}

const schemes = new Set(['http:', 'https:', 'ws:', 'wss:']);

const templatePatterns: readonly RegExp[] = [
  /[{}<>]/, // ${X}, {X}, <X>
  /%7B|%7D|%3C|%3E/i, // the same, percent-encoded
  /\$[A-Za-z_]/, // $API_KEY
  /(?<![a-z0-9])your[-_]?(?:api[-_]?)?(?:key|token|secret|project[-_]?id|id)(?![a-z0-9])/i, // YOUR_API_KEY, your-key
  /(?:^|[/=:@])[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*_(?:KEY|TOKEN|SECRET|ID)(?=$|[/?&#])/, // /INFURA_API_KEY, /PROJECT_ID
  /(?:^|[/=])(?:api[-_]?key|access[-_]?token|project[-_]?id)(?=$|[/?&#])/i, // a bare /apikey segment
];

const privateNets = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], // "this network", 0.0.0.0
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
] as const) {
  privateNets.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
] as const) {
  privateNets.addSubnet(net, prefix, 'ipv6');
}

/** True for a host that only makes sense on the machine or network of whoever wrote the entry. */
export function isPrivateHost(hostname: string): boolean {
  const host = hostname.toLowerCase().replace(/\.$/, '');
  if (host.startsWith('[')) return privateNets.check(host.slice(1, -1), 'ipv6'); // also ::ffff:127.0.0.1
  if (/^\d+\.\d+\.\d+\.\d+$/.test(host)) return privateNets.check(host, 'ipv4');
  return host === 'localhost' || /\.(?:localhost|local|internal)$/.test(host);
}

/** One URL of the list: kept (with its de-duplication key) or the reason it is dropped. */
export function classifyUrl(value: unknown): { url: string; key: string } | { reason: Exclude<UrlDropReason, 'duplicate'> } {
  const text = typeof value === 'string' ? value.trim() : undefined;
  if (!text) return { reason: 'notUrl' };
  if (templatePatterns.some((p) => p.test(text))) return { reason: 'template' };
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(text);
  if (!scheme || /\s/.test(text)) return { reason: 'notUrl' };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { reason: 'notUrl' };
  }
  if (!schemes.has(url.protocol)) return { reason: 'scheme' };
  if (!url.hostname) return { reason: 'notUrl' };
  if (url.username || url.password) return { reason: 'credentials' };
  if (isPrivateHost(url.hostname)) return { reason: 'privateHost' };
  // URL() lower-cases the scheme and host and drops a default port; a trailing slash is ignored too.
  const key = `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}${url.search}`;
  return { url: text, key };
}

/** A chain id as an exact decimal string, or undefined when it is not a usable id. */
export function chainIdOf(value: unknown): string | undefined {
  if (typeof value === 'string' && /^\d+$/.test(value.trim())) return BigInt(value.trim()).toString();
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return String(value);
  if (typeof value === 'bigint' && value >= 0n) return value.toString();
  return undefined;
}

interface Entry {
  id: unknown;
  name?: string;
  deprecated: boolean;
  rpcs: unknown;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The two shapes: an array of `{chainId, rpc}` entries, or an object keyed by chain id. */
function entriesOf(raw: unknown): (Entry | undefined)[] {
  const fromObj = (o: Obj, id: unknown): Entry => ({
    id,
    name: typeof o.name === 'string' ? o.name : undefined,
    deprecated: o.status === 'deprecated',
    rpcs: o.rpc ?? o.rpcs,
  });
  if (Array.isArray(raw)) return raw.map((e) => (isObj(e) ? fromObj(e, e.chainId) : undefined));
  if (isObj(raw)) {
    return Object.entries(raw).map(([key, value]) => {
      if (Array.isArray(value)) return { id: key, deprecated: false, rpcs: value };
      return isObj(value) ? fromObj(value, key) : undefined;
    });
  }
  throw new ConfigError(['the chain list must be a JSON array of chains ({"chainId": 1, "rpc": [...]}) or an object keyed by chain id ({"1": {"rpcs": [...]}})']);
}

/** An rpc entry: a URL string, or chainlist.org's `{ url, tracking, … }` object. */
const urlOf = (item: unknown): unknown => (isObj(item) ? item.url : item);

export function cleanChainlist(raw: unknown): CleanChainlist {
  const dropped = Object.fromEntries(dropReasons.map((r) => [r, 0])) as Record<DropReason, number>;
  const names = new Map<string, string>();
  const deprecated = new Set<string>();
  const candidates = new Map<string, unknown[]>();
  const entries = entriesOf(raw);
  for (const entry of entries) {
    const id = entry ? chainIdOf(entry.id) : undefined;
    if (!entry || id === undefined) {
      dropped.badEntry += 1;
      continue;
    }
    if (entry.name && !names.has(id)) names.set(id, entry.name);
    if (entry.deprecated) {
      deprecated.add(id);
      continue;
    }
    const list = candidates.get(id) ?? [];
    if (Array.isArray(entry.rpcs)) list.push(...entry.rpcs.map(urlOf));
    candidates.set(id, list); // an entry listed twice is merged (and its URLs de-duplicated)
  }

  const chains = new Map<string, string[]>();
  const droppedChains = new Map<string, 'deprecatedChain' | 'noUrls'>();
  let urlsSeen = 0;
  for (const id of deprecated) {
    if (candidates.has(id)) continue; // a live entry with the same id wins
    droppedChains.set(id, 'deprecatedChain');
    dropped.deprecatedChain += 1;
  }
  for (const [id, list] of candidates) {
    const seen = new Set<string>();
    const urls: string[] = [];
    for (const item of list) {
      urlsSeen += 1;
      const result = classifyUrl(item);
      if ('reason' in result) {
        dropped[result.reason] += 1;
      } else if (seen.has(result.key)) {
        dropped.duplicate += 1;
      } else {
        seen.add(result.key);
        urls.push(result.url);
      }
    }
    if (urls.length === 0) {
      droppedChains.set(id, 'noUrls');
      dropped.noUrls += 1;
    } else {
      chains.set(id, urls);
    }
  }
  const sorted = new Map([...chains].sort(([a], [b]) => compareIds(a, b)));
  const urls = [...sorted.values()].reduce((n, u) => n + u.length, 0);
  return { chains: sorted, names, droppedChains, dropped, stats: { entries: entries.length, urlsSeen, chains: sorted.size, urls } };
}

/** Numeric order of exact decimal ids. */
export function compareIds(a: string, b: string): number {
  const x = BigInt(a);
  const y = BigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
}
