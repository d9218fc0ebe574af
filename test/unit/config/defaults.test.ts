/**
 * The defaults in one place: what config/README.md's Configuration table says of each, what a
 * minimal config gets, and the example config, whose values are the defaults written out.
 */
import { readFileSync } from 'node:fs';
import test from 'ava';
import { defaults } from '../../../config/defaults.js';
import { parseConfig } from '../../../config/index.js';
import { validateConfig, type OmnigateConfig } from '../../../config/schema.js';
import { fromRoot } from '../../support/paths.js';

const readme = readFileSync(fromRoot('config/README.md'), 'utf8');
const example = readFileSync(fromRoot('config/omnigate.example.yaml'), 'utf8');

/** The Default column of each table row whose default is one literal: key → text. */
function documentedDefaults(): Map<string, string> {
  const rows = new Map<string, string>();
  for (const m of readme.matchAll(/^\| `([\w.]+)` \| `([^`]+)` \|/gm)) rows.set(m[1]!, m[2]!);
  return rows;
}

/** The value at a dotted path of `defaults`. */
const at = (path: string): unknown => path.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown>)?.[k], defaults);

test('every literal default of the Configuration table should be the one in defaults.ts', (t) => {
  const rows = documentedDefaults();
  t.true(rows.size >= 25, `rows read: ${rows.size}`);
  let compared = 0;
  for (const [key, text] of rows) {
    const value = at(key);
    if (value === undefined) continue; // a key of another module's defaults (heads, indexer)
    compared += 1;
    // A word (upstreams.client's `node`) is written bare; numbers and booleans as JSON.
    t.is(typeof value === 'string' ? value : JSON.stringify(value), text, key);
  }
  t.true(compared >= 25);
  t.is(at('timeouts.hedgeMinMs'), 20);
  t.is(at('timeouts.hedgeMaxMs'), 1000);
});

test('a minimal config should get every default', (t) => {
  const r = validateConfig({ chains: { 1: { rpcs: ['https://a.example/'] } } });
  if ('problems' in r) return t.fail(JSON.stringify(r.problems));
  t.like(r.config, { port: defaults.port, confirmations: defaults.confirmations, refreshInterval: defaults.refreshInterval, limits: defaults.limits, server: defaults.server, upstreams: defaults.upstreams, disputes: defaults.disputes, redactHeaders: defaults.redactHeaders });
  t.like(r.config.timeouts, { ...defaults.timeouts, hedgeAdaptive: true });
  t.is(r.config.chains['1']!.strategy, defaults.strategy);
});

test('every default written out in a file should validate to the same config as left out', (t) => {
  const { hedgeMs: _fixed, ...adaptive } = defaults.timeouts;
  const { fileMaxBytes, ...disputes } = defaults.disputes;
  const written = validateConfig({
    port: defaults.port,
    confirmations: defaults.confirmations,
    refreshInterval: defaults.refreshInterval,
    timeouts: adaptive,
    limits: defaults.limits,
    server: defaults.server,
    upstreams: defaults.upstreams,
    redactHeaders: defaults.redactHeaders,
    disputes: { ...disputes, fileMaxBytes },
    confirmableMethods: defaults.confirmableMethods,
    chains: { 1: { rpcs: ['https://a.example/'], strategy: defaults.strategy } },
  });
  const minimal = validateConfig({ chains: { 1: { rpcs: ['https://a.example/'] } } });
  if ('problems' in written) return t.fail(JSON.stringify(written.problems));
  t.deepEqual(written, minimal);
});

test('the example config should load, and the values it writes out should be the defaults', (t) => {
  let config: OmnigateConfig | undefined;
  t.notThrows(() => (config = parseConfig(example, 'omnigate.example.yaml')));
  const c = config!;
  t.like(c, { port: defaults.port, confirmations: defaults.confirmations, refreshInterval: defaults.refreshInterval, redactHeaders: defaults.redactHeaders });
  t.deepEqual(c.limits, { ...defaults.limits });
  t.deepEqual(c.server, { ...defaults.server });
  t.like(c.upstreams, defaults.upstreams);
  t.like(c.disputes, { window: defaults.disputes.window, maxLost: defaults.disputes.maxLost, sampleEvery: defaults.disputes.sampleEvery });
  const { hedgeMs: _fixed, ...adaptive } = defaults.timeouts;
  t.like(c.timeouts, { ...adaptive, hedgeAdaptive: true });
  t.deepEqual(Object.keys(c.chains), ['1', '10', '8453', '42161']);
  t.is(c.chains['1']!.confirmations, 2);
});
