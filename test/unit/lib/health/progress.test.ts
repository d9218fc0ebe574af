import test from 'ava';
import { createCliLogger } from '../../../../lib/cli/logger.js';
import { reportProbeRound } from '../../../../lib/health/progress.js';
import { newHealth } from '../../../../lib/health/health.js';
import type { Registry } from '../../../../lib/upstream/registry.js';

/** A registry of `n` upstreams over two chains, with health records only (no transports). */
function registryOf(n: number) {
  const upstreams = Array.from({ length: n }, (_, index) => ({ index, health: newHealth() }));
  const chains = new Map([
    ['1', { id: '1', upstreams: upstreams.slice(0, 1) }],
    ['10', { id: '10', upstreams: upstreams.slice(1) }],
  ]);
  return { registry: { chains } as unknown as Registry, upstreams };
}

test('reports the start, the progress while probing, and the end of the first probe round', async (t) => {
  const { registry, upstreams } = registryOf(4);
  const lines: Record<string, unknown>[] = [];
  const waiters: [string, () => void][] = [];
  const logger = createCliLogger({
    write: (line) => {
      const parsed = JSON.parse(line) as Record<string, unknown>;
      lines.push(parsed);
      for (const [msg, resolve] of waiters) if (parsed.msg === msg) resolve();
    },
  });
  const next = (msg: string) => new Promise<void>((resolve) => waiters.push([msg, resolve]));
  const progress = next('probing upstreams');
  const done = next('first probe round done');
  const stop = reportProbeRound(registry, logger, { everyMs: 20, pollMs: 5 });
  t.teardown(stop);
  // The reporter's timer is unref'd (it never keeps a server alive): keep this test's process up.
  const alive = setInterval(() => {}, 1000);
  t.teardown(() => clearInterval(alive));
  t.like(lines[0], { msg: 'probing upstreams (first round)', upstreams: 4, chains: 2 });
  upstreams[0]!.health.lastProbeAt = Date.now();
  upstreams[0]!.health.head = 7n;
  await progress;
  t.like(lines.find((l) => l.msg === 'probing upstreams'), { probed: 1, total: 4, answered: 1, percent: 25 });
  for (const u of upstreams) u.health.lastProbeAt = Date.now();
  await done;
  t.like(lines.at(-1), { msg: 'first probe round done', probed: 4, total: 4, answered: 1 });
});
