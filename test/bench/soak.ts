/**
 * Soak (`npm run soak`, minutes; not part of `npm test`): five upstream processes, the first one
 * cycling through faults (healthy, slow 3 s, HTTP 500, hang, healthy again), mixed load from
 * SOAK_CONNECTIONS concurrent clients against the real pipeline (the defaults: balanced, adaptive hedging), every answer
 * checked against the deterministic fake chain. Prints one line per phase and a summary: wrong
 * answers (must be 0), p50 of the slow phase against the slower of the two healthy ones (must be within 2×),
 * memory after each phase (must stay flat). Exit code 1 when a check fails.
 * SOAK_PHASE_S (default 30) is the length of each phase, after SOAK_WARMUP_S (default 5) of
 * unmeasured warm-up.
 */
import { fork, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { isDeepStrictEqual } from 'node:util';
import connect from 'connect';
import { validateConfig } from '../../config/schema.js';
import { rpcPipeline } from '../../middleware/index.js';
import { defaultAnswer, type Profile, type RpcCallIn } from '../support/fake-upstream.js';

const phaseMs = Number(process.env.SOAK_PHASE_S ?? 30) * 1000;
const connections = Number(process.env.SOAK_CONNECTIONS ?? 32);
const warmupMs = Number(process.env.SOAK_WARMUP_S ?? 5) * 1000;
const phases: { name: string; profile: Profile; delayMs: number }[] = [
  { name: 'healthy', profile: 'honest', delayMs: 0 },
  { name: 'slow 3 s', profile: 'honest', delayMs: 3000 },
  { name: 'HTTP 500', profile: 'error500', delayMs: 0 },
  { name: 'hang', profile: 'hang', delayMs: 0 },
  { name: 'healthy again', profile: 'honest', delayMs: 0 },
];

const children: ChildProcess[] = [];
const stopAll = () => children.forEach((c) => c.connected && c.send({ stop: true }));
process.on('SIGINT', () => {
  stopAll();
  process.exit(130);
});

function startUpstream(): Promise<{ child: ChildProcess; url: string }> {
  const child = fork(new URL('./soak-upstream.ts', import.meta.url).pathname, [], { execArgv: ['--import', 'tsx'] });
  children.push(child);
  return new Promise((resolve, reject) => {
    child.once('message', (m: { url: string }) => resolve({ child, url: m.url }));
    child.once('exit', () => reject(new Error('soak upstream exited')));
  });
}

const tell = (child: ChildProcess, m: object) =>
  new Promise<void>((resolve) => {
    child.once('message', () => resolve());
    child.send(m);
  });

const upstreams = await Promise.all(Array.from({ length: 5 }, startUpstream));
const result = validateConfig({
  refreshInterval: 5,
  timeouts: { upstreamMs: 5000, requestMs: 15000 },
  chains: { 1337: { rpcs: upstreams.map((u) => u.url) } }, // the defaults: strategy balanced, adaptive hedging
});
if ('problems' in result) throw new Error(JSON.stringify(result.problems));
const rpc = rpcPipeline(result.config);
rpc.startHealthChecks();
const server = http.createServer(connect().use(rpc as connect.NextHandleFunction));
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const port = (server.address() as AddressInfo).port;
const agent = new http.Agent({ keepAlive: true, maxSockets: connections });

const address = '0x00000000000000000000000000000000000000aa';
const mix: { path: string; call: RpcCallIn }[] = [
  { path: '/rpc/1337', call: { jsonrpc: '2.0', id: 1, method: 'eth_getBalance', params: [address, 'latest'] } },
  { path: '/rpc/1337', call: { jsonrpc: '2.0', id: 2, method: 'eth_blockNumber', params: [] } },
  { path: '/rpc/1337', call: { jsonrpc: '2.0', id: 3, method: 'eth_getLogs', params: [{ fromBlock: '0x1', toBlock: '0x2' }] } },
  { path: '/confirmations/2/rpc/1337', call: { jsonrpc: '2.0', id: 4, method: 'eth_getBalance', params: [address, '0x1'] } },
  { path: '/confirmations/3/rpc/1337', call: { jsonrpc: '2.0', id: 5, method: 'eth_getBlockByNumber', params: ['0x5', false] } },
];

function post(path: string, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

interface Stats { ok: number; wrong: number; failed: number; ms: number[] }
const quantile = (xs: number[], q: number) => (xs.length === 0 ? NaN : [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))]!);

async function load(until: number, stats: Stats): Promise<void> {
  let i = Math.floor(Math.random() * mix.length);
  while (performance.now() < until) {
    const { path, call } = mix[i++ % mix.length]!;
    const began = performance.now();
    try {
      const r = await post(path, JSON.stringify(call));
      stats.ms.push(performance.now() - began);
      const expected = defaultAnswer(call);
      const body = JSON.parse(r.text) as { result?: unknown; error?: unknown };
      if (r.status !== 200 || body.error !== undefined) stats.failed += 1;
      else if ('result' in expected && isDeepStrictEqual(body.result, JSON.parse(JSON.stringify(expected.result)))) stats.ok += 1;
      else stats.wrong += 1;
    } catch {
      stats.failed += 1;
    }
  }
}

// A warm-up, not measured: JIT, connections, and the 20 answered calls per class the adaptive
// hedge delay rests on (a first run measured the first healthy phase at 40× the others' p50).
await Promise.all(Array.from({ length: connections }, () => load(performance.now() + warmupMs, { ok: 0, wrong: 0, failed: 0, ms: [] })));

const summary: { name: string; stats: Stats; rssMiB: number; heapMiB: number }[] = [];
for (const phase of phases) {
  await tell(upstreams[0]!.child, { profile: phase.profile, delayMs: phase.delayMs });
  const stats: Stats = { ok: 0, wrong: 0, failed: 0, ms: [] };
  const until = performance.now() + phaseMs;
  await Promise.all(Array.from({ length: connections }, () => load(until, stats)));
  const mem = process.memoryUsage();
  const row = { name: phase.name, stats, rssMiB: Math.round(mem.rss / 2 ** 20), heapMiB: Math.round(mem.heapUsed / 2 ** 20) };
  summary.push(row);
  const n = stats.ok + stats.wrong + stats.failed;
  console.log(
    `${phase.name.padEnd(14)} ${String(n).padStart(7)} req (${Math.round(n / (phaseMs / 1000))} req/s), wrong ${stats.wrong}, failed ${stats.failed}, ` +
      `p50 ${quantile(stats.ms, 0.5).toFixed(1)} ms, p99 ${quantile(stats.ms, 0.99).toFixed(1)} ms, rss ${row.rssMiB} MiB, heap ${row.heapMiB} MiB`,
  );
}
const chains = (await post('/chains', '').catch(() => ({ text: '[]' }))).text;
void chains;
agent.destroy();
await new Promise<void>((resolve) => server.close(() => resolve()));
server.closeAllConnections();
await rpc.close();
stopAll();

const wrong = summary.reduce((a, r) => a + r.stats.wrong, 0);
// The healthy reference: the slower of the two healthy phases' p50 (the first one also warms up).
const healthy = Math.max(quantile(summary[0]!.stats.ms, 0.5), quantile(summary.at(-1)!.stats.ms, 0.5));
const slow = quantile(summary[1]!.stats.ms, 0.5);
const heapGrowth = summary.at(-1)!.heapMiB - summary[0]!.heapMiB;
const checks = [
  [`no wrong answer (${wrong})`, wrong === 0],
  [`p50 in the slow phase within 2× of the healthy phase (${slow.toFixed(1)} ms against ${healthy.toFixed(1)} ms, ×${(slow / healthy).toFixed(2)})`, slow < 2 * healthy],
  [`memory flat: heap ${summary[0]!.heapMiB} → ${summary.at(-1)!.heapMiB} MiB (growth under 50 MiB)`, heapGrowth < 50],
] as const;
for (const [what, ok] of checks) console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
process.exit(checks.every(([, ok]) => ok) ? 0 : 1);
