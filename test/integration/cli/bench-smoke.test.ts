/**
 * Keeps `npm run bench` from rotting: runs test/bench/run.ts in its tiny mode (BENCH_SMOKE=1:
 * half a second per scenario, few connections, 2,000 indexer events, no results.md, the
 * TypeScript children bundled to plain JavaScript over dist/) as a child process,
 * and checks that it exits 0 on its own, prints the table and leaves no child process behind.
 * The figures of a smoke run mean nothing (PostgreSQL seeds during the HTTP scenarios).
 */
import test from 'ava';
import { readFile, readdir } from 'node:fs/promises';
import { hasNginx } from '../../support/nginx.js';
import { spawnGroup, stopGroup } from '../../support/procs.js';
import { hasRedis } from '../../support/redis.js';

/** Pids of processes whose parent is `pid`, recursively. */
async function descendants(pid: number): Promise<number[]> {
  const out: number[] = [];
  for (const entry of await readdir('/proc').catch(() => [] as string[])) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (ppid === pid) out.push(Number(entry), ...(await descendants(Number(entry))));
  }
  return out;
}

test('the bench runs end to end in smoke mode and prints its table', async (t) => {
  // Every part of the bench once: 100–191 s on a 2-core machine at a load average of 9–24, 215 s
  // with three more busy processes at 11–22 (test/bench/README.md, twelfth session). The kill waits
  // five minutes, so that only a bench that hangs is stopped.
  t.timeout(320_000);
  const started = Date.now();
  // Its own process group, stopped in teardown whatever failed (the bench forks its servers).
  const child = spawnGroup(t, process.execPath, ['--import', 'tsx', 'test/bench/run.ts'], {
    env: { ...process.env, BENCH_SMOKE: '1', BENCH_RESULTS: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const pids = new Set<number>();
  const watch = setInterval(() => {
    if (child.pid) void descendants(child.pid).then((list) => list.forEach((p) => pids.add(p)));
  }, 500);
  const killer = setTimeout(() => void stopGroup(child, 2_000), 300_000);
  const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
  clearTimeout(killer);
  clearInterval(watch);
  t.log(`smoke bench: ${((Date.now() - started) / 1000).toFixed(1)} s`);

  t.is(code, 0, `bench failed:\n${err.slice(-4000)}`);
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
  // (A smoke run on a busy host may see no answer from one side: the row says so and is never a pass.)
  t.regex(out, /^\| omnigate N=1 answers\/s ÷ ethers FallbackProvider quorum 1 .*\| ([\d.]+×|n\/a \(no answer within the run: [^|]+\)) \| ≥ 2\.00× \| (pass|\*\*miss\*\*) \|$/m);
  t.regex(out, /^\| omnigate N=3 answers\/s ÷ ethers FallbackProvider quorum 3 .*\| ([\d.]+×|n\/a \(no answer within the run: [^|]+\)) \| ≥ 2\.00× \| (pass|\*\*miss\*\*) \|$/m);
  t.notRegex(out, /^\| [^|]* \| n\/a[^|]* \| [^|]* \| pass \|$/m, 'a row measured nothing and passed');
  t.regex(out, /^\| Mix at [\d,]+ req\/s offered .*\n\|---.*\n\| round 1 \| [\d,]+ \| [\d.]+ \|/m);
  t.regex(out, /^\| mix at [\d,]+ req\/s: wrong answers \(failed: \d+\) \| 0 of [\d,]+ \| 0 \| pass \|$/m);
  t.regex(out, /^\| mix at [\d,]+ req\/s: worst GET \/health, every 50 ms after warm-up \| [\d.]+ ms \|/m);
  // Two replicas behind nginx against one, sharing Redis (the part skips itself without nginx or redis-server).
  if (hasNginx() && hasRedis()) {
    t.regex(out, /^\| nginx → replicas A and B, B on the other core \| [\d,]+ \|/m);
    t.regex(out, /^\| two replicas behind nginx ÷ one, answers\/s .*\| [\d.]+×/m);
    t.regex(out, /replicas: .* 0 upstream calls while measuring/);
  }
  t.regex(out, /Machine: \d+ cores/);
  t.regex(out, /upstream calls per request, exact .*N=1 1 over .*N=3 3 over/);

  // Every server the bench started (upstreams, proxy, omnigate, indexer, PostgreSQL) is gone
  // (PostgreSQL's own workers may take a moment after the postmaster is told to stop).
  const running = async (p: number) => {
    const stat = await readFile(`/proc/${p}/stat`, 'utf8').catch(() => '');
    return stat !== '' && stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  };
  let alive: string[] = [];
  for (let i = 0; i < 50; i += 1) {
    alive = [];
    for (const p of pids) {
      if (await running(p)) alive.push(`${p} ${(await readFile(`/proc/${p}/cmdline`, 'utf8').catch(() => '')).replaceAll('\0', ' ').trim()}`);
    }
    if (alive.length === 0) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  t.deepEqual(alive, [], 'bench children still running');
});

// A bench that fails while some of its children are still starting (here the omnigate servers
// refuse their config while the proxy and the fan-outs start beside them; in a smoke run the
// indexer starts beside the HTTP scenarios) exits on its own: their IPC channels used to keep it
// alive until something killed it (on CI the smoke test's kill, 5 minutes later).
test.serial('a bench that fails while children are starting exits on its own, leaving none behind', async (t) => {
  t.timeout(200_000);
  const child = spawnGroup(t, process.execPath, ['--import', 'tsx', 'test/bench/run.ts'], {
    env: { ...process.env, BENCH_SMOKE: '1', BENCH_RESULTS: '', BENCH_UPSTREAM_SOCKETS: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const pids = new Set<number>();
  const watch = setInterval(() => {
    if (child.pid) void descendants(child.pid).then((list) => list.forEach((p) => pids.add(p)));
  }, 200);
  // (The guard: a bench that hangs is stopped here, and the test fails on its exit code.)
  const killer = setTimeout(() => void stopGroup(child, 2_000), 180_000);
  const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
  clearTimeout(killer);
  clearInterval(watch);
  t.is(code, 1, `bench exit code ${code}:\n${err.slice(-2000)}`);
  t.regex(err, /\[bench\] failed: Error: omnigate[-\w]* exited before it was ready/);
  t.true(pids.size > 0, 'the bench started no child');
  const alive: number[] = [];
  for (const p of pids) {
    const stat = await readFile(`/proc/${p}/stat`, 'utf8').catch(() => '');
    if (stat !== '' && stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z') alive.push(p);
  }
  t.deepEqual(alive, [], 'bench children still running');
});
