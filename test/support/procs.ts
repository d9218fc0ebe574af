/**
 * Child processes that cannot outlive a test.
 *
 * `spawnGroup` starts a child in its own process group (so whatever it starts in turn can be
 * signalled with it), registers its stop with `t.teardown` at once when given a test, and adds
 * it to a sweep that SIGKILLs every group still alive when the test worker exits, whatever
 * failed. `stopGroup` sends SIGTERM to the group, then SIGKILL after a grace period.
 *
 * `processes` and `waitGone` read /proc (Linux) to check that nothing was left behind.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import net from 'node:net';

export interface Teardown { teardown(fn: () => unknown): void }

const live = new Set<ChildProcess>();
let swept = false;

function sweepOnExit(): void {
  if (swept) return;
  swept = true;
  process.once('exit', () => {
    for (const child of live) signalGroup(child, 'SIGKILL');
  });
}

export const hasExited = (child: ChildProcess): boolean => child.exitCode !== null || child.signalCode !== null;

function signalGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    // the group is gone already
  }
}

/** Resolves when the child has exited (at once if it has, or never started). */
export function exitOf(child: ChildProcess): Promise<void> {
  if (hasExited(child) || child.pid === undefined) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', () => resolve());
  });
}

/** Spawns `command` in its own process group; stopped in `t.teardown` and on worker exit. */
export function spawnGroup(t: Teardown | undefined, command: string, args: string[], options: SpawnOptions = {}): ChildProcess {
  const child = spawn(command, args, { ...options, detached: true });
  sweepOnExit();
  if (child.pid !== undefined) live.add(child);
  child.once('exit', () => {
    // The leader has exited; anything else in its group is killed too (a grandchild left behind).
    signalGroup(child, 'SIGKILL');
    live.delete(child);
  });
  t?.teardown(() => stopGroup(child));
  return child;
}

/** SIGTERM to the child's process group, SIGKILL to it after `graceMs`; resolves on exit. */
export async function stopGroup(child: ChildProcess, graceMs = 15_000): Promise<void> {
  if (!hasExited(child)) {
    signalGroup(child, 'SIGTERM');
    const late = setTimeout(() => signalGroup(child, 'SIGKILL'), graceMs);
    await exitOf(child);
    clearTimeout(late);
  }
  live.delete(child);
}

/** Stops every group this worker started that is still running (for `test.after.always`). */
export async function stopAllGroups(): Promise<void> {
  await Promise.all([...live].map((child) => stopGroup(child)));
}

export interface ProcessInfo { pid: number; ppid: number; pgid: number; argv: string[] }

/** Live processes (zombies excluded) whose argv matches. Linux only (empty elsewhere). */
export async function processes(match: (argv: string[]) => boolean): Promise<ProcessInfo[]> {
  const out: ProcessInfo[] = [];
  for (const entry of await readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(entry)) continue;
    const [stat, cmdline] = await Promise.all([
      readFile(`/proc/${entry}/stat`, 'utf8').catch(() => ''),
      readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => ''),
    ]);
    if (!stat || !cmdline) continue;
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] === 'Z' || fields[0] === 'X') continue;
    const argv = cmdline.split('\0').filter(Boolean);
    if (match(argv)) out.push({ pid: Number(entry), ppid: Number(fields[1]), pgid: Number(fields[2]), argv });
  }
  return out;
}

/** Every live process below `pid` (children, their children…). */
export async function descendants(pid: number): Promise<ProcessInfo[]> {
  const all = await processes(() => true);
  const out: ProcessInfo[] = [];
  const parents = new Set([pid]);
  for (let grew = true; grew;) {
    grew = false;
    for (const p of all) {
      if (parents.has(p.ppid) && !parents.has(p.pid)) {
        parents.add(p.pid);
        out.push(p);
        grew = true;
      }
    }
  }
  return out;
}

/** Which of `pids` still run. */
export const stillRunning = async (pids: number[]) => processes(() => true).then((all) => all.filter((p) => pids.includes(p.pid)));

/** The postmaster (and its workers) serving `dataDir`: `postgres -D <dataDir>`. */
export const postgresFor = (dataDir: string) =>
  processes((argv) => /(^|\/)postgres$/.test(argv[0] ?? '') && argv.includes('-D') && argv[argv.indexOf('-D') + 1] === dataDir);

/**
 * Waits until no process matches (another process's exit cannot be awaited as an event, so
 * /proc is read every 100 ms); resolves to what still runs after `budgetMs` (empty: all gone).
 */
export async function waitGone(find: () => Promise<ProcessInfo[]>, budgetMs = 30_000): Promise<ProcessInfo[]> {
  const deadline = Date.now() + budgetMs;
  for (;;) {
    const left = await find();
    if (left.length === 0 || Date.now() > deadline) return left;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Whether something accepts TCP connections on 127.0.0.1:`port` now. */
export function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect(port, '127.0.0.1', () => {
      s.destroy();
      resolve(true);
    });
    s.on('error', () => resolve(false));
  });
}

/** Waits until a server listens on `port` (polled every 25 ms); throws naming `what` after `ms`. */
export async function untilListening(port: number, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await accepts(port))) {
    if (Date.now() > deadline) throw new Error(`${what} did not listen on port ${port}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
