/**
 * Progress of the first health-probe round, for configs with many upstreams (`omnigate
 * chainlist` serves thousands): one line when it starts, one every `everyMs` while it runs
 * (upstreams probed / total), one when it is done. Reads the health records only; its timer is
 * unref'd, so it never keeps the process alive.
 */
import type { Logger } from '../log.js';
import type { Registry } from '../upstream/registry.js';

export function reportProbeRound(registry: Registry, logger: Logger, options: { everyMs?: number; pollMs?: number } = {}): () => void {
  const everyMs = options.everyMs ?? 5_000;
  const pollMs = Math.min(options.pollMs ?? 250, everyMs);
  const upstreams = [...registry.chains.values()].flatMap((c) => c.upstreams);
  const total = upstreams.length;
  const started = Date.now();
  let lastLine = started;
  const count = () => {
    let probed = 0;
    let answered = 0;
    for (const u of upstreams) {
      if (u.health.lastProbeAt > 0) probed += 1;
      if (u.health.head !== undefined) answered += 1;
    }
    return { probed, answered };
  };
  logger.info({ upstreams: total, chains: registry.chains.size }, 'probing upstreams (first round)');
  const timer = setInterval(() => {
    const { probed, answered } = count();
    const now = Date.now();
    if (probed >= total) {
      clearInterval(timer);
      logger.info({ probed, total, answered, seconds: Math.round((now - started) / 100) / 10 }, 'first probe round done');
    } else if (now - lastLine >= everyMs) {
      lastLine = now;
      logger.info({ probed, total, answered, percent: Math.floor((100 * probed) / total) }, 'probing upstreams');
    }
  }, pollMs);
  timer.unref();
  return () => clearInterval(timer);
}
