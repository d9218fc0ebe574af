/**
 * The door on the wire: `host` binds the address it names (the example config's 127.0.0.1 among
 * them), `--host` overrides it, and `omnigate serve` with client keys from the environment and
 * from a file serves a keyed request, refuses a keyless one, never prints a key (nor shows one
 * typed into a path that is no route), and exits 2 on a key file it cannot read: every such file
 * of the config at once (access and attest), each with the config file, its YAML path and line, and
 * at once for a named pipe or a device, which a plain read would wait on or read without end.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { parseConfig } from '../../../config/index.js';
import { startServer } from '../../../lib/server/app.js';
import { configFile, listeningPort, logLines, runCli } from '../../support/cli.js';
import { startFakeUpstream } from '../../support/fake-upstream.js';
import { makeConfig, rpc, send } from '../../support/gateway.js';
import { fromRoot } from '../../support/paths.js';

const ENV_KEY = 'env-key-0123456789abcdef0123';
const FILE_KEY = 'file-key-fedcba9876543210fedc';

test('host binds the address it names; the example config\'s is 127.0.0.1; the option overrides the config', async (t) => {
  const fake = await startFakeUpstream();
  t.teardown(() => fake.close());
  const example = parseConfig(readFileSync(fromRoot('config/omnigate.example.yaml'), 'utf8'), 'example');
  t.is(example.host, '127.0.0.1');
  const chains = { 1337: { rpcs: [fake.url] } };
  const loopback = await startServer(makeConfig({ host: example.host, port: 0, chains }), 0, { headTracking: false });
  t.teardown(() => loopback.close());
  t.is((loopback.server.address() as AddressInfo).address, '127.0.0.1');
  const overridden = await startServer(makeConfig({ port: 0, chains }), 0, { headTracking: false, host: '127.0.0.1' });
  t.teardown(() => overridden.close());
  t.is((overridden.server.address() as AddressInfo).address, '127.0.0.1');
  const everywhere = await startServer(makeConfig({ port: 0, chains }), 0, { headTracking: false });
  t.teardown(() => everywhere.close());
  t.not((everywhere.server.address() as AddressInfo).address, '127.0.0.1', 'without host: every interface, as before');
});

test('omnigate serve --host with keys from the environment and a file: keyed requests served, keyless refused, no key printed', async (t) => {
  const fake = await startFakeUpstream();
  t.teardown(() => fake.close());
  const dir = await mkdtemp(join(tmpdir(), 'omnigate-access-'));
  t.teardown(() => rm(dir, { recursive: true }));
  await writeFile(join(dir, 'key'), `${FILE_KEY}\n`);
  const file = join(dir, 'omnigate.yaml');
  const yaml = (keyFile: string) =>
    ['host: 0.0.0.0', 'chains:', '  1337:', `    rpcs: [${fake.url}]`, 'access:', '  keys:', '    - { label: env, key: "${CLIENT_KEY}" }', `    - { label: file, keyFile: ${keyFile} }`, ''].join('\n');
  await writeFile(file, yaml(join(dir, 'key')));
  const r = runCli(['serve', '--config', file, '--port', '0', '--host', '127.0.0.1', '--no-indexer'], { CLIENT_KEY: ENV_KEY, LOG_LEVEL: 'debug' }, { t });
  const base = `http://127.0.0.1:${await listeningPort(r)}`;
  t.like(logLines(r).find((l) => l.msg === 'omnigate listening'), { host: '127.0.0.1', url: base });
  const body = JSON.stringify(rpc('eth_blockNumber'));
  t.is((await send(base, 'POST', '/rpc/1337', body, { authorization: `Bearer ${ENV_KEY}` })).status, 200);
  t.is((await send(base, 'POST', `/rpc/1337/${FILE_KEY}`, body)).status, 200);
  t.is((await send(base, 'POST', '/rpc/1337', body)).status, 401);
  t.is((await send(base, 'POST', `/rpc/1337/${ENV_KEY}x`, body)).status, 401);
  t.is((await send(base, 'GET', '/metrics')).status, 401);
  // A key typed into a path that is no route: the 404 and its log line show the path without it.
  const typos = [`/rpc/1337/${FILE_KEY}/x`, `/RPC/1337/${ENV_KEY}`, `//rpc/1337/${FILE_KEY}`, `/rpc/1337//${ENV_KEY}`];
  for (const path of typos) {
    for (const method of ['POST', 'GET']) {
      const typo = await send(base, method, path, method === 'POST' ? body : undefined);
      t.is(typo.status, 404, `${method} ${path}`);
      t.like(typo.body, { id: null, error: { code: -32008 } });
      t.regex(typo.body.error.message, /^No route for (POST|GET) \/.*\*\*\*/);
      t.false(typo.text.includes(FILE_KEY) || typo.text.includes(ENV_KEY), typo.text);
    }
  }
  r.child.kill('SIGTERM');
  t.is(await r.exited, 0);
  const output = r.out.join('') + r.err.join('');
  t.regex(output, /"key":"env"/);
  t.regex(output, /"key":"file"/);
  t.false(output.includes(ENV_KEY));
  t.false(output.includes(FILE_KEY));

  await writeFile(file, yaml(join(dir, 'missing')));
  const bad = runCli(['serve', '--config', file, '--port', '0', '--no-indexer'], { CLIENT_KEY: ENV_KEY }, { t });
  t.is(await bad.exited, 2);
  t.regex(bad.err.join(''), /access\.keys\[1\]\.keyFile \(line 8\): cannot read .*missing: ENOENT/);
  t.false(bad.err.join('').includes(ENV_KEY));
});

test('serve lists every key file it cannot use at once, access and attest, with the config file and each YAML line; a named pipe or a device is refused, not waited on (exit 2)', async (t) => {
  const file = await configFile(t, 'chains: { 1337: { rpcs: [https://a.example] } }\n', 'omnigate-keyfiles-');
  const dir = join(file, '..');
  const fifo = join(dir, 'pipe.key');
  t.is(spawnSync('mkfifo', [fifo]).status, 0, 'mkfifo');
  await writeFile(join(dir, 'short.key'), 'short\n');
  await writeFile(join(dir, 'good.key'), `${FILE_KEY}\n`);
  await writeFile(file, [
    'chains: { 1337: { rpcs: [https://a.example] } }',
    'access:',
    '  keys:',
    `    - { label: gone, keyFile: ${join(dir, 'missing.key')} }`,
    `    - { label: good, keyFile: ${join(dir, 'good.key')} }`,
    `    - { label: folder, keyFile: ${dir} }`,
    `    - { label: short, keyFile: ${join(dir, 'short.key')} }`,
    '    - { label: zero, keyFile: /dev/zero }',
    'attest:',
    `  keyFile: ${fifo}`,
    '',
  ].join('\n'));
  const r = runCli(['serve', '--config', file, '--port', '0', '--no-indexer'], {}, { t });
  t.is(await r.exited, 2);
  const err = r.err.join('');
  t.true(err.startsWith(`omnigate: ${file}: invalid config:\n`), err);
  const problems = err.split('\n').filter((l) => l.startsWith('  - '));
  t.is(problems.length, 5, err);
  t.regex(problems[0]!, /^  - access\.keys\[0\]\.keyFile \(line 4\): cannot read .*missing\.key: ENOENT$/);
  t.regex(problems[1]!, /^  - access\.keys\[2\]\.keyFile \(line 6\): cannot read .*: a directory, not a regular file$/);
  t.regex(problems[2]!, /^  - access\.keys\[3\]\.keyFile \(line 7\): .*short\.key does not hold a key \(its content is not shown\)/);
  t.regex(problems[3]!, /^  - access\.keys\[4\]\.keyFile \(line 8\): cannot read \/dev\/zero: a device, not a regular file$/);
  t.regex(problems[4]!, /^  - attest\.keyFile \(line 10\): cannot read .*pipe\.key: a named pipe, not a regular file$/);
  t.false(err.includes(FILE_KEY) || err.includes('short\n'));
});
