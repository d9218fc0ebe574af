/**
 * What clients that pipeline thousands of requests in one write, and never read the answers,
 * cost the others: `omnigate serve` from each build given (one chain, one local upstream that
 * answers at once, timeouts.requestMs 2 s), BURST_CONNECTIONS connections (a process each)
 * each writing BURST_REQUESTS small calls in one write and closing after 4 s; meanwhile, every 0.5 s for 6 s,
 * the server's RSS is read (/proc) and one ordinary call is timed (10 s at most). Each round
 * prints the highest RSS and the slowest ordinary call; builds alternate, BURST_ROUNDS times.
 *
 *   node test/bench/pipelined-burst.mjs [DIST_DIR…]   (BURST_ROUNDS=2, BURST_CONNECTIONS=10, BURST_REQUESTS=20000)
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const dists = process.argv.length > 2 ? process.argv.slice(2) : ['dist'];
const rounds = Number(process.env.BURST_ROUNDS ?? 2);
const connections = Number(process.env.BURST_CONNECTIONS ?? 10);
const requests = Number(process.env.BURST_REQUESTS ?? 20_000);

// The upstream and the clients are child processes: this one only reads RSS and times calls.
const upstream = spawn(process.execPath, ['--input-type=module', '-e', `
import http from 'node:http';
const server = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => res.end('{"jsonrpc":"2.0","id":' + JSON.parse(Buffer.concat(chunks).toString()).id + ',"result":"0x10"}'));
});
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
`], { stdio: ['ignore', 'pipe', 'inherit'] });
const [upstreamPort] = await once(upstream.stdout, 'data');
const config = join(tmpdir(), `omnigate-burst-${process.pid}.yaml`);
writeFileSync(config, `timeouts: { requestMs: 2000 }\nchains:\n  1:\n    rpcs: ["http://127.0.0.1:${String(upstreamPort).trim()}/"]\n`);

const body = '{"jsonrpc":"2.0","id":7,"method":"eth_blockNumber"}';
const one = `POST /rpc/1 HTTP/1.1\r\nHost: x\r\nContent-Length: ${body.length}\r\n\r\n${body}`;

function timedCall(port) {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const req = http.request({ port, host: '127.0.0.1', path: '/rpc/1', method: 'POST', agent: false, timeout: 10_000 }, (res) => {
      res.resume();
      res.on('end', () => resolve(performance.now() - t0));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(performance.now() - t0));
    req.end(body);
  });
}

async function round(dist) {
  const server = spawn(process.execPath, [join(dist, 'lib/cli/index.js'), 'serve', '--config', config, '--port', '0', '--no-indexer'], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  const collect = (d) => (out += d);
  server.stdout.on('data', collect);
  while (!/"port":(\d+)/.test(out)) await once(server.stdout, 'data');
  const port = Number(/"port":(\d+)/.exec(out)[1]);
  server.stdout.off('data', collect).resume(); // its log lines (one per request) are not kept
  await timedCall(port);
  const clients = [];
  for (let i = 0; i < connections; i++) {
    clients.push(spawn(process.execPath, ['-e', `
const s = require('node:net').connect(${port}, '127.0.0.1', () => s.write(${JSON.stringify(one)}.repeat(${requests})));
s.pause(); // never read
s.on('error', () => {});
setTimeout(() => process.exit(0), 4000);
`], { stdio: 'ignore' }));
  }
  let rssMB = 0;
  let slowestMs = 0;
  for (let i = 0; i < 12; i++) {
    await new Promise((r) => setTimeout(r, 500));
    const rss = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${server.pid}/status`, 'utf8'))[1]) / 1024;
    rssMB = Math.max(rssMB, rss);
    slowestMs = Math.max(slowestMs, await timedCall(port));
  }
  await Promise.all(clients.map((c) => (c.exitCode === null ? once(c, 'exit') : undefined)));
  server.kill('SIGKILL');
  await once(server, 'exit');
  console.log(JSON.stringify({ dist, peakRssMB: Math.round(rssMB), slowestOtherCallMs: Math.round(slowestMs) }));
}

for (let r = 0; r < rounds; r++) for (const dist of dists) await round(dist);
upstream.kill();
process.exit(0);
