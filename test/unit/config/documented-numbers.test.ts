/**
 * Every numeric setting of the Configuration table (config/README.md), written in a YAML file as a user
 * writes it (whole numbers as `0`, `1`, `2`, shares as `0`, `1`, `0.5`) and loaded as
 * `omnigate serve --config` loads it (loadConfigFile), at its documented bounds: accepted, and the
 * value arrives as that JS number. Out-of-bounds values are refused with the YAML path and line.
 * The table's keys are read from config/README.md, so a key added there without a case here fails.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import test from 'ava';
import { loadConfigFile, type OmnigateConfig } from '../../../config/index.js';
import { ConfigError } from '../../../lib/errors.js';
import { fromRoot } from '../../support/paths.js';

let dir = '';
let files = 0;
test.before(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'omnigate-config-'));
});
test.after.always(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

const RPCS = ['https://a.example/', 'https://b.example/', 'https://c.example/'];

/**
 * A config file: `top` lines at the top level, `chain` lines under `chains.1` (3 upstreams of 3
 * providers), `first` replacing the first rpcs entry. Loaded as `omnigate serve --config` does.
 */
async function load(parts: { top?: string[]; chain?: string[]; first?: string }, env: Record<string, string> = {}): Promise<OmnigateConfig> {
  const text = [
    ...(parts.top ?? []),
    'chains:',
    '  1:',
    '    rpcs:',
    `      - ${parts.first ?? RPCS[0]}`,
    ...RPCS.slice(1).map((u) => `      - ${u}`),
    ...(parts.chain ?? []).map((l) => `    ${l}`),
    '',
  ].join('\n');
  const file = path.join(dir, `config-${(files += 1)}.yaml`);
  await writeFile(file, text);
  return loadConfigFile(file, { env });
}

/** `a.b.c: value` as nested YAML lines, with `siblings` (`key: value` lines) beside the last key. */
function nested(dotted: string, value: string, siblings: string[] = []): string[] {
  const keys = dotted.split('.');
  const lines = keys.map((k, i) => `${'  '.repeat(i)}${k}:${i === keys.length - 1 ? ` ${value}` : ''}`);
  return [...lines, ...siblings.map((l) => `${'  '.repeat(keys.length - 1)}${l}`)];
}

interface Case {
  /** The table's key (config/README.md). */
  key: string;
  /** The test's name, when the key names several (`chains.<id>.heads.*`). */
  name?: string;
  /** Each value as written in the file, and the number the config then holds (undefined: the setting's "off"). */
  values: [written: string, expected: number | undefined][];
  /** The file's lines for one value. */
  file(written: string): { top?: string[]; chain?: string[]; first?: string };
  /** Where the loaded config holds it. */
  read(c: OmnigateConfig): unknown;
}

/** A top-level key (`timeouts.hedgeBudget`), read back at the same path; `siblings`: keys its bounds depend on. */
const top = (key: string, values: Case['values'], siblings: string[] = []): Case => ({
  key,
  values,
  file: (w) => ({ top: nested(key, w, siblings) }),
  read: (c) => key.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown>)[k], c),
});
/** A key of `chains.<id>`, read back from chains['1']. */
const chain = (key: string, values: Case['values']): Case => ({
  key: `chains.<id>.${key}`,
  values,
  file: (w) => ({ chain: nested(key, w) }),
  read: (c) => key.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown>)[k], c.chains['1']),
});
/** A key of an rpcs entry `{ url, key: value }`. */
const entry = (key: 'weight' | 'maxConcurrent' | 'maxRps', values: Case['values']): Case => ({
  key: `chains.<id>.rpcs[i].${key}`,
  values,
  file: (w) => ({ first: `{ url: ${RPCS[0]}, ${key}: ${w} }` }),
  read: (c) => c.chains['1']!.upstreamLimits?.[0]?.[key],
});
/** A confirmableMethods entry `{ method: eth_foo, <where>: i }` (globally or on the chain): the pin's index. */
const pinIndex = (key: 'confirmableMethods' | 'chains.<id>.confirmableMethods'): Case => ({
  key,
  values: [['0', 0], ['9', 9]],
  file: (w) => (key === 'confirmableMethods' ? { top: [`confirmableMethods: [{ method: eth_foo, block: ${w} }]`] } : { chain: [`confirmableMethods: [{ method: eth_foo, txHash: ${w} }]`] }),
  read: (c) => {
    const list = key === 'confirmableMethods' ? c.confirmableMethods : c.chains['1']!.confirmableMethods;
    const pin = list.find((m) => m.method === 'eth_foo')?.pin as { at?: number } | undefined;
    return pin?.at;
  },
});

const HEADS: [string, Case['values']][] = [
  ['intervalMs', [['100', 100], ['3600000', 3_600_000]]],
  ['suspectBlocks', [['1', 1], ['1000000000', 1_000_000_000]]],
  ['finalityDepth', [['0', 0], ['1000000000', 1_000_000_000]]],
  ['waitMs', [['0', 0], ['600000', 600_000]]],
];

const cases: Case[] = [
  top('port', [['0', 0], ['65535', 65_535]]),
  top('confirmations', [['1', 1], ['3', 3], ['1000', 1000]]),
  top('refreshInterval', [['1', 1], ['86400', 86_400]]),
  top('indexer.statementTimeoutMs', [['1', 1], ['3600000', 3_600_000]]),
  top('indexer.connectTimeoutMs', [['1', 1], ['600000', 600_000]]),
  top('indexer.lookbackFloor', [['0', 0], ['1700000000', 1_700_000_000], ['2147483647', 2_147_483_647]]),
  top('indexer.statsIntervalSeconds', [['1', 1], ['86400', 86_400]]),
  top('timeouts.upstreamMs', [['1', 1], ['600000', 600_000]]),
  top('timeouts.requestMs', [['1', 1], ['3600000', 3_600_000]]),
  top('timeouts.hedgeMs', [['0', 0], ['1000', 1000], ['600000', 600_000]]),
  top('timeouts.hedgeMinMs', [['0', 0], ['600000', 600_000]]),
  // At least hedgeMinMs (20 by default; 0 here), at most 600000.
  top('timeouts.hedgeMaxMs', [['0', 0], ['600000', 600_000]], ['hedgeMinMs: 0']),
  top('timeouts.hedgeQuantile', [['0.5', 0.5], ['0.9', 0.9], ['0.999', 0.999]]),
  top('timeouts.hedgeBudget', [['0', 0], ['0.0', 0], ['0.1', 0.1], ['1', 1], ['1.0', 1]]),
  top('timeouts.sendMs', [['0', 0], ['3600000', 3_600_000]]),
  top('limits.bodyBytes', [['1', 1], ['1073741824', 2 ** 30]]),
  top('limits.batchSize', [['1', 1], ['100000', 100_000]]),
  top('limits.responseBytes', [['1', 1], ['268435456', 2 ** 28]]),
  top('limits.jsonDepth', [['1', 1], ['2048', 2048]]),
  // At least limits.responseBytes (64 MiB by default).
  top('limits.bufferedBytes', [['67108864', 2 ** 26], ['1099511627776', 2 ** 40]]),
  top('limits.probeConcurrency', [['1', 1], ['10000', 10_000]]),
  top('limits.upstreamSockets', [['1', 1], ['1000000', 1_000_000]]),
  top('server.headersTimeoutMs', [['1', 1], ['600000', 600_000]]),
  top('server.requestTimeoutMs', [['0', 0], ['3600000', 3_600_000]]),
  top('server.keepAliveTimeoutMs', [['1', 1], ['600000', 600_000]]),
  top('server.shutdownMs', [['0', 0], ['600000', 600_000]]),
  top('server.workers', [['1', 1], ['1024', 1024]]),
  top('upstreams.maxSockets', [['1', 1], ['100000', 100_000]]),
  top('upstreams.keepAliveMs', [['1', 1], ['3600000', 3_600_000]]),
  top('disputes.window', [['1', 1], ['10000', 10_000]]),
  // At most disputes.window (20 by default).
  top('disputes.maxLost', [['0', 0], ['20', 20]]),
  top('disputes.sampleEvery', [['1', 1], ['1000000', 1_000_000]]),
  top('disputes.fileMaxBytes', [['1024', 1024], ['1099511627776', 2 ** 40]]),
  top('cache.memoryBytes', [['0', 0], ['1099511627776', 2 ** 40]]),
  ...(
    [
      ['ttlSeconds', [['1', 1], ['31536000', 31_536_000]]],
      ['maxBytes', [['1048576', 1_048_576], ['1099511627776', 2 ** 40]]],
      ['timeoutMs', [['1', 1], ['10000', 10_000]]],
    ] as const
  ).map(([k, values]) => top(`cache.redis.${k}`, values.map(([w, n]) => [w, n] as [string, number]), ['url: redis://127.0.0.1:6379', 'hmacKey: 0123456789abcdef0123'])),
  {
    key: 'access.redis.timeoutMs',
    values: [['1', 1], ['10000', 10_000]],
    file: (w) => ({ top: ['access:', '  keys: [{ key: relayer-key-0123456789abcdef }]', '  redis:', '    url: redis://127.0.0.1:6379', `    timeoutMs: ${w}`] }),
    read: (c) => c.access?.redis?.timeoutMs,
  },
  {
    key: 'server.admin',
    values: [['0', 0], ['65535', 65_535]],
    file: (w) => ({ top: ['server:', `  admin: { port: ${w} }`] }),
    read: (c) => c.server.admin?.port,
  },
  pinIndex('confirmableMethods'),
  ...HEADS.map(([k, v]) => top(`heads.${k}`, v)),
  entry('weight', [['0.001', 0.001], ['1', 1], ['2.5', 2.5], ['1000', 1000]]),
  entry('maxConcurrent', [['1', 1], ['1000000', 1_000_000]]),
  entry('maxRps', [['1', 1], ['1000000', 1_000_000]]),
  // 1 (or off): one upstream, no broadcast; K from 2 to the chain's 3 upstreams; all.
  { ...chain('writes.broadcast', [['1', undefined], ['off', undefined], ['2', 2], ['3', 3], ['all', Infinity]]), read: (c) => c.chains['1']!.writes?.broadcast },
  // At most the chain's distinct providers (3 here).
  chain('confirmations', [['1', 1], ['3', 3]]),
  pinIndex('chains.<id>.confirmableMethods'),
  ...HEADS.map(([k, v]) => ({ ...chain(`heads.${k}`, v), key: 'chains.<id>.heads.*', name: `chains.<id>.heads.${k}` })),
];

/** Keys of the table that hold no number. */
const notNumeric = [
  'upstreams.client', 'upstreams.proxy', 'redactHeaders', 'mergeRequests', 'cache.redis.url', 'cache.redis.hmacKey', 'cache.redis.prefix', 'disputes.file', 'ignoredFields', 'chains.<id>.rpcs', 'chains.<id>.rpcs[i].logIndex', 'chains.<id>.strategy', 'verify', 'chains.<id>.verify', 'chains.<id>.batchUpstream',
  'chains.<id>.ignoredFields', 'indexer.schema', 'host', 'access.keys', 'access.anonymous', 'access.adminRoutes', 'access.redis.url', 'access.redis.prefix',
  'attest.key', 'attest.keyFile', 'attest.keyId', 'attest.chains',
];

test('the cases cover every key of the Configuration table (config/README.md)', async (t) => {
  const readme = await readFile(fromRoot('config/README.md'), 'utf8');
  const start = readme.indexOf('\n## Configuration\n');
  t.true(start >= 0, 'config/README.md has a Configuration section');
  const section = readme.slice(start + 1).split(/\n#{2,3} /)[0]!;
  const keys = section
    .split('\n')
    .filter((l) => l.startsWith('| `'))
    .flatMap((l) => [...l.split('|')[1]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!));
  t.true(keys.length > 40, `keys read from the table: ${keys.length}`);
  const covered = new Set([...cases.map((c) => c.key), ...notNumeric]);
  t.deepEqual(keys.filter((k) => !covered.has(k)), [], 'table keys without a case here');
  t.deepEqual([...covered].filter((k) => !keys.includes(k)), [], 'cases for keys the table does not list');
});

for (const c of cases) {
  test(`${c.name ?? c.key}: ${c.values.map(([w]) => w).join(', ')} accepted from a YAML file, as numbers`, async (t) => {
    for (const [written, expected] of c.values) {
      const config = await load(c.file(written));
      const got = c.read(config);
      t.is(got, expected, `${c.key}: ${written}`);
      if (expected !== undefined) t.is(typeof got, 'number', `${c.key}: ${written} arrives as a number`);
    }
  });
}

test('edges set together: responseBytes at its maximum with bufferedBytes as large, maxLost = window = 10000, hedgeMaxMs = hedgeMinMs', async (t) => {
  const config = await load({
    top: [
      'limits:', '  responseBytes: 1073741824', '  bufferedBytes: 1073741824',
      'disputes:', '  window: 10000', '  maxLost: 10000',
      'timeouts:', '  hedgeMinMs: 600000', '  hedgeMaxMs: 600000',
    ],
  });
  t.is(config.limits.responseBytes, 2 ** 30);
  t.is(config.limits.bufferedBytes, 2 ** 30);
  t.is(config.disputes.maxLost, 10_000);
  t.is(config.timeouts.hedgeMaxMs, 600_000);
});

test('a fixed timeouts.hedgeMs of 0 turns hedging off, not adaptive', async (t) => {
  const config = await load({ top: ['timeouts:', '  hedgeMs: 0'] });
  t.is(config.timeouts.hedgeMs, 0);
  t.false(config.timeouts.hedgeAdaptive);
});

test('numbers from ${VAR} references arrive as numbers too', async (t) => {
  const config = await load(
    { top: ['port: ${PORT:-0}', 'timeouts:', '  hedgeBudget: ${BUDGET:-1}'], chain: ['writes:', '  broadcast: ${K}'] },
    { K: '2', BUDGET: '0' },
  );
  t.is(config.port, 0);
  t.is(config.timeouts.hedgeBudget, 0);
  t.is(config.chains['1']!.writes?.broadcast, 2);
});

/** The problems a file is refused with. */
async function refused(parts: Parameters<typeof load>[0]): Promise<readonly string[]> {
  const err = await load(parts).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof ConfigError)) throw new Error(`expected a ConfigError, got ${String(err)}`);
  return err.problems;
}

test('out of bounds: refused, naming the YAML path and line, the value as written', async (t) => {
  t.deepEqual(await refused({ top: ['timeouts:', '  hedgeBudget: 1.5'] }), [
    'timeouts.hedgeBudget (line 2): 1.5 is not a number from 0 to 1. Hedged calls at most, as a share of first calls (0.1 = 10 %). Example: hedgeBudget: 0.1',
  ]);
  const broadcast = await refused({ chain: ['writes:', '  broadcast: 0'] });
  t.is(broadcast.length, 1);
  t.regex(broadcast[0]!, /^chains\.1\.writes\.broadcast \(line 8\): 0 is not a broadcast mode: use all/);
  t.deepEqual(await refused({ chain: ['writes: { broadcast: 4 }'] }), ['chains.1.writes.broadcast (line 7): 4 upstreams asked, but rpcs has 3: lower it or use all']);
  t.regex((await refused({ top: ['port: 65536'] }))[0]!, /^port \(line 1\): 65536 is not an integer from 0 to 65535/);
  t.regex((await refused({ top: ['heads:', '  intervalMs: 99'] }))[0]!, /^heads\.intervalMs \(line 2\): 99 is not an integer from 100 to 3600000/);
  // Unix milliseconds where seconds belong: refused at load, not a 500 on every list.
  t.regex((await refused({ top: ['indexer:', '  lookbackFloor: 1700000000000'] }))[0]!, /^indexer\.lookbackFloor \(line 2\): 1700000000000 is not an integer from 0 to 2147483647\. Unix time in seconds \(not milliseconds\)/);
  // Beyond 2^53 a whole number is quoted exactly, not rounded to 9007199254740992.
  t.regex((await refused({ top: ['limits:', '  bodyBytes: 9007199254740993'] }))[0]!, /^limits\.bodyBytes \(line 2\): 9007199254740993 is not an integer from 1 to 1073741824/);
});
