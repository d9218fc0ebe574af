/**
 * The `mix` part of `npm run bench` (BENCH_ONLY key `mix`; BENCH_PROFILE=mix profiles it): a
 * fixed offered rate (BENCH_RATE, 1,000 req/s) of mixed verified traffic against omnigate over
 * NODES fake nodes, as a gateway in service sees it, with `GET /health` polled alongside.
 *
 * - The nodes: NODES fake nodes (upstream-server.ts, one process each, pinned with the load
 *   generator), NODE_DELAY_MS of service time each, `eth_getLogs` answering 3 logs.
 * - omnigate (omnigate-server.mjs, pinned to the server CPU) with the soak's configuration: the
 *   defaults (strategy balanced, adaptive hedging, head tracking on), probes every 5 s.
 * - The traffic, in equal shares, one after the other (the soak's mix): eth_getBalance at
 *   `latest`, eth_blockNumber, eth_getLogs over a 2-block range (the chain's N=1), eth_getBalance
 *   at a pinned block at N=2 and eth_getTransactionCount at a pinned block at N=3. An open loop
 *   (the schedule never waits for answers, as load.ts's fixed-rate runner), from the load
 *   generator's raw-socket pool (client/pool.ts), CONNECTIONS connections per route.
 * - Every answer is checked against what the nodes answer (its id and result): a wrong answer is
 *   one with another result, a failed one an error or a non-200.
 * - `GET /health` every HEALTH_EVERY_MS (one at a time) while measuring: its worst latency.
 * - The gateway's CPU: its /proc/<pid>/stat time over the measured wall time (share of a core).
 * After one warm-up of BENCH_WARMUP, BENCH_ROUNDS runs of BENCH_SECONDS each: the table shows each
 * round; the targets take the median round's CPU and p50, the worst /health and the wrong answers
 * of all rounds.
 */
import http from 'node:http';
import { isDeepStrictEqual } from 'node:util';
import { parsePayload } from '../../lib/jsonrpc/parse.js';
import { Cancellation } from '../../lib/upstream/transport/contract.js';
import { createHttpTransport } from './client/pool.js';
import { BALANCE_ADDRESS, PINNED_BLOCK, resultJson, smallLogsResultJson } from './payloads.js';
import { check, cpuMs, cpuShares, cpuTicks, fmt, fmtCpus, fmtInt, loadAverage, median, quantile, startNodes, startOmnigate, stopChildren, type PartContext, type PartReport } from './parts.js';

const NODES = 5;
const NODE_DELAY_MS = 1;
const CONNECTIONS = 32;
const HEALTH_EVERY_MS = 50;
const CHAIN_ID = 1;
const NEXT_BLOCK = `0x${(Number(PINNED_BLOCK) + 1).toString(16)}`;

interface Entry {
  label: string;
  path: string;
  id: number;
  method: string;
  params: unknown[];
  /** The result every node answers, parsed. */
  expect: unknown;
}

const ENTRIES: Entry[] = [
  { label: 'eth_getBalance latest', path: `/rpc/${CHAIN_ID}`, id: 1, method: 'eth_getBalance', params: [BALANCE_ADDRESS, 'latest'], expect: JSON.parse(resultJson('eth_getBalance', CHAIN_ID)) },
  { label: 'eth_blockNumber', path: `/rpc/${CHAIN_ID}`, id: 2, method: 'eth_blockNumber', params: [], expect: JSON.parse(resultJson('eth_blockNumber', CHAIN_ID)) },
  { label: 'eth_getLogs, 2 blocks', path: `/rpc/${CHAIN_ID}`, id: 3, method: 'eth_getLogs', params: [{ address: '0x5523d3c98809dddb82c686e152f5c58b1b0fb59e', fromBlock: PINNED_BLOCK, toBlock: NEXT_BLOCK }], expect: JSON.parse(smallLogsResultJson()) },
  { label: 'eth_getBalance pinned, N=2', path: `/confirmations/2/rpc/${CHAIN_ID}`, id: 4, method: 'eth_getBalance', params: [BALANCE_ADDRESS, PINNED_BLOCK], expect: JSON.parse(resultJson('eth_getBalance', CHAIN_ID)) },
  { label: 'eth_getTransactionCount pinned, N=3', path: `/confirmations/3/rpc/${CHAIN_ID}`, id: 5, method: 'eth_getTransactionCount', params: [BALANCE_ADDRESS, PINNED_BLOCK], expect: JSON.parse(resultJson('eth_getTransactionCount', CHAIN_ID)) },
];

interface MixRound {
  sent: number;
  ok: number;
  wrong: number;
  failed: number;
  firstProblem?: string;
  rps: number;
  p50: number;
  p99: number;
  /** The gateway's CPU time over the measured wall time: its share of one core. */
  cpuShare: number;
  healthPolls: number;
  healthWorst: number;
  healthP50: number;
  /** Each CPU's busy share, all processes (the machine's other tenants included). */
  cpuBusy: number[];
}

/** `wrong` when the answer carries another result than the nodes', `failed` when it carries none; undefined when right. */
function judge(entry: Entry, body: Buffer): 'wrong' | 'failed' | undefined {
  let answer: { id?: unknown; result?: unknown; error?: unknown };
  try {
    answer = JSON.parse(body.toString('utf8')) as typeof answer;
  } catch {
    return 'wrong';
  }
  if (answer.error !== undefined || !('result' in answer)) return 'failed';
  return answer.id === entry.id && isDeepStrictEqual(answer.result, entry.expect) ? undefined : 'wrong';
}

export async function runMix(ctx: PartContext, rate: number): Promise<PartReport> {
  const nodes = await startNodes(ctx, 'mix-node', Array.from({ length: NODES }, () => ({ chainId: CHAIN_ID, delayMs: NODE_DELAY_MS, smallLogs: true })));
  const config = {
    port: 0,
    refreshInterval: 5,
    timeouts: { upstreamMs: 5000, requestMs: 15000 },
    // Every pinned read of the mix asks the same question: merged or cached, the run would measure
    // the cache, not what verified traffic costs (the figures before the cache were taken so).
    mergeRequests: false,
    cache: { memoryBytes: 0 },
    chains: { [String(CHAIN_ID)]: { rpcs: nodes.urls } },
  };
  const execArgv = ctx.profileDir ? ['--cpu-prof', `--cpu-prof-dir=${ctx.profileDir}`] : [];
  const omni = await startOmnigate(ctx, 'mix-omnigate', config, NODES, execArgv);
  const routes = [...new Set(ENTRIES.map((e) => e.path))];
  const pools = new Map(routes.map((p) => [p, createHttpTransport(`${omni.base}${p}`, { connections: CONNECTIONS })]));
  const healthAgent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const calls = ENTRIES.map((e) => ({
    entry: e,
    pool: pools.get(e.path)!,
    payload: parsePayload(Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: e.id, method: e.method, params: e.params })), { maxBatchSize: 1 }),
  }));
  const never = new Cancellation();
  try {
    // Every entry once, judged, before any load.
    for (const c of calls) {
      const res = await c.pool.send({ payload: c.payload, requestId: 'mix-check', signal: never, timeoutMs: 30_000, maxBytes: 2 ** 20 });
      const verdict = judge(c.entry, res.body);
      check(verdict === undefined, `mix: ${c.entry.label} answered ${verdict}: ${res.body.toString('utf8').slice(0, 200)}`);
    }

    const healthOnce = () =>
      new Promise<number>((resolve, reject) => {
        const began = performance.now();
        const req = http.get(`${omni.base}/health`, { agent: healthAgent }, (res) => {
          res.resume();
          res.on('end', () => (res.statusCode === 200 ? resolve(performance.now() - began) : reject(new Error(`/health answered ${res.statusCode}`))));
        });
        req.on('error', reject);
      });

    /** One open-loop run of `seconds`; recorded: latencies, verdicts, the gateway's CPU, /health. */
    const run = async (seconds: number, record: boolean) => {
      const cpuStart = record ? await cpuMs(omni.child.pid) : NaN;
      const ticks = await cpuTicks();
      return new Promise<MixRound>((resolve, reject) => {
        const times: number[] = [];
        const health: number[] = [];
        let sent = 0, wrong = 0, failed = 0, pending = 0, next = 0;
        let firstProblem: string | undefined;
        let healthDone = !record;
        let healthError: Error | undefined;
        const gap = 1000 / rate;
        const start = performance.now();
        const end = start + seconds * 1000;
        let due = start;
        let ticking = true;
        const finish = () => {
          if (ticking || pending > 0 || !healthDone) return;
          const wallMs = performance.now() - start;
          void Promise.all([record ? cpuMs(omni.child.pid) : NaN, cpuTicks()]).then(([cpuEnd, ticksEnd]) => {
            if (healthError) return reject(healthError);
            const sorted = Float64Array.from(times).sort();
            const hs = Float64Array.from(health).sort();
            resolve({
              sent, ok: times.length, wrong, failed, firstProblem, rps: times.length / seconds,
              p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99), cpuShare: (cpuEnd - cpuStart) / wallMs,
              healthPolls: hs.length, healthWorst: hs.length ? hs[hs.length - 1]! : NaN, healthP50: quantile(hs, 0.5),
              cpuBusy: cpuShares(ticks, ticksEnd),
            });
          }, reject);
        };
        const problem = (what: string) => {
          firstProblem ??= what;
        };
        const fire = () => {
          const c = calls[next]!;
          next = next + 1 === calls.length ? 0 : next + 1;
          const at = performance.now();
          sent += 1;
          pending += 1;
          c.pool.send({ payload: c.payload, requestId: `mix-${sent}`, signal: never, timeoutMs: 30_000, maxBytes: 2 ** 20 })
            .then((answer) => {
              const ms = performance.now() - at;
              const verdict = judge(c.entry, answer.body);
              if (verdict === 'wrong') {
                wrong += 1;
                problem(`${c.entry.label}: wrong answer ${answer.body.toString('utf8').slice(0, 200)}`);
              } else if (verdict === 'failed') {
                failed += 1;
                problem(`${c.entry.label}: ${answer.body.toString('utf8').slice(0, 200)}`);
              } else if (record) {
                times.push(ms);
              }
            }, (err: Error) => {
              failed += 1;
              problem(`${c.entry.label}: ${err.message}`);
            })
            .finally(() => {
              pending -= 1;
              finish();
            });
        };
        if (record) {
          const poll = () => {
            if (!ticking) {
              healthDone = true;
              finish();
              return;
            }
            const began = performance.now();
            healthOnce().then((ms) => {
              health.push(ms);
              setTimeout(poll, Math.max(0, HEALTH_EVERY_MS - (performance.now() - began)));
            }, (err: Error) => {
              healthError = err;
              healthDone = true;
              finish();
            });
          };
          poll();
        }
        const timer = setInterval(() => {
          const now = performance.now();
          while (due <= now && due < end) {
            fire();
            due += gap;
          }
          if (due >= end) {
            clearInterval(timer);
            ticking = false;
            finish();
          }
        }, 1);
      });
    };

    ctx.log(`running the mix at ${fmtInt(rate)} req/s (${ENTRIES.length} kinds in equal shares, ${NODES} nodes of ${NODE_DELAY_MS} ms; warm-up ${ctx.warmup} s)…`);
    if (ctx.warmup > 0) await run(ctx.warmup, false);
    const loadBefore = await loadAverage();
    const rounds: MixRound[] = [];
    for (let round = 1; round <= ctx.rounds; round += 1) {
      const r = await run(ctx.seconds, true);
      rounds.push(r);
      ctx.log(`  mix round ${round}: ${fmtInt(r.rps)} answers/s of ${fmtInt(r.sent / ctx.seconds)} sent/s, p50 ${fmt(r.p50)} ms, p99 ${fmt(r.p99)} ms, omnigate CPU ${fmt(r.cpuShare * 100, 0)} % of a core, /health worst ${fmt(r.healthWorst)} ms (p50 ${fmt(r.healthP50)} ms, ${r.healthPolls} polls), wrong ${r.wrong}, failed ${r.failed}; CPUs busy ${fmtCpus(r.cpuBusy)}${r.firstProblem ? ` (first: ${r.firstProblem})` : ''}`);
    }

    const byP50 = [...rounds].sort((a, b) => a.p50 - b.p50)[(rounds.length - 1) >> 1]!;
    const cpu = median(rounds.map((r) => r.cpuShare));
    const worstHealth = Math.max(...rounds.map((r) => r.healthWorst));
    const wrong = rounds.reduce((a, r) => a + r.wrong, 0);
    const failed = rounds.reduce((a, r) => a + r.failed, 0);
    const answers = rounds.reduce((a, r) => a + r.ok, 0);
    const list = (f: (r: MixRound) => number, digits: number) => (rounds.length > 1 ? `; rounds ${rounds.map((r) => fmt(f(r), digits)).join(', ')}` : '');
    const table = [
      `| Mix at ${fmtInt(rate)} req/s offered (${ENTRIES.map((e) => e.label).join(' / ')}; ${NODES} nodes of ${NODE_DELAY_MS} ms) | Answers/s | p50 ms | p99 ms | omnigate CPU, share of a core | /health worst ms (p50; polls) | Wrong | Failed | CPUs busy, all processes |`,
      '|---|---:|---:|---:|---:|---:|---:|---:|---|',
      ...rounds.map((r, i) => `| round ${i + 1} | ${fmtInt(r.rps)} | ${fmt(r.p50)} | ${fmt(r.p99)} | ${fmt(r.cpuShare * 100, 0)} % | ${fmt(r.healthWorst)} (${fmt(r.healthP50)}; ${r.healthPolls}) | ${r.wrong} | ${r.failed} | ${fmtCpus(r.cpuBusy)} |`),
    ].join('\n');
    return {
      table,
      targets: [
        { name: `mix at ${fmtInt(rate)} req/s: omnigate CPU (median round)`, value: `${fmt(cpu * 100, 0)} %${list((r) => r.cpuShare * 100, 0)}`, target: '≤ 60 % of a core', pass: cpu <= 0.6 },
        { name: `mix at ${fmtInt(rate)} req/s: p50 (median round)`, value: `${fmt(byP50.p50)} ms${list((r) => r.p50, 2)}`, target: '≤ 5.00 ms', pass: byP50.p50 <= 5 },
        { name: `mix at ${fmtInt(rate)} req/s: worst GET /health, every ${HEALTH_EVERY_MS} ms after warm-up`, value: `${fmt(worstHealth)} ms`, target: '≤ 100 ms', pass: worstHealth <= 100 },
        { name: `mix at ${fmtInt(rate)} req/s: wrong answers (failed: ${failed})`, value: `${wrong} of ${fmtInt(answers + wrong)}`, target: '0', pass: wrong === 0 },
      ],
      notes: [
        `- mix: omnigate with the soak's configuration (defaults, probes every 5 s) over ${NODES} fake nodes of ${NODE_DELAY_MS} ms; ${ENTRIES.length} kinds of request in turn (equal shares) at ${fmtInt(rate)} req/s, open loop, ${CONNECTIONS} connections per route from the load generator's pool; every answer checked (id and result); GET /health polled one at a time every ${HEALTH_EVERY_MS} ms; ${ctx.rounds} round${ctx.rounds > 1 ? 's' : ''} of ${ctx.seconds} s after ${ctx.warmup} s of warm-up; load average ${fmt(loadBefore)} before, ${fmt(await loadAverage())} after (2 or more on 2 cores: other tenants' processes competed)`,
      ],
    };
  } finally {
    healthAgent.destroy();
    await Promise.all([...pools.values()].map((p) => p.close()));
    await stopChildren(ctx, [omni.child, ...nodes.children]);
  }
}
