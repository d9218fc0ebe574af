/**
 * Bench child: what a user would run instead of omnigate, a plain reverse proxy built on
 * http-proxy with a keep-alive agent (its best configuration), in front of one upstream.
 * argv[2]: the target URL. Command: `elu` (event-loop utilization so far).
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import httpProxy from 'http-proxy';
import { childMain } from './ipc.js';

const target = process.argv[2]!;
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
const proxy = httpProxy.createProxyServer({ target, agent });
proxy.on('error', (_err, _req, res) => {
  const r = res as http.ServerResponse;
  if (!r.headersSent) r.writeHead(502, { 'content-type': 'application/json' });
  r.end('{"error":"bad gateway"}');
});
const sockets = new Set<Socket>();
const server = http.createServer((req, res) => proxy.web(req, res));
server.keepAliveTimeout = 60_000;
server.on('connection', (s: Socket) => {
  sockets.add(s);
  s.on('close', () => sockets.delete(s));
});

const child = childMain({
  onCommand(command) {
    // Event-loop utilization so far (idle and active ms): the parent diffs two of them.
    if (command.cmd === 'elu') {
      const { idle, active } = performance.eventLoopUtilization();
      return { idle, active };
    }
    throw new Error(`unknown command ${command.cmd}`);
  },
  async onShutdown() {
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => server.close(() => r()));
    agent.destroy();
  },
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
child.ready({ port: (server.address() as AddressInfo).port, pid: process.pid });
