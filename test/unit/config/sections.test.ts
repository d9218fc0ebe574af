/**
 * The section validators validateConfig calls, each fed a raw value: what it returns, and every
 * problem with its path and fix; values quoted with their secrets masked.
 */
import test from 'ava';
import {
  fieldLists,
  headsSection,
  methodList,
  proxyUrl,
  show,
  showNotUrl,
  showUrl,
  unknownKeys,
  urlList,
  urlSecretsIn,
  writesSection,
} from '../../../config/sections.js';

/** Runs a validator with a problem collector. */
function run<T>(fn: (report: (p: string, m: string) => void) => T): { value: T; problems: string[] } {
  const problems: string[] = [];
  const value = fn((p, m) => problems.push(`${p}: ${m}`));
  return { value, problems };
}

test('show, showUrl and showNotUrl should quote a value, a URL masked, a list or mapping by its kind', (t) => {
  t.is(show('x'), '"x"');
  t.is(show(12n), '12');
  t.is(showUrl('https://eth-mainnet.g.alchemy.com/v2/abc123def456'), '"https://eth-mainnet.g.alchemy.com/v2/***"');
  t.is(showUrl('not a url abc123def456'), 'the value (not shown: it may hold a key)');
  t.is(showNotUrl([1]), 'a list');
  t.is(showNotUrl({ a: 1 }), 'a mapping');
  t.is(showNotUrl(5), '5');
});

test('urlSecretsIn should collect the secrets of every URL in a raw config, keys too, and survive a cycle', (t) => {
  const raw: Record<string, unknown> = { chains: { 1: { rpcs: ['https://a.test/v2/abc123def456', { url: 'wss://b.test/ws/key987zyx654' }] } }, note: 'plain text' };
  raw.self = raw;
  const secrets = urlSecretsIn(raw);
  t.true(secrets.includes('abc123def456'));
  t.true(secrets.includes('key987zyx654'));
});

test('unknownKeys should report each unknown key, with the key meant for a known misspelling or another case', (t) => {
  const { problems } = run((r) => unknownKeys({ rpc: [], Confirmations: 1, odd: 1, rpcs: [] }, ['rpcs', 'confirmations'], 'chains.1', r));
  t.deepEqual(problems, [
    'chains.1.rpc: unknown key: did you mean "rpcs"?',
    'chains.1.Confirmations: unknown key: did you mean "confirmations"?',
    'chains.1.odd: unknown key; known keys here: rpcs, confirmations',
  ]);
});

test('urlList should normalize URLs, read providers and limits, and keep entries in order', (t) => {
  const { value, problems } = run((r) => urlList(['HTTPS://A.test:443/v1', { url: 'wss://b.test/x', provider: 'bee', weight: 2, maxConcurrent: 5, maxRps: 9, logIndex: 'per-transaction' }, { url: 'https://c.test/', logIndex: 'per-block' }], 'chains.1.rpcs', r));
  t.deepEqual(problems, []);
  t.deepEqual(value, { urls: ['https://a.test/v1', 'wss://b.test/x', 'https://c.test/'], providers: [undefined, 'bee', undefined], upstreamLimits: [{}, { weight: 2, maxConcurrent: 5, maxRps: 9, logIndex: 'per-transaction' }, {}], complete: true });
});

const badLists: [string, unknown, RegExp][] = [
  ['an empty list', [], /^chains\.1\.rpcs: must be a non-empty list/],
  ['not a list', 'https://a.test', /must be a non-empty list/],
  ['a URL without a scheme', ['a.test/v1'], /rpcs\[0\]: .* is not an http\(s\)\/ws\(s\) URL \(it has no scheme/],
  ['an ftp URL', ['ftp://a.test/'], /is not an http\(s\)\/ws\(s\) URL/],
  ['a duplicate once normalized', ['https://a.test/x', 'https://A.TEST:443/x#frag'], /rpcs\[1\]: .* is listed twice/],
  ['a template left in', ['https://a.test/v2/${KEY}'], /is a template/],
  ['a password with a bare %', ['https://user:pa%zzSecret99@a.test/'], /rpcs\[0\]: "https:\/\/\*\*\*@a\.test" has a user or password with a % that is not a percent escape: write a % in it as %25$/],
  ['a user with a bare %', ['wss://us%er:x@a.test/'], /has a user or password with a %/],
  ['a number', [5], /rpcs\[0\]: 5 is not a URL string/],
  ['an entry without url', [{ provider: 'x' }], /rpcs\[0\]\.url: is missing/],
  ['a bad provider label', [{ url: 'https://a.test/', provider: 'has space' }], /rpcs\[0\]\.provider: "has space" is not a provider label/],
  ['a zero weight', [{ url: 'https://a.test/', weight: 0 }], /rpcs\[0\]\.weight: 0 is not a weight/],
  ['a fractional maxRps', [{ url: 'https://a.test/', maxRps: 1.5 }], /rpcs\[0\]\.maxRps: 1\.5 is not an integer from 1 to 1000000/],
  ['an unknown key', [{ url: 'https://a.test/', weigth: 2 }], /rpcs\[0\]\.weigth: unknown key/],
  ['a log numbering that is none', [{ url: 'https://a.test/', logIndex: 'per-tx' }], /rpcs\[0\]\.logIndex: "per-tx" is not a log numbering: per-block .* or per-transaction/],
];
for (const [what, value, problem] of badLists) {
  test(`urlList should refuse ${what}`, (t) => {
    const { problems } = run((r) => urlList(value, 'chains.1.rpcs', r));
    t.is(problems.length, 1, problems.join('\n'));
    t.regex(problems[0]!, problem);
  });
}

test('urlList should never quote a key in a problem', (t) => {
  const { problems } = run((r) => urlList(['https://a.test/v2/abc123def456', 'https://a.test/v2/abc123def456'], 'rpcs', r));
  t.is(problems.length, 1);
  t.false(problems[0]!.includes('abc123def456'));
});

test('proxyUrl should take an http(s) URL, none when empty, and refuse anything else without quoting it', (t) => {
  t.deepEqual(run((r) => proxyUrl('http://user:pw@proxy.test:3128', r)), { value: { proxy: 'http://user:pw@proxy.test:3128' }, problems: [] });
  t.deepEqual(run((r) => proxyUrl('', r)), { value: {}, problems: [] });
  t.deepEqual(run((r) => proxyUrl(undefined, r)).value, {});
  const socks = run((r) => proxyUrl('socks5://user:pw@proxy.test', r));
  t.deepEqual(socks.value, {});
  t.regex(socks.problems[0]!, /^upstreams\.proxy: the socks5: scheme is not supported/);
  const bare = run((r) => proxyUrl('http://user:pa%zzSecret99@proxy.test:3128', r));
  t.deepEqual(bare.value, {});
  t.regex(bare.problems[0]!, /^upstreams\.proxy: the value \(not shown: it may hold a password\) has a user or password with a % that is not a percent escape/);
  t.false(bare.problems[0]!.includes('Secret99'));
  const garbage = run((r) => proxyUrl('pw@@not a url', r));
  t.regex(garbage.problems[0]!, /not shown: it may hold a password/);
  t.false(garbage.problems[0]!.includes('pw@@'));
  t.regex(run((r) => proxyUrl(['x'], r)).problems[0]!, /a list is not a URL/);
});

test('writesSection should read all, K and off, and refuse K above the upstreams', (t) => {
  const w = (value: unknown, upstreams = 3) => run((r) => writesSection(value, 'chains.1.writes', upstreams, r));
  t.deepEqual(w({ broadcast: 'all' }).value, { writes: { broadcast: Infinity } });
  t.deepEqual(w({ broadcast: 2 }).value, { writes: { broadcast: 2 } });
  for (const off of [undefined, { broadcast: 'off' }, { broadcast: 1 }, { broadcast: false }, {}]) t.deepEqual(w(off), { value: {}, problems: [] }, JSON.stringify(off));
  t.regex(w({ broadcast: 4 }).problems[0]!, /^chains\.1\.writes\.broadcast: 4 upstreams asked, but rpcs has 3/);
  t.regex(w({ broadcast: 'some' }).problems[0]!, /is not a broadcast mode/);
  t.regex(w({ broadcast: 0 }).problems[0]!, /is not a broadcast mode/);
  t.regex(w('all').problems[0]!, /^chains\.1\.writes: must be a mapping/);
  t.regex(w({ broadcast: 2, bcast: 1 }).problems[0]!, /writes\.bcast: unknown key/);
});

test('methodList should read the table\'s methods and declared pins, reporting each bad entry by index', (t) => {
  const { value, problems } = run((r) => methodList(['eth_getBlockByHash', { method: 'eth_foo', block: 1 }, 42], 'confirmableMethods', r));
  t.deepEqual(value.map((m) => m.method), ['eth_getBlockByHash', 'eth_foo']);
  t.is(problems.length, 1);
  t.regex(problems[0]!, /^confirmableMethods\[2\]: /);
  t.deepEqual(run((r) => methodList(undefined, 'x', r)), { value: [], problems: [] });
  t.regex(run((r) => methodList('eth_foo', 'x', r)).problems[0]!, /must be a list of methods/);
});

test('fieldLists should read field names per shape, refusing unknown shapes and bad names', (t) => {
  t.deepEqual(run((r) => fieldLists({ block: ['totalDifficulty'], log: ['blockTimestamp'] }, 'ignoredFields', r)), { value: { block: ['totalDifficulty'], log: ['blockTimestamp'] }, problems: [] });
  const bad = run((r) => fieldLists({ block: ['ok', 'not-a-name', 3], blok: [], receipt: 'x' }, 'ignoredFields', r));
  t.deepEqual(bad.value, { block: ['ok'] });
  t.deepEqual(bad.problems.map((p) => p.split(':')[0]), ['ignoredFields.blok', 'ignoredFields.block[1]', 'ignoredFields.block[2]', 'ignoredFields.receipt']);
  t.regex(run((r) => fieldLists([], 'ignoredFields', r)).problems[0]!, /must be a mapping/);
});

test('headsSection should read each key within its bounds and name the bound of one outside', (t) => {
  t.deepEqual(run((r) => headsSection({ intervalMs: 100, suspectBlocks: 1, finalityDepth: 0, waitMs: 600000 }, 'heads', r)), { value: { intervalMs: 100, suspectBlocks: 1, finalityDepth: 0, waitMs: 600000 }, problems: [] });
  const bad = run((r) => headsSection({ intervalMs: 99, waitMs: 1.5, suspectBlocks: '5', depth: 1 }, 'chains.1.heads', r));
  t.deepEqual(bad.value, {});
  t.deepEqual(bad.problems.map((p) => p.split(':')[0]), ['chains.1.heads.depth', 'chains.1.heads.intervalMs', 'chains.1.heads.suspectBlocks', 'chains.1.heads.waitMs']);
  t.regex(bad.problems[1]!, /99 is not an integer from 100 to 3600000/);
  t.deepEqual(run((r) => headsSection(null, 'heads', r)), { value: {}, problems: [] });
});
