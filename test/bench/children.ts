/**
 * The parent side: forks bench children (each server in its own process, so the load generator
 * never shares an event loop with what it measures), talks to them over IPC, and guarantees
 * that every child is gone when the bench ends: a clean shutdown command first (so a
 * `--cpu-prof` child writes its profile and PostgreSQL stops), SIGKILL if that takes too long,
 * and a synchronous SIGKILL sweep on process exit whatever happened.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export interface Child<I = Record<string, unknown>> {
  name: string;
  process: ChildProcess;
  pid: number;
  info: I;
  call<T = unknown>(cmd: string, extra?: Record<string, unknown>): Promise<T>;
  stop(): Promise<void>;
}

const live = new Set<ChildProcess>();

process.on('exit', () => {
  for (const c of live) {
    try {
      c.kill('SIGKILL');
    } catch {
      // already gone
    }
  }
});

export async function startChild<I = Record<string, unknown>>(
  name: string,
  script: string,
  args: string[],
  options: { execArgv?: string[]; readyTimeoutMs?: number; env?: NodeJS.ProcessEnv; plainJs?: boolean } = {},
): Promise<Child<I>> {
  const file = fileURLToPath(new URL(script, import.meta.url));
  const child = fork(file, args, {
    execArgv: [...(options.plainJs ? [] : ['--import', 'tsx']), ...(options.execArgv ?? [])],
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

  const info = await new Promise<I>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} not ready after ${options.readyTimeoutMs ?? 30_000} ms`)), options.readyTimeoutMs ?? 30_000);
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
