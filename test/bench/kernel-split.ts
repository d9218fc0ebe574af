/**
 * What `--cpu-prof` cannot see of an N=1 answer: the split of a server's CPU between user and
 * kernel, its system calls, context switches and page faults per answer, and (with perf) the
 * native split of its time: V8's builtins and runtime, garbage collection, node's C++, libuv,
 * OpenSSL, the kernel, and the part of the kernel's time spent waking the processes it writes to.
 *
 * The peers' N=1 scenario (peers.ts): one fake node of 1 ms (upstream-server.ts), KSPLIT_CLIENTS
 * (32) autocannon connections from this process, `eth_getBalance` at the pinned block, against
 * these servers, each in its own process pinned to CPU 1 (the node and this process on CPU 0):
 *   omni:   omnigate from dist/ (omnigate-server.mjs) with the peers' config (`/rpc/2`);
 *   relay:  the plain relay on omnigate's undici transport (fanout-server.ts undici);
 *   relaycap: the same relay with the transport under the socket cap as omnigate's registry
 *           makes it (fanout-server.ts undici capped: the share's pool and the lent room's);
 *   proxy:  http-proxy (proxy-server.ts);
 *   ethers: ethers' FallbackProvider at quorum 1 (peers-ethers.mjs; its own clients).
 * Each round measures each of them in turn (the order reversed every second round), after a
 * warm-up (3 s in the first round, then 1 s): answers, then per answer the CPU (user and system, /proc/<pid>/stat), the
 * context switches (voluntary and not) and minor page faults, and the CPU of the threads other
 * than the main one (V8's platform workers: GC helpers, compilers).
 *
 *   node --import tsx test/bench/kernel-split.ts
 *
 * KSPLIT_MODE: `plain` (default), `perfstat` (also `perf stat` of the process over the run:
 * task-clock, context switches, page faults and the system calls by name, counted by the
 * kernel's tracepoints: unlike strace, this does not slow the process), `record` (also `perf
 * record -g` of the process over the run, started with `--perf-basic-prof` so that JS frames are
 * named; then its time per answer by kind, from `perf report`, each share of the samples applied
 * to the CPU per answer measured in the same run; the data stays in KSPLIT_DIR). perf must be on
 * the PATH and allowed to attach (perf_event_paranoid ≤ 1 or root).
 * Knobs: KSPLIT_WHO (`omni,relay,proxy,ethers`; also `relaycap`, `before`), KSPLIT_ROUNDS (3), KSPLIT_SECONDS (4),
 * KSPLIT_CLIENTS (32), KSPLIT_DIR (a new temporary directory), KSPLIT_FLAGS (node flags for the
 * servers, space-separated: e.g. `--cpu-prof --cpu-prof-dir=DIR`, written when the run ends).
 * Two builds of omnigate A/B: KSPLIT_BEFORE=<a copy of the repository with its dist/ built> and
 * `before` in KSPLIT_WHO (e.g. `before,omni`): `before` is that copy's omnigate (its own
 * test/bench/omnigate-server.mjs and dist/), served and measured as `omni` is, in the same
 * alternated rounds; the end prints omni's CPU per answer ÷ before's, per round and the median.
 * KSPLIT_ALLOC=1: after the rounds, one more run of each omnigate (`omni`, `before`) under V8's
 * sampling heap profiler (its omnigate-server.mjs's `allocStart`/`allocStop`), and the bytes its
 * process allocates per answer, by place (dist/, node's own, undici) and the KSPLIT_ALLOC_TOP
 * (20) functions that allocate most.
 * Figures: test/bench/README.md, "2026-11-28 (seventh session)".
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, readdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { startChild, stopAll, type Child } from './children.js';
import { runLoad } from './load.js';
import { BALANCE_ADDRESS, PINNED_BLOCK, requests } from './payloads.js';
import { startNodes, startOmnigate, type PartContext } from './parts.js';

const env = process.env;
const MODE = env.KSPLIT_MODE ?? 'plain';
if (!['plain', 'perfstat', 'record'].includes(MODE)) throw new Error(`KSPLIT_MODE must be plain, perfstat or record, got ${MODE}`);
const WHO = (env.KSPLIT_WHO ?? 'omni,relay,proxy,ethers').split(',').filter((w) => w !== '');
for (const w of WHO) if (!['omni', 'before', 'relay', 'relaycap', 'proxy', 'ethers'].includes(w)) throw new Error(`KSPLIT_WHO: unknown server ${w}`);
const BEFORE = env.KSPLIT_BEFORE;
if (WHO.includes('before') && !BEFORE) throw new Error('KSPLIT_WHO names `before`: set KSPLIT_BEFORE to a copy of the repository with its dist/ built');
const positive = (key: string, normal: number) => {
  const n = Number(env[key] ?? normal);
  if (!(n > 0)) throw new Error(`${key} must be a positive number`);
  return n;
};
const ROUNDS = positive('KSPLIT_ROUNDS', 3);
const SECONDS = positive('KSPLIT_SECONDS', 4);
const CLIENTS = positive('KSPLIT_CLIENTS', 32);
const DIR = env.KSPLIT_DIR ?? (await mkdtemp(path.join(os.tmpdir(), 'ksplit-')));
await mkdir(DIR, { recursive: true });
const SOLO_CHAIN = 2;
const TRIO_CHAIN = 1;
/** The system calls counted in `perfstat` mode (raw_syscalls:sys_enter counts them all). */
const SYSCALLS = ['read', 'writev', 'write', 'epoll_pwait', 'epoll_ctl', 'futex', 'madvise', 'mmap', 'munmap', 'mprotect', 'setsockopt', 'accept4', 'getpid', 'clock_gettime'];

const run = promisify(execFile);
const pin = async (pids: number[], cpus: string) => {
  for (const pid of pids) await run('taskset', ['-a', '-p', '-c', cpus, String(pid)]);
};
const children = new Set<Child<any>>();
const ctx: PartContext = { seconds: SECONDS, warmup: 1, rounds: ROUNDS, serverCpus: '1', otherCpus: '0', pin, children, log: console.log };
const nodeFlags = [...(MODE === 'record' ? ['--perf-basic-prof'] : []), ...(env.KSPLIT_FLAGS ?? '').split(' ').filter((f) => f !== '')];

interface Target {
  pid: number;
  /** Runs the load for `seconds`: answers and failures. */
  drive(seconds: number): Promise<{ ok: number; failed: number }>;
}

await pin([process.pid], '0');
const solo = await startNodes(ctx, 'ksplit-node', [{ chainId: SOLO_CHAIN, delayMs: 1 }]);
// The peers' omnigate has the N=3 chain too (four upstreams under the socket cap): the same here.
const trio = await startNodes(ctx, 'ksplit-trio', [0, 1, 2].map(() => ({ chainId: TRIO_CHAIN, delayMs: 1 })));
const body = JSON.stringify(requests.getBalance);
const viaHttp = (url: string) => async (seconds: number) => {
  const r = await runLoad({ url, body, connections: CLIENTS, seconds, warmupSeconds: 0 });
  return { ok: r.ok, failed: r.non2xx + r.errors };
};
const targets = new Map<string, Target>();
/** The omnigate children (`omni`, `before`), for KSPLIT_ALLOC's commands. */
const allocChildren = new Map<string, Child<{ port: number }>>();
for (const who of WHO) {
  if (who === 'omni' || who === 'before') {
    const config = {
      port: 0, refreshInterval: 86_400, heads: { intervalMs: 3_600_000 }, timeouts: { hedgeMs: 0 }, mergeRequests: false, cache: { memoryBytes: 0 },
      chains: { [String(SOLO_CHAIN)]: { rpcs: solo.urls }, [String(TRIO_CHAIN)]: { rpcs: trio.urls } },
    };
    const script = who === 'before' ? pathToFileURL(path.resolve(BEFORE!, 'test/bench/omnigate-server.mjs')).href : undefined;
    const o = await startOmnigate(ctx, `ksplit-${who === 'omni' ? 'omnigate' : 'before'}`, config, 4, nodeFlags, script);
    targets.set(who, { pid: o.child.pid, drive: viaHttp(`${o.base}/rpc/${SOLO_CHAIN}`) });
    allocChildren.set(who, o.child);
  } else if (who === 'ethers') {
    const c = await startChild<{ pid: number }>('ksplit-ethers', './peers-ethers.mjs', [JSON.stringify({ sets: [{ quorum: 1, urls: solo.urls, chainId: SOLO_CHAIN }], stallTimeout: 5_000 })], { plainJs: true, execArgv: nodeFlags });
    children.add(c);
    await pin([c.pid], '1');
    const order = { quorum: 1, clients: CLIENTS, address: BALANCE_ADDRESS, block: Number(PINNED_BLOCK), expect: '1000000000000000000' };
    targets.set(who, {
      pid: c.pid,
      async drive(seconds) {
        const r = await c.call<{ answers: number; wrong: number; errors: number }>('run', { ...order, seconds });
        return { ok: r.answers, failed: r.wrong + r.errors };
      },
    });
  } else {
    const c = who === 'relay' || who === 'relaycap'
      ? await startChild<{ port: number }>(`ksplit-${who}`, './fanout-server.ts', [JSON.stringify(solo.urls), 'undici', ...(who === 'relaycap' ? ['capped'] : [])], { execArgv: nodeFlags })
      : await startChild<{ port: number }>('ksplit-proxy', './proxy-server.ts', [solo.urls[0]!], { execArgv: nodeFlags });
    children.add(c);
    await pin([c.pid], '1');
    targets.set(who, { pid: c.pid, drive: viaHttp(`http://127.0.0.1:${c.info.port}/`) });
  }
}

/** The process's counters so far: CPU ms (user, system), context switches, minor faults, and each thread's CPU ms. */
async function counters(pid: number) {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? NaN);
  let others = 0;
  for (const tid of await readdir(`/proc/${pid}/task`)) {
    if (tid === String(pid)) continue;
    const t = await readFile(`/proc/${pid}/task/${tid}/stat`, 'utf8').catch(() => '');
    if (t === '') continue;
    const tf = t.slice(t.lastIndexOf(')') + 2).split(' ');
    others += (Number(tf[11]) + Number(tf[12])) * 10;
  }
  // /proc/<pid>/stat counts in clock ticks of 10 ms.
  return { user: Number(f[11]) * 10, system: Number(f[12]) * 10, minflt: Number(f[7]), voluntary: field('voluntary_ctxt_switches'), involuntary: field('nonvoluntary_ctxt_switches'), others };
}

/** A perf subprocess attached to `pid`, stopped with SIGINT (perf then writes its output). */
function attach(args: string[]): { stop(): Promise<void> } {
  const p: ChildProcess = spawn('perf', args, { stdio: ['ignore', 'ignore', 'inherit'] });
  let failure: Error | undefined;
  const exited = new Promise<void>((resolve) => {
    p.once('exit', () => resolve());
    p.once('error', (err) => {
      failure = err;
      resolve();
    });
  });
  return {
    async stop() {
      p.kill('SIGINT');
      await exited;
      if (failure) throw new Error(`perf ${args[0]} failed (is perf installed and allowed to attach?): ${failure.message}`);
    },
  };
}

/** perf stat's counts, by event name. */
async function perfStatCounts(file: string): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const line of (await readFile(file, 'utf8')).split('\n')) {
    const m = /^\s*([\d,.]+)\s+(?:msec\s+)?([\w:-]+)/.exec(line);
    if (m) out.set(m[2]!, Number(m[1]!.replace(/,/g, '')));
  }
  return out;
}

/** The kind of a `perf report --sort dso,sym` line: where the time went, natively. */
function kindOf(dso: string, sym: string): string {
  if (dso.startsWith('[kernel')) return 'kernel';
  if (dso.startsWith('[JIT]') || dso.startsWith('/tmp/perf-')) return sym.startsWith('JS:') ? 'JIT-compiled JS' : 'JIT other (regexps, stubs)';
  if (dso.startsWith('libc')) return /malloc|free|_int_|calloc|realloc/.test(sym) ? 'libc malloc/free' : 'libc other';
  if (dso === '[vdso]') return 'vDSO (clock_gettime)';
  if (dso !== 'node') return 'other libraries';
  if (/sha256|SHA256|EVP_|evp_|OPENSSL|ossl_|CRYPTO_|ncrypto|crypto::/.test(sym)) return 'OpenSSL (SHA-256)';
  if (/^uv_|^uv__/.test(sym)) return 'libuv';
  if (/llhttp/.test(sym)) return 'llhttp (node:http server)';
  if (/^Builtins_RecordWrite|Scaveng|Heap::|Heap_|MarkCompact|Sweep|ConcurrentMark|Marking|Evacuat|GCTracer|MemoryAllocator|MemoryChunk|PagedSpace|NewSpace|SemiSpace|RememberedSet|SlotSet|Worklist|ArrayBufferSweeper|heap::/.test(sym)) return 'V8 GC (and write barriers)';
  if (/^Builtins_\w*IC(_|$|Trampoline)/.test(sym)) return 'V8 inline-cache builtins (property access)';
  if (/^Builtins_/.test(sym)) return 'V8 other builtins';
  if (/JsonParser|JsonStringifier/.test(sym)) return 'V8 JSON';
  if (/compiler::|[Mm]aglev|[Tt]urboshaft|Compiler|Compilation|v8::internal::Parser|Scanner|BytecodeGenerator|interpreter::/.test(sym)) return 'V8 compilers (mostly on helper threads)';
  if (/v8::internal::/.test(sym)) return 'V8 runtime (C++)';
  if (/v8::/.test(sym)) return 'V8 API (node ↔ V8)';
  return "node's C++ (streams, HTTP parser glue, timers)";
}

/** µs per answer by kind, and the kernel's part waking the readers of what the process wrote. */
async function nativeSplit(data: string, usPerAnswer: number, pid: number): Promise<string[]> {
  const report = (await run('perf', ['report', '-i', data, '--no-children', '--sort', 'dso,sym', '-g', 'none', '--stdio'], { maxBuffer: 256 * 2 ** 20 })).stdout;
  const kinds = new Map<string, number>();
  for (const line of report.split('\n')) {
    const m = /^\s*([\d.]+)%\s+(\[JIT\] tid \d+|\S+)\s+\[[.k]\]\s+(.*)$/.exec(line);
    if (!m) continue;
    const kind = kindOf(m[2]!, m[3]!.trim());
    kinds.set(kind, (kinds.get(kind) ?? 0) + Number(m[1]));
  }
  // Samples whose kernel stack wakes a socket's reader (sock_def_readable: the loopback
  // delivering what this process wrote, and waking the process that waits for it).
  const script = (await run('perf', ['script', '-i', data, '-F', 'ip,sym'], { maxBuffer: 1024 * 2 ** 20 })).stdout;
  const samples = script.split(/\n\s*\n/).filter((s) => s.trim() !== '');
  const waking = samples.filter((s) => s.includes('sock_def_readable')).length;
  const lines = [...kinds].sort((a, b) => b[1] - a[1]).filter(([, p]) => p >= 0.3)
    .map(([kind, p]) => `    ${kind}: ${p.toFixed(1)} % = ${((p * usPerAnswer) / 100).toFixed(1)} µs`);
  // The main thread's share; the rest is V8's helper threads (GC, compilers) and libuv's.
  const threads = (await run('perf', ['report', '-i', data, '--no-children', '--sort', 'pid', '-g', 'none', '--stdio'], { maxBuffer: 16 * 2 ** 20 })).stdout;
  const shares = [...threads.matchAll(/^\s*([\d.]+)%\s+(\d+):/gm)].map((m) => ({ share: Number(m[1]), tid: m[2]! }));
  const main = shares.find((x) => x.tid === String(pid));
  lines.push(`    the main thread: ${main ? main.share.toFixed(1) : 'n/a'} % of the samples`);
  lines.push(`    of the kernel's, waking the reader of a socket written to (sock_def_readable): ${((100 * waking) / samples.length).toFixed(1)} % = ${((waking * usPerAnswer) / samples.length).toFixed(1)} µs`);
  return lines;
}

const loadAverage = async () => (await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ');
/** CPU µs per answer (user and system) of each server, per round. */
const cpuPerAnswer = new Map<string, number[]>();
try {
  for (let round = 1; round <= ROUNDS; round += 1) {
    const order = [...targets.keys()];
    if (round % 2 === 0) order.reverse();
    for (const who of order) {
      const t = targets.get(who)!;
      // A fresh process compiles its hot functions in its first seconds: a longer warm-up the first time.
      await t.drive(round === 1 ? 3 : 1);
      const file = path.join(DIR, `${who}-${round}.${MODE === 'record' ? 'data' : 'txt'}`);
      const events = ['task-clock', 'context-switches', 'page-faults', 'raw_syscalls:sys_enter', ...SYSCALLS.map((s) => `syscalls:sys_enter_${s}`)].join(',');
      const perf = MODE === 'perfstat' ? attach(['stat', '-e', events, '-o', file, '-p', String(t.pid)])
        : MODE === 'record' ? attach(['record', '-F', '1999', '-g', '-o', file, '-p', String(t.pid)]) : undefined;
      // perf needs a moment to attach; what it counts before the load starts is a few idle loop turns.
      if (perf) await new Promise((resolve) => setTimeout(resolve, 700));
      const load = await loadAverage();
      const a = await counters(t.pid);
      const r = await t.drive(SECONDS);
      const b = await counters(t.pid);
      await perf?.stop();
      const n = r.ok;
      const per = (x: number, digits = 1) => (n > 0 ? (x / n).toFixed(digits) : 'n/a');
      const user = ((b.user - a.user) * 1000);
      const system = ((b.system - a.system) * 1000);
      if (n > 0) cpuPerAnswer.set(who, [...(cpuPerAnswer.get(who) ?? []), (user + system) / n]);
      console.log(`round ${round}, ${who}: ${Math.round(n / SECONDS)} answers/s (${r.failed} failed), CPU µs per answer: user ${per(user)}, system ${per(system)} (threads other than the main one ${per((b.others - a.others) * 1000)}); per answer: context switches ${per(b.voluntary - a.voluntary, 3)} voluntary, ${per(b.involuntary - a.involuntary, 3)} not, minor page faults ${per(b.minflt - a.minflt, 3)}; load average ${load}`);
      if (MODE === 'perfstat' && n > 0) {
        const c = await perfStatCounts(file);
        const calls = [...SYSCALLS.map((s) => [s, c.get(`syscalls:sys_enter_${s}`) ?? 0] as const)].filter(([, v]) => v / n >= 0.001).sort((x, y) => y[1] - x[1]);
        console.log(`  system calls per answer: ${((c.get('raw_syscalls:sys_enter') ?? NaN) / n).toFixed(2)} in all; ${calls.map(([s, v]) => `${s} ${(v / n).toFixed(3)}`).join(', ')}`);
        console.log(`  perf stat per answer: task-clock ${((c.get('task-clock') ?? NaN) * 1000 / n).toFixed(1)} µs, context switches ${((c.get('context-switches') ?? NaN) / n).toFixed(3)}, page faults ${((c.get('page-faults') ?? NaN) / n).toFixed(3)}`);
      }
      if (MODE === 'record' && n > 0) {
        console.log(`  native split of the ${((user + system) / n).toFixed(1)} µs per answer (perf record, ${file}):`);
        for (const line of await nativeSplit(file, (user + system) / n, t.pid)) console.log(line);
      }
    }
  }
  if (env.KSPLIT_ALLOC === '1') {
    for (const who of ['before', 'omni']) {
      const t = targets.get(who);
      const c = allocChildren.get(who);
      if (!t || !c) continue;
      await c.call('allocStart');
      const r = await t.drive(SECONDS);
      const byFunction = await c.call<[string, number][]>('allocStop');
      const places = new Map<string, number>();
      let total = 0;
      for (const [where, bytes] of byFunction) {
        const file = where.slice(where.lastIndexOf(' ') + 1);
        const place = file.startsWith('dist/') ? 'dist/' : file.startsWith('node:') ? 'node' : file.startsWith(':') ? '(no script)' : file.split('/')[0]!;
        places.set(place, (places.get(place) ?? 0) + bytes);
        total += bytes;
      }
      const per = (bytes: number) => (r.ok > 0 ? (bytes / r.ok).toFixed(0) : 'n/a');
      console.log(`${who}: ${per(total)} bytes allocated per answer (${r.ok} answers under the sampling heap profiler); by place: ${[...places].sort((a, b) => b[1] - a[1]).map(([p, b]) => `${p} ${per(b)}`).join(', ')}`);
      for (const [where, bytes] of byFunction.slice(0, Number(env.KSPLIT_ALLOC_TOP || 20))) console.log(`  ${per(bytes).padStart(6)}  ${where}`);
    }
  }
  const omni = cpuPerAnswer.get('omni');
  const before = cpuPerAnswer.get('before');
  if (omni && before && omni.length === before.length) {
    const ratios = omni.map((x, i) => x / before[i]!);
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[(xs.length - 1) >> 1]!;
    console.log(`omni ÷ before, CPU per answer: median ${median(ratios).toFixed(3)} (rounds ${ratios.map((r) => r.toFixed(3)).join(', ')}); omni ${median(omni).toFixed(1)} µs, before ${median(before).toFixed(1)} µs (medians)`);
  }
} finally {
  await stopAll(children);
}
