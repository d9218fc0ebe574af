/**
 * The `workers` part of `npm run bench` (BENCH_ONLY key `workers`): N=1 answers/s of `omnigate
 * serve --workers 2` against `omnigate serve --workers 1`, side by side in interleaved rounds.
 *
 * - The node: one fake node (upstream-server.ts, its own process), NODE_DELAY_MS of service time.
 * - omnigate: the real CLI from dist/ (`node dist/lib/cli/index.js serve --no-indexer`), twice, on
 *   the same config (undici upstream client, as the main N=1 rows; LOG_LEVEL=warn: no line per
 *   request), one with `--workers 1` (one process, as without the flag), one with `--workers 2`
 *   (a primary and two workers). Nothing is pinned: the workers need both cores, which the load
 *   generator (this process) and the fake node share with them.
 * - Closed loop, CLIENTS autocannon connections, eth_blockNumber on /rpc/1 (N=1, one upstream call
 *   per answer); target: --workers 2 ÷ --workers 1 ≥ 1.3×. CPU per answer counts every process of
 *   the server (the primary and its workers).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile, writeFile, mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pollUntil } from './children.js';
import { runLoad, type LoadResult } from './load.js';
import { requests } from './payloads.js';
import { check, cpuMs, cpuShares, cpuTicks, fmt, fmtCpus, fmtInt, loadAverage, median, startNodes, stopChildren, type PartContext, type PartReport } from './parts.js';

const NODE_DELAY_MS = 2;
const CLIENTS = 200;
const CORES = os.cpus().length;
const allCpus = `0-${CORES - 1}`;
const CLI = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../dist/lib/cli/index.js');

export interface Server {
  child: ChildProcess;
  base: string;
  /** The server's processes: the CLI's and its workers'. */
  pids(): Promise<number[]>;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The real CLI on `file` with `--workers <workers>`, in a process group of its own; resolves once every upstream is healthy. */
export async function startServe(file: string, workers: number): Promise<Server> {
  const port = await freePort();
  // Its own process group: stopped whole, and killed whole if this process exits first.
  const child = spawn(process.execPath, [CLI, 'serve', '--config', file, '--no-indexer', '--port', String(port), '--workers', String(workers)], {
    env: { ...process.env, LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'ignore', 'inherit'],
    detached: true,
  });
  const kill = () => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // gone already
    }
  };
  process.once('exit', kill);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const base = `http://127.0.0.1:${port}`;
  await pollUntil(`omnigate --workers ${workers}: serving with healthy upstreams`, async () => {
    const chains = await fetch(`${base}/chains`).then((r) => r.json() as Promise<{ upstreams: { state: string }[] }[]>, () => undefined);
    return chains?.[0]?.upstreams.every((u) => u.state === 'healthy') === true;
  }, { gone: () => child.exitCode !== null || child.signalCode !== null });
  return {
    child,
    base,
    async pids() {
      const kids = await readFile(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').catch(() => '');
      return [child.pid!, ...kids.split(' ').filter(Boolean).map(Number)];
    },
    async stop() {
      try {
        process.kill(-child.pid!, 'SIGTERM');
      } catch {
        return;
      }
      const late = setTimeout(kill, 10_000);
      await exited;
      clearTimeout(late);
      process.off('exit', kill);
    },
  };
}

const cpuOf = async (pids: number[]) => (await Promise.all(pids.map((p) => cpuMs(p).catch(() => 0)))).reduce((a, b) => a + b, 0);

export async function runWorkers(ctx: PartContext): Promise<PartReport> {
  const nodes = await startNodes(ctx, 'workers-node', [{ chainId: 1, delayMs: NODE_DELAY_MS }]);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'omnigate-bench-workers-'));
  const file = path.join(dir, 'omnigate.json.yaml');
  // (JSON is YAML)
  await writeFile(file, JSON.stringify({
    port: 0,
    refreshInterval: 86_400,
    heads: { intervalMs: 3_600_000 },
    timeouts: { hedgeMs: 0 },
    mergeRequests: false,
    cache: { memoryBytes: 0 },
    upstreams: { client: 'undici' },
    chains: { '1': { rpcs: nodes.urls } },
  }));
  const servers: Server[] = [];
  try {
    // (started together: nothing is measured before both are up)
    const [one, two] = await Promise.allSettled([startServe(file, 1), startServe(file, 2)]).then((all) => {
      for (const s of all) if (s.status === 'fulfilled') servers.push(s.value);
      const failed = all.find((s) => s.status === 'rejected');
      if (failed) throw (failed as PromiseRejectedResult).reason;
      return servers as [Server, Server];
    });
    // The bench process (and so what it spawns) is pinned to the load generator's CPUs: the
    // servers get every CPU (a replacement worker would inherit its primary's).
    for (const s of servers) await ctx.pin(await s.pids(), allCpus);
    const body = JSON.stringify(requests.blockNumber);
    for (const s of servers) {
      const res = await fetch(`${s.base}/rpc/1`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      check(res.status === 200, `workers: omnigate answered ${res.status} ${await res.text()}`);
    }
    const rows = { one: [] as LoadResult[], two: [] as LoadResult[] };
    const cpu = { one: [] as number[], two: [] as number[] };
    /** CPU µs per answer of the load generator (this process) and the fake node together. */
    const others = { one: [] as number[], two: [] as number[] };
    let busy: number[] = [];
    /** CPU the --workers 2 primary (which serves no HTTP) used while measured, and the answers then. */
    let primaryMs = 0;
    let twoAnswers = 0;
    const loadBefore = await loadAverage();
    const measure = async (s: Server, key: 'one' | 'two') => {
      const pids = await s.pids();
      let cpu0 = 0;
      let primary0 = 0;
      let node0 = 0;
      let self0 = process.cpuUsage();
      let ticks0: Awaited<ReturnType<typeof cpuTicks>> = [];
      const r = await runLoad({
        url: `${s.base}/rpc/1`, body, connections: CLIENTS, seconds: ctx.seconds, warmupSeconds: ctx.warmup, untilAnswer: ctx.untilAnswer,
        onMeasureStart: async () => {
          primary0 = await cpuMs(pids[0]!);
          node0 = await cpuOf(nodes.pids);
          self0 = process.cpuUsage();
          cpu0 = await cpuOf(pids);
          ticks0 = await cpuTicks();
        },
      });
      if (key === 'two') busy = cpuShares(ticks0, await cpuTicks());
      check(r.non2xx === 0 && r.errors === 0, `workers: ${r.non2xx} non-2xx answers, ${r.errors} errors`);
      cpu[key].push(((await cpuOf(pids)) - cpu0) * 1000 / r.ok);
      const self = process.cpuUsage(self0);
      others[key].push((((await cpuOf(nodes.pids)) - node0) * 1000 + self.user + self.system) / r.ok);
      if (key === 'two') {
        primaryMs += (await cpuMs(pids[0]!)) - primary0;
        twoAnswers += r.ok;
      }
      rows[key].push(r);
    };
    for (let round = 1; round <= ctx.rounds; round += 1) {
      await measure(one, 'one');
      await measure(two, 'two');
      ctx.log(`workers: round ${round}: --workers 2 ${fmtInt(rows.two.at(-1)!.rps)}/s against --workers 1 ${fmtInt(rows.one.at(-1)!.rps)}/s`);
    }
    const ratio = rows.two.map((r, i) => r.rps / rows.one[i]!.rps);
    // What the cores allow at most: one worker is held to its own core (o µs per answer); two use
    // at most two cores, shared with the load generator and the node (x µs per answer):
    // min(2 ÷ o, cores ÷ (o + x)) ÷ (1 ÷ o).
    const o = median(cpu.one);
    const x = median(others.one);
    // (NaN when no CPU clock tick, 10 ms, fell within the runs, as in a smoke run's tenth of a second: no figure, no pass.)
    const ceiling = Math.min(2 / o, CORES / (o + x)) * o;
    const med = (rs: LoadResult[]) => [...rs].sort((a, b) => a.rps - b.rps)[(rs.length - 1) >> 1]!;
    const list = (all: number[]) => (all.length > 1 ? `; rounds ${all.map((x) => fmt(x)).join(', ')}` : '');
    return {
      table: [
        `| Workers: N=1 eth_blockNumber, one fake node of ${NODE_DELAY_MS} ms, ${CLIENTS} connections, the real CLI | Req/s | p50 ms | p99 ms | CPU µs per answer (all its processes) |`,
        '|---|---:|---:|---:|---:|',
        `| omnigate serve --workers 1 | ${fmtInt(med(rows.one).rps)} | ${fmt(med(rows.one).p50)} | ${fmt(med(rows.one).p99)} | ${fmt(median(cpu.one), 0)} |`,
        `| omnigate serve --workers 2 | ${fmtInt(med(rows.two).rps)} | ${fmt(med(rows.two).p50)} | ${fmt(med(rows.two).p99)} | ${fmt(median(cpu.two), 0)} |`,
      ].join('\n'),
      targets: [
        { name: `N=1 answers/s with --workers 2 ÷ --workers 1 (${CLIENTS} connections, ${CORES} cores shared with the load generator and the node)`, value: `${fmt(median(ratio))}×${list(ratio)}`, target: '≥ 1.30×', pass: median(ratio) >= 1.3 },
        { name: `   the most ${CORES} cores allow: ${CORES} × omnigate's CPU per answer ÷ (omnigate's + the load generator's and the node's: ${fmt(o, 0)} + ${fmt(x, 0)} µs), at most 2×`, value: `${fmt(ceiling)}×`, target: 'reported', pass: Number.isFinite(ceiling) },
      ],
      notes: [
        `- workers: one fake node of ${NODE_DELAY_MS} ms; the real CLI twice on one config (undici, no cache, no merging, LOG_LEVEL=warn), --workers 1 and --workers 2, every CPU; the --workers 2 primary used ${fmt((primaryMs * 1000) / Math.max(1, twoAnswers), 1)} µs of CPU per answer; ${ctx.rounds} interleaved round${ctx.rounds > 1 ? 's' : ''}; CPUs busy during the last --workers 2 run: ${fmtCpus(busy)}; load average ${fmt(loadBefore)} before, ${fmt(await loadAverage())} after`,
      ],
    };
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    await stopChildren(ctx, nodes.children);
    await rm(dir, { recursive: true, force: true });
  }
}
