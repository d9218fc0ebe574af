/**
 * `omnigate serve --workers N`: N processes serving one port (node:cluster). The primary serves
 * no HTTP: it forks the workers (each runs startServer as a single process would), probes the
 * upstreams and polls their heads once, on a registry of its own, and sends each chain's rounds to
 * every worker (lib/health/wire.ts), which records them in its own registry; a worker that starts
 * (or replaces a crashed one) gets the latest round of every chain at once. It also keeps the
 * finalized route's floor when no Redis is configured (a worker asks it to raise the floor on
 * every request of that route, so the route never goes back whichever worker answers), answers
 * GET /metrics for the cluster (every worker's registry, collected over IPC and aggregated with
 * prom-client's AggregatorRegistry.aggregate, plus its own), stops every worker gracefully on
 * SIGTERM/SIGINT/SIGHUP, and replaces a worker that exits unasked, with a backoff; its workers share the
 * upstreams' loop tokens (one seed), and serve the config file and keyFiles as the primary read them
 * (askPinnedConfig). With an admin port, every worker listens on it too (one port,
 * picked by the primary for port 0). What stays per worker: the memory cache,
 * the traffic-derived health (failures, latencies, distrust), on-demand head polls, sockets.
 */
import cluster, { type Worker } from 'node:cluster';
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import { availableParallelism } from 'node:os';
import { AggregatorRegistry, Gauge, Registry } from 'prom-client';
import type { OmnigateConfig } from '../../config/schema.js';
import { silentLogger, type Logger } from '../log.js';
import { initProofMode } from '../prove/mode.js';
import { applySelfCheck, startSelfChecks, type SelfCheckResult, type SelfCheckScopes } from '../prove/self-check.js';

/** A self-check's result as sent to the workers (its block as a decimal string). */
type WireSelfCheck = Exclude<SelfCheckResult, { kind: 'passed' }> | { kind: 'passed'; block: string; upstream: string; off: SelfCheckScopes };
import { headSettings, setChainHeadSettings } from '../health/heads.js';
import { startProber } from '../health/probe.js';
import { startHeadTracker, type HeadPoll } from '../health/tracker.js';
import { applyWireHeadPolls, applyWireProbeRound, encodeHeadPolls, encodeProbeRound, type WireHeadPoll, type WireProbeRound } from '../health/wire.js';
import { createRegistry, type Registry as Upstreams } from '../upstream/registry.js';
import { MemoryCreditStore, type BucketLimits, type CreditStore, type Remaining, type Reservation, type Verdict } from '../access/buckets.js';

// ---------------------------------------------------------------------------------------------
// Messages (every one carries `omnigate`, its kind: a message without it is another module's)

type ToWorker =
  | { omnigate: 'probe'; chain: string; round: WireProbeRound }
  | { omnigate: 'heads'; chain: string; polls: (WireHeadPoll | null)[] }
  | { omnigate: 'self-check'; chain: string; result: WireSelfCheck }
  | { omnigate: 'answer'; id: number; value: string | null; error: string | null }
  | { omnigate: 'pinned-config'; pinned: PinnedConfig | null }
  | { omnigate: 'collect'; id: number }
  | { omnigate: 'stop' };

type ToPrimary =
  | { omnigate: 'hello' }
  | { omnigate: 'pinned-config' }
  | { omnigate: 'floor'; id: number; key: string; block: string | null }
  | { omnigate: 'metrics'; id: number }
  | { omnigate: 'credits-take'; id: number; key: string; limits: BucketLimits; credits: number }
  | { omnigate: 'credits-settle'; id: number; reservation: Reservation; credits: number }
  | { omnigate: 'collected'; id: number; metrics: MetricJson[] | null; error: string | null };

/** One metric as a registry's getMetricsAsJSON() gives it (what AggregatorRegistry.aggregate reads). */
type MetricJson = Awaited<ReturnType<Registry['getMetricsAsJSON']>>[number];

const isOurs = (m: unknown): m is { omnigate: string } => typeof m === 'object' && m !== null && typeof (m as { omnigate?: unknown }).omnigate === 'string';

/** `--workers`: a count from 1, or `auto` (the cores this process may use). */
export function workersArg(value: string, cores = availableParallelism()): number {
  if (value === 'auto') return cores;
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || n > 1024) throw new Error('use an integer from 1 to 1024, or auto (the cores)');
  return n;
}

// ---------------------------------------------------------------------------------------------
// Restarts

/**
 * A worker that exits this soon after it started serving (or before) crashed at start. Counted
 * from its listening, not its fork: on a loaded host a worker may take longer than this to load
 * and listen, and would otherwise never count as crashing at start (replaced at once, forever).
 */
export const fastCrashMs = 10_000;
/** This many fast crashes in a row and the primary gives up (exit 1). */
export const maxFastCrashes = 5;

/**
 * When to fork the replacement of a worker that exited unasked after living `livedMs`, given the
 * fast crashes in a row before it: at once after a worker that lived, else after a delay that
 * doubles (250 ms, 500 ms… at most 5 s); `give up` after maxFastCrashes fast crashes in a row.
 */
export function restartAfter(fastCrashes: number, livedMs: number): { delayMs: number; fastCrashes: number } | 'give up' {
  if (livedMs >= fastCrashMs) return { delayMs: 0, fastCrashes: 0 };
  const n = fastCrashes + 1;
  if (n >= maxFastCrashes) return 'give up';
  return { delayMs: Math.min(5_000, 250 * 2 ** (n - 1)), fastCrashes: n };
}

// ---------------------------------------------------------------------------------------------
// The primary

export interface PrimaryOptions {
  config: OmnigateConfig;
  workers: number;
  /** The port every worker listens on (0: a free one, picked once). */
  port: number;
  logger: Logger;
  /** Environment of the workers, over the primary's (e.g. the embedded database's URL). */
  env?: Record<string, string>;
  /** Called with the primary's metrics registry (served after the workers' metrics), to add gauges (the indexer's). */
  onMetricsRegistry?: (registry: Registry) => void;
  /** Called once every worker has exited, before the primary exits (close the database). */
  onClose?: () => Promise<void>;
  /** Fields of the `omnigate listening` line. */
  listening?: Record<string, unknown>;
  /** The address every worker listens on (absent: every interface); the listening line's URL shows it. */
  host?: string;
  /** The listening line's URL for a port. */
  urlOf?: (port: number) => string;
  /**
   * The admin listener (/health, /ready, /chains, /metrics): every worker listens on it too, on
   * one port (0: a free one, picked once), and answers /metrics with the cluster's aggregate.
   */
  admin?: { port: number; host: string };
  /** The listening line's URL for the admin port. */
  adminUrlOf?: (port: number) => string;
  /** The config file's text and its keyFiles' digests as the primary read them, given to every worker that asks (askPinnedConfig). */
  pinned?: PinnedConfig;
}

/**
 * The config every worker serves: the file's text, each access keyFile's key digest (never a
 * client key), by path, and the attestation key `attest.keyFile` held (its PKCS#8 PEM: the worker
 * signs with it), so a replacement worker signs with the key the cluster started with.
 */
export interface PinnedConfig {
  text: string;
  keyFiles: Record<string, string>;
  attestKey?: string;
}

/** Starts the primary: its signal handlers at once, the workers once the port is known. */
export async function runPrimary(options: PrimaryOptions): Promise<void> {
  const { config, logger } = options;
  let stopping = false;
  // One loop-token seed for the cluster: a probe of the primary that comes back to a worker, or a
  // call of one worker that comes back to another, is known as a loop (lib/upstream/loop.ts).
  const hopSeed = randomBytes(32);
  const registry = createRegistry(config, { hopSeed });
  for (const chain of registry.chains.values()) setChainHeadSettings(chain, headSettings(chain.id, config.heads, config.chains[chain.id]?.heads));
  const latest = new Map<string, { probe?: ToWorker; heads?: ToWorker; selfCheck?: ToWorker; polls?: (HeadPoll | undefined)[] }>();
  const broadcast = (message: ToWorker) => {
    if (stopping) return; // (a round that ends while the workers close)
    for (const w of Object.values(cluster.workers ?? {})) if (w?.isConnected()) w.send(message);
  };
  const timeoutMs = Math.min(5_000, config.timeouts.upstreamMs);
  const prober = startProber(registry, {
    intervalSeconds: config.refreshInterval,
    timeoutMs,
    logger,
    concurrency: config.limits.probeConcurrency,
    onRound(chain, round) {
      const message: ToWorker = { omnigate: 'probe', chain: chain.id, round: encodeProbeRound(round) };
      latestOf(latest, chain.id).probe = message;
      broadcast(message);
    },
  });
  const tracker = startHeadTracker(registry, {
    timeoutMs,
    logger,
    concurrency: config.limits.probeConcurrency,
    onRound(chain, polls) {
      broadcast({ omnigate: 'heads', chain: chain.id, polls: encodeHeadPolls(polls) });
      // For a worker that starts later: what every upstream's polls saw last, tags included
      // (most rounds ask for the latest head only).
      const known = latestOf(latest, chain.id);
      known.polls = mergePolls(known.polls, polls);
      known.heads = { omnigate: 'heads', chain: chain.id, polls: encodeHeadPolls(known.polls) };
    },
  });

  // The proof self-check of `verify: auto` chains (lib/prove/self-check.ts), once, here; each
  // result goes to the workers, which switch their chain to proofs as one process would.
  for (const chain of registry.chains.values()) initProofMode(chain, config.chains[chain.id]?.verify ?? config.verify);
  const selfChecks = startSelfChecks(registry.chains.values(), {
    intervalSeconds: config.refreshInterval,
    timeoutMs,
    maxBytes: config.limits.responseBytes,
    logger,
    onResult(chain, result) {
      const message: ToWorker = { omnigate: 'self-check', chain: chain.id, result: result.kind === 'passed' ? { ...result, block: result.block.toString() } : result };
      latestOf(latest, chain.id).selfCheck = message;
      broadcast(message);
    },
  });
  // Workers that have joined: they record the rounds and answer for their metrics.
  const joined = new Set<Worker>();
  // The finalized route's floors ("chain:N" → block), raised by the workers, never lowered.
  const floors = new Map<string, bigint>();
  // The client keys' budgets when no Redis holds them: one store for every worker, so that N
  // workers spend one budget, not N (lib/access/budget.ts; each take and settle is a round trip).
  const credits = new MemoryCreditStore();
  // Each worker's reservations not yet settled (by lease): a worker that exits holding some
  // (a crash mid-request) has them settled at their estimate, so its slots are freed.
  const held = new Map<Worker, Map<string, Reservation>>();
  const own = new Registry();
  new Gauge({
    name: 'omnigate_workers',
    help: 'Worker processes serving (omnigate serve --workers N); the other metrics are their sum, or per metric their max, min or average.',
    registers: [own],
    collect() {
      this.set(Object.values(cluster.workers ?? {}).filter((w) => w?.isConnected()).length);
    },
  });
  options.onMetricsRegistry?.(own);
  const collector = collectWorkers(joined);
  const metricsText = async () => `${await AggregatorRegistry.aggregate(await collector.collect()).metrics()}${await own.metrics()}`;

  const answer = (w: Worker, id: number, value: string | null, error: string | null = null) => {
    if (w.isConnected()) w.send({ omnigate: 'answer', id, value, error } satisfies ToWorker);
  };
  cluster.on('message', (w: Worker, message: unknown) => {
    if (!isOurs(message)) return;
    const m = message as ToPrimary;
    if (m.omnigate === 'collected') return collector.received(w, m);
    if (m.omnigate === 'pinned-config') {
      if (w.isConnected()) w.send({ omnigate: 'pinned-config', pinned: options.pinned ?? null } satisfies ToWorker);
      return;
    }
    if (m.omnigate === 'hello') {
      joined.add(w);
      for (const chain of latest.values()) {
        if (chain.probe) w.send(chain.probe);
        if (chain.heads) w.send(chain.heads);
        if (chain.selfCheck) w.send(chain.selfCheck);
      }
    } else if (m.omnigate === 'floor') {
      const before = floors.get(m.key);
      const block = m.block === null ? undefined : BigInt(m.block);
      const after = before === undefined || (block !== undefined && block > before) ? block : before;
      if (after !== undefined) floors.set(m.key, after);
      answer(w, m.id, after === undefined ? null : after.toString());
    } else if (m.omnigate === 'credits-take') {
      const verdict = credits.takeNow(m.key, m.limits, m.credits);
      if (verdict.reservation !== undefined) {
        let leases = held.get(w);
        if (leases === undefined) held.set(w, (leases = new Map()));
        leases.set(verdict.reservation.lease, verdict.reservation);
      }
      answer(w, m.id, creditsText(verdict));
    } else if (m.omnigate === 'credits-settle') {
      held.get(w)?.delete(m.reservation.lease);
      answer(w, m.id, creditsText(credits.settleNow(m.reservation, m.credits)));
    } else if (m.omnigate === 'metrics') {
      metricsText().then(
        (text) => answer(w, m.id, text),
        (err: unknown) => answer(w, m.id, null, (err as Error).message),
      );
    }
  });

  // Workers: started, listening, exited.
  const startedAt = new Set<Worker>();
  /** When each worker started serving (listening on every port): its life, for the backoff, counts from there. */
  const servingAt = new Map<Worker, number>();
  let everListening = false;
  let fastCrashes = 0;
  let failed = false;
  // Every worker listens on the same port number, a replacement included: with port 0, one free
  // port is picked here first (else a worker started while no other listens would get another).
  let port = options.port;
  let adminPort = options.admin?.port;
  const fork = () => {
    const w = cluster.fork({
      ...options.env,
      [hopSeedVariable]: hopSeed.toString('hex'),
      [portVariable]: String(port),
      ...(adminPort !== undefined && { [adminPortVariable]: String(adminPort) }),
    });
    startedAt.add(w);
    // A message to a worker that is exiting fails (EPIPE): its exit is handled below, not a crash of the primary.
    w.on('error', (err: Error) => logger.debug({ worker: w.process.pid, reason: err.message }, 'message to a worker failed'));
    return w;
  };
  // A worker counts as listening once it listens on the port, and on the admin port when there is one.
  const listeningWorkers = new Set<Worker>();
  const listenedOn = new Map<Worker, Set<number>>();
  cluster.on('listening', (w: Worker, address: { port: number }) => {
    const ports = listenedOn.get(w) ?? new Set<number>();
    listenedOn.set(w, ports.add(address.port));
    if (!ports.has(port) || (adminPort !== undefined && !ports.has(adminPort))) return;
    listeningWorkers.add(w);
    if (!servingAt.has(w)) servingAt.set(w, Date.now());
    if (!everListening && listeningWorkers.size === options.workers) {
      everListening = true;
      logger.info(
        {
          ...options.listening,
          port,
          url: options.urlOf ? options.urlOf(port) : `http://localhost:${port}`,
          ...(adminPort !== undefined && { adminPort, adminUrl: options.adminUrlOf ? options.adminUrlOf(adminPort) : `http://localhost:${adminPort}` }),
          workers: options.workers,
        },
        'omnigate listening',
      );
    }
  });
  cluster.on('exit', (w: Worker, code: number | null, signal: string | null) => {
    const served = servingAt.get(w);
    servingAt.delete(w);
    listeningWorkers.delete(w);
    listenedOn.delete(w);
    joined.delete(w);
    collector.gone(w);
    // Its requests in flight died with it: each keeps its estimate as its cost, and frees its slot.
    for (const reservation of held.get(w)?.values() ?? []) credits.settleNow(reservation, reservation.credits);
    held.delete(w);
    // (a worker that never served lived none of it)
    const lived = served === undefined ? 0 : Date.now() - served;
    startedAt.delete(w);
    if (stopping) {
      if (code !== 0) failed = true;
      if (startedAt.size === 0) void finish();
      return;
    }
    if (!everListening && served === undefined) {
      // A worker that cannot start (the port taken, the database refused): it said why on stderr.
      // (One that served and then died, before the others listened, crashed: replaced below.)
      logger.error({ worker: w.process.pid, code, signal }, 'a worker exited before the cluster was listening: stopping');
      return void stop('a worker failed to start', typeof code === 'number' && code !== 0 ? code : 1, false);
    }
    const next = restartAfter(fastCrashes, lived);
    if (next === 'give up') {
      logger.error({ worker: w.process.pid, code, signal, crashes: maxFastCrashes }, `workers keep crashing within ${fastCrashMs / 1000} s of their start: giving up`);
      return void stop('workers keep crashing', 1, false);
    }
    fastCrashes = next.fastCrashes;
    logger.error({ worker: w.process.pid, code, signal, livedMs: lived, restartInMs: next.delayMs }, 'worker exited unasked: replacing it');
    // (not unref'd: with every worker gone, this timer is what keeps the primary alive)
    setTimeout(() => {
      if (!stopping) fork();
    }, next.delayMs);
  });

  let exitCode = 0;
  let finishing: Promise<void> | undefined;
  const finish = () =>
    (finishing ??= (async () => {
      try {
        await options.onClose?.();
      } catch (err) {
        logger.error({ reason: (err as Error).message }, 'closing failed');
        failed = true;
      }
      process.exit(exitCode !== 0 ? exitCode : failed ? 1 : 0);
    })());
  /**
   * Every worker runs its graceful close (in-flight requests finish); the primary exits when all
   * have exited. On a signal, the workers are asked over IPC, not signalled: the same signal sent
   * to the whole process group (Ctrl-C, a supervisor) may reach them too, and a worker takes the
   * two as one stop, whereas a second signal makes it exit at once.
   */
  const stop = (why: string, code: number, bySignal: boolean) => {
    if (stopping) return;
    stopping = true;
    exitCode = code;
    // (the upstream pools stay open: a probe in flight ends as it would, and the process exits after the workers)
    prober.stop();
    tracker.stop();
    selfChecks.stop();
    logger.info({ why, workers: startedAt.size }, 'shutting down the workers');
    // A worker already closing on the same signal (sent to the whole process group) ignores this.
    for (const w of startedAt.keys()) {
      if (!bySignal) w.process.kill('SIGTERM');
      else if (w.isConnected()) w.send({ omnigate: 'stop' } satisfies ToWorker);
    }
    const force = setTimeout(() => {
      logger.warn({ afterMs: config.server.shutdownMs }, 'workers did not finish in time: killing them');
      for (const w of startedAt.keys()) w.process.kill('SIGKILL');
      failed = true;
    }, config.server.shutdownMs + 1_000);
    force.unref();
    if (startedAt.size === 0) void finish();
  };
  let signals = 0;
  const onSignal = (signal: string) => {
    if (++signals > 1) {
      logger.warn({ signal }, 'second signal while shutting down: exiting now');
      for (const w of startedAt.keys()) w.process.kill('SIGKILL');
      process.exit(1);
    }
    stop(signal, 0, true);
  };
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));
  process.on('SIGHUP', () => onSignal('SIGHUP')); // a closed terminal: drained like the others, not Node's abrupt exit
  if (port === 0) port = await freePort(options.host);
  if (adminPort === 0) adminPort = await freePort(options.admin?.host, port);
  if (!stopping) for (let i = 0; i < options.workers; i++) fork();
}

/**
 * A port free now (the cluster's workers listen on it next; another process could take it in
 * between, as with any fixed port), other than `not` (the main port, picked just before).
 */
async function freePort(host?: string, not?: number): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const server = net.createServer();
      server.once('error', reject);
      server.listen(0, host, () => {
        const { port } = server.address() as net.AddressInfo;
        server.close(() => resolve(port));
      });
    });
    if (port !== not) return port;
  }
}

/** Each upstream's last poll merged over what the polls before it saw (a poll that saw nothing of a head keeps the earlier one). */
export function mergePolls(before: readonly (HeadPoll | undefined)[] | undefined, polls: readonly (HeadPoll | undefined)[]): (HeadPoll | undefined)[] {
  return polls.map((p, i) => {
    const old = before?.[i];
    if (p === undefined) return old;
    if (old === undefined) return p;
    return { latest: p.latest ?? old.latest, safe: p.safe ?? old.safe, finalized: p.finalized ?? old.finalized, tags: p.tags ?? old.tags };
  });
}

/**
 * Collects the metrics of every joined worker (its registry as JSON), for AggregatorRegistry.aggregate.
 * A worker that exits meanwhile is left out (its counts are gone with it: a counter reset, which
 * Prometheus reads as such); one that does not answer within 5 s fails the scrape.
 */
function collectWorkers(joined: ReadonlySet<Worker>) {
  let nextId = 0;
  const pending = new Map<number, { waiting: Set<Worker>; got: MetricJson[][]; done: (err?: Error) => void }>();
  const settle = (id: number) => {
    const p = pending.get(id);
    if (p && p.waiting.size === 0) {
      pending.delete(id);
      p.done();
    }
  };
  return {
    collect(): Promise<MetricJson[][]> {
      const id = nextId++;
      const waiting = new Set([...joined].filter((w) => w.isConnected()));
      const got: MetricJson[][] = [];
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          pending.delete(id);
          reject(new Error(`${waiting.size} worker(s) did not give their metrics within 5 s`));
        }, 5_000);
        timer.unref();
        pending.set(id, { waiting, got, done: () => (clearTimeout(timer), resolve(got)) });
        for (const w of waiting) w.send({ omnigate: 'collect', id } satisfies ToWorker);
        settle(id);
      });
    },
    received(w: Worker, m: { id: number; metrics: MetricJson[] | null; error: string | null }) {
      const p = pending.get(m.id);
      if (!p || !p.waiting.delete(w)) return;
      if (m.metrics) p.got.push(m.metrics);
      settle(m.id);
    },
    gone(w: Worker) {
      for (const [id, p] of pending) if (p.waiting.delete(w)) settle(id);
    },
  };
}

function latestOf<T extends object>(map: Map<string, T>, key: string): T {
  let v = map.get(key);
  if (!v) map.set(key, (v = {} as T));
  return v;
}

// ---------------------------------------------------------------------------------------------
// A worker

export interface WorkerLink {
  /** Asks the primary to raise the finalized route's floor (ServeOptions.sharedFinalized). */
  sharedFinalized(chainId: string, required: number, block: bigint | undefined): Promise<bigint | undefined>;
  /** The cluster's metrics, aggregated by the primary (ServeOptions.metricsText). */
  metricsText(): Promise<string>;
  /** The client keys' budgets, kept by the primary for every worker (ServeOptions.creditStore; when no Redis keeps them). */
  creditStore: CreditStore;
  /** Starts recording the primary's rounds in `upstreams` and asks for the latest ones; `onStop` runs when the primary asks it to stop, or is gone. */
  join(upstreams: Upstreams, metrics: Registry, onStop: () => void): void;
}

/** The variable that gives a worker the cluster's loop-token seed (hex). */
const hopSeedVariable = 'OMNIGATE_CLUSTER_HOP_SEED';

/** The variable that gives a worker the port the cluster listens on. */
const portVariable = 'OMNIGATE_CLUSTER_PORT';

/** The variable that gives a worker the cluster's admin port. */
const adminPortVariable = 'OMNIGATE_CLUSTER_ADMIN_PORT';

/**
 * A worker's share of each upstream's caps (`maxConcurrent`, `maxRps`): the cap divided by the
 * workers, rounded up (at least 1), so that the cluster's workers together keep to about the
 * cap one process keeps to, not N times it (the connections are handed out round-robin).
 */
export function workerShareOfCaps(config: OmnigateConfig, workers: number): OmnigateConfig {
  if (workers <= 1) return config;
  const share = (cap: number | undefined) => (cap === undefined ? undefined : Math.max(1, Math.ceil(cap / workers)));
  const chains: Record<string, OmnigateConfig['chains'][string]> = {};
  for (const [id, chain] of Object.entries(config.chains)) {
    const limits = chain.upstreamLimits;
    chains[id] = limits === undefined ? chain : {
      ...chain,
      upstreamLimits: limits.map((l) => {
        const out: { -readonly [K in keyof typeof l]: (typeof l)[K] } = { ...l };
        if (l.maxConcurrent !== undefined) out.maxConcurrent = share(l.maxConcurrent)!;
        if (l.maxRps !== undefined) out.maxRps = share(l.maxRps)!;
        return out;
      }),
    };
  }
  return { ...config, chains };
}

/**
 * A cluster's worker: the config file's text, keyFiles' digests and attestation key its primary read at its start
 * (asked over IPC, before the worker reads any file), so that every worker, a replacement
 * included, serves the same config, not the files as they may have been edited since (an edit,
 * a rotated key file: taken at the next start of omnigate). Undefined: the primary pins none.
 */
export function askPinnedConfig(): Promise<PinnedConfig | undefined> {
  return new Promise((resolve, reject) => {
    if (!process.connected || !process.send) return reject(new Error('the cluster\'s primary is gone'));
    const timer = setTimeout(() => {
      process.off('message', onMessage);
      reject(new Error('the cluster\'s primary did not give its config'));
    }, answerTimeoutMs);
    function onMessage(message: unknown): void {
      if (!isOurs(message) || (message as ToWorker).omnigate !== 'pinned-config') return;
      clearTimeout(timer);
      process.off('message', onMessage);
      resolve((message as Extract<ToWorker, { omnigate: 'pinned-config' }>).pinned ?? undefined);
    }
    process.on('message', onMessage);
    process.send({ omnigate: 'pinned-config' } satisfies ToPrimary);
  });
}

/** The admin port a cluster's worker listens on (its primary gives it), else undefined. */
export function workerAdminPort(): number | undefined {
  const value = process.env[adminPortVariable];
  return value && /^\d{1,5}$/.test(value) ? Number(value) : undefined;
}

/** The port a cluster's worker listens on (its primary gives it), else undefined. */
export function workerPort(): number | undefined {
  const value = process.env[portVariable];
  return value && /^\d{1,5}$/.test(value) ? Number(value) : undefined;
}

/** The cluster's loop-token seed, in a worker (its primary set it). */
export function workerHopSeed(): Buffer | undefined {
  const hex = process.env[hopSeedVariable];
  return hex && /^[0-9a-f]{64}$/.test(hex) ? Buffer.from(hex, 'hex') : undefined;
}

/** Answers to wait for longer than this fail (the primary is gone or stuck). */
const answerTimeoutMs = 10_000;

export function workerLink(): WorkerLink {
  let nextId = 0;
  const pending = new Map<number, { resolve: (v: string | null) => void; reject: (e: Error) => void; timer: NodeJS.Timeout }>();
  const ask = (message: ToPrimary & { id: number }): Promise<string | null> =>
    new Promise((resolve, reject) => {
      if (!process.connected || !process.send) return reject(new Error('the cluster\'s primary is gone'));
      const timer = setTimeout(() => {
        pending.delete(message.id);
        reject(new Error('the cluster\'s primary did not answer'));
      }, answerTimeoutMs);
      pending.set(message.id, { resolve, reject, timer });
      process.send(message);
    });
  process.on('message', (message: unknown) => {
    if (!isOurs(message)) return;
    const m = message as ToWorker;
    if (m.omnigate !== 'answer') return;
    const p = pending.get(m.id);
    if (!p) return;
    pending.delete(m.id);
    clearTimeout(p.timer);
    if (m.error !== null) p.reject(new Error(m.error));
    else p.resolve(m.value);
  });
  return {
    async sharedFinalized(chainId, required, block) {
      const value = await ask({ omnigate: 'floor', id: nextId++, key: `${chainId}:${required}`, block: block === undefined ? null : block.toString() });
      return value === null ? undefined : BigInt(value);
    },
    async metricsText() {
      return (await ask({ omnigate: 'metrics', id: nextId++ })) ?? '';
    },
    creditStore: {
      async take(key, limits, credits) {
        return creditsOf<Verdict>(await ask({ omnigate: 'credits-take', id: nextId++, key, limits, credits }));
      },
      async settle(reservation, credits) {
        return creditsOf<Remaining>(await ask({ omnigate: 'credits-settle', id: nextId++, reservation, credits }));
      },
      async close() {},
    },
    join(upstreams, metrics, onStop) {
      process.on('message', (message: unknown) => {
        if (!isOurs(message)) return;
        const m = message as ToWorker;
        if (m.omnigate === 'stop') return onStop();
        if (m.omnigate === 'collect') {
          metrics.getMetricsAsJSON().then(
            (json) => process.send?.({ omnigate: 'collected', id: m.id, metrics: json, error: null } satisfies ToPrimary),
            (err: unknown) => process.send?.({ omnigate: 'collected', id: m.id, metrics: null, error: (err as Error).message } satisfies ToPrimary),
          );
          return;
        }
        if (m.omnigate !== 'probe' && m.omnigate !== 'heads' && m.omnigate !== 'self-check') return;
        const chain = upstreams.chains.get(m.chain);
        if (!chain) return;
        if (m.omnigate === 'probe') applyWireProbeRound(chain, m.round);
        else if (m.omnigate === 'heads') applyWireHeadPolls(chain, m.polls);
        else applySelfCheck(chain, m.result.kind === 'passed' ? { ...m.result, block: BigInt(m.result.block) } : m.result, silentLogger);
      });
      // The primary gone (killed): nothing probes any more, and no one would stop this worker.
      process.once('disconnect', onStop);
      process.send?.({ omnigate: 'hello' } satisfies ToPrimary);
    },
  };
}

/**
 * A credit store's answer over IPC: JSON, with the limits a key does not have (Infinity) and the
 * remainders not known (NaN) kept as such (JSON would make both null).
 */
function creditsText(value: Verdict | Remaining): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? String(v) : v));
}

function creditsOf<T>(text: string | null): T {
  if (text === null) throw new Error('the cluster\'s primary gave no credit answer');
  return JSON.parse(text, (_key, v: unknown) => (v === 'Infinity' ? Infinity : v === '-Infinity' ? -Infinity : v === 'NaN' ? NaN : v)) as T;
}
