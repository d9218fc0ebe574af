/**
 * omnigate's public API: the balancer pipeline and its stages, the error catalogue, the config
 * loader, and the server used by `omnigate serve`.
 */
export {
  rpcPipeline,
  rpcErrorHandler,
  parseJsonRpc,
  classify,
  selectUpstreams,
  fetchParallel,
  canonicalize,
  verify,
  emitHeaders,
  serviceRoutes,
  type RpcPipeline,
  type RpcPipelineDeps,
} from '../middleware/index.js';
export { loadConfigFile, parseConfig, validateConfig, defaults, type OmnigateConfig, type ChainConfig } from '../config/index.js';
export * from './errors.js';
export { RpcCode } from './jsonrpc/codes.js';
export { Header } from './headers.js';
export { createApp, startServer, type RunningServer, type ServeOptions } from './app.js';
export { canonicalJson, comparable, defaultIgnoredFields, JsonNumber, mergeIgnoredFields, sha256Hex, type IgnoredFields } from './verify/canonical.js';
export { readJson } from './verify/answers.js';
export { classifyCall, classifyCalls } from './jsonrpc/methods.js';
export { redactUrl } from './upstream/redact.js';
export { normalizeUpstreamUrl, providerOf } from './upstream/provider.js';
export { createRegistry, type Registry, type Chain, type Upstream } from './upstream/registry.js';
export { silentLogger, type Logger } from './log.js';
export { tuneRuntime, runtimeFlags } from './runtime.js';
export {
  indexerApi,
  indexerNotFound,
  openIndexerDb,
  watchDatabase,
  migrate,
  seedDemo,
  buildOpenApi,
  type IndexerApiOptions,
  type IndexerDb,
  type OpenIndexerDb,
  type OpenIndexerDbOptions,
  type DatabaseWatch,
} from './indexer/index.js';
export { readiness, type ReadinessCheck, type ReadinessResult, type Readiness } from './readiness.js';
export { cleanChainlist, toConfig, toYaml, loadChainlist, fileSource, defaultSource, classifyUrl } from './chainlist/index.js';
