/**
 * `access:` and `host` in the config: a key is kept as its SHA-256 only and never quoted in a
 * problem; every right is read and checked with its path; the example config binds 127.0.0.1 and
 * its commented access block (budgets and access.redis included) is valid.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import test from 'ava';
import { parseConfig } from '../../../config/index.js';
import { validateConfig, type OmnigateConfig } from '../../../config/schema.js';
import { fromRoot } from '../../support/paths.js';

const KEY = 'relayer-key-0123456789abcdef';
const sha = (s: string) => createHash('sha256').update(s).digest('hex');
const chains = { 1: { rpcs: ['https://a.example'] }, 10: { rpcs: ['https://b.example'] } };
const ok = (raw: Record<string, unknown>): OmnigateConfig => {
  const r = validateConfig({ chains, ...raw });
  if ('problems' in r) throw new Error(JSON.stringify(r.problems));
  return r.config;
};
const problemsOf = (raw: Record<string, unknown>) => {
  const r = validateConfig({ chains, ...raw });
  return 'problems' in r ? r.problems.map((p) => `${p.path}: ${p.message}`) : [];
};

test('a key is kept as its SHA-256 only, with its rights and their defaults', (t) => {
  const config = ok({ access: { keys: [{ label: 'relayer', key: KEY, chains: [1, '10'], minConfirmations: 2, cacheBypass: true }] } });
  t.deepEqual(config.access, {
    keys: [{ label: 'relayer', keySha256: sha(KEY), chains: ['1', '10'], denyMethods: [], writes: true, minConfirmations: 2, cacheBypass: true, admin: false }],
    adminRoutes: 'keys',
  });
  t.false(JSON.stringify(config).includes(KEY));
});

test('keyFile and keySha256 are kept as given; anonymous: true is every right but admin', (t) => {
  const config = ok({ access: { anonymous: true, keys: [{ keyFile: '/run/secrets/k' }, { keySha256: sha(KEY).toUpperCase(), admin: true, methods: ['eth_call'], denyMethods: ['eth_getLogs'], writes: false }] } });
  t.deepEqual(config.access!.anonymous, { denyMethods: [], writes: true, cacheBypass: false, admin: false });
  t.like(config.access!.keys[0], { keyFile: '/run/secrets/k' });
  t.like(config.access!.keys[1], { keySha256: sha(KEY), admin: true, methods: ['eth_call'], denyMethods: ['eth_getLogs'], writes: false });
});

test('each problem of access: names its path, and no problem quotes a key', (t) => {
  const problems = problemsOf({
    access: {
      adminRoutes: 'maybe',
      anonymous: { admin: true, maxConfirmations: 0 },
      keys: [
        { label: 'a', key: 'short-secret' },
        { label: 'a', key: KEY, keyFile: '/x' },
        { key: `${KEY}/slash` },
        { label: 'anonymous', keySha256: 'nothex' },
        { key: KEY, chains: ['x'], methods: 'eth_call', minConfirmations: 3, maxConfirmations: 2, cacheBypass: 'yes', admin: 1 },
        'not a mapping',
      ],
    },
  });
  const text = problems.join('\n');
  for (const expected of [
    /^access\.adminRoutes: "maybe" is not keys/m,
    /^access\.anonymous\.admin: unknown key/m,
    /^access\.anonymous\.maxConfirmations: 0 is not an integer/m,
    /^access\.keys\[0\]\.key: is not a key \(its value is not shown\)/m,
    /^access\.keys\[1\]: has key and keyFile/m,
    /^access\.keys\[1\]\.label: "a" is the label of access\.keys\[0\] too/m,
    /^access\.keys\[2\]\.key: is not a key/m,
    /^access\.keys\[3\]\.label: "anonymous" is not a label/m,
    /^access\.keys\[3\]\.keySha256: is not a SHA-256/m,
    /^access\.keys\[4\]\.chains\[0\]: "x" is not a chain id/m,
    /^access\.keys\[4\]\.methods: must be a list/m,
    /^access\.keys\[4\]\.maxConfirmations: 2 is below minConfirmations \(3\)/m,
    /^access\.keys\[4\]\.cacheBypass: "yes" is not true or false/m,
    /^access\.keys\[4\]\.admin: 1 is not true or false/m,
    /^access\.keys\[5\]: must be a mapping/m,
  ]) t.regex(text, expected);
  t.false(text.includes('short-secret'));
  t.false(text.includes(KEY));
});

test('the same key twice, or an access section that would refuse everything, is a problem', (t) => {
  t.deepEqual(problemsOf({ access: { keys: [{ key: KEY }, { keySha256: sha(KEY) }] } }), ['access.keys[1]: the same key as access.keys[0] (its value is not shown): give each client its own key']);
  t.regex(problemsOf({ access: { keys: [] } }).join('\n'), /^access: has neither keys nor an anonymous tier/);
});

test('a right naming a chain the config does not serve is a problem', (t) => {
  t.deepEqual(problemsOf({ access: { anonymous: { chains: [1, 5] }, keys: [{ key: KEY, chains: [10, 7] }] } }), [
    'access.anonymous.chains: chain 5 is not configured (chains: 1, 10)',
    'access.keys[0].chains: chain 7 is not configured (chains: 1, 10)',
  ]);
});

test('host: an IP address or a host name', (t) => {
  t.is(ok({ host: '127.0.0.1' }).host, '127.0.0.1');
  t.is(ok({ host: '::1' }).host, '::1');
  t.is(ok({ host: 'gateway.internal' }).host, 'gateway.internal');
  t.false('host' in ok({}));
  t.regex(problemsOf({ host: 'http://x' }).join(), /^host: "http:\/\/x" is not an address to listen on/);
  t.regex(problemsOf({ host: 5000 }).join(), /^host: 5000 is not an address/);
});

test('the example config binds 127.0.0.1, and its commented access block is valid', (t) => {
  const text = readFileSync(fromRoot('config/omnigate.example.yaml'), 'utf8');
  t.is(parseConfig(text, 'example').host, '127.0.0.1');
  const lines = text.split('\n');
  const at = lines.indexOf('# access:');
  t.true(at > 0);
  const block = [lines[at]!.slice(2), ...lines.slice(at + 1).filter((l) => l.startsWith('#   ')).map((l) => l.slice(2))].join('\n');
  const config = parseConfig(`${block}\nchains:\n  1:\n    rpcs: [https://a.example]\n  8453:\n    rpcs: [https://b.example]\n`, 'example', { env: { RELAYER_KEY: KEY } });
  t.deepEqual(config.access!.keys.map((k) => k.label), ['relayer', 'dashboard', 'ops']);
  t.is(config.access!.keys[0]!.keySha256, sha(KEY));
  t.deepEqual(config.access!.anonymous, { chains: ['1'], maxConfirmations: 1, writes: false, denyMethods: [], cacheBypass: false, admin: false, creditsPerSecond: 100, creditsPerDay: 100_000, maxConcurrent: 4 });
  t.like(config.access!.keys[0], { creditsPerDay: 50_000_000, methodCredits: { eth_getLogs: 100 } });
  t.deepEqual(config.access!.redis, { url: 'redis://127.0.0.1:6379/0', prefix: 'omnigate:', timeoutMs: 50 });
});

test('the budget keys (for the budget stage) are read and checked on keys and on the anonymous tier', (t) => {
  const config = ok({
    access: {
      anonymous: { creditsPerSecond: 0.5, maxConcurrent: 2 },
      keys: [{ key: KEY, creditsPerSecond: 500, creditsPerDay: 10_000_000, maxConcurrent: 20, cacheHitCredits: 0, methodCredits: { eth_getLogs: 100, eth_call: 10 } }],
    },
  });
  t.like(config.access!.anonymous, { creditsPerSecond: 0.5, maxConcurrent: 2 });
  t.like(config.access!.keys[0], { creditsPerSecond: 500, creditsPerDay: 10_000_000, maxConcurrent: 20, cacheHitCredits: 0 });
  t.deepEqual(config.access!.keys[0]!.methodCredits, { eth_getLogs: 100, eth_call: 10 });
  const text = problemsOf({ access: { keys: [{ key: KEY, creditsPerSecond: 0, creditsPerDay: 1.5, maxConcurrent: 0, cacheHitCredits: -1, methodCredits: { 'not a method': 1, eth_call: 'x' } }] } }).join('\n');
  for (const expected of [
    /^access\.keys\[0\]\.creditsPerSecond: 0 is not a number from above 0/m,
    /^access\.keys\[0\]\.creditsPerDay: 1\.5 is not an integer/m,
    /^access\.keys\[0\]\.maxConcurrent: 0 is not an integer from 1/m,
    /^access\.keys\[0\]\.cacheHitCredits: -1 is not a number from 0/m,
    /^access\.keys\[0\]\.methodCredits\.not a method: is not a method name/m,
    /^access\.keys\[0\]\.methodCredits\.eth_call: "x" is not a number/m,
  ]) t.regex(text, expected);
});

test('access.redis: where the replicas share the budgets, with its defaults; its URL is never quoted in a problem', (t) => {
  const config = ok({ access: { redis: { url: 'redis://:secret-pass@127.0.0.1:6379/2' }, keys: [{ key: KEY, creditsPerDay: 100 }] } });
  t.deepEqual(config.access!.redis, { url: 'redis://:secret-pass@127.0.0.1:6379/2', prefix: 'omnigate:', timeoutMs: 50 });
  t.is(ok({ access: { keys: [{ key: KEY }] } }).access!.redis, undefined);
  const text = problemsOf({ access: { redis: { url: 'http://user:hidden-pass@example', prefix: 7, timeoutMs: 0, ttl: 1 }, keys: [{ key: KEY }] } }).join('\n');
  for (const expected of [
    /^access\.redis\.url: is not a redis:\/\/ or rediss:\/\/ URL/m,
    /^access\.redis\.prefix: 7 is not a string/m,
    /^access\.redis\.timeoutMs: 0 is not an integer from 1 to 10000/m,
    /^access\.redis\.ttl/m,
  ]) t.regex(text, expected);
  t.false(text.includes('hidden-pass'));
  t.regex(problemsOf({ access: { redis: 'redis://x', keys: [{ key: KEY }] } }).join('\n'), /^access\.redis: must be a mapping/m);
});
