/**
 * omnigate's public API: the balancer pipeline and its stages, the error catalogue, the config
 * loader, the server used by `omnigate serve`, the proof library (answers checked against an
 * agreed block header), and the check of signed attestations (verifyAttestation).
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
  prove,
  emitHeaders,
  serviceRoutes,
  identifyClient,
  authorize,
  authorizeCall,
  reserveBudget,
  settleBudget,
  settleFailed,
  type RpcPipeline,
  type RpcPipelineDeps,
} from '../middleware/index.js';
// For a pipeline composed from the stages: verify()'s policies (block eligibility, hedging), the metrics that
// verify() and serviceRoutes() take, and the head tracker and probes that eligibility reads.
export type { VerifyOptions, LoopPolicy } from '../middleware/verify.js';
export type { ProveOptions } from '../middleware/prove.js';
// Proof mode (lib/prove): each chain's verify mode, the quirk table, the self-check, the metrics.
export { describeProofMode, initProofMode } from './prove/mode.js';
export { chainQuirks, quirkBlocks, quirkOf, type BlockMark, type ChainQuirk, type QuirkCutoff, type QuirkScope } from './proof/quirks.js';
export { selfCheck, startSelfChecks, type SelfCheckResult } from './prove/self-check.js';
export { createProofMetrics, type ProofMetrics } from './prove/metrics.js';
export type { ProofInfo } from './pipeline/context.js';
export type { RequestQuestion } from './verify/question.js';
export { eligibilityPolicy } from './verify/eligibility-policy.js';
export { hedgePolicy, hedgeSettings, type HedgeSettings } from './verify/hedge-policy.js';
export { composePolicies } from './verify/loop-policy.js';
export { createMetrics, type Metrics } from './ops/metrics.js';
// The door (client keys, rights per key) that identifyClient, authorize and authorizeCall apply.
export { createAccess, type Access } from './access/access.js';
export type { Grant } from './access/keyring.js';
// The budgets in credits that reserveBudget and settleBudget apply.
export { Budgets, budgetRedis, hasBudgets, type Charge, type Plan } from './access/budget.js';
export { shownPath } from './pipeline/route.js';
export { headSettings, type HeadSettings } from './health/heads.js';
export { startHeadTracker, type HeadTracker } from './health/tracker.js';
export { startProber, type Prober } from './health/probe.js';
export { loadConfigFile, parseConfig, validateConfig, defaults, type OmnigateConfig, type ChainConfig } from '../config/index.js';
export * from './errors.js';
export { RpcCode } from './jsonrpc/codes.js';
export { Header } from './pipeline/headers.js';
// Signed attestations of confirmed answers (config `attest:`): checking one, and its parts.
export { verifyAttestation, type AttestationCheck, type VerifyAttestationOptions } from './attest/verify.js';
export { attestationRequestHash, decodeStatement, encodeStatement, statementFormat, type Statement } from './attest/statement.js';
export { createAttester, type Attester } from './attest/attester.js';
export { defaultKeyId, newKeyPair, privateKeyOf, publicKeyOf, rawPublicKey } from './attest/keys.js';
export { createApp, startServer, type RunningServer, type ServeOptions } from './server/app.js';
export { canonicalJson, comparable, JsonNumber, sha256Hex } from './verify/answers/canonical.js';
export { defaultIgnoredFields, mergeIgnoredFields, schemaFields, type IgnoredFields } from './verify/answers/compared-fields.js';
export { readJson } from './verify/answers/answers.js';
export { classifyCall, classifyCalls } from './jsonrpc/classify.js';
export { redactUrl } from './upstream/redact.js';
export { normalizeUpstreamUrl, providerOf } from './upstream/provider.js';
export { createRegistry, type Registry, type Chain, type Upstream } from './upstream/registry.js';
export { silentLogger, type Logger } from './log.js';
export { tuneRuntime, runtimeFlags } from './server/runtime.js';
export {
  indexerApi,
  indexerNotFound,
  openIndexerDb,
  watchDatabase,
  migrate,
  seedDemo,
  buildOpenApi,
  indexerGauges,
  DEFAULT_STATS_INTERVAL_SECONDS,
  type IndexerGauges,
  type IndexerGaugesOptions,
  type IndexerApiHandler,
  type OpsSource,
  type IndexerApiOptions,
  type IndexerDb,
  type OpenIndexerDb,
  type OpenIndexerDbOptions,
  type DatabaseWatch,
} from './indexer/index.js';
export { readiness, type ReadinessCheck, type ReadinessResult, type Readiness } from './ops/readiness.js';
export * from './proof/index.js';
export { cleanChainlist, toConfig, toYaml, loadChainlist, fileSource, defaultSource, classifyUrl } from './chainlist/index.js';
