/**
 * Loaded into every ava worker (package.json `ava.require`). Once a test file's tests and
 * teardowns are done, its worker should exit on its own; one still running EXIT_GUARD_MS later
 * (default 30 s) holds something open: a server, a child process, a socket, a ref'd timer. The
 * guard then prints what is open and exits 1, so the run fails naming the file instead of waiting
 * forever (ava's global timeout does not stop such a worker once a test has set a longer
 * t.timeout(), as the fuzz tests do). The timer is unref'd: a worker that exits never waits for it.
 */
import { registerCompletionHandler } from 'ava';

const waitMs = Number(process.env.EXIT_GUARD_MS ?? 30_000);

function describe(handle: unknown): string {
  const h = handle as { constructor?: { name?: string }; spawnargs?: string[]; address?: () => unknown; remoteAddress?: string; remotePort?: number };
  const parts = [h.constructor?.name ?? typeof handle];
  if (h.spawnargs) parts.push(`child process: ${h.spawnargs.join(' ')}`);
  else if (typeof h.address === 'function') {
    try {
      const a = h.address();
      if (a && typeof a === 'object' && Object.keys(a).length > 0) parts.push(`listening on ${JSON.stringify(a)}`);
    } catch {
      // not bound
    }
  }
  if (h.remotePort) parts.push(`connected to ${h.remoteAddress}:${h.remotePort}`);
  return parts.join(', ');
}

registerCompletionHandler(() => {
  setTimeout(() => {
    const std = new Set<unknown>([process.stdin, process.stdout, process.stderr]);
    const handles = (process as unknown as { _getActiveHandles(): unknown[] })._getActiveHandles().filter((h) => !std.has(h)).map(describe);
    process.stderr.write(
      `exit-guard: this test file's worker is still running ${waitMs} ms after its tests finished; open: ` +
        `${JSON.stringify(process.getActiveResourcesInfo())}\n${handles.map((d) => `  - ${d}\n`).join('')}` +
        'Close every server, child process and timer in t.teardown (it runs whatever failed).\n',
    );
    process.exit(1);
  }, waitMs).unref();
});
