/**
 * Readiness from the health records: a chain is ready with N usable providers (or all of them
 * when N is above its providers), each extra check must say ready, and one that throws or fails
 * names itself in the reasons.
 */
import test from 'ava';
import type { Health } from '../../../../lib/health/health.js';
import { chainReadiness, readiness } from '../../../../lib/ops/readiness.js';
import type { Registry } from '../../../../lib/upstream/registry.js';
import { testChain, testUpstream } from '../../../support/stage.js';

const up: Partial<Health> = { successes: 1, lastProbeAt: 1 };
const down: Partial<Health> = { failures: 1, consecutiveFailures: 1, lastProbeAt: 1 };

function registryOf(health: Partial<Health>[], providers: string[], confirmations = 2): Registry {
  const upstreams = health.map((h, i) => testUpstream(i, { health: h, provider: providers[i] }));
  return { chains: new Map([['1', testChain(upstreams, { confirmations })]]), loopThrough: () => undefined, close: async () => {} };
}

test('should count usable providers, not upstreams, against the chain\'s confirmations', (t) => {
  const [chain] = chainReadiness(registryOf([up, up, down], ['a', 'a', 'b']));
  t.deepEqual(chain, { chainId: '1', ready: false, usable: 1, required: 2, upstreams: 3, states: { healthy: 2, down: 1 } });
  t.true(chainReadiness(registryOf([up, down, up], ['a', 'a', 'b']))[0]!.ready);
});

test('should not count an upstream on another chain, a loop or one never probed as usable', (t) => {
  const [chain] = chainReadiness(registryOf([{ ...up, wrongChainId: '5' }, { ...up, loop: true }, {}], ['a', 'b', 'c'], 1));
  t.is(chain!.usable, 0);
  t.deepEqual(chain!.states, { 'wrong-chain': 1, loop: 1, unknown: 1 });
});

test('should need every provider when the chain\'s confirmations are above its providers', (t) => {
  const [chain] = chainReadiness(registryOf([up, up], ['a', 'b'], 3));
  t.like(chain, { ready: true, usable: 2, required: 2 });
});

test('should be ready with every chain and check ready, and name each reason otherwise', async (t) => {
  t.deepEqual((await readiness(registryOf([up, up], ['a', 'b']), [{ name: 'db', check: async () => ({ ready: true, pool: 3 }) }])), {
    status: 'ready',
    reasons: [],
    chains: [{ chainId: '1', ready: true, usable: 2, required: 2, upstreams: 2, states: { healthy: 2 } }],
    checks: { db: { ready: true, pool: 3 } },
  });
  const r = await readiness(registryOf([up, down], ['a', 'b']), [
    { name: 'db', check: async () => ({ ready: false }) },
    { name: 'cache', check: async () => { throw new Error('connection refused'); } },
  ]);
  t.is(r.status, 'not ready');
  t.deepEqual(r.reasons, ['chain 1: 1 usable provider, 2 required (1 healthy, 1 down)', 'db: not ready', 'cache: connection refused']);
  t.deepEqual(r.checks.cache, { ready: false, reason: 'cache: connection refused' });
});
