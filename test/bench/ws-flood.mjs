/**
 * What a ws upstream that floods messages nobody asked for costs the other chains: a server from
 * each build given (`startServer`, chain 1 on a ws upstream, chain 2 on an http one), the ws
 * upstream in a child process of its own. From the first call it is sent on a connection, it
 * sends (in "flood" rounds) a 24 MB message of small objects under an id it was never sent, again
 * and again while its socket drains. Meanwhile chain 2 is asked FLOOD_READS times, FLOOD_GAP_MS
 * apart, and chain 1 once every ten reads (without traffic the ws connection would be closed
 * after a probe); each round prints the messages sent and the median and p90 of chain 2's reads.
 * Rounds alternate quiet and flood, and the builds, in one run.
 *
 *   node test/bench/ws-flood.mjs [DIST_DIR…]      (FLOOD_ROUNDS=3, FLOOD_READS=40, FLOOD_GAP_MS=25)
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import http from 'node:http';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const dists = process.argv.length > 2 ? process.argv.slice(2) : ['dist'];
const rounds = Number(process.env.FLOOD_ROUNDS ?? 3);
const reads = Number(process.env.FLOOD_READS ?? 40);
const gapMs = Number(process.env.FLOOD_GAP_MS ?? 25);

// The ws upstream (a child: its sending must not take this process's CPU).
const upstream = `
import http from 'node:http';
import { WebSocketServer } from 'ws';
const flood = process.argv[1] === 'flood';
const junk = Buffer.from('{"jsonrpc":"2.0","id":"x","result":[' + '{"a":"0x1","b":[1,2,3]},'.repeat(1_000_000) + '1]}');
let sent = 0;
process.on('SIGTERM', () => { console.log('sent ' + sent); process.exit(0); });
const server = http.createServer();
new WebSocketServer({ server }).on('connection', (ws) => ws.on('message', (m) => {
  ws.send(JSON.stringify({ jsonrpc: '2.0', id: JSON.parse(m.toString()).id, result: '0x10' }));
  const pump = () => { if (ws.readyState !== 1) return; if (ws.bufferedAmount < 64e6) { ws.send(junk); sent++; } setTimeout(pump, 5); };
  if (flood && !ws.pumping) { ws.pumping = true; pump(); }
}));
server.listen(0, '127.0.0.1', () => console.log(server.address().port));
`;
const honest = http.createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => res.end(`{"jsonrpc":"2.0","id":${JSON.parse(Buffer.concat(chunks).toString()).id},"result":"0x10"}`));
});
await new Promise((r) => honest.listen(0, '127.0.0.1', r));

function post(port, path, id) {
  return new Promise((done, fail) => {
    const req = http.request({ port, host: '127.0.0.1', path, method: 'POST', agent: false, headers: { 'content-type': 'application/json' } }, (res) => {
      res.resume();
      res.on('end', () => done(res.statusCode));
    });
    req.on('error', fail);
    req.end(`{"jsonrpc":"2.0","id":${id},"method":"eth_blockNumber","params":[]}`);
  });
}

async function round(dist, mode) {
  const child = spawn(process.execPath, ['--input-type=module', '-e', upstream, mode], { stdio: ['ignore', 'pipe', 'inherit'], cwd: process.cwd() });
  const [port] = await once(child.stdout, 'data');
  const { validateConfig } = await import(`${pathToFileURL(resolve(dist)).href}/config/schema.js`);
  const { startServer } = await import(`${pathToFileURL(resolve(dist)).href}/lib/server/app.js`);
  const result = validateConfig({
    port: 0,
    refreshInterval: 86_400,
    heads: { intervalMs: 3_600_000 },
    chains: { 1: { rpcs: [`ws://127.0.0.1:${String(port).trim()}/`] }, 2: { rpcs: [`http://127.0.0.1:${honest.address().port}/`] } },
  });
  if ('problems' in result) throw new Error(JSON.stringify(result.problems));
  const running = await startServer(result.config, 0, { headTracking: false });
  await post(running.port, '/rpc/1', 1);
  await new Promise((r) => setTimeout(r, 500));
  const times = [];
  for (let i = 0; i < reads; i++) {
    const t0 = performance.now();
    await post(running.port, '/rpc/2', i);
    times.push(performance.now() - t0);
    // Traffic on the ws upstream now and then: a connection that carries none is closed after a probe.
    if (i % 10 === 9) await post(running.port, '/rpc/1', i);
    await new Promise((r) => setTimeout(r, gapMs));
  }
  times.sort((a, b) => a - b);
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.kill('SIGTERM');
  await once(child, 'exit');
  const messages = Number(/sent (\d+)/.exec(out)?.[1] ?? 0);
  running.server.closeAllConnections();
  await running.close();
  const at = (q) => times[Math.min(times.length - 1, Math.floor(q * times.length))].toFixed(1);
  console.log(JSON.stringify({ dist, mode, messages, medianMs: Number(at(0.5)), p90Ms: Number(at(0.9)) }));
}

for (let r = 0; r < rounds; r++) {
  for (const dist of dists) {
    for (const mode of ['quiet', 'flood']) await round(dist, mode);
  }
}
honest.close();
process.exit(0);
