/**
 * Active health checks: every `refreshInterval` seconds each upstream is asked `eth_chainId`
 * and `eth_blockNumber` under a short timeout. A chain id other than the configured one takes
 * the upstream out of rotation (and is logged); a failed probe counts as a failure; the head
 * goes to heads.ts, which sets each upstream's lag behind the chain's robust head (never the
 * maximum: one upstream reporting an absurd head does not make the others lag). Probes of a chain
 * run in parallel, at most `limits.probeConcurrency` upstreams at once (each probe two calls, one
 * after the other on one connection), chains one after another, so a large config never opens
 * hundreds of connections at once: the probe of an upstream that carried no traffic since its
 * last health call closes its socket after the answer (`background`), instead of keeping it
 * alive. An upstream found to be a request loop (loop.ts) is not probed, nor one on back-off
 * after a rate limit (rate-limits.ts); a probe that meets a rate limit puts the upstream on
 * back-off instead of counting a failure.
 */
import type { RpcPayload } from '../jsonrpc/types.js';
import { silentLogger, type Logger } from '../log.js';
import { recordHead, refreshChain } from './heads.js';
import { defaultProbeConcurrency, mapLimited } from './limited.js';
import { recordFailure, recordSuccess } from './health.js';
import { isRateLimitError, noteRateLimit, rateLimitLabel, rateLimited } from './rate-limits.js';
import { UpstreamCallError } from '../upstream/transport/contract.js';
import { recordProbeRound } from './quality.js';
import type { Chain, Registry, Upstream } from '../upstream/registry.js';

export interface ProbeResult {
  chainId?: bigint;
  head?: bigint;
  error?: string;
  /** The error is a rate limit (lib/health/rate-limits.ts): the upstream goes on back-off, no failure. */
  rateLimited?: { retryAfterMs: number | undefined };
  ms: number;
}

function call(method: string, id: number): RpcPayload {
  const body = { jsonrpc: '2.0', id, method, params: [] };
  return { calls: [body], batch: false, raw: Buffer.from(JSON.stringify(body)) };
}

async function ask(upstream: Upstream, method: string, id: number, timeoutMs: number, keepOpen = false): Promise<bigint> {
  const { body } = await upstream.transport.send({
    payload: call(method, id),
    requestId: `probe-${method}`,
    signal: new AbortController().signal,
    timeoutMs,
    maxBytes: 64 * 1024,
    background: true,
    keepOpen,
  });
  let value: { result?: unknown; error?: { message?: string } };
  try {
    value = JSON.parse(body.toString('utf8')) as typeof value;
  } catch {
    // (V8's message quotes the body's first characters: a key cut in two could not be scrubbed.)
    throw new Error(`${method}: the answer is not JSON`);
  }
  if (typeof value.result !== 'string' || !/^0x[0-9a-f]+$/i.test(value.result)) {
    const error = value.error as { code?: unknown; message?: string } | undefined;
    if (typeof error?.code === 'number' && isRateLimitError(error.code, String(error.message ?? ''))) {
      // Scrubbed, then cut: a key cut in two first would keep its first half.
      throw new UpstreamCallError('rate-limited', `${method}: ${rateLimitLabel} ${error.code}: ${upstream.secrets.scrub(String(error.message ?? '')).slice(0, 200)}`);
    }
    throw new Error(`${method}: ${value.error?.message ?? `unexpected answer ${JSON.stringify(value.result)}`}`);
  }
  return BigInt(value.result);
}

/**
 * The chain id first, then the head on the connection the first call opened (or found open): the
 * head's call is the latency measured (`ms`). An idle upstream's probe pays a new connection (its
 * sockets were closed after its last health call: TCP, TLS, a WebSocket handshake) where a busy
 * one's reuses a warm one; timing that would rank idle upstreams slower for not being used. The
 * two calls share the timeout. One connection per probe, closed after the second call when the
 * upstream carried no traffic since its last health call.
 */
export async function probeUpstream(upstream: Upstream, timeoutMs: number): Promise<ProbeResult> {
  const started = performance.now();
  let followed = false;
  try {
    const chainId = await ask(upstream, 'eth_chainId', 1, timeoutMs, true);
    // undici hands a connection back to its pool a turn after the answer ended: asked at once,
    // the head would go out on a new connection.
    await new Promise((resolve) => setImmediate(resolve));
    const warm = performance.now();
    followed = true;
    const head = await ask(upstream, 'eth_blockNumber', 2, Math.max(1, Math.round(timeoutMs - (warm - started))));
    return { chainId, head, ms: performance.now() - warm };
  } catch (err) {
    // Stopped at the chain id (an error, a wrong or unreadable answer): the connection it kept
    // for the head's call is let go as that call would have (closed on an upstream without traffic).
    if (!followed) upstream.transport.releaseKept?.();
    // An upstream may echo its URL or key in an error message: never recorded or logged as sent.
    const error = upstream.secrets.scrub((err as Error).message);
    const ms = performance.now() - started;
    const e = err as { kind?: string; retryAfterMs?: number };
    return e.kind === 'rate-limited' ? { error, rateLimited: { retryAfterMs: e.retryAfterMs }, ms } : { error, ms };
  }
}

/**
 * One probe round of a chain: each upstream's result in the chain's order, `undefined` for an
 * upstream found to be a request loop or on a rate limit's back-off (not probed). Plain data: `applyProbeRound` records it, here
 * or in another process (lib/server/cluster.ts sends it to the workers).
 */
export interface ProbeRound {
  /** When the round ended (Date.now()). */
  at: number;
  results: (ProbeResult | undefined)[];
}

/** Probes every upstream of a chain (at most `concurrency` at once); records nothing. */
export async function probeRound(chain: Chain, timeoutMs: number, concurrency = defaultProbeConcurrency): Promise<ProbeRound> {
  // A request loop is never probed again: each probe would only come back to us. An upstream on
  // back-off after a rate limit is not probed until it ends (the probe would spend its quota).
  const started = Date.now();
  const results = await mapLimited(chain.upstreams, concurrency, (u) =>
    u.health.loop || rateLimited(u.health, started) ? Promise.resolve(undefined) : probeUpstream(u, timeoutMs),
  );
  return { at: Date.now(), results };
}

/**
 * Records a probe round in the chain's upstreams' health and heads, logging what changed
 * (`logger`: the process that probed; the workers that apply its rounds pass a silent one).
 */
export function applyProbeRound(chain: Chain, round: ProbeRound, logger: Logger = silentLogger): void {
  const now = round.at;
  const answered: { health: Upstream['health']; ms: number }[] = []; // measured quality (quality.ts): a re-measurement
  round.results.forEach((r, i) => {
    const u = chain.upstreams[i];
    if (!u || r === undefined) return;
    const h = u.health;
    if (h.loop) return; // found to be a loop (maybe by this very probe), and logged then
    h.lastProbeAt = now;
    if (r.rateLimited) {
      noteRateLimit(u, `probe: ${r.error}`, r.rateLimited.retryAfterMs, logger, now);
      return;
    }
    if (r.error !== undefined || r.chainId === undefined || r.head === undefined) {
      const reason = r.error ?? 'no answer';
      recordFailure(h, `probe: ${reason}`, now);
      logger.warn({ chain: chain.id, upstream: u.label, reason }, 'health probe failed');
      return;
    }
    const reported = r.chainId.toString();
    if (reported !== chain.id) {
      if (h.wrongChainId !== reported) logger.error({ chain: chain.id, upstream: u.label, reportedChainId: reported }, 'upstream serves another chain: out of rotation');
      h.wrongChainId = reported;
      return;
    }
    if (h.wrongChainId !== undefined) logger.info({ chain: chain.id, upstream: u.label }, 'upstream serves the configured chain again: back in rotation');
    h.wrongChainId = undefined;
    recordSuccess(h, r.ms);
    answered.push({ health: h, ms: r.ms });
    recordHead(u, 'latest', r.head, 'poll');
  });
  refreshChain(chain);
  recordProbeRound(answered, performance.now());
}

/** Probes every upstream of a chain (at most `concurrency` at once) and updates their health. */
export async function probeChain(chain: Chain, timeoutMs: number, logger: Logger = silentLogger, concurrency = defaultProbeConcurrency): Promise<ProbeRound> {
  const round = await probeRound(chain, timeoutMs, concurrency);
  applyProbeRound(chain, round, logger);
  return round;
}

export interface Prober {
  /** Probes every chain once (used at start and by each tick). */
  runOnce(): Promise<void>;
  /** Settles when the round started at once has finished (every upstream has a state). */
  readonly firstRound: Promise<void>;
  stop(): void;
}

/**
 * Starts periodic probing: one round at once, then every `intervalSeconds`. Timers are unref'd,
 * so probing never keeps a process alive; stop() ends it.
 */
export function startProber(
  registry: Registry,
  options: {
    intervalSeconds: number;
    timeoutMs: number;
    logger?: Logger;
    concurrency?: number;
    /** Called with each chain's round once it is recorded (the cluster's primary sends it to its workers). */
    onRound?: (chain: Chain, round: ProbeRound) => void;
  },
): Prober {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let firstRound: Promise<void> | undefined;
  const runOnce = async () => {
    for (const chain of registry.chains.values()) {
      if (stopped) return;
      const round = await probeChain(chain, options.timeoutMs, options.logger, options.concurrency);
      options.onRound?.(chain, round);
    }
  };
  const tick = () => {
    const round = runOnce();
    firstRound ??= round;
    round.finally(() => {
      if (!stopped) {
        timer = setTimeout(tick, options.intervalSeconds * 1000);
        timer.unref();
      }
    });
  };
  tick();
  return {
    runOnce,
    firstRound: firstRound!,
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}
