/**
 * Keeps `npm run bench` from rotting: runs test/bench/run.ts in its tiny mode (BENCH_SMOKE=1: a
 * tenth of a second per scenario, a run that has no answer by then going on until its first, few
 * connections, 2,000 indexer events, no results.md, the TypeScript children bundled to plain
 * JavaScript over dist/) as a child process, and checks that it exits 0 on its own, that every
 * part ran (run.ts logs each part's time), prints every table and the targets table, and leaves
 * no child process behind. Every part of the bench runs through its own code (each scenario, each
 * kind of child); a part that fails is named (run.ts prints `[bench] failed in part "<name>"`).
 * The figures of a smoke run mean nothing (PostgreSQL seeds during the HTTP scenarios).
 * Its time: test/bench/README.md, thirteenth session (about a minute here, two under load).
 */
import test, { type ExecutionContext } from 'ava';
import { readFile } from 'node:fs/promises';
import { hasNginx } from '../../support/nginx.js';
import { spawnGroup, stopGroup } from '../../support/procs.js';
import { hasRedis } from '../../support/redis.js';

/** Whether `pid` runs (a zombie does not). */
async function running(pid: number): Promise<boolean> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  return stat !== '' && !/^[ZX]/.test(stat.slice(stat.lastIndexOf(')') + 2));
}

/**
 * The processes below `pid`, from the kernel's list of each one's children (that of its main
 * thread, which is where node, PostgreSQL, nginx and Redis fork): a read per process of the tree.
 * (A scan of all /proc costs about 50 ms of CPU on a machine running 90 processes: four a second
 * for the bench's few minutes, as the watch below was done before, cost more than a core.)
 */
async function tree(pid: number): Promise<number[]> {
  const out: number[] = [];
  for (let next = [pid]; next.length > 0;) {
    const lists = await Promise.all(next.map((p) => readFile(`/proc/${p}/task/${p}/children`, 'utf8').catch(() => '')));
    next = lists.flatMap((list) => list.split(' ').filter(Boolean).map(Number));
    out.push(...next);
  }
  return out;
}

interface BenchRun {
  code: number | null;
  out: string;
  err: string;
  /** Every process seen below the bench while it ran. */
  pids: Set<number>;
  seconds: number;
  /** The part named by `[bench] failed in part "…"`, if any. */
  failedPart?: string;
}

/**
 * Runs the bench in smoke mode with `env` added, in its own process group (stopped in teardown
 * whatever failed: the bench forks its servers), watching which processes it starts; a bench that
 * hangs is stopped after `killAfterMs`.
 */
async function runBench(t: ExecutionContext, env: Record<string, string>, killAfterMs: number): Promise<BenchRun> {
  const started = performance.now();
  const child = spawnGroup(t, process.execPath, ['--import', 'tsx', 'test/bench/run.ts'], {
    env: { ...process.env, BENCH_SMOKE: '1', BENCH_RESULTS: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const pids = new Set<number>();
  // Every 250 ms (a process that starts and ends between two looks is not seen).
  let watching = true;
  const watched = (async () => {
    while (watching) {
      if (child.pid) for (const p of await tree(child.pid)) pids.add(p);
      await new Promise((r) => setTimeout(r, 250));
    }
  })();
  const killer = setTimeout(() => void stopGroup(child, 2_000), killAfterMs);
  const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
  clearTimeout(killer);
  watching = false;
  await watched;
  return { code, out, err, pids, seconds: (performance.now() - started) / 1000, failedPart: /\[bench\] failed in part "([^"]+)"/.exec(err)?.[1] };
}

/** Which of the bench's processes still run (PostgreSQL's workers may take a moment after the postmaster is told to stop). */
async function leftBehind(pids: Set<number>): Promise<string[]> {
  let alive: string[] = [];
  for (let i = 0; i < 50; i += 1) {
    alive = [];
    for (const p of pids) {
      if (await running(p)) alive.push(`${p} ${(await readFile(`/proc/${p}/cmdline`, 'utf8').catch(() => '')).replaceAll('\0', ' ').trim()}`);
    }
    if (alive.length === 0) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  return alive;
}

test('the bench runs end to end in smoke mode and prints its tables', async (t) => {
  // Every part of the bench once: 52–57 s at a load average of 5–8, 107–133 s with three more busy
  // processes at 7–10 (test/bench/README.md, thirteenth session). The kill waits five minutes, so
  // that only a bench that hangs is stopped.
  t.timeout(320_000);
  const run = await runBench(t, {}, 300_000);
  t.log(`smoke bench: ${run.seconds.toFixed(1)} s`);
  const { out } = run;

  t.is(run.code, 0, `bench ${run.failedPart ? `part "${run.failedPart}" failed` : `exit code ${run.code}`}:\n${run.err.slice(-4000)}`);
  // Each part says how long it took (run.ts enter()), so a part that was skipped shows.
  for (const part of ['start', 'checks', 'closed loop', 'saturated', 'door', 'logs', 'fixed rate', 'sweep', 'peers', 'mix', 'cache', 'replicas', 'workers', 'proof', 'rss', 'canon', 'idx']) {
    t.regex(run.err, new RegExp(`part ${part}\\b[^\\n]* took [\\d.]+ s`), `part ${part} did not run`);
  }
  t.regex(out, /\| Scenario \| Conns \| Req\/s \| p50 ms \| p99 ms \| Upstream calls \/ answer \|/);
  for (const row of ['1. upstream direct', '2. http-proxy', '3. omnigate N=1', '4. omnigate N=3 of 5', '5. omnigate N=3, 2.5 MB eth_getLogs', 'missing-relay', 'missing-proof', 'missing-claim']) {
    t.true(out.includes(row), `no row for ${row}`);
  }
  t.regex(out, /\| Scenario \(\d+ connections, [\d,]+ req\/s offered\) \|/);
  t.regex(out, /\| N=3 at rising load \(\d+ connections, req\/s offered\) \| 3rd-fastest direct p50 \/ p99 ms \| 3 fastest direct at once p50 \/ p99 ms \| N=3 p50 ms \|/);
  t.regex(out, /^\| 400 \| [\d.]+ \/ [\d.]+ \| [\d.]+ \/ [\d.]+ \| [\d.]+ \|/m);
  t.regex(out, /N=3 p50 within 1\.10× of the 3rd-fastest upstream's, at the same offered load: (up to [\d,]+ req\/s|at none) of the swept 400 req\/s/);
  t.regex(out, /\| Target \| Measured \| Goal \|/);
  t.regex(out, /^\| N=1 throughput vs http-proxy \(\d+ conns\) \| [\d.]+×/m);
  t.regex(out, /^\| N=1 throughput vs http-proxy \(\d+ conns, server saturated\) \| [\d.]+×/m);
  // The closed loop's N=3 row names the two loads its p50s were taken at.
  t.regex(out, /^\| N=3 p50 vs 3rd-fastest upstream p50 \(\d+ conns\) \| [\d.]+× \(at [\d,]+ against [\d,]+ req\/s\) \| ≤ 1\.10× \| (pass|\*\*miss\*\*[^|]*) \|$/m);
  // The peers (ethers' FallbackProvider on the same nodes) and the fixed-rate mix, every answer of it checked.
  for (const row of ['ethers FallbackProvider, quorum 1 of 1', 'omnigate N=1 (/rpc/2)', 'ethers FallbackProvider, quorum 3 of 3', 'omnigate N=3 (/confirmations/3/rpc/1)']) {
    t.regex(out, new RegExp(`^\\| ${row.replace(/[()/]/g, '\\$&')} \\| [\\d,]+ \\|`, 'm'), `no peers row for ${row}`);
  }
  // (Each side answers at least once: a smoke run goes on until its first answer.)
  t.regex(out, /^\| omnigate N=1 answers\/s ÷ ethers FallbackProvider quorum 1 .*\| [\d.]+× \| ≥ 2\.00× \| (pass|\*\*miss\*\*) \|$/m);
  t.regex(out, /^\| omnigate N=3 answers\/s ÷ ethers FallbackProvider quorum 3 .*\| [\d.]+× \| ≥ 2\.00× \| (pass|\*\*miss\*\*) \|$/m);
  t.notRegex(out, /^\| [^|]* \| n\/a[^|]* \| [^|]* \| pass \|$/m, 'a row measured nothing and passed');
  t.regex(out, /^\| Mix at [\d,]+ req\/s offered .*\n\|---.*\n\| round 1 \| [\d,]+ \| [\d.]+ \|/m);
  t.regex(out, /^\| mix at [\d,]+ req\/s: wrong answers \(failed: \d+\) \| 0 of [\d,]+ \| 0 \| pass \|$/m);
  t.regex(out, /^\| mix at [\d,]+ req\/s: worst GET \/health, every 50 ms after warm-up \| [\d.]+ ms \|/m);
  t.regex(out, /^\| omnigate cache hits \(confirmed N=3\) answers\/s ÷ one node called directly .*\| [\d.]+×/m);
  t.regex(out, /^\| N=1 answers\/s with --workers 2 ÷ --workers 1 .*\| [\d.]+×/m);
  t.regex(out, /^\| proven state read latency vs one provider direct \| [\d.]+× \|/m);
  t.regex(out, /^\| omnigate peak RSS at \d+ connections \(VmHWM\) \| [\d.]+ MB \|/m);
  t.regex(out, /^\| canonicalize\+hash of the 2\.5 MB reply \(assessBody, median\) \| [\d.]+ ms \|/m);
  // Two replicas behind nginx against one, sharing Redis (the part skips itself without nginx or
  // redis-server); its "reported" rows carry a figure (a smoke run fails on n/a there).
  if (hasNginx() && hasRedis()) {
    t.regex(out, /^\| nginx → replicas A and B, B on the other core \| [\d,]+ \|/m);
    t.regex(out, /^\| two replicas behind nginx ÷ one, answers\/s .*\| [\d.]+×/m);
    t.regex(out, /^\| {4}the same, both replicas on one core \| [\d.]+×/m);
    t.regex(out, /^\| {4}nginx → one replica ÷ the replica called directly \| [\d.]+×/m);
    t.regex(out, /replicas: .* 0 upstream calls while measuring/);
  }
  t.regex(out, /Machine: \d+ cores/);
  t.regex(out, /upstream calls per request, exact .*N=1 1 over .*N=3 3 over/);

  // Every server the bench started (upstreams, proxy, omnigate, indexer, PostgreSQL, nginx, Redis) is gone.
  t.true(run.pids.size > 0, 'no process of the bench seen');
  t.deepEqual(await leftBehind(run.pids), [], 'bench children still running');
});

// A bench that fails while some of its children are still starting (here the omnigate servers
// refuse their config while the proxy and the fan-outs start beside them; in a smoke run the
// indexer starts beside the HTTP scenarios) exits on its own: their IPC channels used to keep it
// alive until something killed it (on CI the smoke test's kill, 5 minutes later).
test.serial('a bench that fails while children are starting exits on its own, naming the part, leaving none behind', async (t) => {
  t.timeout(200_000);
  // (The guard: a bench that hangs is stopped at 180 s, and the test fails on its exit code.)
  const run = await runBench(t, { BENCH_UPSTREAM_SOCKETS: '0' }, 180_000);
  t.is(run.code, 1, `bench exit code ${run.code}:\n${run.err.slice(-2000)}`);
  t.regex(run.err, /\[bench\] failed in part "start": Error: omnigate[-\w]* exited before it was ready/);
  t.is(run.failedPart, 'start');
  t.true(run.pids.size > 0, 'the bench started no child');
  const alive: number[] = [];
  for (const p of run.pids) if (await running(p)) alive.push(p);
  t.deepEqual(alive, [], 'bench children still running');
});
