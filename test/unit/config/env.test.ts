import test from 'ava';
import { expand } from '../../../config/env.js';
import { parseConfig, validateConfig } from '../../../config/index.js';
import { ConfigError } from '../../../lib/errors.js';

const problemsOf = (yaml: string, env: Record<string, string>): readonly string[] => {
  try {
    parseConfig(yaml, 'config', { env });
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  throw new Error('the config was accepted');
};

test('expand: ${VAR}, ${VAR:-default}, $${ as a literal, empty and unset variables', (t) => {
  const env = { KEY: 'k3y', EMPTY: '' };
  t.deepEqual(expand('https://a.example/v2/${KEY}', env), { value: 'https://a.example/v2/k3y' });
  t.deepEqual(expand('${KEY}-${KEY}', env), { value: 'k3y-k3y' });
  t.deepEqual(expand('${MISSING:-fallback/x}', env), { value: 'fallback/x' });
  t.deepEqual(expand('${EMPTY:-fallback}', env), { value: 'fallback' });
  t.deepEqual(expand('${MISSING:-}', env), { value: '' });
  t.deepEqual(expand('$${KEY} and $KEY and $', env), { value: '${KEY} and $KEY and $' });
  t.regex((expand('${MISSING}', env) as { problem: string }).problem, /^\$\{MISSING\} is not set in the environment: set it \(export MISSING=…\).*\$\{MISSING:-value\}/);
  t.regex((expand('${EMPTY}', env) as { problem: string }).problem, /^\$\{EMPTY\} is empty in the environment/);
  t.regex((expand('${bad-name}', env) as { problem: string }).problem, /is not a variable reference/);
  t.regex((expand('x${OPEN', env) as { problem: string }).problem, /has no closing brace/);
});

test('should substitute in values only, keep comments, and apply the result to aliases of an anchor', (t) => {
  const config = parseConfig(
    [
      '# ${NOT_A_VALUE} in a comment is left alone',
      'port: ${PORT:-5001}',
      'confirmations: ${N}',
      'redactHeaders: ${REDACT}',
      'chains:',
      '  1:',
      '    rpcs: &urls ["https://a.example/v2/${KEY}", "wss://b.example/${KEY}"]',
      '  10:',
      '    rpcs: *urls',
      '',
    ].join('\n'),
    'config',
    { env: { KEY: 'sEcReT', N: '2', REDACT: 'true' } },
  );
  t.is(config.port, 5001);
  t.is(config.confirmations, 2);
  t.true(config.redactHeaders);
  t.deepEqual(config.chains['1']!.rpcs, ['https://a.example/v2/sEcReT', 'wss://b.example/sEcReT']);
  t.deepEqual(config.chains['10']!.rpcs, config.chains['1']!.rpcs);
});

test('a quoted value stays a string: "${N}" for an integer key is a type problem', (t) => {
  const problems = problemsOf('port: "${P}"\nchains:\n  1:\n    rpcs: [https://a.example]\n', { P: '5000' });
  t.deepEqual(problems, ['port (line 1): "${P}" is not an integer from 0 to 65535. Example: port: 5000']);
});

test('should name the path, the line and the variable of every unset one, with the other problems', (t) => {
  const problems = problemsOf(
    ['port: ${PORT}', 'chains:', '  1:', '    rpcs:', '      - https://a.example/${ALCHEMY_KEY}', '      - htp://b', '  x: {}', ''].join('\n'),
    {},
  );
  t.deepEqual(problems.slice(0, 2), [
    'port (line 1): ${PORT} is not set in the environment: set it (export PORT=…) before starting, or give a default with ${PORT:-value}',
    'chains.1.rpcs[0] (line 5): ${ALCHEMY_KEY} is not set in the environment: set it (export ALCHEMY_KEY=…) before starting, or give a default with ${ALCHEMY_KEY:-value}',
  ]);
  t.regex(problems[2]!, /^chains\.1\.rpcs\[1\] \(line 6\): "htp:\/\/b" is not an http/);
  t.regex(problems[3]!, /^chains\.x/);
  t.is(problems.length, 4);
});

test('a value taken from the environment never appears in a problem', (t) => {
  const secret = 'https://a.example/v2/0123456789abcdef';
  const problems = problemsOf('chains:\n  1:\n    rpcs: ["${URL}", "${URL}"]\n', { URL: secret });
  t.deepEqual(problems, ['chains.1.rpcs[1] (line 3): "${URL}" is listed twice (the same URL as chains.1.rpcs[0] once the case, default port, fragment and empty query are ignored): a duplicate would vote twice, remove one']);
  t.false(problems.join().includes('0123456789abcdef'));
});

test('a short value from the environment (under 6 characters) is never shown either: the value as written is quoted', (t) => {
  const problems = problemsOf(
    ['port: ${PORT}', 'host: "${PGPASS} x"', 'chains:', '  1:', '    rpcs: ["htps://${PGPASS}.example/"]', '    strategy: ${PGPASS}', ''].join('\n'),
    { PGPASS: 'hu2t5', PORT: '70000' },
  );
  t.deepEqual(problems, [
    'port (line 1): ${PORT} is not an integer from 0 to 65535. Example: port: 5000',
    'host (line 2): "${PGPASS} x" is not an address to listen on: an IP address or a host name. Example: host: 127.0.0.1 (this machine only), host: 0.0.0.0 (every interface, e.g. in a container)',
    'chains.1.rpcs[0] (line 5): "htps://${PGPASS}.example" is not an http(s)/ws(s) URL. Example: "https://rpc.example/v1/KEY"',
    'chains.1.strategy (line 6): "${PGPASS}" is not a strategy: use balanced (spread N=1 requests over the best upstreams) or priority (the first healthy one in list order)',
  ]);
});

test('hiding the environment\'s values does not touch the same digits elsewhere in a message (1, or 100000 inside 1000000)', (t) => {
  const problems = problemsOf(
    ['confirmations: ${N}', 'chains:', '  1:', '    rpcs:', '      - url: https://a.example', '        maxRps: ${RPS}', '        maxConcurrent: 0', ''].join('\n'),
    { N: '1', RPS: '100000' },
  );
  t.deepEqual(problems, [
    'chains.1.rpcs[0].maxConcurrent (line 7): 0 is not an integer from 1 to 1000000 (calls in flight at most; at the cap the upstream is skipped). Example: maxConcurrent: 50',
  ]);
});

test('$${ writes a literal ${ in an upstream URL (a path, a password): no template; a ${ that came from the environment still is one', (t) => {
  const config = parseConfig('chains:\n  1:\n    rpcs: ["https://c.example/$${LITERAL}", { url: "https://u:pa$${ss@d.example/" }]\n', 'config', { env: {} });
  t.deepEqual(config.chains['1']!.rpcs, ['https://c.example/$%7BLITERAL%7D', 'https://u:pa$%7Bss@d.example/']);
  const problems = problemsOf('chains:\n  1:\n    rpcs: ["https://c.example/$${A}/${KEY}"]\n', { KEY: '${UNFILLED}' });
  t.is(problems.length, 1);
  t.regex(problems[0]!, /^chains\.1\.rpcs\[0\] \(line 3\): .*is a template/);
});

test('validateConfig: a global confirmations above a chain\'s rpcs is accepted, the chain\'s own is not', (t) => {
  const inherited = validateConfig({ confirmations: 2, chains: { '1': { rpcs: ['https://a.example'] } } });
  t.true('config' in inherited);
  const own = validateConfig({ confirmations: 1, chains: { '1': { rpcs: ['https://a.example'], confirmations: 2 } } });
  t.true('problems' in own);
});
