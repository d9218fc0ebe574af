/**
 * The parent side: forks bench children (each server in its own process, so the load generator
 * never shares an event loop with what it measures), talks to them over IPC, and guarantees
 * that every child is gone when the bench ends: a clean shutdown command first (so a
 * `--cpu-prof` child writes its profile and PostgreSQL stops), SIGKILL if that takes too long,
 * and a synchronous SIGKILL sweep on process exit whatever happened.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { root } from '../support/paths.js';

export interface Child<I = Record<string, unknown>> {
  name: string;
  process: ChildProcess;
  pid: number;
  info: I;
  call<T = unknown>(cmd: string, extra?: Record<string, unknown>): Promise<T>;
  stop(): Promise<void>;
}

const live = new Set<ChildProcess>();
/**
 * How long the bench waits for a process to be ready (startChild's `ready`, an omnigate's upstreams
 * healthy after its first probe round) by default: 10 minutes, which only a hang takes. On a
 * machine loaded by the test suite, a dozen children starting at once have taken over 30 s.
 */
export const READY_DEADLINE_MS = 10 * 60_000;

/**
 * Polls `ready()` every `everyMs` until it is true; fails with `what` once `deadlineMs` has passed
 * (a hang) or when `gone()` says the process waited for has exited.
 */
export async function pollUntil(what: string, ready: () => Promise<boolean>, options: { gone?: () => boolean; everyMs?: number; deadlineMs?: number } = {}): Promise<void> {
  const deadline = performance.now() + (options.deadlineMs ?? READY_DEADLINE_MS);
  for (;;) {
    if (await ready()) return;
    if (options.gone?.()) throw new Error(`${what}: the process exited`);
    if (performance.now() > deadline) throw new Error(`${what}: not after ${options.deadlineMs ?? READY_DEADLINE_MS} ms, hung?`);
    await new Promise((r) => setTimeout(r, options.everyMs ?? 50));
  }
}

/** The repository's root, and the bench's sources: children are named relative to test/bench/
 * (as from this file), also when a test runs this module compiled into dist-test/. */
const ROOT = root;
const BENCH = path.join(ROOT, 'test', 'bench');
/** Plain-JavaScript copies of TypeScript children (prebuildChildren), by source file. */
const prebuilt = new Map<string, string>();
let prebuiltDir: string | undefined;

process.on('exit', () => {
  if (prebuiltDir) rmSync(prebuiltDir, { recursive: true, force: true });
  killStarting();
});

/**
 * SIGKILLs every child still running, those still starting included (not yet in the caller's
 * list: a smoke run's indexer starts beside the other work). Their IPC channels would otherwise
 * keep this process alive after a failure: the bench then hung until something killed it.
 */
export function killStarting(): void {
  for (const c of live) {
    try {
      c.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
}

/**
 * Smoke mode (run.ts): each of these TypeScript children is bundled once, before any starts, into
 * one plain-JavaScript file that imports the product from the build (`lib/…` and `config/…`
 * imports become `dist/…` ones; `npm run bench` builds first) and the bench's own modules
 * inlined; startChild() then forks that file with no TypeScript loader. tsx costs each process it
 * starts about 0.6 s of CPU (its loader thread, its own code, esbuild's), most of a fake
 * upstream's start, and a smoke run starts some thirty such processes, many of them at once. The
 * full bench forks the sources under tsx, as before: what it measures stays the same.
 * The files are written under node_modules/.cache (the packages they import resolve from there)
 * and removed when this process exits.
 */
export async function prebuildChildren(scripts: string[]): Promise<void> {
  const esbuild = await import('esbuild');
  const cache = path.join(ROOT, 'node_modules', '.cache');
  mkdirSync(cache, { recursive: true });
  prebuiltDir = mkdtempSync(path.join(cache, 'omnigate-bench-'));
  const entries = scripts.map((s) => path.resolve(BENCH, s));
  const toDist = {
    name: 'product-from-dist',
    setup(build: import('esbuild').PluginBuild) {
      build.onResolve({ filter: /^\.\.?\// }, (args) => {
        const file = path.resolve(args.resolveDir, args.path);
        const rel = path.relative(ROOT, file);
        if (/^dist[\\/]/.test(rel)) return { path: pathToFileURL(file).href, external: true };
        if (!/^(lib|config)[\\/]/.test(rel)) return undefined; // the bench's own modules: inlined
        const built = path.join(ROOT, 'dist', rel);
        if (!existsSync(built)) return { errors: [{ text: `${rel} is not built (${path.relative(ROOT, built)} missing): run npm run build` }] };
        return { path: pathToFileURL(built).href, external: true };
      });
    },
  };
  try {
    await esbuild.build({
      entryPoints: entries,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      packages: 'external',
      outdir: prebuiltDir,
      outExtension: { '.js': '.mjs' },
      plugins: [toDist],
      logLevel: 'silent',
    });
  } finally {
    await esbuild.stop(); // (its service process would outlive the bench)
  }
  for (const entry of entries) prebuilt.set(entry, path.join(prebuiltDir, `${path.basename(entry, '.ts')}.mjs`));
}

export async function startChild<I = Record<string, unknown>>(
  name: string,
  script: string,
  args: string[],
  options: { execArgv?: string[]; readyTimeoutMs?: number; env?: NodeJS.ProcessEnv; plainJs?: boolean } = {},
): Promise<Child<I>> {
  const source = path.resolve(BENCH, script);
  const file = prebuilt.get(source) ?? source;
  const child = fork(file, args, {
    execArgv: [...(options.plainJs || file !== source ? [] : ['--import', 'tsx']), ...(options.execArgv ?? [])],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, ...options.env },
  });
  live.add(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => {
    live.delete(child);
    resolve();
  }));
  let seq = 0;
  const waiting = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
  child.on('message', (raw) => {
    const m = raw as { seq: number; ok?: boolean; value?: unknown; error?: string };
    const w = waiting.get(m.seq);
    if (!w) return;
    waiting.delete(m.seq);
    if (m.ok) w.resolve(m.value);
    else w.reject(new Error(`${name}: ${m.error}`));
  });
  child.once('exit', (code, signal) => {
    for (const w of waiting.values()) w.reject(new Error(`${name} exited (${code ?? signal})`));
    waiting.clear();
  });

  // Ready is an event (the child's `ready` message, or its exit): waited for as long as a starting
  // process can take on a loaded machine; the deadline is for a child that hangs.
  const readyMs = options.readyTimeoutMs ?? READY_DEADLINE_MS;
  const info = await new Promise<I>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} not ready after ${readyMs} ms: hung?`)), readyMs);
    const onMessage = (raw: unknown) => {
      const m = raw as { ready?: boolean; info?: I };
      if (!m.ready) return;
      clearTimeout(timer);
      child.off('message', onMessage);
      resolve(m.info as I);
    };
    child.on('message', onMessage);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited before it was ready (${code ?? signal})`));
    });
  }).catch(async (err: unknown) => {
    child.kill('SIGKILL');
    await exited;
    throw err;
  });

  const call = <T>(cmd: string, extra: Record<string, unknown> = {}): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      seq += 1;
      waiting.set(seq, { resolve: resolve as (v: unknown) => void, reject });
      child.send({ cmd, seq, ...extra });
    });

  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      if (child.connected) child.send({ cmd: 'shutdown', seq: -1 });
      else child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    })();
    return stopping;
  };
  return { name, process: child, pid: child.pid!, info, call, stop };
}

/** Stops every child still running (clean shutdown, then SIGKILL). */
export async function stopAll(children: Iterable<Child<any>>): Promise<void> {
  await Promise.all([...children].map((c) => c.stop()));
}
