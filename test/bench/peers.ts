/**
 * The `peers` part of `npm run bench` (BENCH_ONLY key `peers`): omnigate against ethers v6's
 * FallbackProvider, the verifying client a user would run instead, on the same fast fake nodes
 * with the same number of concurrent clients, in interleaved rounds.
 *
 * - The nodes: fake nodes (upstream-server.ts, one process each, pinned with the load generator),
 *   NODE_DELAY_MS of service time each: one for the N=1 pair (chain SOLO_CHAIN), three for the
 *   N=3 pair (chain TRIO_CHAIN).
 * - ethers (peers-ethers.mjs): one process, pinned to the server CPU, running CLIENTS loops of
 *   `getBalance(address, pinned block)` on a FallbackProvider at quorum 1 over the one node and at
 *   quorum 3 over the three (weight 1 each, stallTimeout STALL_MS: far above a fast node's answer,
 *   so it never starts a node beyond the quorum). That process does the verifying, and it is the
 *   one measured.
 * - omnigate (omnigate-server.mjs): one process, pinned to the server CPU, with the same two
 *   chains (hedgeMs 0, probes and head polls once at start only, so every node call is a read's);
 *   the same `eth_getBalance` at the pinned block, at N=1 (`/rpc/<solo chain>`) and at N=3
 *   (`/confirmations/3/rpc/<trio chain>`), from CLIENTS connections of the load
 *   generator's closed loop (autocannon, in the bench process: lighter than an ethers client, and
 *   on the other CPU, so the comparison measures the verifying process).
 * Each round runs ethers q1, omnigate N=1, ethers q3, omnigate N=3, each after its own warm-up;
 * the targets are the median over rounds of omnigate's answers/s ÷ ethers' in the same round.
 * Each row also gives the event loop's busy share of the run in the process under test
 * (performance.eventLoopUtilization: omnigate's `elu` command before and after, ethers' around its
 * loops): below 100 %, that process waited for work (its clients, the nodes), not for a CPU.
 * BENCH_PEERS_ALLOC=1: after the rounds, one more N=1 run of omnigate's under V8's sampling heap
 * profiler (not in the rows: the profiler slows it), and the bytes its process allocates per
 * answer: by where the code lives (dist/, node_modules, node's own), then by function
 * (BENCH_ALLOC_TOP of them, 40), node's HTTP server and undici's internals included.
 */
import { startChild, type Child } from './children.js';
import { runLoad } from './load.js';
import { BALANCE_ADDRESS, PINNED_BLOCK, replyText, requests } from './payloads.js';
import { check, cpuMs, cpuShares, cpuTicks, fmt, fmtCpus, fmtInt, loadAverage, median, startNodes, startOmnigate, stopChildren, type PartContext, type PartReport } from './parts.js';

const NODE_DELAY_MS = 1;
/** 32, the targets' count; BENCH_PEERS_CLIENTS changes it on both sides, for a diagnosis (e.g. whether a row's loop waits on its clients). */
const CLIENTS = clientCount(process.env.BENCH_PEERS_CLIENTS);

function clientCount(value: string | undefined): number {
  if (value === undefined || value === '') return 32;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new Error(`BENCH_PEERS_CLIENTS must be a positive integer, got ${JSON.stringify(value)}`);
  return n;
}
/** ethers' per-node stall timeout: with nodes answering in about a millisecond it never fires. */
const STALL_MS = 5_000;
const SOLO_CHAIN = 2;
const TRIO_CHAIN = 1;
/** 1 ETH: the balance every fake node answers (payloads.ts). */
const EXPECT_BALANCE = '1000000000000000000';

/** A child's event-loop utilization so far, ms (the `elu` command of omnigate-server.mjs). */
type Elu = { idle: number; active: number };

interface EthersRun {
  answers: number;
  /** Smoke mode (untilAnswer): the run's length when its first answer came after its end. */
  extendedS?: number;
  wrong: number;
  errors: number;
  firstError?: string;
  p50: number;
  p99: number;
  loopBusy: number;
}

interface PeerRow {
  key: 'q1' | 'n1' | 'q3' | 'n3';
  scenario: string;
  rps: number;
  p50: number;
  p99: number;
  callsPerAnswer: number;
  /** CPU time of the process under test per answer, µs, and its share of one core. */
  cpuUs: number;
  cpuShare: number;
  /** The event loop's busy share of the run (performance.eventLoopUtilization in the process under test). */
  loopBusy: number;
  /** Each CPU's busy share, all processes (the machine's other tenants included). */
  cpuBusy: number[];
}

export async function runPeers(ctx: PartContext): Promise<PartReport> {
  const [solo, trio] = await Promise.all([
    startNodes(ctx, 'peer-solo', [{ chainId: SOLO_CHAIN, delayMs: NODE_DELAY_MS }]),
    startNodes(ctx, 'peer-trio', [0, 1, 2].map(() => ({ chainId: TRIO_CHAIN, delayMs: NODE_DELAY_MS }))),
  ]);
  const config = {
    port: 0,
    refreshInterval: 86_400,
    heads: { intervalMs: 3_600_000 },
    timeouts: { hedgeMs: 0 },
    // ethers runs with its cache off and answers every read itself: omnigate too (no merged
    // requests, no cache of confirmed answers), so that both rows measure verifying.
    mergeRequests: false,
    cache: { memoryBytes: 0 },
    chains: { [String(SOLO_CHAIN)]: { rpcs: solo.urls }, [String(TRIO_CHAIN)]: { rpcs: trio.urls } },
  };
  const sets = [{ quorum: 1, urls: solo.urls, chainId: SOLO_CHAIN }, { quorum: 3, urls: trio.urls, chainId: TRIO_CHAIN }];
  // (started together: nothing is measured before both are up)
  const [omni, ethers] = await Promise.all([
    startOmnigate(ctx, 'peers-omnigate', config, 4),
    startChild<{ pid: number }>('peers-ethers', './peers-ethers.mjs', [JSON.stringify({ sets, stallTimeout: STALL_MS })], { plainJs: true }).then((c) => {
      ctx.children.add(c);
      return c;
    }),
  ]);
  await ctx.pin([ethers.pid], ctx.serverCpus);
  const stopped: Child<any>[] = [omni.child, ethers, ...solo.children, ...trio.children];
  try {
    const body = JSON.stringify(requests.getBalance);
    const n1Url = `${omni.base}/rpc/${SOLO_CHAIN}`;
    const n3Url = `${omni.base}/confirmations/3/rpc/${TRIO_CHAIN}`;
    for (const [url, n, chain] of [[n1Url, 1, SOLO_CHAIN], [n3Url, 3, TRIO_CHAIN]] as const) {
      const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      const text = await res.text();
      check(res.status === 200 && text === replyText('eth_getBalance', chain), `peers: omnigate N=${n} answered ${res.status} ${text.slice(0, 200)}`);
      check(res.headers.get('x-required-confirmations') === String(n), `peers: omnigate N=${n} X-Required-Confirmations ${res.headers.get('x-required-confirmations')}`);
    }
    const block = Number(PINNED_BLOCK);

    const measure = async (pid: number, nodes: typeof solo, go: () => Promise<{ rps: number; p50: number; p99: number; ok: number; loopBusy: number }>) => {
      await nodes.reset();
      const ticks = await cpuTicks();
      const cpuStart = await cpuMs(pid);
      const t0 = performance.now();
      const r = await go();
      const wallMs = performance.now() - t0;
      const cpu = (await cpuMs(pid)) - cpuStart;
      const cpuBusy = cpuShares(ticks, await cpuTicks());
      // Calls still in flight when the run stopped land in the count: it reads a little high.
      const calls = await nodes.calls('eth_getBalance');
      return { rps: r.rps, p50: r.p50, p99: r.p99, ok: r.ok, loopBusy: r.loopBusy, callsPerAnswer: calls / r.ok, cpuUs: (cpu * 1000) / r.ok, cpuShare: cpu / wallMs, cpuBusy };
    };
    const viaEthers = async (quorum: 1 | 3): Promise<PeerRow> => {
      const order = { quorum, clients: CLIENTS, address: BALANCE_ADDRESS, block, expect: EXPECT_BALANCE, untilAnswer: ctx.untilAnswer !== undefined };
      const label = `ethers FallbackProvider, quorum ${quorum} of ${quorum}`;
      ctx.log(`running ${label} (${CLIENTS} clients)…`);
      if (ctx.warmup > 0) await ethers.call<EthersRun>('run', { ...order, seconds: ctx.warmup });
      let failure: EthersRun | undefined;
      const m = await measure(ethers.pid, quorum === 1 ? solo : trio, async () => {
        const r = await ethers.call<EthersRun>('run', { ...order, seconds: ctx.seconds });
        if (r.errors > 0 || r.wrong > 0) failure = r;
        if (r.extendedS !== undefined) ctx.untilAnswer?.(ctx.seconds);
        return { rps: r.answers / (r.extendedS ?? ctx.seconds), p50: r.p50, p99: r.p99, ok: r.answers, loopBusy: r.loopBusy };
      });
      check(!failure, `${label}: ${failure?.errors} errors (${failure?.firstError}), ${failure?.wrong} wrong balances`);
      // (A run too short for the machine's load, a smoke run on a busy host, can end before the first answer: a row of 0, not a failure.)
      if (m.ok === 0) ctx.log(`  ${label}: no answer within the run (${ctx.seconds} s)`);
      ctx.log(`  ${fmtInt(m.rps)} answers/s, p50 ${fmt(m.p50)} ms, ${fmt(m.callsPerAnswer)} node calls/answer, ethers CPU ${fmt(m.cpuUs, 0)} µs/answer (${fmt(m.cpuShare * 100, 0)} % of a core, loop busy ${fmt(m.loopBusy * 100, 0)} %); CPUs busy ${fmtCpus(m.cpuBusy)}`);
      return { key: quorum === 1 ? 'q1' : 'q3', scenario: label, ...m };
    };
    const viaOmnigate = async (n: 1 | 3): Promise<PeerRow> => {
      const url = n === 1 ? n1Url : n3Url;
      const label = `omnigate N=${n} (${n === 1 ? `/rpc/${SOLO_CHAIN}` : `/confirmations/3/rpc/${TRIO_CHAIN}`})`;
      ctx.log(`running ${label} (${CLIENTS} connections)…`);
      if (ctx.warmup > 0) await runLoad({ url, body, connections: CLIENTS, seconds: ctx.warmup, warmupSeconds: 0 });
      const m = await measure(omni.child.pid, n === 1 ? solo : trio, async () => {
        const elu0 = await omni.child.call<Elu>('elu');
        const r = await runLoad({ url, body, connections: CLIENTS, seconds: ctx.seconds, warmupSeconds: 0, untilAnswer: ctx.untilAnswer });
        const elu1 = await omni.child.call<Elu>('elu');
        check(r.non2xx === 0 && r.errors === 0, `${label}: ${r.non2xx} non-2xx answers, ${r.errors} errors`);
        const active = elu1.active - elu0.active;
        return { ...r, loopBusy: active / (active + elu1.idle - elu0.idle) };
      });
      // (A run too short for the machine's load, a smoke run on a busy host, can end before the first answer: a row of 0, not a failure.)
      if (m.ok === 0) ctx.log(`  ${label}: no answer within the run (${ctx.seconds} s)`);
      ctx.log(`  ${fmtInt(m.rps)} answers/s, p50 ${fmt(m.p50)} ms, ${fmt(m.callsPerAnswer)} node calls/answer, omnigate CPU ${fmt(m.cpuUs, 0)} µs/answer (${fmt(m.cpuShare * 100, 0)} % of a core, loop busy ${fmt(m.loopBusy * 100, 0)} %); CPUs busy ${fmtCpus(m.cpuBusy)}`);
      return { key: n === 1 ? 'n1' : 'n3', scenario: label, ...m };
    };

    const loadBefore = await loadAverage();
    const rounds: Record<PeerRow['key'], PeerRow[]> = { q1: [], n1: [], q3: [], n3: [] };
    for (let round = 1; round <= ctx.rounds; round += 1) {
      rounds.q1.push(await viaEthers(1));
      rounds.n1.push(await viaOmnigate(1));
      rounds.q3.push(await viaEthers(3));
      rounds.n3.push(await viaOmnigate(3));
      if (ctx.rounds > 1) ctx.log(`peers: round ${round} of ${ctx.rounds} done`);
    }
    if (process.env.BENCH_PEERS_ALLOC === '1') await allocations(ctx, omni.child, n1Url, body);

    const medianRow = (rs: PeerRow[]) => [...rs].sort((a, b) => a.rps - b.rps)[(rs.length - 1) >> 1]!;
    const table = [
      `| Peers: the same read, ${CLIENTS} concurrent clients, fake nodes of ${NODE_DELAY_MS} ms (1 for N=1, 3 for N=3) | Answers/s | p50 ms | p99 ms | Node calls / answer | CPU µs / answer of the process under test | Its CPU, share of a core | Its event loop busy | CPUs busy, all processes |`,
      '|---|---:|---:|---:|---:|---:|---:|---:|---|',
      ...(['q1', 'n1', 'q3', 'n3'] as const).map((k) => {
        const r = medianRow(rounds[k]);
        return `| ${r.scenario} | ${fmtInt(r.rps)} | ${fmt(r.p50)} | ${fmt(r.p99)} | ${fmt(r.callsPerAnswer)} | ${fmtInt(r.cpuUs)} | ${fmt(r.cpuShare * 100, 0)} % | ${fmt(r.loopBusy * 100, 0)} % | ${fmtCpus(r.cpuBusy)} |`;
      }),
    ].join('\n');
    const ratio = (a: PeerRow[], b: PeerRow[]) => {
      const all = a.map((x, i) => x.rps / b[i]!.rps);
      return { median: median(all), all };
    };
    const list = (all: number[]) => (all.length > 1 ? `; rounds ${all.map((x) => fmt(x)).join(', ')}` : '');
    // A side with no answer in a round has no ratio: said so, never a pass (x ÷ 0 is Infinity, which is ≥ 2).
    const silent = (a: PeerRow[], b: PeerRow[]) => [...a, ...b].filter((r) => !(r.rps > 0)).map((r) => r.scenario);
    const shown = (r: { median: number; all: number[] }, none: string[]) => (none.length > 0 ? `n/a (no figure: ${none.join('; ')})` : `${fmt(r.median)}×${list(r.all)}`);
    const r1 = ratio(rounds.n1, rounds.q1);
    const r3 = ratio(rounds.n3, rounds.q3);
    const none1 = silent(rounds.n1, rounds.q1).map((r) => `${r}: no answer within the run`);
    const none3 = silent(rounds.n3, rounds.q3).map((r) => `${r}: no answer within the run`);
    // CPU per answer does not depend on who else runs on the machine as much as answers/s does.
    const cpuRatio = (ours: PeerRow[], theirs: PeerRow[]) => {
      const all = ours.map((x, i) => theirs[i]!.cpuUs / x.cpuUs);
      return { median: median(all), all };
    };
    const c1 = cpuRatio(rounds.n1, rounds.q1);
    const c3 = cpuRatio(rounds.n3, rounds.q3);
    // CPU time is read in clock ticks (10 ms): a run shorter than a few of them (a smoke run's) can
    // read none, and a ratio over 0 is no figure: said so, never a pass.
    const tickless = (a: PeerRow[], b: PeerRow[]) => [...a, ...b].filter((r) => !(r.cpuUs > 0)).map((r) => `${r.scenario}: no CPU clock tick within the run`);
    const noCpu1 = [...none1, ...tickless(rounds.n1, rounds.q1)];
    const noCpu3 = [...none3, ...tickless(rounds.n3, rounds.q3)];
    return {
      table,
      targets: [
        { name: `omnigate N=1 answers/s ÷ ethers FallbackProvider quorum 1 (${CLIENTS} clients, same nodes)`, value: shown(r1, none1), target: '≥ 2.00×', pass: none1.length === 0 && r1.median >= 2 },
        { name: `omnigate N=3 answers/s ÷ ethers FallbackProvider quorum 3 (${CLIENTS} clients, same nodes)`, value: shown(r3, none3), target: '≥ 2.00×', pass: none3.length === 0 && r3.median >= 2 },
        { name: '   CPU µs per answer, ethers quorum 1 ÷ omnigate N=1, for reference', value: shown(c1, noCpu1), target: '≥ 2.00×', pass: noCpu1.length === 0 && c1.median >= 2 },
        { name: '   CPU µs per answer, ethers quorum 3 ÷ omnigate N=3, for reference', value: shown(c3, noCpu3), target: '≥ 2.00×', pass: noCpu3.length === 0 && c3.median >= 2 },
      ],
      notes: [
        `- peers: ethers v6 FallbackProvider (JsonRpcProvider per node, batchMaxCount 1, static network, cacheTimeout -1; weight 1, stallTimeout ${fmtInt(STALL_MS)} ms) in its own process pinned to the server CPU, ${CLIENTS} loops of getBalance(address, ${PINNED_BLOCK}), quorum 1 over 1 node and quorum 3 over 3; omnigate the same eth_getBalance at N=1 over the same 1 node and N=3 over the same 3 from ${CLIENTS} autocannon connections of the load generator; ${ctx.rounds} interleaved round${ctx.rounds > 1 ? 's' : ''} (ethers q1, omnigate N=1, ethers q3, omnigate N=3), the table shows each one's median round; load average ${fmt(loadBefore)} before, ${fmt(await loadAverage())} after (2 or more on 2 cores: other tenants' processes competed)`,
      ],
    };
  } finally {
    await stopChildren(ctx, stopped);
  }
}

/** One more N=1 run of omnigate's under its sampling heap profiler: bytes allocated per answer, by place and by function. */
async function allocations(ctx: PartContext, omni: Child<{ port: number }>, url: string, body: string): Promise<void> {
  ctx.log(`peers: omnigate N=1 under the sampling heap profiler (${CLIENTS} connections, ${ctx.seconds} s)…`);
  await omni.call('allocStart');
  const r = await runLoad({ url, body, connections: CLIENTS, seconds: ctx.seconds, warmupSeconds: 0 });
  const byFunction = await omni.call<[string, number][]>('allocStop');
  check(r.non2xx === 0 && r.errors === 0 && r.ok > 0, `peers alloc run: ${r.ok} answers, ${r.non2xx} non-2xx, ${r.errors} errors`);
  const places = new Map<string, number>();
  let total = 0;
  for (const [where, bytes] of byFunction) {
    const file = where.slice(where.lastIndexOf(' ') + 1);
    const place = file.startsWith('dist/') ? 'dist/' : file.startsWith('node:') ? 'node' : file === ':0' ? '(native, no script)' : file.split('/')[0]!;
    places.set(place, (places.get(place) ?? 0) + bytes);
    total += bytes;
  }
  const perAnswer = (bytes: number) => (bytes / r.ok).toFixed(0).padStart(6);
  ctx.log(`  ${fmtInt(r.ok)} answers; ${perAnswer(total).trim()} bytes allocated per answer by the process; by place: ${[...places].sort((a, b) => b[1] - a[1]).map(([p, b]) => `${p} ${perAnswer(b).trim()}`).join(', ')}`);
  for (const [where, bytes] of byFunction.slice(0, Number(process.env.BENCH_ALLOC_TOP || 40))) ctx.log(`  ${perAnswer(bytes)}  ${where}`);
}
