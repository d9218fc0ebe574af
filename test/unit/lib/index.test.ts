/**
 * The package's entry (`import … from 'omnigate'`): every name the READMEs import from it is
 * exported, each stage factory the middleware README lists, and the values behind the names are
 * the modules' own.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import test from 'ava';
import * as omnigate from '../../../lib/index.js';
import { RpcCode } from '../../../lib/jsonrpc/codes.js';
import { Header } from '../../../lib/pipeline/headers.js';
import { classify } from '../../../middleware/classify.js';
import { root as repoRoot } from '../../support/paths.js';

const root = repoRoot;

function readmes(dir: string, out: string[] = []): string[] {
  for (const entry of readdirSync(path.join(root, dir))) {
    if (entry === 'node_modules' || entry === 'dist' || entry.startsWith('.')) continue;
    const rel = path.join(dir, entry);
    if (statSync(path.join(root, rel)).isDirectory()) readmes(rel, out);
    else if (entry === 'README.md') out.push(rel);
  }
  return out;
}

test('every name a README imports from \'omnigate\' should be exported', (t) => {
  const names = new Set<string>();
  for (const file of [...readmes('lib'), ...readmes('middleware'), ...readmes('config'), 'README.md']) {
    const text = readFileSync(path.join(root, file), 'utf8');
    for (const m of text.matchAll(/import \{([^}]+)\} from 'omnigate'/g)) for (const n of m[1]!.split(',')) names.add(n.trim().replace(/^type /, ''));
  }
  t.true(names.size >= 5, [...names].join(', '));
  for (const name of names) t.true(name in omnigate, name);
});

test('the stage factories the middleware README lists should be exported as functions', (t) => {
  for (const name of ['rpcPipeline', 'rpcErrorHandler', 'parseJsonRpc', 'classify', 'selectUpstreams', 'fetchParallel', 'canonicalize', 'verify', 'emitHeaders', 'serviceRoutes', 'composePolicies', 'hedgePolicy', 'eligibilityPolicy', 'startHeadTracker', 'createMetrics'] as const) {
    t.is(typeof omnigate[name], 'function', name);
  }
  t.is(omnigate.classify, classify);
});

test('the constants should be the modules\' own', (t) => {
  t.is(omnigate.RpcCode, RpcCode);
  t.is(omnigate.Header, Header);
  t.true(new omnigate.NoQuorumError('x') instanceof omnigate.GatewayError);
});
