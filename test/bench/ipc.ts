/**
 * The child side of the bench's process protocol: a child started with fork() tells the parent
 * it is ready with `ready(info)`, answers `{ cmd }` requests with `onCommand`, and exits cleanly
 * (so `--cpu-prof` can write its profile) on `{ cmd: 'shutdown' }` or when the parent goes away.
 */
import type { Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { performance } from 'node:perf_hooks';

export interface Command {
  cmd: string;
  seq: number;
  [key: string]: unknown;
}

type Handler = (command: Command) => unknown;

export function childMain(options: { onCommand?: Handler; onShutdown?: () => Promise<void> | void }): { ready(info: Record<string, unknown>): void } {
  if (!process.send) throw new Error('this script is a bench child: start it with child_process.fork()');
  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    const force = setTimeout(() => process.exit(code), 8000);
    force.unref();
    try {
      await options.onShutdown?.();
    } catch (err) {
      console.error('bench child: shutdown failed:', err);
    }
    process.exit(code);
  };
  process.on('message', (raw: unknown) => {
    const command = raw as Command;
    if (command.cmd === 'shutdown') {
      process.send?.({ seq: command.seq, ok: true });
      void stop(0);
      return;
    }
    Promise.resolve()
      .then(() => options.onCommand?.(command))
      .then(
        (value) => process.send?.({ seq: command.seq, ok: true, value }),
        (err: unknown) => process.send?.({ seq: command.seq, ok: false, error: String((err as Error)?.stack ?? err) }),
      );
  });
  // The parent died or closed the channel: never outlive it.
  process.on('disconnect', () => void stop(0));
  process.on('SIGTERM', () => void stop(0));
  process.on('SIGINT', () => void stop(0));
  return {
    ready(info) {
      process.send?.({ seq: 0, ready: true, info });
    },
  };
}

/**
 * A bench child that is one HTTP server (the proxy, the plain fan-out): keep-alive for a minute,
 * `elu` answered with the event-loop utilization so far (the parent diffs two of them), and on
 * shutdown its sockets destroyed, the server closed, then `cleanup`. Listens on a free port and
 * reports `{ port, pid }`.
 */
export async function serveHttpChild(server: Server, cleanup: () => Promise<unknown> | void = () => {}): Promise<void> {
  const sockets = new Set<Socket>();
  server.keepAliveTimeout = 60_000;
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  const child = childMain({
    onCommand(command) {
      if (command.cmd === 'elu') {
        const { idle, active } = performance.eventLoopUtilization();
        return { idle, active };
      }
      throw new Error(`unknown command ${command.cmd}`);
    },
    async onShutdown() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
      await cleanup();
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  child.ready({ port: (server.address() as AddressInfo).port, pid: process.pid });
}
