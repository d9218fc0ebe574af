/**
 * What the per-worker memory cache costs with `omnigate serve --workers 2`, and what a shared
 * in-memory level through the primary would add to a hit. A script of its own (not a part of
 * `npm run bench`): `npm run build && node --import tsx test/bench/worker-cache.ts`.
 *
 * 1. Agreements and hit rate: the real CLI (dist/), `--workers 1` then `--workers 2`, two fake
 *    upstreams in this process (their calls counted), N=2, the default memory cache, no Redis.
 *    (a) K identical confirmed reads (eth_getBalance at a final block), each on a new connection
 *    (the cluster hands new connections to the workers in turn); (b) M distinct reads, each asked
 *    R times in a shuffled order, each on a new connection. Counted: answers with X-Cache HIT,
 *    and agreements (the upstreams' eth_getBalance calls ÷ N).
 * 2. Hit latency: sequential hits on one kept-alive connection (`--workers 1` and `--workers 2`),
 *    the client's p50 and p99, against a prototype of the one thing a shared level in the primary
 *    adds to a hit: an IPC round trip (worker asks, primary looks the key up in a Map and sends
 *    the answer's bytes back), timed in a forked child over the same channel node:cluster uses,
 *    for answers of 100 B, 10 KB and 1 MB.
 * Env: WC_K (default 200), WC_M (101), WC_R (4), WC_HITS (2000).
 */
import { fork } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { finalizedChain, startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.js';
import { check, fmt, quantile } from './parts.js';
import { startServe } from './workers.js';

const here = fileURLToPath(import.meta.url);
const K = Number(process.env.WC_K ?? 200);
const M = Number(process.env.WC_M ?? 101);
const R = Number(process.env.WC_R ?? 4);
const HITS = Number(process.env.WC_HITS ?? 2000);
const N = 2;

// ---------------------------------------------------------------------------------------------
// The IPC prototype's child: a worker asking the primary (its parent) for cached answers.

function ipcChild(): void {
  let pending: ((value: string) => void) | undefined;
  process.on('message', (m: { value?: string; run?: { bytes: number; rounds: number } }) => {
    if (m.value !== undefined) return pending?.(m.value);
    if (!m.run) return;
    const { bytes, rounds } = m.run;
    void (async () => {
      const times: number[] = [];
      for (let i = 0; i < rounds; i++) {
        const t0 = process.hrtime.bigint();
        const value = await new Promise<string>((resolve) => {
          pending = resolve;
          process.send!({ get: `1:eth_getBalance:${bytes}` });
        });
        // (what a hit would do with it: the bytes of the answer)
        Buffer.byteLength(value);
        times.push(Number(process.hrtime.bigint() - t0) / 1000);
      }
      process.send!({ times });
    })();
  });
}

async function ipcRoundTrips(bytes: number, rounds: number): Promise<number[]> {
  const child = fork(here, ['ipc-child'], { execArgv: ['--import', 'tsx'], stdio: 'inherit' });
  const store = new Map<string, string>([[`1:eth_getBalance:${bytes}`, `{"jsonrpc":"2.0","id":1,"result":"0x${'a'.repeat(Math.max(0, bytes - 40))}"}`]]);
  try {
    return await new Promise<number[]>((resolve, reject) => {
      child.once('error', reject);
      child.on('message', (m: { get?: string; times?: number[] }) => {
        if (m.get !== undefined) child.send({ value: store.get(m.get) ?? '' });
        else if (m.times) resolve(m.times);
      });
      child.send({ run: { bytes, rounds } });
    });
  } finally {
    child.kill();
  }
}

// ---------------------------------------------------------------------------------------------
// The real CLI (workers.ts's startServe)

const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 1 });

function post(base: string, body: string, fresh: boolean): Promise<{ status: number; cache: string | undefined; ms: number }> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request(`${base}/rpc/1337`, { method: 'POST', headers: { 'content-type': 'application/json', ...(fresh ? { connection: 'close' } : {}) }, agent: fresh ? false : keepAlive }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, cache: res.headers['x-cache'] as string | undefined, ms: performance.now() - t0 }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const read = (i: number, id = 1) =>
  JSON.stringify({ jsonrpc: '2.0', id, method: 'eth_getBalance', params: [`0x${(0xa000 + i).toString(16).padStart(40, '0')}`, '0x10'] });

/** A shuffle with a fixed seed: every run asks in the same order. */
function shuffled<T>(list: T[], seed: number): T[] {
  const out = [...list];
  let s = seed;
  for (let i = out.length - 1; i > 0; i--) {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

interface Tally {
  asked: number;
  hits: number;
  agreements: number;
}

async function tally(fakes: FakeUpstream[], ask: () => Promise<{ status: number; cache: string | undefined }[]>): Promise<Tally> {
  const calls = () => fakes.reduce((n, f) => n + f.requests.filter((r) => (r.body as { method?: string }).method === 'eth_getBalance').length, 0);
  const before = calls();
  const answers = await ask();
  for (const a of answers) check(a.status === 200, `answered ${a.status}`);
  return { asked: answers.length, hits: answers.filter((a) => a.cache === 'HIT').length, agreements: (calls() - before) / N };
}

async function main() {
  const fakes = await Promise.all([0, 1].map(() => startFakeUpstream({ answer: finalizedChain(() => 90) })));
  const dir = await mkdtemp(path.join(os.tmpdir(), 'omnigate-worker-cache-'));
  const file = path.join(dir, 'omnigate.json.yaml');
  await writeFile(file, JSON.stringify({ port: 0, refreshInterval: 1, confirmations: N, heads: { intervalMs: 200 }, chains: { '1337': { rpcs: fakes.map((f) => f.url) } } }));
  const rows: string[] = [];
  const hitTimes: Record<number, number[]> = {};
  try {
    for (const workers of [1, 2]) {
      const s = await startServe(file, workers);
      try {
        // Ready: a confirmed read at a final block is cached (each worker knows the finalized block).
        let warm = 0;
        for (let i = 0; ; i++) {
          const a = await post(s.base, read(100_000 + i), true).catch(() => undefined);
          if (a?.status === 200 && a.cache !== undefined) warm++;
          if (warm >= 10) break;
          check(i < 2000 && s.child.exitCode === null, 'omnigate never served a cacheable read');
          await new Promise((r) => setTimeout(r, 20));
        }
        const same = await tally(fakes, async () => {
          const out = [];
          for (let i = 0; i < K; i++) out.push(await post(s.base, read(0, i), true));
          return out;
        });
        const order = shuffled(Array.from({ length: M * R }, (_, i) => 1 + (i % M)), 7);
        const distinct = await tally(fakes, async () => {
          const out = [];
          for (const [i, r] of order.entries()) out.push(await post(s.base, read(r, i), true));
          return out;
        });
        // Hits on one kept-alive connection (the same worker answers them all).
        await post(s.base, read(0), false);
        const times: number[] = [];
        for (let i = 0; i < HITS; i++) {
          const a = await post(s.base, read(0, i), false);
          check(a.cache === 'HIT', `expected a hit, got ${a.cache}`);
          times.push(a.ms * 1000);
        }
        hitTimes[workers] = times.sort((a, b) => a - b);
        const pct = (t: Tally) => `${fmt((100 * t.hits) / t.asked, 1)} %`;
        rows.push(
          `| --workers ${workers} | ${K} × one read | ${same.agreements} | ${same.hits}/${same.asked} (${pct(same)}) |`,
          `| --workers ${workers} | ${M} reads × ${R}, shuffled | ${distinct.agreements} | ${distinct.hits}/${distinct.asked} (${pct(distinct)}) |`,
        );
        console.error(`--workers ${workers}: done`);
      } finally {
        await s.stop();
      }
    }
  } finally {
    await Promise.all(fakes.map((f) => f.close()));
    await rm(dir, { recursive: true, force: true });
    keepAlive.destroy();
  }
  const ipc: string[] = [];
  for (const bytes of [100, 10_000, 1_000_000]) {
    const rounds = bytes >= 1_000_000 ? 200 : HITS;
    const t = (await ipcRoundTrips(bytes, rounds)).sort((a, b) => a - b);
    ipc.push(`| IPC round trip, worker → primary Map → worker, ${bytes.toLocaleString('en-US')} B answer (${rounds} sequential) | ${fmt(quantile(t, 0.5), 0)} | ${fmt(quantile(t, 0.99), 0)} |`);
  }
  const lat = (w: number) => `| a memory hit over HTTP, --workers ${w} (${HITS} sequential, one kept-alive connection, client-side) | ${fmt(quantile(hitTimes[w]!, 0.5), 0)} | ${fmt(quantile(hitTimes[w]!, 0.99), 0)} |`;
  process.stdout.write(
    [
      `| Server | Requests (each on a new connection) | Agreements (N=${N}) | X-Cache: HIT |`,
      '|---|---|---:|---:|',
      ...rows,
      '',
      '| Hit path | p50 µs | p99 µs |',
      '|---|---:|---:|',
      lat(1),
      lat(2),
      ...ipc,
      '',
    ].join('\n'),
  );
}

if (process.argv[2] === 'ipc-child') ipcChild();
else await main();
