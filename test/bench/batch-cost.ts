/**
 * The cost of a batch of 10 eth_getBalance calls at N=1 and at N=3, for two builds of omnigate in
 * one run: `BEFORE_DIST` (e.g. a build of main) and this worktree's dist/ (AFTER_DIST to change).
 * Both gateways serve the same three in-process upstreams (each answers at once); rounds alternate
 * between the builds and the medians are compared, so both see the same machine load.
 *
 *   BEFORE_DIST=/tmp/before/dist node --import tsx test/bench/batch-cost.ts
 *
 * Knobs: BENCH_SECONDS (per round, default 3), BENCH_ROUNDS (default 3), BENCH_CONCURRENCY (16).
 * Prints, per build and N: batches/s, p50 ms, upstream HTTP requests per batch; then the ratios
 * after/before.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const seconds = Number(process.env.BENCH_SECONDS ?? 3);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 16);
const beforeDist = process.env.BEFORE_DIST;
const afterDist = resolve(process.env.AFTER_DIST ?? 'dist');
if (!beforeDist) throw new Error('set BEFORE_DIST to the dist/ of the build to compare with (e.g. a build of main)');

const balance = '0x0000000000000000000000000000000000000000000000000de0b6b3a7640000';

/** An upstream that answers every call (single or batch) at once. */
async function upstream(): Promise<{ url: string; requests: number; close(): Promise<void> }> {
  const state = { requests: 0 };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      state.requests += 1;
      const body = JSON.parse(Buffer.concat(chunks).toString()) as { id: unknown } | { id: unknown }[];
      const answer = (c: { id: unknown }) => ({ jsonrpc: '2.0', id: c.id, result: balance });
      const text = JSON.stringify(Array.isArray(body) ? body.map(answer) : answer(body));
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    get requests() {
      return state.requests;
    },
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}

interface Build {
  name: string;
  url: string;
  close(): Promise<void>;
}

async function gateway(name: string, dist: string, rpcs: string[]): Promise<Build> {
  const { validateConfig } = (await import(pathToFileURL(`${dist}/config/schema.js`).href)) as typeof import('../../config/schema.js');
  const { rpcPipeline } = (await import(pathToFileURL(`${dist}/middleware/index.js`).href)) as typeof import('../../middleware/index.js');
  const result = validateConfig({ chains: { 1: { rpcs } }, limits: { batchSize: 100 } });
  if ('problems' in result) throw new Error(JSON.stringify(result.problems));
  const rpc = rpcPipeline(result.config);
  const server = http.createServer((req, res) => rpc(req, res, () => res.writeHead(404).end()));
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    name,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await rpc.close();
    },
  };
}

const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
const batch = JSON.stringify(Array.from({ length: 10 }, (_, i) => ({ jsonrpc: '2.0', id: i + 1, method: 'eth_getBalance', params: [`0x${String(i).padStart(40, '1')}`, `0x${(i + 16).toString(16)}`] })));

function post(url: string): Promise<number> {
  return new Promise((resolveOk, reject) => {
    const req = http.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(batch) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString()) as { result?: string }[];
        if (res.statusCode !== 200 || !Array.isArray(body) || body.length !== 10 || body.some((m) => m.result !== balance)) reject(new Error(`bad answer ${res.statusCode}`));
        else resolveOk(res.statusCode);
      });
    });
    req.on('error', reject);
    req.end(batch);
  });
}

async function round(url: string, upstreamRequests: () => number): Promise<{ rps: number; p50: number; perBatch: number }> {
  const before = upstreamRequests();
  const latencies: number[] = [];
  const end = performance.now() + seconds * 1000;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        const t0 = performance.now();
        await post(url);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  return { rps: latencies.length / seconds, p50: latencies[Math.floor(latencies.length / 2)]!, perBatch: (upstreamRequests() - before) / latencies.length };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const ups = await Promise.all([upstream(), upstream(), upstream()]);
const total = () => ups.reduce((n, u) => n + u.requests, 0);
const builds = [await gateway('before', resolve(beforeDist), ups.map((u) => u.url)), await gateway('after', afterDist, ups.map((u) => u.url))];
const results = new Map<string, { rps: number[]; p50: number[]; perBatch: number[] }>();
try {
  for (const b of builds) for (const n of [1, 3]) await post(`${b.url}${n === 1 ? '' : `/confirmations/${n}`}/rpc/1`); // warm up
  for (let r = 0; r < rounds; r++) {
    for (const n of [1, 3]) {
      for (const b of r % 2 === 0 ? builds : [...builds].reverse()) {
        const res = await round(`${b.url}${n === 1 ? '' : `/confirmations/${n}`}/rpc/1`, total);
        const key = `${b.name} N=${n}`;
        const acc = results.get(key) ?? { rps: [], p50: [], perBatch: [] };
        acc.rps.push(res.rps);
        acc.p50.push(res.p50);
        acc.perBatch.push(res.perBatch);
        results.set(key, acc);
      }
    }
  }
} finally {
  for (const b of builds) await b.close();
  for (const u of ups) await u.close();
  agent.destroy();
}
const row = (key: string) => {
  const r = results.get(key)!;
  return { rps: median(r.rps), p50: median(r.p50), perBatch: median(r.perBatch) };
};
console.log(`batch of 10 eth_getBalance, ${concurrency} clients, ${rounds} rounds of ${seconds} s per build and N (medians)`);
for (const n of [1, 3]) {
  const before = row(`before N=${n}`);
  const after = row(`after N=${n}`);
  for (const [name, r] of [['before', before], ['after', after]] as const) {
    console.log(`  N=${n} ${name.padEnd(6)} ${r.rps.toFixed(0).padStart(6)} batches/s  p50 ${r.p50.toFixed(2)} ms  upstream requests/batch ${r.perBatch.toFixed(2)}`);
  }
  console.log(`  N=${n} after/before: throughput ${(after.rps / before.rps).toFixed(2)}×, p50 ${(after.p50 / before.p50).toFixed(2)}×, upstream requests ${(after.perBatch / before.perBatch).toFixed(2)}×`);
}
