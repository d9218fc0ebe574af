/**
 * The built CLI as a user runs it: `omnigate serve --config FILE --port 0` against a YAML file,
 * real requests, a clean exit on SIGTERM; a bad config exits 2 and lists every problem with its
 * YAML path; a provider key never reaches stdout or stderr.
 */
import test from 'ava';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFakeUpstream } from '../../support/fake-upstream.js';
import { rpc, send } from '../../support/gateway.js';
import { listeningPort, logLines, runCli } from '../../support/cli.js';
import { until } from '../../support/wait.js';

const run = (args: string[], env: Record<string, string> = {}) => runCli(args, env);

/** Writes `yaml` to omnigate.yaml in a fresh temporary directory, removed after the test. */
async function configFile(t: { teardown(fn: () => Promise<void>): void }, yaml: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'omnigate-cli-'));
  t.teardown(() => rm(dir, { recursive: true }));
  const file = join(dir, 'omnigate.yaml');
  await writeFile(file, yaml);
  return file;
}

test('should serve a YAML config, answer requests, and exit 0 on SIGTERM', async (t) => {
  const key = 'c0ffee00c0ffee00c0ffee00c0ffee00';
  const fakes = await Promise.all([startFakeUpstream({ path: `/v3/${key}` }), startFakeUpstream({ path: `/v3/${key}`, profile: 'pretty' })]);
  t.teardown(() => Promise.all(fakes.map((f) => f.close())));
  const dir = await mkdtemp(join(tmpdir(), 'omnigate-cli-'));
  await chmod(dir, 0o755); // as root, PostgreSQL runs as the postgres user, which must reach pgdata
  const file = join(dir, 'omnigate.yaml');
  await writeFile(
    file,
    ['# two upstreams that must agree', 'confirmations: 2', 'refreshInterval: 60', 'port: 1', 'chains:', '  1337:', '    rpcs:', ...fakes.map((f) => `      - ${f.url}`), ''].join('\n'),
  );
  // The full app: balancer and indexer API on one port, the indexer on an embedded PostgreSQL.
  const r = run(['serve', '--config', file, '--port', '0'], { OMNIGATE_PGDATA: join(dir, 'pgdata'), DATABASE_URL: '' });
  const port = await listeningPort(r);
  const base = `http://127.0.0.1:${port}`;
  const ok = await send(base, 'POST', '/rpc/1337', JSON.stringify(rpc('eth_getBalance', ['0x1111111111111111111111111111111111111111', '0x1'])), { 'content-type': 'application/json' });
  t.is(ok.status, 200, ok.text);
  t.is(ok.headers['x-required-confirmations'], '2');
  t.is(fakes[0]!.requests[0]!.path, `/v3/${key}`);
  const api = await send(base, 'GET', '/api/pending-transactions/missing-relay');
  t.is(api.status, 200);
  t.deepEqual(api.body, []);
  const nf = await send(base, 'GET', '/nowhere');
  t.is(nf.status, 404);
  t.is(nf.body.error.code, -32008);
  r.child.kill('SIGTERM');
  t.is(await r.exited, 0);
  const output = r.out.join('') + r.err.join('');
  t.false(output.includes(key), 'the provider key is in the output');
  t.regex(output, /"msg":"rpc request"/);
  t.regex(output, /\/v3\/\*\*\*/);
  await rm(dir, { recursive: true });
});

test('should exit 2 and list every config problem with its YAML path and a fix', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'omnigate-cli-'));
  const file = join(dir, 'bad.yaml');
  await writeFile(
    file,
    ['refresh_interval: 60', 'confirmations: 0', 'chains:', '  1338:', '    rpcs:', '      - https://a.example', '      - https://b.example', '      - htp://x', '  abc:', '    rpcs: []', ''].join('\n'),
  );
  const r = run(['serve', '--config', file]);
  t.is(await r.exited, 2);
  const err = r.err.join('');
  t.regex(err, /chains\.1338\.rpcs\[2\] \(line 8\): "htp:\/\/x" is not an http\(s\)\/ws\(s\) URL/);
  t.regex(err, /refresh_interval.*did you mean "refreshInterval"/);
  t.regex(err, /confirmations \(line 2\): 0 is not an integer from 1/);
  t.regex(err, /chains\.abc.*not a chain id/);
  await rm(dir, { recursive: true });
});

test('should exit 2 on a missing config file or a bad --port', async (t) => {
  const missing = run(['serve', '--config', '/nonexistent/omnigate.yaml']);
  t.is(await missing.exited, 2);
  t.regex(missing.err.join(''), /cannot read the config file/);
  const badPort = run(['serve', '--config', 'config/omnigate.example.yaml', '--port', 'http', '--no-indexer']);
  t.is(await badPort.exited, 2);
  t.regex(badPort.err.join(''), /--port/);
  const badEnv = run(['serve', '--config', 'config/omnigate.example.yaml'], { DATABASE_URL: 'mysql://x' });
  t.is(await badEnv.exited, 2);
  t.regex(badEnv.err.join(''), /DATABASE_URL must be a postgres/);
});

test('a data directory it cannot create (a path through a file) exits 1 saying what to set, not a bare mkdir error', async (t) => {
  const fake = await startFakeUpstream();
  t.teardown(() => fake.close());
  const file = await configFile(t, `chains:\n  1337:\n    rpcs: [${fake.url}]\n`);
  const blocker = join(file, '..', 'not-a-dir');
  await writeFile(blocker, '');
  const dataDir = join(blocker, 'pgdata');
  const r = run(['serve', '--config', file, '--port', '0'], { OMNIGATE_PGDATA: dataDir, DATABASE_URL: '' });
  t.teardown(() => r.child.kill('SIGKILL'));
  t.is(await r.exited, 1);
  const err = r.err.join('');
  t.true(err.startsWith(`omnigate: cannot create the embedded PostgreSQL's data directory ${dataDir}: `), err);
  t.regex(err, /Point OMNIGATE_PGDATA .* at a directory this user can write, set DATABASE_URL to a PostgreSQL, or serve the balancer alone with --no-indexer/);
});

test('should serve the balancer alone with --no-indexer', async (t) => {
  const fake = await startFakeUpstream();
  t.teardown(() => fake.close());
  const file = await configFile(t, `chains:\n  1337:\n    rpcs: [${fake.url}]\n`);
  const r = run(['serve', '--config', file, '--port', '0', '--no-indexer']);
  const base = `http://127.0.0.1:${await listeningPort(r)}`;
  t.is((await send(base, 'POST', '/rpc/1337', JSON.stringify(rpc('eth_blockNumber')))).status, 200);
  t.is((await send(base, 'GET', '/api/disputes')).status, 404);
  r.child.kill('SIGINT');
  t.is(await r.exited, 0);
});

// SIGHUP too: what a serve started from a shell gets when its terminal or ssh session closes
// (Node's default for it ends the process at once, resetting the requests in flight).
for (const signal of ['SIGTERM', 'SIGHUP'] as const)
test(`should finish in-flight requests on ${signal}, refuse new connections, and exit 0`, async (t) => {
  const slow = await startFakeUpstream({ delayMs: 1_500 });
  t.teardown(() => slow.close());
  const file = await configFile(t, `timeouts:\n  hedgeMs: 0\nchains:\n  1337:\n    rpcs: [${slow.url}]\n`);
  const r = run(['serve', '--config', file, '--port', '0', '--no-indexer']);
  t.teardown(() => r.child.kill('SIGKILL'));
  const base = `http://127.0.0.1:${await listeningPort(r)}`;
  const inFlight = send(base, 'POST', '/rpc/1337', JSON.stringify(rpc('eth_blockNumber', [], 'slow')));
  // wait until the upstream has this very call (not just the health probes), then stop the server
  const arrived = () => slow.requests.some((q) => (q.body as { id?: unknown } | undefined)?.id === 'slow');
  for (const end = Date.now() + 20_000; !arrived() && Date.now() < end; ) await new Promise((res) => setTimeout(res, 20));
  t.true(arrived(), 'the request reached the upstream');
  r.child.kill(signal);
  // 'shutting down' is logged as the server stops listening (in the same tick)
  await until(() => logLines(r).some((l) => l.msg === 'shutting down' && l.signal === signal));
  const refused = await send(base, 'POST', '/rpc/1337', JSON.stringify(rpc('eth_blockNumber'))).then(
    () => false,
    () => true,
  );
  t.true(refused, `a new connection after ${signal} is refused`);
  const answer = await inFlight;
  t.is(answer.status, 200);
  t.is(answer.body.id, 'slow');
  t.is(await r.exited, 0);
});

test('should exit 1 at once on a second signal while in-flight requests are still finishing', async (t) => {
  const slow = await startFakeUpstream({ delayMs: 30_000 });
  t.teardown(() => slow.close());
  const file = await configFile(t, `timeouts:\n  hedgeMs: 0\nserver:\n  shutdownMs: 60000\nchains:\n  1337:\n    rpcs: [${slow.url}]\n`);
  const r = run(['serve', '--config', file, '--port', '0', '--no-indexer']);
  t.teardown(() => r.child.kill('SIGKILL'));
  const base = `http://127.0.0.1:${await listeningPort(r)}`;
  void send(base, 'POST', '/rpc/1337', JSON.stringify(rpc('eth_blockNumber', [], 'slow'))).catch(() => {});
  const arrived = () => slow.requests.some((q) => (q.body as { id?: unknown } | undefined)?.id === 'slow');
  for (const end = Date.now() + 20_000; !arrived() && Date.now() < end; ) await new Promise((res) => setTimeout(res, 20));
  t.true(arrived(), 'the request reached the upstream');
  r.child.kill('SIGINT');
  await until(() => logLines(r).some((l) => l.msg === 'shutting down'));
  // The signal was handled; that the process does not exit with the request in flight can only
  // be seen by giving it a moment to do so wrongly.
  await new Promise((res) => setTimeout(res, 300));
  t.is(r.child.exitCode, null, 'the first signal waits for the request in flight');
  r.child.kill('SIGINT');
  t.is(await r.exited, 1);
  t.true(logLines(r).some((l) => l.msg === 'second signal while shutting down: exiting now'));
});

test('should turn V8 allocation-site pretenuring off when serving, unless node was started with the flag', async (t) => {
  const fake = await startFakeUpstream();
  t.teardown(() => fake.close());
  const file = await configFile(t, `chains:\n  1337:\n    rpcs: [${fake.url}]\n`);
  for (const [nodeArgs, expected] of [[[], ['--no-allocation-site-pretenuring', '--heap-growing-percent=100']], [['--allocation-site-pretenuring', '--heap-growing-percent=0'], []]] as const) {
    const r = runCli(['serve', '--config', file, '--port', '0', '--no-indexer'], {}, { nodeArgs: [...nodeArgs] });
    await listeningPort(r);
    const listening = logLines(r).find((l) => l.msg === 'omnigate listening')!;
    t.deepEqual(listening.v8Flags, expected, `node ${nodeArgs.join(' ')}`);
    r.child.kill('SIGTERM');
    t.is(await r.exited, 0);
  }
});

test('should exit 0 on a SIGTERM sent the moment the listening line appears', async (t) => {
  // The listening line is the cue a supervisor or a script waits for: the signal handlers must
  // be in place by then, or the default action kills the process (exit by signal, no close).
  const fake = await startFakeUpstream();
  t.teardown(() => fake.close());
  const file = await configFile(t, `chains:\n  1337:\n    rpcs: [${fake.url}]\n`);
  for (let i = 0; i < 5; i += 1) {
    const r = runCli(['serve', '--config', file, '--port', '0', '--no-indexer']);
    let seen = '';
    r.child.stdout!.on('data', (d: Buffer) => {
      seen += d.toString();
      if (seen.includes('"msg":"omnigate listening"')) r.child.kill('SIGTERM');
    });
    t.is(await r.exited, 0, `run ${i}: ${r.err.join('')}`);
  }
});
