import test from 'ava';
import * as errors from '../../../lib/errors.js';
import { ConfigError, GatewayError, InternalError, InvalidRequestError } from '../../../lib/errors.js';

type Sub = new (message: string, options?: errors.GatewayErrorOptions) => GatewayError;

/** class → [code, rpcCode, HTTP status] (lib/pipeline/README.md "Errors" lists the same). */
const catalogue: [string, Sub, string, number, number][] = [
  ['ParseError', errors.ParseError, 'OMNI_ERR_PARSE', -32700, 400],
  ['InvalidRequestError', errors.InvalidRequestError, 'OMNI_ERR_INVALID_REQUEST', -32600, 400],
  ['InvalidParamsError', errors.InvalidParamsError, 'OMNI_ERR_INVALID_PARAMS', -32602, 200],
  ['MethodNotFoundError', errors.MethodNotFoundError, 'OMNI_ERR_METHOD_NOT_FOUND', -32601, 200],
  ['InvalidChainIdError', errors.InvalidChainIdError, 'OMNI_ERR_INVALID_CHAIN_ID', -32009, 400],
  ['UnknownChainError', errors.UnknownChainError, 'OMNI_ERR_UNKNOWN_CHAIN', -32001, 404],
  ['InvalidConfirmationsError', errors.InvalidConfirmationsError, 'OMNI_ERR_INVALID_CONFIRMATIONS', -32002, 400],
  ['NotEnoughUpstreamsError', errors.NotEnoughUpstreamsError, 'OMNI_ERR_NOT_ENOUGH_UPSTREAMS', -32003, 400],
  ['MethodNotAllowedError', errors.MethodNotAllowedError, 'OMNI_ERR_METHOD_NOT_ALLOWED', -32004, 405],
  ['BodyTooLargeError', errors.BodyTooLargeError, 'OMNI_ERR_BODY_TOO_LARGE', -32006, 413],
  ['BatchTooLargeError', errors.BatchTooLargeError, 'OMNI_ERR_BATCH_TOO_LARGE', -32007, 400],
  ['RouteNotFoundError', errors.RouteNotFoundError, 'OMNI_ERR_ROUTE_NOT_FOUND', -32008, 404],
  ['NoQuorumError', errors.NoQuorumError, 'OMNI_ERR_NO_QUORUM', -32010, 502],
  ['UpstreamsFailedError', errors.UpstreamsFailedError, 'OMNI_ERR_UPSTREAMS_FAILED', -32011, 502],
  ['DeadlineExceededError', errors.DeadlineExceededError, 'OMNI_ERR_DEADLINE', -32012, 504],
  ['UpstreamBudgetError', errors.UpstreamBudgetError, 'OMNI_ERR_UPSTREAM_BUDGET', -32013, 503],
  ['LoopDetectedError', errors.LoopDetectedError, 'OMNI_ERR_LOOP', -32014, 508],
  ['ShuttingDownError', errors.ShuttingDownError, 'OMNI_ERR_SHUTTING_DOWN', -32015, 503],
  ['BlockNotAvailableError', errors.BlockNotAvailableError, 'OMNI_ERR_BLOCK_NOT_AVAILABLE', -32016, 503],
  ['WriteOutcomeUnknownError', errors.WriteOutcomeUnknownError, 'OMNI_ERR_WRITE_OUTCOME_UNKNOWN', -32017, 504],
  ['UnauthorizedError', errors.UnauthorizedError, 'OMNI_ERR_UNAUTHORIZED', -32018, 401],
  ['ForbiddenError', errors.ForbiddenError, 'OMNI_ERR_FORBIDDEN', -32019, 403],
  ['BudgetExceededError', errors.BudgetExceededError, 'OMNI_ERR_BUDGET_EXCEEDED', -32020, 429],
  ['ProofFailedError', errors.ProofFailedError, 'OMNI_ERR_PROOF_FAILED', -32021, 502],
  ['InternalError', errors.InternalError, 'OMNI_ERR_INTERNAL', -32603, 500],
];

for (const [name, Cls, code, rpcCode, status] of catalogue) {
  test(`should give ${name} code ${code}, rpcCode ${rpcCode} and status ${status}`, (t) => {
    const err = new Cls('message');
    t.is(err.name, name);
    t.is(Cls.name, name);
    t.is(err.code, code);
    t.is(err.rpcCode, rpcCode);
    t.is(err.status, status);
    t.is(err.message, 'message');
    t.true(err instanceof GatewayError);
    t.true(err instanceof Error);
    t.true(err instanceof Cls);
    t.regex(err.stack ?? '', new RegExp(`^${name}: message`));
  });
}

test('should cover every error class the module exports', (t) => {
  const exported = Object.entries(errors)
    .filter(([, v]) => typeof v === 'function' && (v as { prototype: unknown }).prototype instanceof GatewayError)
    .map(([k]) => k)
    .sort();
  t.deepEqual(exported, catalogue.map(([name]) => name).sort());
});

test('should use distinct codes and rpcCodes', (t) => {
  t.is(new Set(catalogue.map(([, , code]) => code)).size, catalogue.length);
  t.is(new Set(catalogue.map(([, , , rpcCode]) => rpcCode)).size, catalogue.length);
});

test('should keep omnigate\'s own codes in -32001…-32099 and clear of the nodes\' -32000 and -32005', (t) => {
  for (const [name, , , rpcCode] of catalogue) {
    if (rpcCode >= -32099 && rpcCode <= -32000) {
      t.true(rpcCode !== -32000 && rpcCode !== -32005, name);
    } else {
      t.true([-32700, -32600, -32601, -32602, -32603].includes(rpcCode), name);
    }
  }
});

test('should keep a string in code, never the JSON-RPC number', (t) => {
  for (const [name, Cls] of catalogue) t.is(typeof new Cls('m').code, 'string', name);
});

test('should expose every message but an internal error\'s', (t) => {
  for (const [name, Cls] of catalogue) t.is(new Cls('m').expose, name !== 'InternalError', name);
});

test('should carry id, data, headers and cause', (t) => {
  const cause = new Error('root');
  const err = new InvalidRequestError('bad', { id: 'abc', data: { x: 1 }, headers: { Allow: 'POST' }, cause });
  t.is(err.rpcId, 'abc');
  t.deepEqual(err.data, { x: 1 });
  t.deepEqual(err.headers, { Allow: 'POST' });
  t.is(err.cause, cause);
});

test('should leave id, data, headers and cause undefined when not given', (t) => {
  const err = new InternalError('x');
  t.is(err.rpcId, undefined);
  t.is(err.data, undefined);
  t.is(err.headers, undefined);
  t.false('cause' in err);
});

test('should keep an explicit null id', (t) => {
  t.is(new InvalidRequestError('x', { id: null }).rpcId, null);
});

test('should list every config problem in ConfigError', (t) => {
  const err = new ConfigError(['port: bad', 'chains: missing'], 'my.yaml');
  t.is(err.name, 'ConfigError');
  t.is(err.code, 'OMNI_ERR_CONFIG');
  t.deepEqual(err.problems, ['port: bad', 'chains: missing']);
  t.is(err.message, 'my.yaml: invalid config:\n  - port: bad\n  - chains: missing');
  t.true(err instanceof Error);
  t.false(err instanceof GatewayError);
  t.is(new ConfigError(['x']).message, 'invalid config:\n  - x');
});

test('should share one base shape with the indexer\'s errors', (t) => {
  const cause = new Error('root');
  const err = new errors.UpstreamBudgetError('full', { headers: { 'Retry-After': '1' }, cause });
  t.true(err instanceof errors.OmnigateError);
  t.false(err instanceof errors.IndexerError);
  t.deepEqual([err.code, err.status, err.expose, err.headers, err.cause], ['OMNI_ERR_UPSTREAM_BUDGET', 503, true, { 'Retry-After': '1' }, cause]);
  const indexer = new errors.IndexerMethodNotAllowedError('PUT', 'GET, HEAD');
  t.true(indexer instanceof errors.OmnigateError);
  t.false(indexer instanceof GatewayError);
});

test('should keep the balancer\'s 405 and the indexer\'s 405 apart', (t) => {
  const rpc = new errors.MethodNotAllowedError('use POST', { headers: { Allow: 'POST, OPTIONS' } });
  const indexer = new errors.IndexerMethodNotAllowedError('PUT', 'GET, HEAD');
  t.deepEqual([rpc.code, rpc.rpcCode, rpc.status], ['OMNI_ERR_METHOD_NOT_ALLOWED', -32004, 405]);
  t.deepEqual([indexer.code, indexer.status, indexer.message], ['METHOD_NOT_ALLOWED', 405, 'Method PUT is not allowed here; use GET, HEAD']);
  t.deepEqual(indexer.headers, { Allow: 'GET, HEAD' });
});

test('should keep the published names: the package\'s MethodNotAllowedError is the balancer\'s', async (t) => {
  const pkg = await import('../../../lib/index.js');
  const indexer = await import('../../../lib/indexer/index.js');
  t.is(pkg.MethodNotAllowedError, errors.MethodNotAllowedError);
  for (const name of ['OmnigateError', 'GatewayError', 'IndexerError', 'InvalidParameterError', 'NotFoundError', 'DatabaseUnavailableError', 'IndexerMethodNotAllowedError'] as const) {
    t.is(pkg[name], errors[name], name);
  }
  // lib/indexer/index.ts keeps its own name for the indexer's 405.
  t.is(indexer.MethodNotAllowedError, errors.IndexerMethodNotAllowedError);
  t.is(indexer.IndexerError, errors.IndexerError);
  t.is(indexer.InvalidParameterError, errors.InvalidParameterError);
  t.is(indexer.NotFoundError, errors.NotFoundError);
  t.is(indexer.DatabaseUnavailableError, errors.DatabaseUnavailableError);
});
