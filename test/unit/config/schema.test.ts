import test from 'ava';
import { defaults } from '../../../config/defaults.js';
import { validateConfig, type ConfigProblem, type OmnigateConfig } from '../../../config/schema.js';
import { fromRoot } from '../../support/paths.js';

const ok = (raw: unknown): OmnigateConfig => {
  const r = validateConfig(raw);
  if ('problems' in r) throw new Error(r.problems.map((p) => `${p.path}: ${p.message}`).join('\n'));
  return r.config;
};
const problems = (raw: unknown): ConfigProblem[] => {
  const r = validateConfig(raw);
  if (!('problems' in r)) throw new Error('expected problems');
  return r.problems;
};
const minimal = { chains: { '1': { rpcs: ['https://a.example/v2/KEY'] } } };

test('should use the documented defaults: N=1, probes every 60 s', (t) => {
  t.is(defaults.confirmations, 1);
  t.is(defaults.refreshInterval, 60);
  t.true(defaults.timeouts.upstreamMs < defaults.timeouts.requestMs, 'one upstream call fits in the request deadline');
});

test('should apply every default to a minimal config', (t) => {
  t.deepEqual(ok(minimal), {
    port: defaults.port,
    confirmations: defaults.confirmations,
    refreshInterval: defaults.refreshInterval,
    timeouts: { ...defaults.timeouts, hedgeAdaptive: true },
    limits: { ...defaults.limits },
    server: { ...defaults.server },
    upstreams: { ...defaults.upstreams },
    redactHeaders: defaults.redactHeaders,
    mergeRequests: defaults.mergeRequests,
    cache: { memoryBytes: defaults.cache.memoryBytes },
    disputes: { ...defaults.disputes },
    indexer: {},
    confirmableMethods: [],
    ignoredFields: {},
    heads: {},
    verify: defaults.verify,
    chains: { '1': { rpcs: ['https://a.example/v2/KEY'], confirmations: defaults.confirmations, confirmableMethods: [], ignoredFields: {}, strategy: defaults.strategy, verify: defaults.verify, heads: {} } },
  });
});

test('should read null values as "use the default"', (t) => {
  const c = ok({ ...minimal, port: null, timeouts: null, limits: { batchSize: null }, redactHeaders: null, mergeRequests: null });
  t.is(c.port, defaults.port);
  t.is(c.limits.batchSize, defaults.limits.batchSize);
  t.true(c.redactHeaders);
  t.true(c.mergeRequests);
});

test('should let a chain inherit the top-level confirmations and override it', (t) => {
  const c = ok({
    confirmations: 2,
    chains: { '1': { rpcs: ['https://a.example', 'https://b.example'] }, '10': { rpcs: ['https://c.example', 'https://d.example', 'https://e.example'], confirmations: 3 } },
  });
  t.is(c.confirmations, 2);
  t.is(c.chains['1']!.confirmations, 2);
  t.is(c.chains['10']!.confirmations, 3);
});

test('should accept http, https, ws and wss upstreams, keeping them as written once normalized', (t) => {
  const rpcs = ['http://10.0.0.5:8545', 'https://a.example/v2/KEY', 'ws://10.0.0.5:8546', 'wss://b.example/ws/v3/KEY'];
  t.deepEqual(ok({ chains: { '1': { rpcs } } }).chains['1']!.rpcs, ['http://10.0.0.5:8545/', 'https://a.example/v2/KEY', 'ws://10.0.0.5:8546/', 'wss://b.example/ws/v3/KEY']);
});

test('should normalize upstream URLs: host case, default port, fragment and empty query dropped', (t) => {
  const rpcs = ['HTTPS://RPC.Example:443/v2/KEY#b', 'wss://ws.example:443/v3/KEY?', 'http://n.example:80/?a=1#x', 'https://p.example/ü'];
  t.deepEqual(ok({ chains: { '1': { rpcs } } }).chains['1']!.rpcs, ['https://rpc.example/v2/KEY', 'wss://ws.example/v3/KEY', 'http://n.example/?a=1', 'https://p.example/%C3%BC']);
});

test('should take an rpcs entry as { url, provider } and keep the labels by position', (t) => {
  const c = ok({ chains: { '1': { rpcs: ['https://a.example/', { url: 'https://b.example/x#f', provider: 'acme' }, { url: 'https://c.example/' }] } } });
  t.deepEqual(c.chains['1']!.rpcs, ['https://a.example/', 'https://b.example/x', 'https://c.example/']);
  t.deepEqual(c.chains['1']!.providers, [undefined, 'acme', undefined]);
  t.false('providers' in ok(minimal).chains['1']!, 'no providers key without a label');
});

test('should read the upstreams section: sockets, keep-alive and a proxy URL', (t) => {
  const config = ok({ ...minimal, upstreams: { maxSockets: 16, keepAliveMs: 4000, proxy: 'http://proxy.internal:3128' } });
  t.deepEqual(config.upstreams, { client: 'auto', maxSockets: 16, keepAliveMs: 4000, proxy: 'http://proxy.internal:3128' });
  t.deepEqual(ok({ ...minimal, upstreams: { proxy: '' } }).upstreams, { client: 'auto', maxSockets: 128, keepAliveMs: 30_000 });
  const found = problems({ ...minimal, upstreams: { maxSockets: 0, proxy: 'socks5://127.0.0.1:1080', keepalive: 1 } });
  t.deepEqual(found.map((p) => p.path).sort(), ['upstreams.keepalive', 'upstreams.maxSockets', 'upstreams.proxy']);
  t.regex(found.find((p) => p.path === 'upstreams.proxy')!.message, /socks5: scheme is not supported\. Use an http:\/\/ or https:\/\/ proxy URL/);
  t.regex(problems({ ...minimal, upstreams: { proxy: 'not a url' } })[0]!.message, /is not a URL/);
});

test('should read upstreams.client: auto (the default), node or undici, and refuse anything else with the choices', (t) => {
  for (const client of ['auto', 'node', 'undici'] as const) t.is(ok({ ...minimal, upstreams: { client } }).upstreams!.client, client);
  t.is(ok(minimal).upstreams!.client, 'auto');
  for (const client of ['fetch', 'Node', 1, ['undici']]) {
    const found = problems({ ...minimal, upstreams: { client } });
    t.deepEqual(found.map((p) => p.path), ['upstreams.client'], JSON.stringify(client));
    t.regex(found[0]!.message, /is not an HTTP client: use auto \(undici, or node:http when nock .*\), node \(node:http\) or undici\. Example: client: node$/);
  }
});

test('should read indexer.schema, the schema of the Ponder tables, and name a bad one', (t) => {
  t.deepEqual(ok({ ...minimal, indexer: { schema: 'rfq_views' } }).indexer, { schema: 'rfq_views' });
  t.deepEqual(ok({ ...minimal, indexer: null }).indexer, {});
  const bad = problems({ ...minimal, indexer: { schema: 'rfq; drop', table: 'x' } });
  t.true(bad.some((p) => p.path === 'indexer.schema' && /not a PostgreSQL schema name.*Example: schema: rfq/.test(p.message)), JSON.stringify(bad));
  t.true(bad.some((p) => p.path.startsWith('indexer') && /table/.test(p.path + p.message)), JSON.stringify(bad));
});

test('should read the disputes section', (t) => {
  const fileMaxBytes = defaults.disputes.fileMaxBytes;
  t.deepEqual(ok({ ...minimal, disputes: { window: 4, maxLost: 2, sampleEvery: 1 } }).disputes, { window: 4, maxLost: 2, sampleEvery: 1, fileMaxBytes });
  t.deepEqual(ok({ ...minimal, disputes: { window: 3 } }).disputes, { window: 3, maxLost: 3, sampleEvery: defaults.disputes.sampleEvery, fileMaxBytes });
  t.is(ok({ ...minimal, disputes: { maxLost: 0 } }).disputes.maxLost, 0);
});

test('should read bigint integers (as the YAML loader gives them)', (t) => {
  const c = ok({ port: 8080n, confirmations: 1n, chains: { '1': { rpcs: ['https://a.example'], confirmations: 1n } } });
  t.is(c.port, 8080);
  t.is(c.chains['1']!.confirmations, 1);
});

test('should key chains by canonical decimal id, exact beyond 2^53', (t) => {
  const c = ok({ chains: { '18446744073709551617': { rpcs: ['https://a.example'] }, '007': { rpcs: ['https://b.example'] } } });
  t.deepEqual(Object.keys(c.chains).sort(), ['18446744073709551617', '7']);
});

test('should accept chain id 0', (t) => {
  t.truthy(ok({ chains: { '0': { rpcs: ['https://a.example'] } } }).chains['0']);
});

test('should keep the configured confirmable methods', (t) => {
  const c = ok({ confirmableMethods: ['eth_getBlockByHash'], chains: { '1': { rpcs: ['https://a.example'], confirmableMethods: ['eth_getTransactionReceipt'] } } });
  t.deepEqual(c.confirmableMethods, [{ method: 'eth_getBlockByHash', pin: { kind: 'blockHash', at: 0 } }]);
  t.deepEqual(c.chains['1']!.confirmableMethods, [{ method: 'eth_getTransactionReceipt', pin: { kind: 'txHash', at: 0 } }]);
  const custom = ok({ chains: { '1': { rpcs: ['https://a.example'], confirmableMethods: [{ method: 'eth_foo', block: 1 }, { method: 'eth_bar', txHash: 0 }, { method: 'eth_const', pin: 'none' }] } } });
  t.deepEqual(custom.chains['1']!.confirmableMethods, [
    { method: 'eth_foo', pin: { kind: 'block', at: 1, hash: true } },
    { method: 'eth_bar', pin: { kind: 'txHash', at: 0 } },
    { method: 'eth_const', pin: { kind: 'none' } },
  ]);
});

/** raw config → the path and a piece of the message of the problem it must report. */
const invalid: [string, unknown, string, RegExp][] = [
  ['a non-mapping root', 'chains', '(root)', /must be a YAML mapping/],
  ['a null root', null, '(root)', /must be a YAML mapping/],
  ['no chains', {}, 'chains', /needs at least one chain/],
  ['empty chains', { chains: {} }, 'chains', /needs at least one chain/],
  ['a non-numeric chain key', { chains: { mainnet: { rpcs: ['https://a.example'] } } }, 'chains.mainnet', /not a chain id/],
  ['a negative chain key', { chains: { '-1': { rpcs: ['https://a.example'] } } }, 'chains.-1', /not a chain id/],
  ['a chain that is a list', { chains: { '1': ['https://a.example'] } }, 'chains.1', /must be a mapping with an `rpcs:` list/],
  ['no rpcs', { chains: { '1': {} } }, 'chains.1.rpcs', /non-empty list of upstream URLs/],
  ['empty rpcs', { chains: { '1': { rpcs: [] } } }, 'chains.1.rpcs', /non-empty list/],
  ['rpcs as a string', { chains: { '1': { rpcs: 'https://a.example' } } }, 'chains.1.rpcs', /non-empty list/],
  ['a misspelt scheme', { chains: { '1338': { rpcs: ['https://a.example', 'https://b.example', 'htp://x'] } } }, 'chains.1338.rpcs[2]', /^"htp:\/\/x" is not an http\(s\)\/ws\(s\) URL\. Example: "https:\/\/rpc\.example\/v1\/KEY"$/],
  ['a non-URL', { chains: { '1': { rpcs: ['localhost:8545'] } } }, 'chains.1.rpcs[0]', /is not an http\(s\)\/ws\(s\) URL/],
  ['an ftp URL', { chains: { '1': { rpcs: ['ftp://a.example'] } } }, 'chains.1.rpcs[0]', /is not an http\(s\)\/ws\(s\) URL/],
  ['a number as URL', { chains: { '1': { rpcs: [5] } } }, 'chains.1.rpcs[0]', /5 is not a URL string/],
  ['a template URL', { chains: { '1': { rpcs: ['https://mainnet.infura.io/v3/${INFURA_API_KEY}'] } } }, 'chains.1.rpcs[0]', /is a template/],
  ['a duplicate URL', { chains: { '1': { rpcs: ['https://a.example/v2/K', 'https://a.example/v2/K'] } } }, 'chains.1.rpcs[1]', /listed twice/],
  ['a duplicate URL in another case and with a trailing slash', { chains: { '1': { rpcs: ['https://a.example', 'HTTPS://A.EXAMPLE/'] } } }, 'chains.1.rpcs[1]', /listed twice/],
  ['a duplicate URL with a fragment', { chains: { '1': { rpcs: ['https://x.example/', 'https://x.example/#b'] } } }, 'chains.1.rpcs[1]', /"https:\/\/x\.example" is listed twice \(the same URL as chains\.1\.rpcs\[0\] once the case, default port, fragment and empty query are ignored\).*remove one/],
  ['a duplicate URL with an empty query', { chains: { '1': { rpcs: ['https://x.example/', 'https://x.example/?'] } } }, 'chains.1.rpcs[1]', /listed twice/],
  ['a duplicate URL with the default port', { chains: { '1': { rpcs: ['https://x.example/', { url: 'https://x.example:443/', provider: 'p' }] } } }, 'chains.1.rpcs[1].url', /listed twice/],
  ['an rpcs object without url', { chains: { '1': { rpcs: [{ provider: 'p' }] } } }, 'chains.1.rpcs[0].url', /is missing\. Example: \{ url: /],
  ['an rpcs object with a non-string url', { chains: { '1': { rpcs: [{ url: 5 }] } } }, 'chains.1.rpcs[0].url', /5 is not a URL string/],
  ['an rpcs object with an unknown key', { chains: { '1': { rpcs: [{ url: 'https://a.example', label: 'p' }] } } }, 'chains.1.rpcs[0].label', /unknown key; known keys here: url, provider/],
  ['an empty provider label', { chains: { '1': { rpcs: [{ url: 'https://a.example', provider: '' }] } } }, 'chains.1.rpcs[0].provider', /"" is not a provider label/],
  ['a provider label that is a number', { chains: { '1': { rpcs: [{ url: 'https://a.example', provider: 5 }] } } }, 'chains.1.rpcs[0].provider', /5 is not a provider label/],
  ['disputes.maxLost above disputes.window', { chains: { '1': { rpcs: ['https://a.example'] } }, disputes: { window: 4, maxLost: 5 } }, 'disputes.maxLost', /5 is not an integer from 0 to 4/],
  ['disputes.window 0', { chains: { '1': { rpcs: ['https://a.example'] } }, disputes: { window: 0 } }, 'disputes.window', /0 is not an integer from 1/],
  ['an unknown disputes key', { chains: { '1': { rpcs: ['https://a.example'] } }, disputes: { maxlost: 1 } }, 'disputes.maxlost', /did you mean "maxLost"\?/],
  ['port out of range', { ...minimal, port: 70000 }, 'port', /not an integer from 0 to 65535/],
  ['a string port', { ...minimal, port: '5000' }, 'port', /"5000" is not an integer/],
  ['confirmations 0', { ...minimal, confirmations: 0 }, 'confirmations', /not an integer from 1/],
  ['fractional confirmations', { ...minimal, confirmations: 1.5 }, 'confirmations', /1\.5 is not an integer/],
  ['refreshInterval 0', { ...minimal, refreshInterval: 0 }, 'refreshInterval', /in seconds/i],
  ['chain confirmations above its rpcs', { chains: { '1': { rpcs: ['https://a.example', 'https://b.example'], confirmations: 3 } } }, 'chains.1.confirmations', /3 confirmations need at least 3 upstreams of distinct providers, but rpcs has 2/],
  ['timeouts as a list', { ...minimal, timeouts: [1] }, 'timeouts', /must be a mapping/],
  ['a zero upstream timeout', { ...minimal, timeouts: { upstreamMs: 0 } }, 'timeouts.upstreamMs', /not an integer/],
  ['a zero batch size', { ...minimal, limits: { batchSize: 0 } }, 'limits.batchSize', /not an integer/],
  ['a budget below one answer', { ...minimal, limits: { responseBytes: 1000, bufferedBytes: 999 } }, 'limits.bufferedBytes', /below limits\.responseBytes \(1000\)/],
  ['a JSON depth past the stack-safe bound', { ...minimal, limits: { jsonDepth: 5000 } }, 'limits.jsonDepth', /not an integer from 1 to 2048/],
  ['a zero probe concurrency', { ...minimal, limits: { probeConcurrency: 0 } }, 'limits.probeConcurrency', /not an integer from 1/],
  ['a zero socket cap', { ...minimal, limits: { upstreamSockets: 0 } }, 'limits.upstreamSockets', /not an integer from 1/],
  ['redactHeaders as a string', { ...minimal, redactHeaders: 'yes' }, 'redactHeaders', /is not true or false/],
  ['batchUpstream as a string', { chains: { '1': { rpcs: ['https://a.example'], batchUpstream: 'no' } } }, 'chains.1.batchUpstream', /"no" is not true or false: true \(default\) sends a batch's calls to an upstream as one batch, false one by one/],
  ['a never-confirmable method', { ...minimal, confirmableMethods: ['eth_blockNumber'] }, 'confirmableMethods[0]', /eth_blockNumber is never confirmable/],
  ['eth_sendRawTransaction on a chain', { chains: { '1': { rpcs: ['https://a.example'], confirmableMethods: ['eth_getBlockByHash', 'eth_sendRawTransaction'] } } }, 'chains.1.confirmableMethods[1]', /never confirmable/],
  ['a pinned method at another position', { ...minimal, confirmableMethods: [{ method: 'eth_getBalance', block: 0 }] }, 'confirmableMethods[0]', /eth_getBalance has its pin at block: 1, not at block: 0: write just eth_getBalance/],
  ['a method outside the table without its pin', { ...minimal, confirmableMethods: ['eth_foo'] }, 'confirmableMethods[0]', /eth_foo is not in the method table.*write \{ method: eth_foo, block: <index> \}/],
  ['a pin that is not an index', { ...minimal, confirmableMethods: [{ method: 'eth_foo', block: 'latest' }] }, 'confirmableMethods[0]', /block must be the index of that parameter/],
  ['two pins', { ...minimal, confirmableMethods: [{ method: 'eth_foo', block: 1, txHash: 0 }] }, 'confirmableMethods[0]', /exactly one of block, blockHash, txHash or pin/],
  ['a table method without a pin', { ...minimal, confirmableMethods: ['eth_chainId'] }, 'confirmableMethods[0]', /eth_chainId has no pin/],
  ['a non-method name', { ...minimal, confirmableMethods: ['getBalance'] }, 'confirmableMethods[0]', /not a JSON-RPC method name/],
  ['confirmableMethods as a string', { ...minimal, confirmableMethods: 'eth_getBlockByHash' }, 'confirmableMethods', /must be a list of methods/],
  ['refresh_interval', { ...minimal, refresh_interval: 30 }, 'refresh_interval', /did you mean "refreshInterval"\?/],
  ['Port (case)', { ...minimal, Port: 1 }, 'Port', /did you mean "port"\?/],
  ['an unknown top-level key', { ...minimal, foo: 1 }, 'foo', /known keys here: port, host, confirmations, refreshInterval/],
  ['urls instead of rpcs', { chains: { '1': { rpcs: ['https://a.example'], urls: [] } } }, 'chains.1.urls', /did you mean "rpcs"\?/],
  ['confirmation instead of confirmations', { chains: { '1': { rpcs: ['https://a.example'], confirmation: 1 } } }, 'chains.1.confirmation', /did you mean "confirmations"\?/],
  ['an unknown timeouts key', { ...minimal, timeouts: { upstream: 1 } }, 'timeouts.upstream', /known keys here: upstreamMs, requestMs/],
];
for (const [name, raw, path, message] of invalid) {
  test(`should report ${name} at ${path}`, (t) => {
    const found = problems(raw).find((p) => p.path === path);
    t.truthy(found, `no problem at ${path}: ${JSON.stringify(problems(raw))}`);
    t.regex(found!.message, message);
  });
}

/** A provider key written in the file, where each of these problems would quote its value. */
const key = '0123456789abcdef0123456789abcdef';
const leaking: [string, unknown, string, RegExp][] = [
  ['a duplicate URL with a key', { chains: { '1': { rpcs: [`https://a.example/v2/${key}`, `https://A.example/v2/${key}#b`] } } }, 'chains.1.rpcs[1]', /^"https:\/\/a\.example\/v2\/\*\*\*" is listed twice \(the same URL as chains\.1\.rpcs\[0\]/],
  ['an ftp URL with a password', { chains: { '1': { rpcs: [`ftp://user:${key}@a.example/x`] } } }, 'chains.1.rpcs[0]', /^"ftp:\/\/\*\*\*@a\.example\/x" is not an http\(s\)\/ws\(s\) URL/],
  ['a URL without its scheme', { chains: { '1': { rpcs: [`a.example/v2/${key}`] } } }, 'chains.1.rpcs[0]', /^the value \(not shown: it may hold a key\) is not an http\(s\)\/ws\(s\) URL \(it has no scheme: write https:\/\/, http:\/\/, wss:\/\/ or ws:\/\/ before the host\)/],
  ['a template with a key beside it', { chains: { '1': { rpcs: [`https://a.example/v2/${key}/%7Bchain%7D`] } } }, 'chains.1.rpcs[0]', /^"https:\/\/a\.example\/v2\/\*\*\*\/\*\*\*" is a template/],
  ['a URL nested in a list', { chains: { '1': { rpcs: [[`https://a.example/v2/${key}`]] } } }, 'chains.1.rpcs[0]', /^a list is not a URL string$/],
  ['a url that is a list', { chains: { '1': { rpcs: [{ url: [`https://a.example/v2/${key}`] }] } } }, 'chains.1.rpcs[0].url', /^a list is not a URL string$/],
  ['a proxy URL with a password that does not parse', { ...minimal, upstreams: { proxy: `http//user:${key}@proxy.internal:3128` } }, 'upstreams.proxy', /^the value \(not shown: it may hold a password\) is not a URL\. Use an http:\/\/ or https:\/\/ proxy URL/],
  ['a proxy URL in a list', { ...minimal, upstreams: { proxy: [`http://user:${key}@proxy.internal:3128`] } }, 'upstreams.proxy', /^a list is not a URL\./],
  ['an upstream URL as a method', { ...minimal, confirmableMethods: [`https://a.example/v2/${key}`] }, 'confirmableMethods[0]', /^"https:\/\/a\.example\/v2\/\*\*\*" is not a JSON-RPC method name/],
  ['an upstream URL as the HTTP client', { ...minimal, upstreams: { client: `https://b.example/v2/${key}` } }, 'upstreams.client', /^"https:\/\/b\.example\/v2\/\*\*\*" is not an HTTP client/],
  ['an upstream URL as a strategy', { chains: { '1': { rpcs: ['https://a.example'], strategy: [`https://b.example/v2/${key}`] } } }, 'chains.1.strategy', /^\["https:\/\/b\.example\/v2\/\*\*\*"\] is not a strategy/],
  ['an upstream URL as a key', { chains: { '1': { rpcs: ['https://a.example'], [`https://b.example/v2/${key}`]: null } } }, 'chains.1.https://b.example/v2/***', /^unknown key/],
];
for (const [name, raw, path, message] of leaking) {
  test(`should report ${name} at ${path} without the key`, (t) => {
    const all = problems(raw);
    t.false(JSON.stringify(all).includes(key), JSON.stringify(all));
    const found = all.find((p) => p.path === path);
    t.truthy(found, `no problem at ${path}: ${JSON.stringify(all)}`);
    t.regex(found!.message, message);
  });
}

test('should report every problem at once', (t) => {
  const list = problems({
    port: -1,
    refresh_interval: 5,
    chains: { '1': { rpcs: ['htp://x', 'https://a.example', 'https://a.example'] }, abc: { rpcs: [] } },
  });
  t.deepEqual(
    list.map((p) => p.path),
    ['refresh_interval', 'port', 'chains.1.rpcs[0]', 'chains.1.rpcs[2]', 'chains.abc'],
  );
});

test('should give a fix or an example with every problem', (t) => {
  const list = problems({ port: 'x', confirmations: 0, refresh_interval: 1, chains: { '1': { rpcs: ['htp://x'] } } });
  for (const p of list) t.regex(p.message, /Example|did you mean|e\.g\.|use |put |add |remove /, `${p.path}: ${p.message}`);
});

// YAML reads `1:` as a number and `"1":` as a string; both name chain 1. One of the two chains'
// rpcs silently disappearing would change who votes.
test('should report a chain listed twice under two spellings of its id', (t) => {
  const r = validateConfig({ chains: { '1': { rpcs: ['https://a.example'] }, '01': { rpcs: ['https://b.example'] } } });
  t.true('problems' in r, `accepted: ${JSON.stringify(r)}`);
});

test('should read the server section and refuse a zero headers timeout at server.headersTimeoutMs', (t) => {
  t.deepEqual(ok({ ...minimal, server: { shutdownMs: 0, requestTimeoutMs: 60_000 } }).server, { ...defaults.server, shutdownMs: 0, requestTimeoutMs: 60_000 });
  const r = validateConfig({ ...minimal, server: { headersTimeoutMs: 0, keepalive: 1 } });
  t.true('problems' in r);
  const paths = 'problems' in r ? r.problems.map((p) => p.path) : [];
  t.deepEqual(paths.sort(), ['server.headersTimeoutMs', 'server.keepalive']);
});

test('should read ignoredFields, global and per chain, per shape', (t) => {
  const config = ok({ ignoredFields: { log: ['blockTimestamp'] }, chains: { '1': { rpcs: ['https://a.example'], ignoredFields: { block: ['l1BlockNumber'], receipt: [] } } } });
  t.deepEqual(config.ignoredFields, { log: ['blockTimestamp'] });
  t.deepEqual(config.chains['1']!.ignoredFields, { block: ['l1BlockNumber'], receipt: [] });
});

const badIgnored: [string, unknown, string, RegExp][] = [
  ['an unknown shape', { logs: ['x'] }, 'chains.1.ignoredFields.logs', /unknown key; known keys here: block, transaction, receipt, log/],
  ['a shape in another case', { Block: ['x'] }, 'chains.1.ignoredFields.Block', /did you mean "block"/],
  ['a list that is a string', { log: 'blockTimestamp' }, 'chains.1.ignoredFields.log', /must be a list of field names/],
  ['a field that is not a name', { transaction: ['chain id'] }, 'chains.1.ignoredFields.transaction[0]', /not a field name/],
  ['a list instead of a mapping', ['totalDifficulty'], 'chains.1.ignoredFields', /must be a mapping of shape to field names/],
];
for (const [name, value, path, message] of badIgnored) {
  test(`should report ${name} in ignoredFields at ${path}`, (t) => {
    const p = problems({ chains: { '1': { rpcs: ['https://a.example'], ignoredFields: value } } });
    t.is(p.length, 1);
    t.is(p[0]!.path, path);
    t.regex(p[0]!.message, message);
  });
}

test('should read heads settings globally and per chain', (t) => {
  const config = ok({ heads: { intervalMs: 2000, suspectBlocks: 50 }, chains: { '1': { rpcs: ['https://a.example'], heads: { waitMs: 500, finalityDepth: 10 } } } });
  t.deepEqual(config.heads, { intervalMs: 2000, suspectBlocks: 50 });
  t.deepEqual(config.chains['1']!.heads, { waitMs: 500, finalityDepth: 10 });
});

test('should refuse a bad heads setting with its path and an example', (t) => {
  const p = problems({ heads: { intervalMs: 5, waitms: 1 }, chains: { '1': { rpcs: ['https://a.example'], heads: 'fast' } } });
  t.true(p.some((x) => x.path === 'heads.intervalMs' && /from 100 to .*Example: intervalMs: 4000/.test(x.message)), JSON.stringify(p));
  t.true(p.some((x) => x.path === 'heads.waitms' && /did you mean "waitMs"/.test(x.message)), JSON.stringify(p));
  t.true(p.some((x) => x.path === 'chains.1.heads' && /must be a mapping/.test(x.message)), JSON.stringify(p));
});

test('chains.<id>.batchUpstream: false is kept; true or absent is the default (no key)', (t) => {
  const of = (batchUpstream: unknown) => {
    const r = validateConfig({ chains: { '1': { rpcs: ['https://a.example'], ...(batchUpstream === undefined ? {} : { batchUpstream }) } } });
    if (!('config' in r)) throw new Error(JSON.stringify(r.problems));
    return r.config.chains['1']!.batchUpstream;
  };
  t.is(of(false), false);
  t.is(of(true), undefined);
  t.is(of(undefined), undefined);
});

test('should read mergeRequests, and name a value that is not a boolean with its path', (t) => {
  t.false(ok({ ...minimal, mergeRequests: false }).mergeRequests);
  t.true(ok({ ...minimal, mergeRequests: true }).mergeRequests);
  const r = validateConfig({ ...minimal, mergeRequests: 'no' });
  t.true('problems' in r);
  if ('problems' in r) t.deepEqual(r.problems.map((p) => p.path), ['mergeRequests']);
});

test('should read cache.redis, require its hmacKey and name what is wrong without showing the URL or the key', (t) => {
  const c = ok({ ...minimal, cache: { redis: { url: 'redis://:pw@127.0.0.1:6379/1', hmacKey: 'k'.repeat(16) } } });
  t.deepEqual(c.cache, { memoryBytes: defaults.cache.memoryBytes, redis: { url: 'redis://:pw@127.0.0.1:6379/1', hmacKey: 'k'.repeat(16), ...defaults.cache.redis } });
  const r = validateConfig({ ...minimal, cache: { redis: { url: 'http://user:secret@host', hmacKey: 'short-secret', ttlSeconds: 0 } } });
  t.true('problems' in r);
  if (!('problems' in r)) return;
  t.deepEqual(r.problems.map((p) => p.path), ['cache.redis.url', 'cache.redis.hmacKey', 'cache.redis.ttlSeconds']);
  t.false(JSON.stringify(r.problems).includes('secret'), 'neither the URL nor the key is shown');
});

test('server.admin: a port, and a host that defaults to loopback; a bad one is reported with its path', (t) => {
  t.deepEqual(ok({ ...minimal, server: { admin: { port: 9090 } } }).server.admin, { port: 9090, host: '127.0.0.1' });
  t.deepEqual(ok({ ...minimal, server: { admin: { port: 0, host: '10.0.0.5' } } }).server.admin, { port: 0, host: '10.0.0.5' });
  t.is(ok(minimal).server.admin, undefined);
  const paths = (raw: unknown) => problems(raw).map((p) => p.path);
  t.deepEqual(paths({ ...minimal, server: { admin: { host: '127.0.0.1' } } }), ['server.admin.port']);
  t.deepEqual(paths({ ...minimal, server: { admin: { port: 70000 } } }), ['server.admin.port']);
  t.deepEqual(paths({ ...minimal, server: { admin: { port: 9090, host: 'not a host' } } }), ['server.admin.host']);
  t.deepEqual(paths({ ...minimal, server: { admin: { port: 9090, tls: true } } }), ['server.admin.tls']);
  t.deepEqual(paths({ ...minimal, server: { admin: 9090 } }), ['server.admin']);
});

test('should read verify per chain over the global one, and name the path of a bad one', (t) => {
  const c = ok({ ...minimal, verify: 'proof', chains: { 1: { rpcs: ['https://a.example/v2/KEY'] }, 2: { rpcs: ['https://b.example/v2/KEY'], verify: 'agreement' } } });
  t.is(c.verify, 'proof');
  t.is(c.chains['1']!.verify, 'proof');
  t.is(c.chains['2']!.verify, 'agreement');
  const bad = validateConfig({ ...minimal, chains: { 1: { rpcs: ['https://a.example/v2/KEY'], verify: 'proofs' } } });
  t.true('problems' in bad && bad.problems.some((p) => p.path === 'chains.1.verify' && /not a verify mode/.test(p.message)));
  const badTop = validateConfig({ ...minimal, verify: true });
  t.true('problems' in badTop && badTop.problems.some((p) => p.path === 'verify'));
});

/** The keys a problem of `validateConfig` lists as known at a path (its "unknown key" message). */
function knownKeysAt(path: string): string[] {
  const found = problems({ zzz: 1, chains: { 1: { rpcs: [{ url: 'http://a.example', zzz: 1 }], zzz: 1 } } }).find((p) => p.path === path);
  const m = /known keys here: (.+)$/.exec(found?.message ?? '');
  return m ? m[1]!.split(', ') : [];
}

test('the README\'s configuration table should name every key the loader takes at the top and in a chain, and no other', async (t) => {
  const { readFile } = await import('node:fs/promises');
  const readme = await readFile(fromRoot('README.md'), 'utf8');
  const start = readme.indexOf('## Configuration at a glance');
  const rows = [...readme.slice(start, readme.indexOf('\n## ', start + 1)).matchAll(/^\| (`[^|]+) \| ([^\n]+) \|$/gm)];
  const named = rows.flatMap((r) => [...r[1]!.matchAll(/`([A-Za-z]+)[.`]/g)].map((m) => m[1]!));
  const top = knownKeysAt('zzz');
  t.true(top.length > 10, 'the loader lists its top-level keys');
  t.deepEqual([...new Set(named)].sort(), [...top].sort());
  const chainRow = rows.find((r) => r[1]!.startsWith('`chains.<id>.*`'));
  t.truthy(chainRow, 'a chains.<id>.* row');
  const inChainRow = new Set([...chainRow![2]!.matchAll(/`([A-Za-z]+)[.`]/g)].map((m) => m[1]!));
  for (const key of [...knownKeysAt('chains.1.zzz'), ...knownKeysAt('chains.1.rpcs[0].zzz').filter((k) => k !== 'url')]) t.true(inChainRow.has(key), key);
});

test('chains written as a list is said to be a list, not "no chain"', (t) => {
  const [problem] = problems({ chains: [1, 10] });
  t.is(problem!.path, 'chains');
  t.regex(problem!.message, /^must be a mapping of chain id to its upstreams, not a list\. Example:/);
});
