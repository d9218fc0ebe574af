/**
 * Upstream sockets and cold hedging, measured in one process on the real pipeline (test support's
 * gateway) with the default config:
 * - 1,000 upstreams (distinct paths on 4 local servers, 2 ms service time): the most connections
 *   open at once on the servers' side during the first probe round with the head tracker running
 *   (what `omnigate serve` starts), then under load (600 reads at once, `balanced`, 20 ms);
 * - a chain of 3 upstreams that all answer in 300 ms (and 303, 306: `SOCKETS_SLOW_MS`): upstream
 *   calls per N=1 read over `SOCKETS_READS` (40) sequential reads, adaptive hedging (the default).
 *   `SOCKETS_ONLY=slow` runs this part only;
 * - 50 upstreams under a cap of 8 sockets (`limits.upstreamSockets: 8`, 5 ms): 5 waves of 100
 *   reads at once, each spread over the upstreams: the most connections open at once, the
 *   connections opened in all (what closing idle ones for other upstreams costs) and the reads
 *   answered. `SOCKETS_ONLY=capped` runs this part only.
 * `SOCKETS_CLIENT=node|undici|auto` sets `upstreams.client` (absent: the config's default).
 * The servers count a connection from 'connection' to the client's FIN. Run:
 *   node --import tsx test/bench/sockets.ts
 * Figures in test/bench/README.md ("Upstream sockets and cold hedging").
 */
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { rpc, startGateway } from '../support/gateway.js';

interface Farm {
  urls: string[];
  open: number;
  most: number;
  /** Connections accepted in all. */
  accepted: number;
  calls: Map<string, number>;
  close(): void;
}

/** `upstreams.client` of every gateway here (absent: the config's default). */
const upstreams = process.env.SOCKETS_CLIENT ? { upstreams: { client: process.env.SOCKETS_CLIENT } } : {};

async function farm(servers: number, count: number, delayMs: () => number): Promise<Farm> {
  const f: Farm = { urls: [], open: 0, most: 0, accepted: 0, calls: new Map(), close: () => {} };
  const closers: (() => void)[] = [];
  const origins: string[] = [];
  for (let s = 0; s < servers; s += 1) {
    const sockets = new Set<Socket>();
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const { id, method } = JSON.parse(Buffer.concat(chunks).toString()) as { id: unknown; method: string };
        f.calls.set(method, (f.calls.get(method) ?? 0) + 1);
        const result = method === 'eth_chainId' ? '0x1' : method === 'eth_getBlockByNumber' ? { number: '0x10' } : '0x10';
        setTimeout(() => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify({ jsonrpc: '2.0', id, result }));
        }, delayMs());
      });
    });
    server.keepAliveTimeout = 60_000;
    server.on('connection', (socket: Socket) => {
      f.accepted += 1;
      f.open += 1;
      f.most = Math.max(f.most, f.open);
      sockets.add(socket);
      let counted = true;
      const gone = () => {
        if (!counted) return;
        counted = false;
        f.open -= 1;
        sockets.delete(socket);
      };
      socket.on('end', gone);
      socket.on('close', gone);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    closers.push(() => {
      for (const socket of sockets) socket.destroy();
      server.close();
    });
    origins.push(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  }
  f.urls = Array.from({ length: count }, (_, i) => `${origins[i % servers]}/u${i}`);
  f.close = () => closers.forEach((c) => c());
  return f;
}

/** The gateway's own count, where the build has one (`registry.sockets`). */
const gatewayPeak = (rpcPipeline: { registry: object }) => (rpcPipeline.registry as { sockets?: { peak: number } }).sockets?.peak ?? 'n/a';

async function manyUpstreams(): Promise<void> {
  const f = await farm(4, 1000, () => 2);
  const gw = await startGateway({ ...upstreams, timeouts: { hedgeMs: null }, chains: { 1: { rpcs: f.urls, strategy: 'balanced' } } });
  gw.rpc.startHeadTracking();
  const started = performance.now();
  await gw.rpc.startHealthChecks().firstRound;
  const roundMs = performance.now() - started;
  console.log(`1,000 upstreams, first probe round + head polls: ${f.most} connections at once (servers), ${gatewayPeak(gw.rpc)} (gateway), ${f.open} still open after the round, round ${Math.round(roundMs)} ms`);
  f.most = f.open;
  const replies = await Promise.all(
    Array.from({ length: 600 }, (_, i) => gw.post('/rpc/1', rpc('eth_getBalance', [`0x${i.toString(16).padStart(40, '0')}`, 'latest'], i))),
  );
  const ok = replies.filter((r) => r.status === 200 && r.body?.result === '0x10').length;
  console.log(`1,000 upstreams, 600 reads at once: ${f.most} connections at once (servers), ${gatewayPeak(gw.rpc)} (gateway, whole run), ${ok}/600 answered`);
  await gw.close();
  f.close();
}

async function slowChain(ms: number): Promise<void> {
  const reads = Number(process.env.SOCKETS_READS ?? 40);
  const f = await farm(3, 3, () => ms);
  const gw = await startGateway({ ...upstreams, timeouts: { hedgeMs: null }, chains: { 1: { rpcs: f.urls.map((url, i) => ({ url, provider: `p${i}` })) } } });
  for (let i = 0; i < reads; i += 1) await gw.post('/rpc/1', rpc('eth_getBalance', ['0x1111111111111111111111111111111111111111', 'latest'], i));
  const calls = f.calls.get('eth_getBalance') ?? 0;
  console.log(`uniformly slow chain (3 × ${ms} ms), ${reads} sequential N=1 reads: ${calls} upstream calls, ${(calls / reads).toFixed(3)} per read`);
  await gw.close();
  f.close();
}

async function capped(): Promise<void> {
  const f = await farm(5, 50, () => 5);
  const cap = 8;
  const gw = await startGateway({ ...upstreams, limits: { upstreamSockets: cap }, timeouts: { hedgeMs: null }, chains: { 1: { rpcs: f.urls, strategy: 'balanced' } } });
  await gw.rpc.startHealthChecks().firstRound;
  f.most = f.open;
  const before = f.accepted;
  const started = performance.now();
  let ok = 0;
  for (let wave = 0; wave < 5; wave += 1) {
    const replies = await Promise.all(
      Array.from({ length: 100 }, (_, i) => gw.post('/rpc/1', rpc('eth_getBalance', [`0x${(wave * 100 + i).toString(16).padStart(40, '0')}`, 'latest'], i))),
    );
    ok += replies.filter((r) => r.status === 200 && r.body?.result === '0x10').length;
  }
  const ms = performance.now() - started;
  console.log(`50 upstreams, cap ${cap}, 5 waves of 100 reads: ${f.most} connections at once (servers), ${gatewayPeak(gw.rpc)} (gateway), ${f.accepted - before} connections opened, ${ok}/500 answered in ${Math.round(ms)} ms`);
  await gw.close();
  f.close();
}

const only = process.env.SOCKETS_ONLY;
if (only === undefined || only === 'many') await manyUpstreams();
if (only === undefined || only === 'capped') await capped();
// Several service times: whether a chain's p90 as the sketch gives it falls below its calls'
// latency (and so whether nearly every call passes the hedge delay) depends on where the latency
// falls within the sketch's 2 % buckets.
if (only === undefined || only === 'slow') for (const ms of (process.env.SOCKETS_SLOW_MS ?? '300,303,306').split(',').map(Number)) await slowChain(ms);
