/**
 * `attest:` in the config: the private key is parsed when the config is read and its text is
 * kept nowhere (no dump of the config, no problem quotes it); every problem names its path.
 */
import { readFileSync } from 'node:fs';
import { inspect } from 'node:util';
import { generateKeyPairSync } from 'node:crypto';
import test from 'ava';
import { parseConfig } from '../../../config/index.js';
import { validateConfig } from '../../../config/schema.js';
import { ConfigError } from '../../../lib/errors.js';
import { rawPublicKey } from '../../../lib/attest/keys.js';
import { fromRoot } from '../../support/paths.js';

const SEED = '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60';
const chains = { 1: { rpcs: ['https://a.example'] }, 10: { rpcs: ['https://b.example'] } };
const problemsOf = (attest: unknown) => {
  const r = validateConfig({ chains, attest });
  return 'problems' in r ? r.problems.map((p) => `${p.path}: ${p.message}`) : [];
};

test('a key from the environment is parsed once; the validated config holds no text of it', (t) => {
  const config = parseConfig('chains:\n  1:\n    rpcs: [https://a.example]\nattest:\n  key: ${ATTEST_KEY}\n  keyId: gw-1\n  chains: [1]\n', 'test.yaml', { env: { ATTEST_KEY: SEED } });
  t.is(rawPublicKey(config.attest!.key!).toString('hex'), 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a');
  t.is(config.attest!.keyId, 'gw-1');
  t.deepEqual(config.attest!.chains, ['1']);
  for (const dump of [JSON.stringify(config), inspect(config, { depth: 10 })]) t.false(dump.includes(SEED) || dump.includes(Buffer.from(SEED, 'hex').toString('base64')));
});

test('from code, a private Ed25519 KeyObject is taken as the key; a public one is not', (t) => {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const r = validateConfig({ chains, attest: { key: privateKey } });
  t.is('config' in r ? r.config.attest?.key : undefined, privateKey);
  t.regex(problemsOf({ key: publicKey })[0]!, /^attest\.key: is not an Ed25519 private key/);
});

test('a keyFile is kept as its path (read when the pipeline is built)', (t) => {
  const r = validateConfig({ chains, attest: { keyFile: '/run/secrets/attest.pem' } });
  t.deepEqual('config' in r ? r.config.attest : undefined, { keyFile: '/run/secrets/attest.pem' });
});

test('each problem names its path; a bad key is never quoted', (t) => {
  const secretish = 'not-a-key-but-a-secret-0123456789';
  const bad = problemsOf({ key: secretish });
  t.is(bad.length, 1);
  t.regex(bad[0]!, /^attest\.key: is not an Ed25519 private key/);
  t.false(bad.join('\n').includes(secretish));
  t.regex(problemsOf({})[0]!, /^attest: has no key/);
  t.regex(problemsOf({ key: SEED, keyFile: '/x' })[0]!, /^attest: has key and keyFile/);
  t.regex(problemsOf({ key: SEED, keyId: 'has space' })[0]!, /^attest\.keyId: "has space" is not a key id/);
  t.regex(problemsOf({ key: SEED, chains: [] })[0]!, /^attest\.chains: must be a non-empty list/);
  t.regex(problemsOf({ key: SEED, chains: [8453] })[0]!, /^attest\.chains: chain 8453 is not configured/);
  t.regex(problemsOf({ key: SEED, chains: ['x'] })[0]!, /^attest\.chains\[0\]: "x" is not a chain id/);
  t.regex(problemsOf({ key: SEED, keys: 1 })[0]!, /^attest\.keys/);
  t.regex(problemsOf('yes')[0]!, /^attest: must be a mapping/);
  t.deepEqual(problemsOf(null), []);
});

test('a key from the environment that is no key: the error names attest.key, never the value', (t) => {
  const secretish = 'AAAAsecretvalueAAAA0123456789';
  const error = t.throws(() => parseConfig('chains:\n  1:\n    rpcs: [https://a.example]\nattest:\n  key: ${ATTEST_KEY}\n', 'test.yaml', { env: { ATTEST_KEY: secretish } }), { instanceOf: ConfigError });
  t.regex(error!.message, /attest\.key \(line 5\): is not an Ed25519 private key/);
  t.false(error!.message.includes(secretish));
});

test('the example config\'s commented attest block is valid', (t) => {
  const lines = readFileSync(fromRoot('config/omnigate.example.yaml'), 'utf8').split('\n');
  const at = lines.indexOf('# attest:');
  t.true(at > 0);
  const block = [lines[at]!.slice(2)];
  for (const l of lines.slice(at + 1)) {
    if (!l.startsWith('#   ')) break;
    block.push(l.slice(2));
  }
  const config = parseConfig(`${block.join('\n')}\nchains:\n  1:\n    rpcs: [https://a.example]\n  8453:\n    rpcs: [https://b.example]\n`, 'example');
  t.deepEqual(config.attest, { keyFile: '/run/secrets/attest.pem', keyId: 'gateway-1', chains: ['1', '8453'] });
});
