/**
 * What the bench parts kept in their own files (peers.ts, mix.ts) share: the context run.ts
 * hands them (durations, CPU pinning, the set of children to stop on failure), their report
 * (a table, targets, notes), and the processes each starts for itself: fake nodes
 * (upstream-server.ts, one process each) and an omnigate server (omnigate-server.mjs).
 */
import { readFile } from 'node:fs/promises';
import { pollUntil, startChild, type Child } from './children.js';

export interface PartContext {
  seconds: number;
  warmup: number;
  rounds: number;
  /** Where the part's own omnigate writes its `--cpu-prof` profile (BENCH_PROFILE names the part). */
  profileDir?: string;
  /** The CPU of the process under test, and the CPUs of the load generator and the fake nodes. */
  serverCpus: string;
  otherCpus: string;
  pin(pids: number[], cpus: string): Promise<void>;
  /** Every child started is added here (run.ts stops them all on failure) and removed when stopped. */
  children: Set<Child<any>>;
  log(...args: unknown[]): void;
  /** Smoke mode: given to runLoad (LoadOptions.untilAnswer); unset in a full run. */
  untilAnswer?: (seconds: number) => void;
}

export interface PartTarget {
  name: string;
  value: string;
  target: string;
  pass: boolean;
}

export interface PartReport {
  table: string;
  targets: PartTarget[];
  notes: string[];
}

export const fmt = (n: number, digits = 2) => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');
export const fmtInt = (n: number) => Math.round(n).toLocaleString('en-US');

export function median(values: number[]): number {
  const sorted = [...values].sort((x, y) => x - y);
  const mid = sorted.length >> 1;
  if (sorted.length === 0) return NaN;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** The q-quantile of ascending `sorted` (nearest rank). */
export const quantile = (sorted: ArrayLike<number>, q: number) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;

/**
 * A micro-benchmark in this process: each operation run for `ms` per round, in turn, `rounds`
 * rounds (interleaved, so a busy spell of the machine weighs on all alike); the median per
 * operation of its CPU time (user + system of this process: other processes weigh less) and wall
 * time per call, as a Markdown table. An operation that returns a promise is awaited.
 */
export async function perCallTable(ops: readonly (readonly [string, () => unknown])[], rounds: number, ms: number, digits: number): Promise<string> {
  const samples = new Map<string, { cpu: number[]; wall: number[] }>(ops.map(([name]) => [name, { cpu: [], wall: [] }]));
  for (let round = 0; round < rounds; round += 1) {
    for (const [name, op] of ops) {
      let n = 0;
      const cpu = process.cpuUsage();
      const start = process.hrtime.bigint();
      const until = start + BigInt(ms) * 1_000_000n;
      let now = start;
      while (now < until) {
        const r = op();
        if (r instanceof Promise) await r;
        n += 1;
        now = process.hrtime.bigint();
      }
      const used = process.cpuUsage(cpu);
      samples.get(name)!.cpu.push((used.user + used.system) / n);
      samples.get(name)!.wall.push(Number(now - start) / 1_000 / n);
    }
  }
  const rows = ops.map(([name]) => `| ${name} | ${median(samples.get(name)!.cpu).toFixed(digits)} | ${median(samples.get(name)!.wall).toFixed(digits)} |`);
  return ['| operation | CPU µs per call | wall µs per call |', '|---|---:|---:|', ...rows].join('\n');
}

export function check(condition: unknown, message: string): asserts condition {
  if (!condition) throw new Error(`bench check failed: ${message}`);
}

/** CPU time (user + system, ms) a process has used so far; /proc/<pid>/stat counts in clock ticks (100 Hz). */
export async function cpuMs(pid: number): Promise<number> {
  const text = await readFile(`/proc/${pid}/stat`, 'utf8');
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Busy and total clock ticks of each CPU so far (/proc/stat `cpuN` lines; idle and iowait are not busy). */
export async function cpuTicks(): Promise<{ busy: number; total: number }[]> {
  const text = await readFile('/proc/stat', 'utf8').catch(() => '');
  return [...text.matchAll(/^cpu\d+ (.+)$/gm)].map((m) => {
    const f = m[1]!.trim().split(/\s+/).map(Number);
    const total = f.slice(0, 8).reduce((a, b) => a + b, 0);
    return { busy: total - f[3]! - f[4]!, total };
  });
}

/** Each CPU's busy share (all processes, the machine's other tenants included) between two cpuTicks() readings. */
export const cpuShares = (a: Awaited<ReturnType<typeof cpuTicks>>, b: Awaited<ReturnType<typeof cpuTicks>>) =>
  b.map((x, i) => (x.busy - (a[i]?.busy ?? 0)) / Math.max(1, x.total - (a[i]?.total ?? 0)));

/** `0: 97 %, 1: 88 %`: each CPU's busy share. */
export const fmtCpus = (shares: number[]) => shares.map((x, i) => `${i}: ${fmt(x * 100, 0)} %`).join(', ');

/** The machine's 1-minute load average (/proc/loadavg): on a shared machine, how many others run. */
export const loadAverage = async () => Number((await readFile('/proc/loadavg', 'utf8').catch(() => 'NaN')).split(' ')[0]);

export interface Nodes {
  children: Child<{ ports: number[] }>[];
  urls: string[];
  pids: number[];
  /** Calls of `method` all nodes answered since the last reset. */
  calls(method: string): Promise<number>;
  reset(): Promise<void>;
}

/** Fake JSON-RPC nodes (upstream-server.ts), one process each, pinned with the load generator. */
export async function startNodes(ctx: PartContext, name: string, specs: { chainId: number; delayMs: number; smallLogs?: boolean }[]): Promise<Nodes> {
  const started = await Promise.allSettled(specs.map((spec, i) =>
    startChild<{ ports: number[] }>(`${name}${i}`, './upstream-server.ts', [JSON.stringify([spec])])));
  const ok = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  for (const c of ok) ctx.children.add(c);
  const failed = started.find((s) => s.status === 'rejected');
  if (failed) throw (failed as PromiseRejectedResult).reason;
  await ctx.pin(ok.map((c) => c.pid), ctx.otherCpus);
  return {
    children: ok,
    urls: ok.map((c) => `http://127.0.0.1:${c.info.ports[0]}/`),
    pids: ok.map((c) => c.pid),
    async calls(method) {
      const stats = await Promise.all(ok.map((c) => c.call<Record<string, number>[]>('stats')));
      return stats.flat().reduce((a, s) => a + (s[method] ?? 0), 0);
    },
    async reset() {
      await Promise.all(ok.map((c) => c.call('reset')));
    },
  };
}

/** An omnigate server from dist/ (omnigate-server.mjs; another build's: `script`, its omnigate-server.mjs as a file URL) pinned to the server CPU, its upstreams healthy. */
export async function startOmnigate(ctx: PartContext, name: string, config: object, upstreams: number, execArgv: string[] = [], script = './omnigate-server.mjs'): Promise<{ child: Child<{ port: number }>; base: string }> {
  const child = await startChild<{ port: number }>(name, script, [JSON.stringify(config)], { plainJs: true, execArgv });
  ctx.children.add(child);
  await ctx.pin([child.pid], ctx.serverCpus);
  const base = `http://127.0.0.1:${child.info.port}`;
  await pollUntil(`${name}: its ${upstreams} upstreams healthy`, async () => {
    const chains = (await (await fetch(`${base}/chains`)).json()) as { upstreams: { state: string }[] }[];
    return chains.flatMap((c) => c.upstreams).filter((u) => u.state === 'healthy').length === upstreams;
  }, { gone: () => child.process.exitCode !== null || child.process.signalCode !== null });
  return { child, base };
}

/** Stops the given children and forgets them. */
export async function stopChildren(ctx: PartContext, list: Child<any>[]): Promise<void> {
  await Promise.all(list.map((c) => c.stop()));
  for (const c of list) ctx.children.delete(c);
}
