/**
 * Bench child: what a user would run instead of omnigate, a plain reverse proxy built on
 * http-proxy with a keep-alive agent (its best configuration), in front of one upstream.
 * argv[2]: the target URL. Command: `elu` (event-loop utilization so far, see serveHttpChild).
 */
import http from 'node:http';
import httpProxy from 'http-proxy';
import { serveHttpChild } from './ipc.js';

const target = process.argv[2]!;
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
const proxy = httpProxy.createProxyServer({ target, agent });
proxy.on('error', (_err, _req, res) => {
  const r = res as http.ServerResponse;
  if (!r.headersSent) r.writeHead(502, { 'content-type': 'application/json' });
  r.end('{"error":"bad gateway"}');
});
await serveHttpChild(http.createServer((req, res) => proxy.web(req, res)), () => agent.destroy());
