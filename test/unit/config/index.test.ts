import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { readFile } from 'node:fs/promises';
import { chainsBelowConfirmations, defaults, loadConfigFile, parseConfig } from '../../../config/index.js';
import { headDefaults, headSettings } from '../../../lib/health/heads.js';
import { ConfigError } from '../../../lib/errors.js';
import { fromRoot } from '../../support/paths.js';

/** The problems a YAML text is refused with. */
const problemsOf = (yaml: string): readonly string[] => {
  const err = (() => {
    try {
      parseConfig(yaml, 'config', { env: {} });
    } catch (e) {
      return e;
    }
    throw new Error('the config was accepted');
  })();
  if (!(err instanceof ConfigError)) throw err;
  return err.problems;
};

test('should parse the documented fields with comments and apply the defaults', (t) => {
  const config = parseConfig(`
# the balancer
port: 8545   # trailing comment
chains:
  # mainnet
  1:
    rpcs:
      - https://mainnet.infura.io/v3/KEY   # Infura
      - wss://eth.example/ws
`);
  t.is(config.port, 8545);
  t.is(config.confirmations, 1);
  t.is(config.refreshInterval, 60);
  t.deepEqual(config.timeouts, { upstreamMs: 10_000, requestMs: 30_000, hedgeMs: 1_000, hedgeAdaptive: true, hedgeMinMs: 20, hedgeMaxMs: 1_000, hedgeQuantile: 0.9, hedgeBudget: 0.1, sendMs: 60_000 });
  t.deepEqual(config.chains['1'], { rpcs: ['https://mainnet.infura.io/v3/KEY', 'wss://eth.example/ws'], confirmations: 1, confirmableMethods: [], ignoredFields: {}, strategy: 'balanced', verify: 'auto', heads: {} });
});

test('should parse the example config shipped in config/', async (t) => {
  const config = await loadConfigFile(fromRoot('config/omnigate.example.yaml'));
  t.is(config.chains['1']!.confirmations, 2);
  t.deepEqual(config.chains['1']!.confirmableMethods.map((m) => m.method), ['eth_getBlockByHash', 'eth_foo']);
});

test('the example config\'s commented keys parse once uncommented, and state the defaults', async (t) => {
  const text = await readFile(fromRoot('config/omnigate.example.yaml'), 'utf8');
  const lines = text.split('\n');
  /** The commented block that starts with `# KEY:` at `indent`, uncommented (its `#   ` lines follow). */
  const block = (key: string, indent = ''): string => {
    const at = lines.findIndex((l) => l.startsWith(`${indent}# ${key}:`));
    if (at < 0) throw new Error(`no commented ${key}: in the example`);
    const out = [lines[at]!.replace(`${indent}# `, '')];
    for (const l of lines.slice(at + 1)) {
      if (!l.startsWith(`${indent}#   `)) break;
      out.push(l.replace(`${indent}#   `, '  '));
    }
    return out.join('\n');
  };
  const chain = (extra: string[] = []) => ['chains:', '  1:', '    rpcs: [https://a.example, https://b.example]', ...extra].join('\n');

  // Global heads: the values shown are headSettings' defaults for a chain id it does not know.
  const heads = parseConfig(`${block('heads')}\n${chain()}`, 'config', { env: {} }).heads;
  t.deepEqual(heads, headSettings('999999999'));
  t.is(heads.intervalMs, headDefaults.intervalMs);
  // Per chain: strategy (the default) and heads.
  const own = parseConfig(chain([`    ${block('strategy', '    ')}`, `    ${block('heads', '    ')}`]), 'config', { env: {} }).chains['1']!;
  t.is(own.strategy, defaults.strategy);
  t.deepEqual(own.heads, { waitMs: headSettings('1').waitMs });
  // An rpcs entry with provider, weight, maxConcurrent, maxRps.
  const entry = lines.find((l) => /^#\s+- \{ url: .*weight:/.test(l))!.replace(/^#\s+/, '      ');
  const limits = parseConfig(['chains:', '  1:', '    rpcs:', entry, '      - https://b.example'].join('\n'), 'config', { env: { ALCHEMY_KEY: 'k' } }).chains['1']!;
  t.deepEqual(limits.upstreamLimits?.[0], { weight: 3, maxConcurrent: 50, maxRps: 100 });
  t.is(limits.providers?.[0], 'alchemy');
  // disputes.file and fileMaxBytes (the default).
  const disputes = text.slice(text.indexOf('\ndisputes:\n') + 1).split('\n\n')[0]!.replaceAll('  # ', '  ');
  const d = parseConfig(`${disputes}\n${chain()}`, 'config', { env: {} }).disputes;
  t.is(d.file, '/var/log/omnigate/disputes.jsonl');
  t.is(d.fileMaxBytes, defaults.disputes.fileMaxBytes);
});

test('should read an rpcs entry\'s weight, maxConcurrent and maxRps written as YAML numbers', (t) => {
  const config = parseConfig('chains:\n  1:\n    rpcs:\n      - { url: https://a.example, weight: 2, maxConcurrent: 50, maxRps: 100 }\n      - { url: https://b.example, weight: 0.5 }\n');
  t.deepEqual(config.chains['1']!.upstreamLimits, [{ weight: 2, maxConcurrent: 50, maxRps: 100 }, { weight: 0.5 }]);
  t.deepEqual(problemsOf('chains:\n  1:\n    rpcs:\n      - { url: https://a.example, weight: 1001, maxRps: 0 }\n'), [
    'chains.1.rpcs[0].weight (line 4): 1001 is not a weight: a number above 0, at most 1000 (its share of balanced load; 1 by default). Example: weight: 3',
    // every problem of the entry, not the first alone
    'chains.1.rpcs[0].maxRps (line 4): 0 is not an integer from 1 to 1000000 (calls per second at most; at the cap the upstream is skipped). Example: maxRps: 50',
  ]);
});

test('should keep a chain id larger than 2^53 exact', (t) => {
  const config = parseConfig('chains:\n  18446744073709551617:\n    rpcs: [https://a.example]\n  9007199254740993:\n    rpcs: [https://b.example]\n');
  t.deepEqual(Object.keys(config.chains).sort(), ['18446744073709551617', '9007199254740993']);
});

test('should deep-freeze the result', (t) => {
  const config = parseConfig('confirmableMethods: [eth_getBlockByHash]\nchains:\n  1:\n    rpcs: [https://a.example]\n');
  for (const part of [config, config.timeouts, config.limits, config.chains, config.chains['1']!, config.chains['1']!.rpcs, config.confirmableMethods]) {
    t.true(Object.isFrozen(part));
  }
  t.throws(() => {
    (config as { port: number }).port = 1;
  }, { instanceOf: TypeError });
  t.throws(() => (config.chains['1']!.rpcs as string[]).push('https://evil.example'), { instanceOf: TypeError });
});

test('should report the YAML path, the line and a fix for a bad URL', (t) => {
  const problems = problemsOf(`chains:
  1338:
    rpcs:
      - https://a.example/v1/KEY
      - https://b.example
      - htp://x
`);
  t.deepEqual(problems, ['chains.1338.rpcs[2] (line 6): "htp://x" is not an http(s)/ws(s) URL. Example: "https://rpc.example/v1/KEY"']);
});

test('should report several problems at once, each with its line', (t) => {
  const problems = problemsOf(`refresh_interval: 30
port: 99999
chains:
  1:
    rpcs:
      - https://mainnet.infura.io/v3/\${INFURA_API_KEY}
      - https://a.example
      - https://a.example
    confirmableMethods: [eth_blockNumber]
`);
  t.is(problems.length, 5, problems.join('\n'));
  const expected: [RegExp, number][] = [
    [/^refresh_interval \(line 1\): unknown key: did you mean "refreshInterval"\?$/, 0],
    [/^port \(line 2\): 99999 is not an integer from 0 to 65535/, 1],
    [/^chains\.1\.rpcs\[0\] \(line 6\): \$\{INFURA_API_KEY\} is not set in the environment/, 2],
    [/^chains\.1\.rpcs\[2\] \(line 8\): "https:\/\/a\.example" is listed twice/, 3],
    [/^chains\.1\.confirmableMethods\[0\] \(line 9\): eth_blockNumber is never confirmable/, 4],
  ];
  for (const [pattern, index] of expected) t.regex(problems[index]!, pattern);
});

test('should name the line of the key for a problem about a whole chain', (t) => {
  const problems = problemsOf('port: 1\nchains:\n  1:\n    rpcs: [https://a.example]\n    confirmations: 2\n');
  t.deepEqual(problems, ['chains.1.confirmations (line 5): 2 confirmations need at least 2 upstreams of distinct providers, but rpcs has 1: add upstreams or lower it']);
});

test('should report a chain\'s own confirmations above the number of its rpcs', (t) => {
  const problems = problemsOf('confirmations: 1\nchains:\n  1:\n    rpcs: [https://a.example, https://b.example]\n    confirmations: 3\n');
  t.is(problems.length, 1);
  t.regex(problems[0]!, /^chains\.1\.confirmations \(line 5\): 3 confirmations need at least 3 upstreams of distinct providers, but rpcs has 2/);
});

test('should accept a global confirmations above a small chain, and list that chain', (t) => {
  const config = parseConfig('confirmations: 3\nchains:\n  1:\n    rpcs: [https://a.example, https://b.example]\n  10:\n    rpcs: [https://a.example, https://b.example, https://c.example]\n');
  t.is(config.chains['1']!.confirmations, 3);
  t.deepEqual(chainsBelowConfirmations(config), [{ chain: '1', confirmations: 3, upstreams: 2, providers: 2 }]);
});

test('should reject a never-confirmable method in the top-level confirmableMethods', (t) => {
  const problems = problemsOf('confirmableMethods:\n  - eth_getBlockByHash\n  - eth_gasPrice\nchains:\n  1:\n    rpcs: [https://a.example]\n');
  t.deepEqual(problems, ['confirmableMethods[1] (line 3): eth_gasPrice is never confirmable: its answer depends on the chain head or the node']);
});

test('should report a YAML syntax error once, with its line and column', (t) => {
  const problems = problemsOf('chains:\n  1: {rpcs: [https://a.example]\n');
  t.is(problems.length, 1);
  t.regex(problems[0]!, /^line 3, column 1: YAML syntax error: /);
  // One unclosed bracket: the parser reports two errors, the second a consequence of the first.
  const cascade = problemsOf('port: 0\nchains:\n  1:\n    rpcs: ["https://a.example/x"\n  2: [\n');
  t.deepEqual(cascade, ['line 5, column 3: YAML syntax error: Flow sequence in block collection must be sufficiently indented and end with a ]']);
});

test('should refuse a YAML alias bomb with a clear problem', (t) => {
  const levels = ['a: &a [x, x, x, x, x, x, x, x, x]'];
  for (const [i, name] of ['b', 'c', 'd', 'e', 'f', 'g'].entries()) {
    const prev = String.fromCharCode(97 + i);
    levels.push(`${name}: &${name} [${Array(9).fill(`*${prev}`).join(', ')}]`);
  }
  const problems = problemsOf(`${levels.join('\n')}\nchains:\n  1:\n    rpcs: [https://a.example]\n`);
  t.is(problems.length, 1);
  t.regex(problems[0]!, /aliases expand to a huge document.*billion laughs/);
});

test('should report a mapping that holds itself through a YAML alias as a problem, not overflow the stack', (t) => {
  const problems = problemsOf('chains: &c\n  1:\n    rpcs: [https://a.example/KEY123456]\n    heads: *c\n');
  t.deepEqual(problems, ['chains.1.heads.1 (line 4): unknown key; known keys here: intervalMs, suspectBlocks, finalityDepth, waitMs']);
});

test('should keep every upstream URL in WHATWG form: a non-ASCII path percent-encoded, an IDN host in punycode', (t) => {
  const config = parseConfig('chains:\n  1:\n    rpcs: ["https://x.example/ключ", "https://ключ.example/a", "https://y.example"]\n');
  t.deepEqual(config.chains['1']!.rpcs, ['https://x.example/%D0%BA%D0%BB%D1%8E%D1%87', 'https://xn--j1ac0b1a.example/a', 'https://y.example/']);
});

test('should report a duplicate key as a YAML error with its line', (t) => {
  const problems = problemsOf('port: 1\nport: 2\nchains:\n  1:\n    rpcs: [https://a.example]\n');
  t.regex(problems[0]!, /^line 2, column \d+: YAML syntax error: .*[Mm]ap keys must be unique/);
});

test('should refuse an empty file with a fix', (t) => {
  t.regex(problemsOf('')[0]!, /must be a YAML mapping with at least a `chains:` key/);
  t.regex(problemsOf('# only a comment\n')[0]!, /must be a YAML mapping/);
});

test('should name the source in the ConfigError message', (t) => {
  const err = t.throws(() => parseConfig('port: x\nchains:\n  1:\n    rpcs: [https://a.example]\n', 'my.yaml'), { instanceOf: ConfigError })!;
  t.is(err.code, 'OMNI_ERR_CONFIG');
  t.is(err.name, 'ConfigError');
  t.regex(err.message, /^my\.yaml: invalid config:\n {2}- port \(line 1\): "x" is not an integer/);
});

test('should report an unreadable file as a ConfigError', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'omnigate-config-'));
  try {
    const missing = join(dir, 'missing.yaml');
    const err = await t.throwsAsync(loadConfigFile(missing), { instanceOf: ConfigError });
    t.regex(err!.problems[0]!, /^cannot read the config file: /);
    t.regex(err!.message, new RegExp(`^${missing}: `));
    const file = join(dir, 'ok.yaml');
    await writeFile(file, 'chains:\n  1:\n    rpcs: [https://a.example]\n');
    t.deepEqual((await loadConfigFile(file)).chains['1']!.rpcs, ['https://a.example/']);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

// `1:` is read as a number and `"1":` as a string, so YAML's own unique-key check misses them;
// the second chain then silently replaces the first.
test('should report chain 1 written twice as 1 and "1"', (t) => {
  const problems = problemsOf('chains:\n  1:\n    rpcs: [https://a.example]\n  "1":\n    rpcs: [https://b.example]\n');
  t.true(problems.length > 0);
});
