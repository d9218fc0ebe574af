/**
 * The config and the command line as a user meets them, through the built CLI: a global
 * `confirmations` above a small chain, `${VAR}` substitution with the key only in the
 * environment, clean errors (YAML syntax, alias bomb, LOG_LEVEL, port in use), a non-ASCII
 * upstream URL, `--version`, and the progress of `db seed-demo`.
 */
import test from 'ava';
import { readFile } from 'node:fs/promises';
import net from 'node:net';
import { defaultAnswer, startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream.js';
import { rpc, send } from '../../support/gateway.js';
import { listeningPort, logLines, runCli, type Run, configFile } from '../../support/cli.js';
import { startTestDatabase } from '../../support/pg.js';

type Teardown = { teardown(fn: () => unknown): void };

/** Runs the CLI with JSON logs at info, and kills it in teardown whatever happened. */
function run(t: Teardown, args: string[], env: Record<string, string> = {}): Run {
  const r = runCli(args, { NODE_ENV: '', LOG_LEVEL: 'info', DATABASE_URL: '', ...env });
  t.teardown(() => {
    if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill('SIGKILL');
  });
  return r;
}

async function fakes(t: Teardown, n: number, chainId: number): Promise<FakeUpstream[]> {
  const list = await Promise.all(
    Array.from({ length: n }, () =>
      startFakeUpstream({ answer: (call) => (call.method === 'eth_chainId' ? { result: `0x${chainId.toString(16)}` } : defaultAnswer(call)) }),
    ),
  );
  t.teardown(() => Promise.all(list.map((f) => f.close())));
  return list;
}

const post = (base: string, path: string, body: unknown) => send(base, 'POST', path, JSON.stringify(body), { 'content-type': 'application/json' });
const pinned = rpc('eth_getBalance', ['0x1111111111111111111111111111111111111111', '0x1']);
const callsOf = (list: FakeUpstream[], method: string) =>
  list.reduce((n, f) => n + f.requests.filter((q) => (q.body as { method?: string } | undefined)?.method === method).length, 0);

test('a global confirmations above a small chain: starts, warns once naming those chains with their upstreams and providers, answers their confirmable requests -32003', async (t) => {
  const small = await fakes(t, 2, 1337);
  const tiny = await fakes(t, 1, 1338);
  const big = await fakes(t, 3, 1339);
  const oneProvider = await fakes(t, 3, 1340);
  const list = (fs: FakeUpstream[]) => fs.map((f) => `      - ${f.url}`);
  const file = await configFile(t, [
    'confirmations: 3', 'chains:', '  1337:', '    rpcs:', ...list(small), '  1338:', '    rpcs:', ...list(tiny), '  1339:', '    rpcs:', ...list(big),
    // three URLs of one provider: one vote, warned as such (not "3 upstreams" against N=3)
    '  1340:', '    rpcs:', ...oneProvider.map((f) => `      - { url: ${f.url}, provider: acme }`), '',
  ].join('\n'));
  const r = run(t, ['serve', '--config', file, '--port', '0', '--no-indexer']);
  const base = `http://127.0.0.1:${await listeningPort(r)}`;

  const warnings = logLines(r).filter((l) => l.level === 'warn' && /fewer upstreams of distinct providers than the global confirmations/.test(String(l.msg)));
  t.is(warnings.length, 1, r.out.join(''));
  t.like(warnings[0], { confirmations: 3 });
  t.deepEqual(warnings[0]!.chains, [
    { chain: '1337', upstreams: 2, providers: 2 },
    { chain: '1338', upstreams: 1, providers: 1 },
    { chain: '1340', upstreams: 3, providers: 1 },
  ]);

  const refused = await post(base, '/rpc/1337', pinned);
  t.is(refused.status, 400, refused.text);
  t.is(refused.body.error.code, -32003);
  t.like(refused.body.error.data, { required: 3, usable: 2 });
  const refusedTiny = await post(base, '/rpc/1338', pinned);
  t.is(refusedTiny.status, 400, refusedTiny.text);
  t.like(refusedTiny.body.error, { code: -32003, data: { required: 3, usable: 1 } });
  const refusedOneProvider = await post(base, '/rpc/1340', pinned);
  t.is(refusedOneProvider.status, 400, refusedOneProvider.text);
  t.like(refusedOneProvider.body.error, { code: -32003, data: { required: 3, usable: 1 } });
  t.is(callsOf([...small, ...tiny, ...oneProvider], 'eth_getBalance'), 0, 'a refused request reached an upstream');

  // Not confirmable (depends on the head): one upstream answers, as on any chain.
  const head = await post(base, '/rpc/1337', rpc('eth_blockNumber'));
  t.is(head.status, 200, head.text);
  t.is(head.body.result, '0x10');
  t.is(head.headers['x-required-confirmations'], '1');

  // The chain with enough upstreams gets its 3 confirmations.
  const confirmed = await post(base, '/rpc/1339', pinned);
  t.is(confirmed.status, 200, confirmed.text);
  t.is(confirmed.headers['x-required-confirmations'], '3');
  t.is(callsOf(big, 'eth_getBalance'), 3);

  r.child.kill('SIGTERM');
  t.is(await r.exited, 0);
});

test('YAML merge keys: chains share an x- anchor\'s keys (<<: *defaults), a key written beside it wins, and they are served so', async (t) => {
  const a = await fakes(t, 2, 1337);
  const b = await fakes(t, 2, 1338);
  const file = await configFile(t, [
    'x-chain: &chain',
    '  confirmations: 2',
    '  strategy: priority',
    'chains:',
    '  1337:',
    '    <<: *chain',
    '    rpcs:', ...a.map((f) => `      - ${f.url}`),
    '  1338:',
    '    <<: *chain',
    '    confirmations: 1',
    '    rpcs:', ...b.map((f) => `      - ${f.url}`),
    '',
  ].join('\n'));
  const r = run(t, ['serve', '--config', file, '--port', '0', '--no-indexer']);
  const base = `http://127.0.0.1:${await listeningPort(r).catch((err: Error) => { throw new Error(`${err.message}: ${r.err.join('')}`); })}`;
  const merged = await post(base, '/rpc/1337', pinned);
  t.is(merged.status, 200, merged.text);
  t.is(merged.headers['x-required-confirmations'], '2');
  t.is(callsOf(a, 'eth_getBalance'), 2);
  const overridden = await post(base, '/rpc/1338', pinned);
  t.is(overridden.status, 200, overridden.text);
  t.is(overridden.headers['x-required-confirmations'], '1');
  t.is(callsOf(b, 'eth_getBalance'), 1);
});

test('a chain\'s own confirmations above its upstreams is still a config error (exit 2, path and line)', async (t) => {
  const file = await configFile(t, 'confirmations: 1\nchains:\n  1339:\n    rpcs: [https://a.example, https://b.example]\n    confirmations: 3\n');
  const r = run(t, ['serve', '--config', file, '--no-indexer']);
  t.is(await r.exited, 2);
  t.regex(r.err.join(''), /chains\.1339\.confirmations \(line 5\): 3 confirmations need at least 3 upstreams of distinct providers, but rpcs has 2: add upstreams or lower it/);
});

test('an rpcs entry with several bad keys: each is listed, and the chain is not also said to have fewer upstreams than the file lists (exit 2)', async (t) => {
  const file = await configFile(t, [
    'chains:',
    '  1339:',
    '    confirmations: 3',
    '    writes: { broadcast: 3 }',
    '    rpcs:',
    '      - https://a.example',
    '      - https://b.example',
    '      - { url: https://c.example, weight: 0, maxRps: x, logIndex: sometimes, provider: "no spaces" }',
    '',
  ].join('\n'));
  const r = run(t, ['serve', '--config', file, '--no-indexer']);
  t.is(await r.exited, 2);
  const problems = r.err.join('').split('\n').filter((l) => l.startsWith('  - '));
  t.deepEqual(problems.map((l) => /^  - (\S+)/.exec(l)![1]), [
    'chains.1339.rpcs[2].weight',
    'chains.1339.rpcs[2].maxRps',
    'chains.1339.rpcs[2].logIndex',
    'chains.1339.rpcs[2].provider',
  ], r.err.join(''));
  t.notRegex(r.err.join(''), /rpcs has 2/);
});

test('${VAR} substitution: the provider key only in the environment reaches the upstream and never the output', async (t) => {
  const key = 'feedbeef0123456789feedbeef012345';
  const [fake] = await Promise.all([startFakeUpstream({ path: `/v3/${key}` })]);
  t.teardown(() => fake!.close());
  const port = new URL(fake!.url).port;
  const yaml = [
    '# the key comes from the environment: ${NOT_SUBSTITUTED_IN_COMMENTS}',
    'confirmations: ${OMNIGATE_TEST_CONFIRMATIONS:-1}',
    'chains:',
    '  1337:',
    '    rpcs:',
    `      - http://127.0.0.1:${port}/v3/\${OMNIGATE_TEST_KEY}`,
    '',
  ].join('\n');
  const file = await configFile(t, yaml);
  t.false((await readFile(file, 'utf8')).includes(key));
  const r = run(t, ['serve', '--config', file, '--port', '0', '--no-indexer'], { OMNIGATE_TEST_KEY: key });
  const base = `http://127.0.0.1:${await listeningPort(r)}`;
  const reply = await post(base, '/rpc/1337', pinned);
  t.is(reply.status, 200, reply.text);
  t.is(reply.headers['x-required-confirmations'], '1');
  t.true(fake!.requests.some((q) => q.path === `/v3/${key}` && (q.body as { method?: string }).method === 'eth_getBalance'));
  const configured = logLines(r).find((l) => l.msg === 'chain configured');
  t.deepEqual(configured?.upstreams, [`http://127.0.0.1:${port}/v3/***`]);
  r.child.kill('SIGTERM');
  t.is(await r.exited, 0);
  const output = r.out.join('') + r.err.join('');
  t.false(output.includes(key), 'the provider key is in the output');
  t.regex(output, /"msg":"rpc request"/);
});

test('$${ writes a literal ${ in an upstream URL: the password and the path reach the upstream with it, no template problem', async (t) => {
  const fake = await startFakeUpstream({});
  t.teardown(() => fake.close());
  const port = new URL(fake.url).port;
  const file = await configFile(t, ['chains:', '  1337:', '    rpcs:', `      - http://relay:pa$\${ss@127.0.0.1:${port}/v1/$\${id}`, ''].join('\n'));
  const r = run(t, ['serve', '--config', file, '--port', '0', '--no-indexer']);
  const base = `http://127.0.0.1:${await listeningPort(r)}`;
  const reply = await post(base, '/rpc/1337', pinned);
  t.is(reply.status, 200, reply.text);
  const calls = fake.requests.filter((q) => (q.body as { method?: string }).method === 'eth_getBalance');
  t.is(calls.length, 1);
  t.is(calls[0]!.path, '/v1/$%7Bid%7D');
  t.is(calls[0]!.headers.authorization, `Basic ${Buffer.from('relay:pa${ss').toString('base64')}`);
});

test('keys written in the file are masked in config errors: a duplicate, a bad scheme, a URL without scheme, a proxy URL (exit 2, paths and lines)', async (t) => {
  const key = 'c0ffee0123456789c0ffee0123456789';
  const yaml = [
    'upstreams:',
    `  proxy: "http//user:${key}@proxy.internal:3128"`,
    'chains:',
    '  1:',
    '    rpcs:',
    `      - https://eth.example/v2/${key}`,
    `      - https://ETH.example/v2/${key}#copy`,
    `      - ftp://user:${key}@eth.example/`,
    `      - eth.example/v3/${key}`,
    '',
  ].join('\n');
  const file = await configFile(t, yaml);
  const r = run(t, ['serve', '--config', file, '--no-indexer']);
  t.is(await r.exited, 2);
  const err = r.err.join('');
  t.false(err.includes(key), err);
  t.regex(err, /upstreams\.proxy \(line 2\): the value \(not shown: it may hold a password\) is not a URL/);
  t.regex(err, /chains\.1\.rpcs\[1\] \(line 7\): "https:\/\/eth\.example\/v2\/\*\*\*" is listed twice \(the same URL as chains\.1\.rpcs\[0\]/);
  t.regex(err, /chains\.1\.rpcs\[2\] \(line 8\): "ftp:\/\/\*\*\*@eth\.example" is not an http\(s\)\/ws\(s\) URL/);
  t.regex(err, /chains\.1\.rpcs\[3\] \(line 9\): the value \(not shown: it may hold a key\) is not an http\(s\)\/ws\(s\) URL \(it has no scheme/);
});

test('a short value from the environment is never printed in a config error: the value as written is (exit 2)', async (t) => {
  const file = await configFile(t, ['port: ${OMNIGATE_TEST_PORT}', 'chains:', '  1:', '    rpcs: ["htps://${OMNIGATE_TEST_PASS}.example/"]', '    strategy: ${OMNIGATE_TEST_PASS}', ''].join('\n'));
  const r = run(t, ['serve', '--config', file, '--no-indexer'], { OMNIGATE_TEST_PASS: 'hu2t5', OMNIGATE_TEST_PORT: '70000' });
  t.is(await r.exited, 2);
  const err = r.err.join('');
  t.false(/hu2t5|70000/.test([...r.err, ...r.out].join('')), err);
  t.regex(err, /port \(line 1\): \$\{OMNIGATE_TEST_PORT\} is not an integer from 0 to 65535/);
  t.regex(err, /chains\.1\.rpcs\[0\] \(line 4\): "htps:\/\/\$\{OMNIGATE_TEST_PASS\}\.example" is not an http\(s\)\/ws\(s\) URL/);
  t.regex(err, /chains\.1\.strategy \(line 5\): "\$\{OMNIGATE_TEST_PASS\}" is not a strategy/);
});

test('db migrate against an unreachable DATABASE_URL exits 1 (a runtime failure), a bad DATABASE_URL 2, never printing the password', async (t) => {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  const down = run(t, ['db', 'migrate'], { DATABASE_URL: `postgres://admin:hunter2-secret@127.0.0.1:${port}/index` });
  t.is(await down.exited, 1);
  t.regex(down.err.join(''), /omnigate db migrate failed \(postgres:\/\/admin:\*\*\*@127\.0\.0\.1:\d+\/index\): .*ECONNREFUSED/);
  const bad = run(t, ['db', 'migrate'], { DATABASE_URL: 'mysql://admin:hunter2-secret@db/index' });
  t.is(await bad.exited, 2);
  t.regex(bad.err.join(''), /DATABASE_URL must be a postgres/);
  t.false([...down.err, ...down.out, ...bad.err, ...bad.out].join('').includes('hunter2'));
});

test('an unset ${VAR} exits 2 naming the YAML path, the line, the variable and the fix', async (t) => {
  const file = await configFile(t, 'chains:\n  1:\n    rpcs:\n      - https://eth.example/v2/${OMNIGATE_TEST_UNSET_KEY}\n');
  const r = run(t, ['serve', '--config', file, '--no-indexer']);
  t.is(await r.exited, 2);
  const err = r.err.join('');
  t.regex(err, /chains\.1\.rpcs\[0\] \(line 4\): \$\{OMNIGATE_TEST_UNSET_KEY\} is not set in the environment: set it \(export OMNIGATE_TEST_UNSET_KEY=…\) before starting, or give a default with \$\{OMNIGATE_TEST_UNSET_KEY:-value\}/);
});

test('a YAML syntax error is reported once, with file, line and column, and no stack (exit 2)', async (t) => {
  const file = await configFile(t, 'port: 0\nchains:\n  1:\n    rpcs: ["https://a.example/x"\n  2: [\n');
  const r = run(t, ['serve', '--config', file, '--no-indexer']);
  t.is(await r.exited, 2);
  const err = r.err.join('');
  t.is(err, `omnigate: ${file}: invalid config:\n  - line 5, column 3: YAML syntax error: Flow sequence in block collection must be sufficiently indented and end with a ]\n`);
});

test('a YAML alias bomb exits 2 with a clear message', async (t) => {
  const levels = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
  for (const [i, name] of ['b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'].entries()) {
    const prev = String.fromCharCode(97 + i);
    levels.push(`${name}: &${name} [${Array(9).fill(`*${prev}`).join(',')}]`);
  }
  const file = await configFile(t, `${levels.join('\n')}\nchains:\n  1:\n    rpcs: ["https://a.example/x"]\n`);
  const r = run(t, ['serve', '--config', file, '--no-indexer']);
  t.is(await r.exited, 2);
  t.regex(r.err.join(''), /YAML aliases expand to a huge document .*billion laughs.*: refused/);
  t.notRegex(r.err.join(''), /\n\s+at /);
});

test('a bad LOG_LEVEL is a config error naming the allowed levels (exit 2), not a stack', async (t) => {
  const file = await configFile(t, 'chains:\n  1:\n    rpcs: ["https://a.example/x"]\n');
  const r = run(t, ['serve', '--config', file, '--no-indexer'], { LOG_LEVEL: 'verbose' });
  t.is(await r.exited, 2);
  const err = r.err.join('');
  t.regex(err, /LOG_LEVEL="verbose" is not a log level: use one of fatal, error, warn, info, debug, trace, silent/);
  t.notRegex(err, /\n\s+at /);
});

test('"port already in use" names the port (exit 1)', async (t) => {
  const blocker = net.createServer();
  await new Promise<void>((resolve) => blocker.listen(0, resolve));
  t.teardown(() => new Promise<void>((resolve) => blocker.close(() => resolve())));
  const port = (blocker.address() as net.AddressInfo).port;
  const file = await configFile(t, 'chains:\n  1:\n    rpcs: ["https://a.example/x"]\n');
  const r = run(t, ['serve', '--config', file, '--no-indexer', '--port', String(port)]);
  t.is(await r.exited, 1);
  t.is(r.err.join(''), `omnigate: port ${port} is already in use (another omnigate?): stop that process or pick another port with --port\n`);
});

test('an upstream URL with a non-ASCII path is percent-encoded at load, and answers work', async (t) => {
  const fake = await startFakeUpstream({ path: '/%D0%BA%D0%BB%D1%8E%D1%87' });
  t.teardown(() => fake.close());
  const port = new URL(fake.url).port;
  const file = await configFile(t, `chains:\n  1337:\n    rpcs: ["http://127.0.0.1:${port}/ключ"]\n`);
  const r = run(t, ['serve', '--config', file, '--port', '0', '--no-indexer']);
  const base = `http://127.0.0.1:${await listeningPort(r)}`;
  for (const body of [pinned, rpc('eth_blockNumber')]) {
    const reply = await post(base, '/rpc/1337', body);
    t.is(reply.status, 200, reply.text);
    t.truthy(reply.body.result);
  }
  t.is(callsOf([fake], 'eth_getBalance'), 1);
  t.true(fake.requests.every((q) => q.path === '/%D0%BA%D0%BB%D1%8E%D1%87'));
  r.child.kill('SIGTERM');
  t.is(await r.exited, 0);
});

test('omnigate --version and -V print the version of package.json', async (t) => {
  const { version } = JSON.parse(await readFile('package.json', 'utf8')) as { version: string };
  for (const flag of ['--version', '-V']) {
    const r = run(t, [flag]);
    t.is(await r.exited, 0);
    t.is(r.out.join(''), `${version}\n`);
  }
});

test('db seed-demo shows its progress on stderr in a few lines, the result on stdout', async (t) => {
  const pg = await startTestDatabase({ migrate: false });
  t.teardown(() => pg.close());
  const r = run(t, ['db', 'seed-demo', '--count', '2500'], { DATABASE_URL: pg.url });
  t.is(await r.exited, 0, r.err.join(''));
  t.regex(r.out.join(''), /^Seeded 2500 demo bridge transactions into postgres:\/\/omnigate:\*\*\*@/);
  const lines = r.err.join('').trim().split('\n');
  t.is(lines[0], 'seed-demo: generating 2500 demo bridge transactions…');
  const steps = lines.slice(1).map((l) => /^seed-demo: (\d+)\/(\d+) rows inserted \((\d+)%\)$/.exec(l));
  t.true(steps.length >= 2 && steps.length <= 10, lines.join('\n'));
  t.true(steps.every(Boolean), lines.join('\n'));
  const done = steps.map((m) => Number(m![1]));
  t.deepEqual(done, [...done].sort((a, b) => a - b));
  const last = steps.at(-1)!;
  t.is(last[1], last[2]);
  t.is(last[3], '100');
});
