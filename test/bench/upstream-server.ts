/**
 * Bench child: lean fake JSON-RPC upstreams, one per spec, in this process (the bench starts one
 * process per upstream, as each provider is its own machine). Each parses the request (to echo
 * its id and count its method), waits `delayMs` (the fixed service time, timed to a few µs by
 * precise-delay.ts: setTimeout's whole milliseconds would favour some traffic patterns) and
 * answers a precomputed body. Commands: `stats` (calls per port and method), `reset`.
 * argv[2]: JSON array of { chainId, delayMs }.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Socket } from 'node:net';
import { childMain } from './ipc.js';
import { preciseDelay } from './precise-delay.js';
import { resultJson } from './payloads.js';

interface Spec {
  chainId: number;
  delayMs: number;
}

const specs = JSON.parse(process.argv[2] ?? '[]') as Spec[];
const servers: http.Server[] = [];
const sockets = new Set<Socket>();
const counts: Record<string, number>[] = specs.map(() => ({}));

const delay = preciseDelay();
const HEAD = Buffer.from('{"jsonrpc":"2.0","id":');

function serve(spec: Spec, index: number): http.Server {
  const bodies = new Map<string, Buffer>();
  const tail = (method: string) => {
    let b = bodies.get(method);
    if (!b) {
      b = Buffer.from(`,"result":${resultJson(method, spec.chainId)}}`);
      bodies.set(method, b);
    }
    return b;
  };
  const tally = counts[index]!;
  return http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let call: { id?: unknown; method?: string };
      try {
        call = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id?: unknown; method?: string };
      } catch {
        res.writeHead(400).end();
        return;
      }
      const method = String(call.method);
      tally[method] = (tally[method] ?? 0) + 1;
      const send = () => {
        if (res.destroyed) return;
        const id = Buffer.from(JSON.stringify(call.id ?? null));
        const body = tail(method);
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': HEAD.length + id.length + body.length });
        res.write(Buffer.concat([HEAD, id]));
        res.end(body);
      };
      if (spec.delayMs > 0) delay.after(spec.delayMs, send);
      else send();
    });
  });
}

const child = childMain({
  onCommand(command) {
    if (command.cmd === 'stats') return counts;
    if (command.cmd === 'reset') {
      for (const c of counts) for (const k of Object.keys(c)) delete c[k];
      return true;
    }
    throw new Error(`unknown command ${command.cmd}`);
  },
  async onShutdown() {
    for (const s of sockets) s.destroy();
    await Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
    await delay.close();
  },
});

const ports: number[] = [];
for (const [i, spec] of specs.entries()) {
  const server = serve(spec, i);
  server.keepAliveTimeout = 60_000;
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  ports.push((server.address() as AddressInfo).port);
}
child.ready({ ports, pid: process.pid });
