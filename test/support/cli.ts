/**
 * Runs the built CLI (`dist/lib/cli/index.js`) as a child process, as a user would, and reads its output.
 * The child runs in its own process group and cannot outlive the test: pass the test as `t` and
 * its stop (SIGTERM, SIGKILL after a grace period) is registered with `t.teardown` at spawn;
 * without one, it is stopped after the test file (`test.after.always`), and any group still
 * alive is SIGKILLed when the test worker exits. See ./procs.ts.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import test from 'ava';
import { spawnGroup, stopAllGroups, stopGroup, type Teardown } from './procs.js';

// A test that did not pass `t` (or stop its child) still leaves nothing running after its file.
test.after.always('stop CLI children still running', () => stopAllGroups());

const cli = resolve('dist/lib/cli/index.js');

export interface Run {
  child: ChildProcess;
  out: string[];
  err: string[];
  exited: Promise<number | null>;
  /** SIGTERM to the process group, SIGKILL after `graceMs`; resolves when it has exited. */
  stop(graceMs?: number): Promise<void>;
}

export interface RunOptions {
  preload?: string;
  nodeArgs?: string[];
  /** The test: the child is stopped in its teardown, whatever failed. */
  t?: Teardown;
  cwd?: string;
  /** Another copy of the CLI to run (default: this project's dist/lib/cli/index.js). */
  cli?: string;
}

/** Starts `node [nodeArgs] [--import preload] dist/lib/cli/index.js ...args` with the given extra environment. */
export function runCli(args: string[], env: Record<string, string> = {}, options: RunOptions = {}): Run {
  const node = [...(options.nodeArgs ?? []), ...(options.preload ? ['--import', options.preload] : [])];
  const child = spawnGroup(options.t, process.execPath, [...node, options.cli ?? cli, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(options.cwd ? { cwd: options.cwd } : {}),
  });
  const out: string[] = [];
  const err: string[] = [];
  child.stdout!.on('data', (d: Buffer) => out.push(d.toString()));
  child.stderr!.on('data', (d: Buffer) => err.push(d.toString()));
  const exited = new Promise<number | null>((r) => {
    // 'exit' may come before the pipes are read to their end (a loaded CI clone saw exit code 2
    // with stderr still empty): wait for both to end, at most 2 s (a grandchild may hold them).
    child.once('exit', (code) => {
      const ended = (s: NodeJS.ReadableStream & { readableEnded?: boolean }) =>
        s.readableEnded ? Promise.resolve() : new Promise<void>((done) => (s.once('end', done), s.once('close', done)));
      const bound = new Promise<void>((done) => setTimeout(done, 2_000).unref());
      void Promise.race([Promise.all([ended(child.stdout!), ended(child.stderr!)]), bound]).then(() => r(code));
    });
    child.once('error', (e) => {
      err.push(`spawn failed: ${e.message}`);
      r(null);
    });
  });
  return { child, out, err, exited, stop: (graceMs) => stopGroup(child, graceMs) };
}

/** The JSON log lines printed so far (complete lines only). */
export const logLines = (r: Run) =>
  r.out
    .join('')
    .split('\n')
    .slice(0, -1)
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

/**
 * Waits for the `omnigate listening` log line and returns its port: on each output chunk, not
 * on a timer. Fails when the process exits first, or after `budgetMs` (generous: a loaded
 * machine starting PostgreSQL can take many seconds).
 */
export function listeningPort(r: Run, budgetMs = 90_000): Promise<number> {
  return new Promise((resolve, reject) => {
    const check = () => {
      const line = logLines(r).find((l) => l.msg === 'omnigate listening');
      if (line) {
        done();
        resolve(line.port as number);
      }
    };
    const exited = () => {
      check();
      done();
      reject(new Error(`exited (${r.child.exitCode ?? r.child.signalCode}) before listening: ${r.err.join('')}`));
    };
    const timer = setTimeout(() => {
      done();
      reject(new Error(`never listened within ${budgetMs} ms: ${r.out.join('')} ${r.err.join('')}`));
    }, budgetMs);
    const done = () => {
      clearTimeout(timer);
      r.child.stdout!.off('data', check);
      r.child.off('exit', exited);
    };
    r.child.stdout!.on('data', check);
    r.child.once('exit', exited);
    check();
    if (r.child.exitCode !== null || r.child.signalCode !== null) exited();
  });
}

/** The YAML lines of `access.keys` with one client key labelled `relayer` and its rule (a budget, a limit). */
export function relayerKeyLines(key: string, rule = 'creditsPerDay: 100'): string[] {
  return ['  keys:', '    - label: relayer', `      key: "${key}"`, `      ${rule}`];
}

/** The YAML lines of a `chains:` section with one chain served by these upstreams (their `url`s). */
export function chainLines(upstreams: readonly { url: string }[], chainId: number | string = 1337): string[] {
  return ['chains:', `  ${chainId}:`, '    rpcs:', ...upstreams.map((u) => `      - ${u.url}`)];
}

/**
 * Writes `yaml` (a string, or lines joined with line feeds) as `omnigate.yaml` in a new temporary
 * folder named after `prefix`, removed in the test's teardown; returns the file's path.
 */
export async function configFile(t: { teardown(fn: () => Promise<void>): void }, yaml: string | readonly string[], prefix = 'omnigate-test-'): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'omnigate.yaml');
  await writeFile(file, typeof yaml === 'string' ? yaml : yaml.join('\n'));
  return file;
}
