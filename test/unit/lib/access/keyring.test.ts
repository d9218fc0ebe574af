/**
 * The keyring (lib/access/keyring.ts): keys held by digest only, found by the digest of what a
 * client presents; keyFiles read once; the key a
 * request presents and in which order. (Why a lookup by digest is timing-safe: keyring.ts.)
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import test from 'ava';
import { buildKeyring, keyDigest, presentedKey } from '../../../../lib/access/keyring.js';
import { ConfigError } from '../../../../lib/errors.js';
import type { AccessKey } from '../../../../config/types.js';
import { validateConfig } from '../../../../config/schema.js';

const KEY = 'relayer-key-0123456789abcdef';
const rights = { denyMethods: [], writes: true, cacheBypass: false, admin: false };
const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const entry = (extra: Partial<AccessKey>): AccessKey => ({ ...rights, ...extra });

test('a key is found by its digest; a key sharing all but its last character, or its first, is not', (t) => {
  const ring = buildKeyring({ keys: [entry({ label: 'relayer', keySha256: keyDigest(KEY) })], adminRoutes: 'keys' });
  t.is(ring.find(KEY)?.label, 'relayer');
  t.is(ring.find(`${KEY.slice(0, -1)}X`), undefined);
  t.is(ring.find(`X${KEY.slice(1)}`), undefined);
  t.is(ring.find(''), undefined);
  t.is(ring.find(keyDigest(KEY)), undefined, 'the digest is not a key');
});

test('the keyring holds no key text, only digests; an unlabelled key is named by its digest\'s first 8 hex digits', (t) => {
  const ring = buildKeyring({ keys: [entry({ keySha256: keyDigest(KEY) })], adminRoutes: 'keys' });
  t.is(ring.grants[0]!.label, `key-${keyDigest(KEY).slice(0, 8)}`);
  t.false(JSON.stringify(ring.grants).includes(KEY));
});

test('keys are looked up by their SHA-256 digest: the digest of what a client presents, never the key text', (t) => {
  const digest = createHash('sha256').update(KEY).digest('hex');
  t.is(keyDigest(KEY), digest);
  // A stored digest whose key nobody knows: presenting the digest itself, or its prefix, finds nothing.
  const ring = buildKeyring({ keys: [entry({ label: 'x', keySha256: digest })], adminRoutes: 'keys' });
  t.is(ring.find(KEY)?.label, 'x');
  t.is(ring.find(digest), undefined);
  t.is(ring.find(digest.slice(0, 32)), undefined);
});

test('a keyFile is read once when the keyring is built, its line trimmed; a bad file names the path, never its content', (t) => {
  const files: Record<string, string> = { '/run/k': `${KEY}\n`, '/run/bad': 'not a key: has spaces and-is-secret-ish' };
  const read = (p: string) => {
    if (!(p in files)) throw Object.assign(new Error(`ENOENT ${p}`), { code: 'ENOENT' });
    return files[p]!;
  };
  const ring = buildKeyring({ keys: [entry({ label: 'f', keyFile: '/run/k' })], adminRoutes: 'keys' }, read);
  t.is(ring.find(KEY)?.label, 'f');
  const err = t.throws(() => buildKeyring({ keys: [entry({ keyFile: '/run/bad' }), entry({ keyFile: '/run/none' }), entry({ keySha256: keyDigest(KEY) }), entry({ keyFile: '/run/k' })], adminRoutes: 'keys' }, read), { instanceOf: ConfigError });
  t.deepEqual(err!.problems.map((p) => p.split(':')[0]), ['access.keys[0].keyFile', 'access.keys[1].keyFile', 'access.keys[3]']);
  t.false(err!.message.includes('secret-ish'));
  t.false(err!.message.includes(KEY));
});

test('the anonymous tier is a grant of its own, only when configured', (t) => {
  t.is(buildKeyring({ keys: [entry({ keySha256: keyDigest(KEY) })], adminRoutes: 'keys' }).anonymous, undefined);
  const ring = buildKeyring({ keys: [], anonymous: { ...rights, chains: ['1'] }, adminRoutes: 'open' });
  t.is(ring.anonymous?.label, 'anonymous');
  t.is(ring.anonymous?.tier, 'anonymous');
  t.deepEqual([...ring.anonymous!.rights.chains!], ['1']);
});

test('presentedKey: Bearer first, then X-Api-Key, then the RPC route\'s last segment; another scheme is null', (t) => {
  const req = (url: string, headers: Record<string, string> = {}) => ({ url, headers }) as unknown as IncomingMessage;
  t.is(presentedKey(req('/rpc/1/path-key', { authorization: 'Bearer bearer-key', 'x-api-key': 'header-key' })), 'bearer-key');
  t.is(presentedKey(req('/rpc/1/path-key', { 'x-api-key': ' header-key ' })), 'header-key');
  // An empty X-Api-Key presents no key: the path's, else none (the anonymous tier, or 401 missing).
  t.is(presentedKey(req('/rpc/1/path-key', { 'x-api-key': ' ' })), 'path-key');
  t.is(presentedKey(req('/rpc/1', { 'x-api-key': '' })), undefined);
  t.is(presentedKey(req('/confirmations/2/rpc/1/path-key')), 'path-key');
  t.is(presentedKey(req('/rpc/1')), undefined);
  t.is(presentedKey(req('/rpc/1', { authorization: 'Basic dTpw' })), null);
  t.is(presentedKey(req('/rpc/1', { authorization: 'Bearer' })), null);
  t.is(presentedKey(req('/chains/some-key')), undefined, 'only an RPC route has a key segment');
});

/** Every string reachable from a value: object keys and values, array items, Map keys and values, Set members. */
function stringsIn(value: unknown, seen = new Set<unknown>(), out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  if (typeof value !== 'object' || value === null || seen.has(value)) return out;
  seen.add(value);
  if (value instanceof Map) for (const [k, v] of value) stringsIn(k, seen, out), stringsIn(v, seen, out);
  else if (value instanceof Set) for (const v of value) stringsIn(v, seen, out);
  else for (const [k, v] of Object.entries(value)) out.push(k), stringsIn(v, seen, out);
  return out;
}

test('the lookup compares no key text: the keyring (config included) holds digests only, and find(k) is the digest map\'s entry for sha256(k)', (t) => {
  const OTHER = 'dashboard-key-fedcba9876543210';
  const checked = validateConfig({ chains: { 1: { rpcs: ['https://a.example'] } }, access: { keys: [{ label: 'relayer', key: KEY }, { key: OTHER }] } });
  if ('problems' in checked) return t.fail(JSON.stringify(checked.problems));
  const ring = buildKeyring(checked.config.access!);
  // The structure: a map from 64-hex digests (the configured keys' SHA-256) to grants, nothing else keyed.
  t.deepEqual([...ring.byDigest.keys()].sort(), [sha256(KEY), sha256(OTHER)].sort());
  for (const digest of ring.byDigest.keys()) t.regex(digest, /^[0-9a-f]{64}$/);
  // No string anywhere in the config or the keyring holds a key, or any 8 characters of one.
  const strings = stringsIn([checked.config, ring]);
  t.true(strings.length > 10);
  for (const key of [KEY, OTHER]) {
    for (let i = 0; i + 8 <= key.length; i++) {
      const part = key.slice(i, i + 8);
      t.false(strings.some((s) => s.includes(part) && !/^[0-9a-f]{64}$/.test(s)), `"${part}" of a key is held somewhere`);
    }
  }
  // find(k) is exactly the map's entry under sha256(k): the key, its last or first character changed, the empty key.
  for (const k of [KEY, `${KEY.slice(0, -1)}X`, `X${KEY.slice(1)}`, OTHER, '']) t.is(ring.find(k), ring.byDigest.get(sha256(k)), k);
  t.is(ring.find(KEY)?.label, 'relayer');
  t.is(ring.find(`${KEY.slice(0, -1)}X`), undefined);
  t.is(ring.find(`X${KEY.slice(1)}`), undefined);
});
