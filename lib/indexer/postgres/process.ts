/**
 * Runs the embedded PostgreSQL's `initdb` and `postgres` as child processes.
 *
 * - Every spawn failure (EACCES, ENOENT…) becomes a rejected promise with a clear message.
 * - The server runs in its own process group, so a Ctrl-C or a signal sent to omnigate's group
 *   does not stop the database under omnigate's graceful shutdown; omnigate stops it last.
 * - A watchdog makes sure the server does not outlive omnigate, whatever ends omnigate (SIGKILL,
 *   OOM killer, a crash): PostgreSQL itself never notices that its parent died. The watchdog is a
 *   tiny `/bin/sh` in its own process group whose standard input is a pipe from omnigate; the
 *   kernel closes that pipe when omnigate dies, `read` returns, and the watchdog sends the
 *   postmaster a fast-shutdown SIGINT, but only if `postmaster.pid` still names that pid (so a
 *   recycled pid is never hit). On a normal stop omnigate kills the watchdog first.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmod, chown, mkdir, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Binaries, PgUser } from './install.js';

export interface PgRunOptions {
  binaries: Binaries;
  dataDir: string;
  /** Run as this user (when omnigate runs as root). */
  user?: PgUser;
  /** Every line PostgreSQL prints. */
  onLog: (line: string) => void;
}

export interface PgProcess {
  readonly pid: number;
  /** Resolves when the server has exited. */
  readonly exited: Promise<void>;
  /** Fast shutdown (SIGINT), SIGQUIT after `graceMs`; resolves when it has exited. */
  stop(graceMs?: number): Promise<void>;
}

const WATCHDOG = 'read -r _; [ "$(head -n 1 "$2/postmaster.pid" 2>/dev/null)" = "$1" ] && kill -INT "$1"';

function spawnError(file: string, user: PgUser | undefined, err: NodeJS.ErrnoException): Error {
  const who = user ? ` as the postgres system user (uid ${user.uid})` : '';
  const why = err.code === 'EACCES'
    ? 'permission denied: that user cannot reach or execute it'
    : err.code === 'ENOENT' ? 'file not found' : err.message;
  return new Error(`cannot run ${file}${who}: ${why} (${err.code ?? 'error'})`);
}

/** Makes a binary executable if an unpacker dropped the mode bits (never touches a good file). */
async function ensureExecutable(file: string): Promise<void> {
  const mode = await stat(file).then((s) => (s.isFile() ? s.mode : undefined), () => undefined);
  // Missing or not a file: the spawn reports it, with a clear message.
  if (mode !== undefined && (mode & 0o555) !== 0o555) await chmod(file, mode | 0o555).catch(() => {});
}

function lines(onLine: (line: string) => void): (chunk: Buffer) => void {
  let pending = '';
  return (chunk) => {
    pending += chunk.toString('utf8');
    const parts = pending.split('\n');
    pending = parts.pop() ?? '';
    for (const line of parts) if (line.trim()) onLine(line.trim());
  };
}

function env(): NodeJS.ProcessEnv {
  return { ...process.env, LC_ALL: 'C', LC_MESSAGES: 'C', LANG: 'C' };
}

/** The file initdb reads the superuser's password from, beside `dataDir`. */
export function passwordFileOf(dataDir: string): string {
  return path.join(path.dirname(dataDir), `.omnigate-pw-${path.basename(dataDir)}`);
}

/** `initdb` into `dataDir` (created, owned by the server's user), with the given superuser. */
export async function initdb(options: PgRunOptions, auth: { user: string; password: string }, flags: string[]): Promise<void> {
  const { binaries, dataDir, user } = options;
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  if (user) await chown(dataDir, user.uid, user.gid);
  await ensureExecutable(binaries.initdb);
  // The password goes in a file only the server's user can read, next to the data directory
  // (named after it: one that a killed start left behind is the next start's to replace and remove).
  const pwfile = passwordFileOf(dataDir);
  await writeFile(pwfile, `${auth.password}\n`, { mode: 0o600 });
  try {
    if (user) await chown(pwfile, user.uid, user.gid);
    await new Promise<void>((resolve, reject) => {
      const child = spawn(binaries.initdb, [
        `--pgdata=${dataDir}`, '--auth=scram-sha-256', `--username=${auth.user}`, `--pwfile=${pwfile}`, ...flags,
      ], { ...(user ?? {}), env: env(), stdio: ['ignore', 'pipe', 'pipe'] });
      const recent: string[] = [];
      const remember = (line: string) => {
        options.onLog(line);
        recent.push(line);
        if (recent.length > 8) recent.shift();
      };
      child.stdout!.on('data', lines(remember));
      child.stderr!.on('data', lines(remember));
      child.once('error', (err) => reject(spawnError(binaries.initdb, user, err)));
      child.once('close', (code, signal) => {
        if (code === 0) resolve();
        else reject(new Error(`initdb exited with ${code ?? signal}: ${recent.join(' | ') || '(no output)'}`));
      });
    });
  } finally {
    await rm(pwfile, { force: true });
  }
}

/**
 * Starts `postgres -D dataDir -p port ...flags` and resolves once it accepts connections
 * (its "ready to accept connections" line); rejects if it exits first or after `timeoutMs`.
 */
export async function startPostgres(options: PgRunOptions, port: number, flags: string[], timeoutMs: number): Promise<PgProcess> {
  const { binaries, dataDir, user, onLog } = options;
  await ensureExecutable(binaries.postgres);
  const child: ChildProcess = spawn(binaries.postgres, ['-D', dataDir, '-p', String(port), '-c', 'lc_messages=C', ...flags], {
    ...(user ?? {}), env: env(), stdio: ['ignore', 'pipe', 'pipe'], detached: true,
  });
  let watchdog: ChildProcess | undefined;
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => {
      watchdog?.kill('SIGKILL');
      resolve();
    });
    child.once('error', () => resolve()); // never started: nothing to wait for
  });
  let onReady: (() => void) | undefined;
  const watch = lines((line) => {
    onLog(line);
    if (line.includes('database system is ready to accept connections')) onReady?.();
  });
  child.stdout!.on('data', watch);
  child.stderr!.on('data', watch);

  let timer: NodeJS.Timeout | undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      onReady = resolve;
      child.once('error', (err) => reject(spawnError(binaries.postgres, user, err)));
      child.once('exit', (code, signal) => reject(new Error(`the server exited with ${code ?? signal} before it was ready`)));
      timer = setTimeout(() => reject(new Error(`not ready after ${timeoutMs} ms`)), timeoutMs);
    });
  } catch (err) {
    if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
      child.kill('SIGQUIT');
      await exited;
    }
    throw err;
  } finally {
    clearTimeout(timer);
  }

  const pid = child.pid!;
  watchdog = spawn('/bin/sh', ['-c', WATCHDOG, 'omnigate-postgres-watchdog', String(pid), dataDir], {
    detached: true, stdio: ['pipe', 'ignore', 'ignore'],
  });
  watchdog.once('error', (err) => onLog(`watchdog could not start: ${err.message}`));
  watchdog.unref();
  (watchdog.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  child.unref();
  for (const stream of [child.stdout, child.stderr]) (stream as unknown as { unref?: () => void } | null)?.unref?.();

  let stopping: Promise<void> | undefined;
  return {
    pid,
    exited,
    stop: (graceMs = 60_000) => {
      stopping ??= (async () => {
        watchdog?.kill('SIGKILL');
        if (child.exitCode !== null || child.signalCode !== null) return;
        child.kill('SIGINT');
        const late = setTimeout(() => child.kill('SIGQUIT'), graceMs);
        await exited;
        clearTimeout(late);
      })();
      return stopping;
    },
  };
}
