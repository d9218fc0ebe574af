/**
 * The live upstreams built from a config: labels (redacted, numbered when two differ only by
 * key), providers counted once, the chain's merged settings, the Via tokens that lead back to an
 * upstream, and the agent an embedding program hands in.
 */
import http from 'node:http';
import test from 'ava';
import { Cancellation } from '../../../../lib/upstream/transport/contract.js';
import { configSecrets, createRegistry, distinctLabels, minShareOfCap, shareOfCap } from '../../../../lib/upstream/registry.js';
import { makeConfig } from '../../../support/gateway.js';
import { startFakeUpstream } from '../../../support/fake-upstream.js';
import { single } from '../../../support/stage.js';

test('distinctLabels should redact each URL and number those that differ only by their secret', (t) => {
  t.deepEqual(
    distinctLabels(['https://eth-mainnet.g.alchemy.com/v2/abc123def456', 'https://eth-mainnet.g.alchemy.com/v2/xyz789uvw012', 'https://rpc.other.test/']),
    ['https://eth-mainnet.g.alchemy.com/v2/***#1', 'https://eth-mainnet.g.alchemy.com/v2/***#2', 'https://rpc.other.test'],
  );
});

test('should build each chain with its upstreams, providers and merged settings', async (t) => {
  const config = makeConfig({
    confirmableMethods: [{ method: 'foo_global', block: 0 }],
    chains: {
      1: {
        rpcs: ['https://eth-mainnet.g.alchemy.com/v2/abc123def456', 'https://mainnet.infura.io/v3/bcd234efa567', 'wss://eth-mainnet.g.alchemy.com/v2/cde345fab678'],
        confirmations: 2,
        strategy: 'priority',
        confirmableMethods: [{ method: 'foo_chain', block: 1 }],
      },
      10: { rpcs: ['https://opt.test/'], confirmations: 1 },
    },
  });
  const registry = createRegistry(config);
  try {
    t.deepEqual([...registry.chains.keys()], ['1', '10']);
    const chain = registry.chains.get('1')!;
    t.like(chain, { id: '1', confirmations: 2, providerCount: 2, strategy: 'priority' });
    t.deepEqual([...chain.extraConfirmable.keys()], ['foo_global', 'foo_chain']);
    t.deepEqual(chain.upstreams.map((u) => [u.index, u.label, u.provider]), [
      [0, 'https://eth-mainnet.g.alchemy.com/v2/***', 'alchemy.com'],
      [1, 'https://mainnet.infura.io/v3/***', 'infura.io'],
      [2, 'wss://eth-mainnet.g.alchemy.com/v2/***', 'alchemy.com'],
    ]);
    t.true(chain.upstreams.every((u) => u.chainId === '1' && u.health.successes === 0));
    const u0 = chain.upstreams[0]!;
    t.is(u0.secrets.scrub('failed at https://mainnet.infura.io/v3/bcd234efa567'), 'failed at https://mainnet.infura.io/v3/***', 'every configured upstream\'s key is scrubbed');
    t.true(u0.secrets.echoedIn(Buffer.from('{"error":"bad key abc123def456"}')));
    t.false(u0.secrets.echoedIn(Buffer.from('{"error":"bad key bcd234efa567"}')), 'only its own key counts as echoed');
  } finally {
    await registry.close();
  }
});

test('loopThrough should find the upstream whose Via token came back, and nothing for others', async (t) => {
  const registry = createRegistry(makeConfig({ chains: { 1: { rpcs: ['https://a.test/', 'https://b.test/'] } } }));
  try {
    const [a, b] = registry.chains.get('1')!.upstreams;
    t.not(a!.hopToken, b!.hopToken);
    t.is(registry.loopThrough(['other', b!.hopToken]), b);
    t.is(registry.loopThrough(['other']), undefined);
  } finally {
    await registry.close();
  }
});

test('should send HTTP upstream calls through the agent an embedding program hands in', async (t) => {
  const fake = await startFakeUpstream();
  /** An agent counting the requests node hands it (addRequest: undocumented in the types, called for each request). */
  const counting = () => {
    const agent = new http.Agent() as http.Agent & { added: number; addRequest(...args: unknown[]): void };
    const addRequest = agent.addRequest;
    agent.added = 0;
    agent.addRequest = function (...args: unknown[]) {
      agent.added += 1;
      return addRequest.apply(this, args);
    };
    return agent;
  };
  const chosen = counting();
  const fallback = counting();
  const other = `${fake.url}/other`;
  // (the config writes a URL in its normal form: the callback is asked with that form)
  const chosenUrl = new URL(fake.url).href;
  const registry = createRegistry(makeConfig({ chains: { 1: { rpcs: [fake.url, other] } } }), { agents: (url) => (url === chosenUrl ? chosen : undefined), agent: fallback });
  try {
    const [first, second] = registry.chains.get('1')!.upstreams;
    const request = { payload: single('eth_chainId'), requestId: 'r', signal: new Cancellation(), timeoutMs: 5000, maxBytes: 1 << 20 };
    await first!.transport.send(request);
    await second!.transport.send(request).catch(() => undefined);
    t.is(chosen.added, 1);
    t.is(fallback.added, 1);
    t.is(fake.calls, 2);
  } finally {
    await registry.close();
    chosen.destroy();
    fallback.destroy();
    await fake.close();
  }
});

test('shareOfCap: each HTTP(S) upstream holds at most its share of the socket cap, 8 at least; no cap, no share', (t) => {
  t.is(shareOfCap(256, 3), 85); // 3 × 85 = 255: within the cap, so no upstream takes another's idle socket
  t.is(shareOfCap(256, 1), 256);
  t.is(shareOfCap(256, 1_000), minShareOfCap);
  t.is(shareOfCap(Infinity, 3), Infinity);
  t.is(shareOfCap(256, 0), Infinity);
});

test('configSecrets: the upstreams\' URLs and the user-info of the proxy they go through, not its host', (t) => {
  const config = { chains: { 1: { rpcs: ['http://a.example/v2/k3yOfTheUpstream99', 'wss://b.example/ws'] } }, upstreams: { proxy: 'http://pxuser:pxS3cretWord@proxy.internal:3128' } };
  const secrets = configSecrets(config as never);
  t.true(secrets.includes('k3yOfTheUpstream99'));
  t.true(secrets.includes('pxS3cretWord'));
  t.true(secrets.includes(Buffer.from('pxuser:pxS3cretWord').toString('base64').replace(/=+$/, '')), 'as sent in Proxy-Authorization');
  t.false(secrets.some((s) => s.includes('proxy.internal')), 'the proxy is named, its password hidden');
  t.deepEqual(configSecrets({ chains: config.chains } as never).filter((s) => s.includes('pxS3cret')), [], 'no proxy: none of it');
});
