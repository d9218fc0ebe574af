/**
 * The admin listener (`server.admin`, `--admin-port`/`--admin-host`), the real CLI: /chains and
 * /metrics are served there only (the main port answers them 404, -32008), /health and /ready on
 * both, no RPC on the admin port; the access door still applies there (an admin key); with
 * `--workers 2` every worker listens on the admin port and a scrape is the cluster's aggregate.
 */
import test, { type ExecutionContext } from 'ava';
import net from 'node:net';
import { finalizedChain, startFakeUpstream, type FakeUpstream } from '../../support/fake-upstream.js';
import { rpc, send, type Reply } from '../../support/gateway.js';
import { listeningPort, logLines, runCli, type Run, configFile } from '../../support/cli.js';
import { until } from '../../support/wait.js';

const ADDRESS = '0x00000000000000000000000000000000000000aa';
const OPS_KEY = 'ops-key-0123456789abcdef';

async function upstreams(t: ExecutionContext): Promise<FakeUpstream[]> {
  const list = await Promise.all([0, 1].map(() => startFakeUpstream({ answer: finalizedChain(() => 90) })));
  t.teardown(() => Promise.all(list.map((f) => f.close())));
  return list;
}

async function serve(t: ExecutionContext, list: FakeUpstream[], extra: string[], args: string[]): Promise<{ run: Run; main: string; admin: string; line: Record<string, unknown> }> {
  const file = await configFile(t, ['port: 0', 'host: 127.0.0.1', 'refreshInterval: 1', 'confirmations: 2', ...extra, 'chains:', '  1337:', '    rpcs:', ...list.map((f) => `      - ${f.url}`), ''].join('\n'), 'omnigate-admin-');
  const run = runCli(['serve', '--config', file, '--no-indexer', ...args], {}, { t });
  const port = await listeningPort(run);
  const line = logLines(run).find((l) => l.msg === 'omnigate listening')!;
  return { run, main: `http://127.0.0.1:${port}`, admin: `http://127.0.0.1:${line.adminPort as number}`, line };
}

const get = (base: string, path: string, headers: Record<string, string> = {}): Promise<Reply> => send(base, 'GET', path, undefined, { connection: 'close', ...headers });
const post = (base: string, body: unknown, headers: Record<string, string> = {}): Promise<Reply> =>
  send(base, 'POST', '/rpc/1337', JSON.stringify(body), { 'content-type': 'application/json', connection: 'close', ...headers });

/** The value of one sample of the Prometheus text, or undefined. */
function sample(text: string, name: string, labels: string): number | undefined {
  const line = text.split('\n').find((l) => (labels === '' ? l.startsWith(`${name} `) : l.startsWith(`${name}{`) && labels.split(',').every((p) => l.includes(p))));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

test.serial('server.admin: /chains and /metrics on the admin port only, /health and /ready on both, the admin key still asked there', async (t) => {
  const list = await upstreams(t);
  const { run, main, admin, line } = await serve(
    t,
    list,
    ['server: { admin: { port: 0 } }', 'access:', '  anonymous: true', '  keys:', `    - { label: ops, key: "${OPS_KEY}", admin: true }`],
    [],
  );
  t.is(line.adminUrl, `http://127.0.0.1:${line.adminPort as number}`, 'the admin port binds loopback by default');
  t.not(line.adminPort, line.port);
  const ops = { 'x-api-key': OPS_KEY };

  // RPC on the main port, answered; none on the admin port.
  await until(async () => (await get(main, '/ready')).status === 200);
  const answer = await post(main, rpc('eth_getBalance', [ADDRESS, '0x10'], 7));
  t.is(answer.status, 200, answer.text);
  const noRpc = await post(admin, rpc('eth_getBalance', [ADDRESS, '0x10'], 8), ops);
  t.is(noRpc.status, 404);
  t.is((noRpc.body as { error: { code: number } }).error.code, -32008);

  // /chains and /metrics: the admin port, with the admin key (the access door applies there too).
  const metrics = await get(admin, '/metrics', ops);
  t.is(metrics.status, 200, metrics.text);
  t.is(sample(metrics.text, 'omnigate_requests_total', 'method="eth_getBalance",outcome="ok"'), 1);
  const chains = await get(admin, '/chains', ops);
  t.is(chains.status, 200);
  t.is((chains.body as { chainId: string }[])[0]!.chainId, '1337');
  t.is((await get(admin, '/metrics')).status, 401, 'no key: refused on the admin port too');

  // The main port: 404 for both, even with the admin key, and GET / does not list them.
  for (const path of ['/metrics', '/chains', '/metrics/']) {
    const refused = await get(main, path, ops);
    t.is(refused.status, 404, path);
    t.is((refused.body as { error: { code: number } }).error.code, -32008);
    t.regex((refused.body as { error: { message: string } }).error.message, /admin address/);
  }
  const home = (await get(main, '/')).body as { routes: { path: string }[] };
  t.false(home.routes.some((r) => r.path === '/metrics' || r.path === '/chains'));
  t.true(home.routes.some((r) => r.path === '/health'));

  // /health and /ready: both ports, no key.
  for (const base of [main, admin]) {
    t.is((await get(base, '/health')).status, 200);
    t.is((await get(base, '/ready')).status, 200);
  }
  t.is((await get(admin, '/collection.json')).status, 404, 'the admin port serves its four routes only');

  await run.stop();
  t.is(await run.exited, 0);
});

test.serial('--admin-port with --workers 2: every scrape of the admin port is the cluster\'s aggregate; the main port refuses it', async (t) => {
  const list = await upstreams(t);
  const { run, main, admin, line } = await serve(t, list, [], ['--workers', '2', '--admin-port', '0', '--admin-host', '127.0.0.1']);
  t.is(line.workers, 2);
  await until(async () => (await get(main, '/ready')).status === 200);
  for (let i = 0; i < 20; i++) t.is((await post(main, rpc('eth_getBalance', [ADDRESS, `0x${(0x10 + i).toString(16)}`], i))).status, 200);
  // New connections (connection: close): the cluster hands them to either worker.
  for (let i = 0; i < 4; i++) {
    const metrics = await get(admin, '/metrics');
    t.is(metrics.status, 200);
    t.is(sample(metrics.text, 'omnigate_requests_total', 'method="eth_getBalance",outcome="ok"'), 20, metrics.text.slice(0, 300));
    t.is(sample(metrics.text, 'omnigate_workers', ''), 2);
    t.is((await get(admin, '/chains')).status, 200);
    t.is((await get(main, '/metrics')).status, 404);
    t.is((await get(main, '/chains')).status, 404);
    t.is((await get(admin, '/health')).status, 200);
  }
  await run.stop();
  t.is(await run.exited, 0);
});

test('--admin-host without an admin port is a usage error (exit 2)', async (t) => {
  const list = await upstreams(t);
  const file = await configFile(t, ['port: 0', 'chains:', '  1337:', '    rpcs:', ...list.map((f) => `      - ${f.url}`), ''].join('\n'), 'omnigate-admin-');
  const run = runCli(['serve', '--config', file, '--no-indexer', '--admin-host', '127.0.0.1'], {}, { t });
  t.is(await run.exited, 2);
  t.regex(run.err.join(''), /--admin-host needs an admin port/);
});

test('an admin port already in use: exit 1, naming the admin port and its flag', async (t) => {
  const list = await upstreams(t);
  const taken = net.createServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => taken.close(() => resolve())));
  const port = (taken.address() as net.AddressInfo).port;
  const file = await configFile(t, ['port: 0', 'host: 127.0.0.1', 'chains:', '  1337:', '    rpcs:', ...list.map((f) => `      - ${f.url}`), ''].join('\n'), 'omnigate-admin-');
  const run = runCli(['serve', '--config', file, '--no-indexer', '--admin-port', String(port)], {}, { t });
  t.is(await run.exited, 1);
  t.regex(run.err.join(''), new RegExp(`admin port ${port} is already in use .*--admin-port`));
});

test('the admin port equal to the main port is a config error naming both keys (exit 2), not "already in use (another omnigate?)"', async (t) => {
  const list = await upstreams(t);
  // A port free now: the old behaviour bound the main port on it, then failed on the admin port.
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  const file = await configFile(t, [`port: ${port}`, 'host: 127.0.0.1', `server: { admin: { port: ${port} } }`, 'chains:', '  1337:', '    rpcs:', ...list.map((f) => `      - ${f.url}`), ''].join('\n'), 'omnigate-admin-');
  const fromFile = runCli(['serve', '--config', file, '--no-indexer'], {}, { t });
  t.is(await fromFile.exited, 2, fromFile.err.join(''));
  t.regex(fromFile.err.join(''), new RegExp(`the admin port \\(server\\.admin\\.port\\) and the main port \\(port\\) are both ${port}: give the admin port its own`));
  const fromFlags = runCli(['serve', '--config', file, '--no-indexer', '--port', String(port + 1), '--admin-port', String(port + 1)], {}, { t });
  t.is(await fromFlags.exited, 2, fromFlags.err.join(''));
  t.regex(fromFlags.err.join(''), /the admin port \(--admin-port\) and the main port \(--port\) are both/);
});
