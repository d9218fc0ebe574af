/**
 * What a newcomer and a supervisor see of omnigate's processes: the embedded PostgreSQL works
 * as root from a directory only root can enter, it never outlives the omnigate that started it
 * (not even one killed by SIGKILL), and a SIGTERM to `npm start` stops everything it started.
 */
import { execFile } from 'node:child_process';
import { chmod, copyFile, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import test from 'ava';
import { listeningPort, logLines, runCli, type Run } from '../../support/cli.js';
import { startFakeUpstream } from '../../support/fake-upstream.js';
import { sharedBases, standInName } from '../../../lib/indexer/postgres/install.js';
import { tempDir } from '../../support/pg.js';
import { until } from '../../support/wait.js';
import { descendants, postgresFor, processes, spawnGroup, stillRunning, stopGroup, waitGone } from '../../support/procs.js';

const run = promisify(execFile);
const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
const watchdogsFor = (dataDir: string) => processes((argv) => argv.includes('omnigate-postgres-watchdog') && argv.includes(dataDir));
/** Neither DATABASE_URL nor OMNIGATE_PGDATA from the caller's environment. */
const embeddedEnv = { DATABASE_URL: '', OMNIGATE_PGDATA: '', OMNIGATE_PG_PORT: '' };

if (isRoot) {
  test('as root in a directory only root can enter, db migrate works, keeps its data and leaves nothing running', async (t) => {
    // The project (CLI, package.json, node_modules with the PostgreSQL binaries) inside a 0700
    // directory, as a clone in /root is. Hard links keep the copy cheap; the directory sits in
    // .omnigate/ of this project so that they are on the same file system.
    await mkdir('.omnigate', { recursive: true });
    const locked = await mkdtemp(path.resolve('.omnigate', 'test-0700-'));
    t.teardown(() => rm(locked, { recursive: true, force: true }));
    await chmod(locked, 0o700);
    const project = path.join(locked, 'project');
    await mkdir(project);
    await copyFile('package.json', path.join(project, 'package.json'));
    await run('cp', ['-al', path.resolve('dist'), path.resolve('config'), path.resolve('node_modules'), project]);
    const cli = path.join(project, 'dist', 'lib', 'cli', 'index.js');
    // Wherever the stand-in data directory ends up, it goes with the test.
    const requestedDir = path.join(project, '.omnigate', 'pgdata');
    t.teardown(() => Promise.all(sharedBases().map((base) => rm(path.join(base, 'pgdata', standInName(requestedDir)), { recursive: true, force: true }))));

    const first = runCli(['db', 'migrate'], embeddedEnv, { t, cwd: project, cli });
    t.is(await first.exited, 0, first.err.join(''));
    const said = first.err.join('');
    const moved = /using a copy of the PostgreSQL binaries in (\S+) and the data directory (\S+) for (\S+)/.exec(said);
    if (!moved) return t.fail(`no notice of where PostgreSQL runs from: ${said}`);
    const [, binaries, storedIn, requested] = moved as unknown as [string, string, string, string];
    t.is(requested, requestedDir);
    t.false(binaries.startsWith(locked));
    t.false(storedIn.startsWith(locked));
    t.regex(first.out.join(''), /^Applied 5 migration\(s\) to embedded PostgreSQL in \.omnigate\/pgdata: /);
    t.notRegex(said, /EACCES|Unhandled|\n\s+at /);

    // The same stand-in directory is found again: the migrations are not applied twice.
    const second = runCli(['db', 'migrate'], embeddedEnv, { t, cwd: project, cli });
    t.is(await second.exited, 0, second.err.join(''));
    t.is(second.out.join(''), 'Database is up to date (embedded PostgreSQL in .omnigate/pgdata).\n');
    t.deepEqual(await waitGone(() => postgresFor(storedIn)), []);
    t.deepEqual(await waitGone(() => watchdogsFor(storedIn)), []);
  });
} else {
  test('the 0700-directory test runs as root only', (t) => {
    const message = `SKIPPED "as root in a directory only root can enter": this run is not root (uid ${process.getuid?.()})`;
    console.warn(`\n*** ${message} ***\n`);
    t.log(message);
    t.pass();
  });
}

test('a serve child killed by SIGKILL leaves no PostgreSQL running for its data directory', async (t) => {
  const fake = await startFakeUpstream();
  t.teardown(() => fake.close());
  const dir = await tempDir('omnigate-kill-');
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const config = path.join(dir, 'omnigate.yaml');
  await writeFile(config, ['chains:', '  1337:', '    rpcs:', `      - ${fake.url}`, ''].join('\n'));
  const dataDir = path.join(dir, 'pgdata');

  const r = runCli(['serve', '--config', config, '--port', '0'], { ...embeddedEnv, OMNIGATE_PGDATA: dataDir }, { t });
  await listeningPort(r);
  const postgres = await postgresFor(dataDir);
  t.true(postgres.length > 0, 'PostgreSQL runs while omnigate does');
  t.is((await watchdogsFor(dataDir)).length, 1);

  // Only omnigate's own pid, as the OOM killer or `kill -9 <pid>` would: not its process group.
  process.kill(r.child.pid!, 'SIGKILL');
  await r.exited;
  t.deepEqual(await waitGone(() => postgresFor(dataDir)), []);
  t.deepEqual(await waitGone(() => watchdogsFor(dataDir)), []);
});

test('SIGTERM to `npm start` stops the server and its PostgreSQL, leaving nothing running', async (t) => {
  const dir = await tempDir('omnigate-npm-start-');
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const dataDir = path.join(dir, 'pgdata');
  // --ignore-scripts skips only `prestart` (the build: other test files run dist/ meanwhile).
  // The example config's upstreams are public; offline their probes fail, which is fine here.
  const npm = spawnGroup(t, 'npm', ['start', '--ignore-scripts', '--silent', '--', '--port', '0'], {
    env: { ...process.env, ...embeddedEnv, OMNIGATE_PGDATA: dataDir, LOG_LEVEL: 'info', NODE_ENV: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out: string[] = [];
  const err: string[] = [];
  npm.stdout!.on('data', (d: Buffer) => out.push(d.toString()));
  npm.stderr!.on('data', (d: Buffer) => err.push(d.toString()));
  const started: Run = { child: npm, out, err, exited: new Promise((resolve) => npm.once('exit', resolve)), stop: () => stopGroup(npm) };
  await listeningPort(started);

  const below = await descendants(npm.pid!);
  t.true(below.some((p) => p.argv.includes('serve') && p.argv.some((a) => a.endsWith('dist/lib/cli/index.js'))), 'npm started the server');
  t.true((await postgresFor(dataDir)).length > 0);

  process.kill(npm.pid!, 'SIGTERM');
  t.is(await started.exited, 0, err.join(''));
  t.true(logLines(started).some((l) => l.msg === 'embedded PostgreSQL stopped'));
  t.deepEqual(await waitGone(() => stillRunning(below.map((p) => p.pid))), []);
  t.deepEqual(await waitGone(() => postgresFor(dataDir)), []);
});

test('a first start stopped while initdb runs leaves a data directory the next start serves from, and no password file beside it', async (t) => {
  const fake = await startFakeUpstream();
  t.teardown(() => fake.close());
  const dir = await tempDir('omnigate-initdb-stop-');
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const config = path.join(dir, 'omnigate.yaml');
  await writeFile(config, ['chains:', '  1337:', '    rpcs:', `      - ${fake.url}`, ''].join('\n'));
  const dataDir = path.join(dir, 'pgdata');
  const initdbs = () => processes((argv) => argv.some((a) => a.endsWith('/initdb')) && argv.includes(`--pgdata=${dataDir}`));

  const first = runCli(['serve', '--config', config, '--port', '0'], { ...embeddedEnv, OMNIGATE_PGDATA: dataDir }, { t });
  await until(async () => (await initdbs()).length > 0, 60_000, 20);
  // omnigate's pid alone, as `kill <pid>` does: initdb, not in its way, finishes the cluster.
  process.kill(first.child.pid!, 'SIGTERM');
  await first.exited;
  t.deepEqual(await waitGone(initdbs), []);

  const second = runCli(['serve', '--config', config, '--port', '0'], { ...embeddedEnv, OMNIGATE_PGDATA: dataDir }, { t });
  const port = await listeningPort(second).catch((err: Error) => { throw new Error(`${err.message}: ${second.err.join('')}`); });
  const status = await fetch(`http://127.0.0.1:${port}/api/status`);
  t.is(status.status, 200, await status.text());
  t.deepEqual((await readdir(dir)).filter((f) => f.startsWith('.')), [], 'no password or pending credentials left beside the data directory');
  await second.stop();
  t.deepEqual(await waitGone(() => postgresFor(dataDir)), []);
});
