/**
 * Red team of the upstream side: one hostile or broken upstream, what it costs the gateway. For
 * each attack named (default: all), an upstream (a raw TCP server speaking HTTP/1.1 or WebSocket
 * byte by byte, in a child process so its own work is not measured) answers health calls
 * (eth_chainId, eth_blockNumber, …) honestly and every other call with the attack; omnigate
 * (`serve` of DIST_DIR, default ./dist, a child as a user runs it; chain 1337 on that one upstream,
 * `confirmations: 1`, `upstreams.client` CLIENT, `timeouts.upstreamMs` DEADLINE and `requestMs`
 * DEADLINE + 500, no hedging) is asked `eth_getBalance` at REQUESTS distinct blocks, one after the
 * other, while `GET /health` is asked every 50 ms and the gateway's RSS is read every 20 ms. One
 * line per attack: the first answer's status and ms, the others' total ms, the longest /health,
 * RSS before and its peak (MB), whether the process is still alive, and whether the upstream's
 * key (in its URL path) appeared in the answers or the logs.
 *
 *   node test/bench/hostile-upstream.mjs [attack…]    (DIST_DIR=dist CLIENT=auto DEADLINE=2000 REQUESTS=3 AT_ONCE=0)
 *
 * AT_ONCE=1 sends the REQUESTS reads at once instead of one after the other (restMs is then their sum; maxMs the slowest).
 */
import { fork, spawn } from 'node:child_process';
import crypto from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';

const key = 'k3y9f8e7d6c5b4a3f2e1d0';
const rpcAnswer = (id, result) => JSON.stringify({ jsonrpc: '2.0', id, result });
const ok = (body) => `HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
const once = (make) => { let v; return () => (v ??= make()); };
const gzipBomb = once(() => zlib.gzipSync(Buffer.alloc(200 * 1024 * 1024, 0x20)));
const keysAnswer = (n) => { const o = {}; for (let i = 0; i < n; i++) o[`k${i}`] = i; return o; };
const every = (s, ms, write) => { const t = setInterval(() => (s.destroyed ? clearInterval(t) : write()), ms); s.on('close', () => clearInterval(t)); };

/** HTTP attacks: what the upstream writes on the socket for a call (`id`: the call's id). */
const httpAttacks = {
  honest: (s, id) => s.write(ok(rpcAnswer(id, '0x1'))),
  gzip: (s, id) => { const b = zlib.gzipSync(rpcAnswer(id, '0x1')); s.write(`HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: ${b.length}\r\n\r\n`); s.write(b); },
  gzipBomb: (s) => { const b = gzipBomb(); s.write(`HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: ${b.length}\r\n\r\n`); s.write(b); },
  endlessChunks: (s) => { s.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n'); every(s, 5, () => s.write('1\r\n \r\n')); },
  chunk2e64: (s) => s.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10000000000000000\r\n{'),
  chunkFfff: (s) => s.write('HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\n{'),
  lengthShort: (s, id) => { const b = rpcAnswer(id, '0x1'); s.write(`HTTP/1.1 200 OK\r\nContent-Length: ${b.length - 5}\r\n\r\n${b}`); },
  lengthLong: (s, id) => { const b = rpcAnswer(id, '0x1'); s.write(`HTTP/1.1 200 OK\r\nContent-Length: ${b.length + 5}\r\n\r\n${b}`); },
  lengthHuge: (s, id) => s.write(`HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n${rpcAnswer(id, '0x1')}`),
  trailers: (s, id) => { const b = rpcAnswer(id, '0x1'); s.write(`HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-A\r\n\r\n${b.length.toString(16)}\r\n${b}\r\n0\r\nX-A: ${'a'.repeat(100_000)}\r\n\r\n`); },
  http10Open: (s, id) => s.write(`HTTP/1.0 200 OK\r\n\r\n${rpcAnswer(id, '0x1')}`),
  early103: (s, id) => s.write(`HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n${ok(rpcAnswer(id, '0x1'))}`),
  endless1xx: (s) => every(s, 5, () => s.write('HTTP/1.1 103 Early Hints\r\n\r\n'.repeat(100))),
  switching101: (s) => s.write('HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\nxxxxx'),
  noContent204: (s, id) => { const b = rpcAnswer(id, '0x1'); s.write(`HTTP/1.1 204 No Content\r\nContent-Length: ${b.length}\r\n\r\n${b}`); },
  notModified304: (s, id) => { const b = rpcAnswer(id, '0x1'); s.write(`HTTP/1.1 304 Not Modified\r\nContent-Length: ${b.length}\r\n\r\n${b}`); },
  statusLine10MB: (s) => s.write(`HTTP/1.1 200 ${'A'.repeat(10 * 1024 * 1024)}\r\n\r\n`),
  headers100k: (s) => s.write(`HTTP/1.1 200 OK\r\n${'X-A: b\r\n'.repeat(100_000)}Content-Length: 2\r\n\r\n{}`),
  header1MB: (s) => s.write(`HTTP/1.1 200 OK\r\nX-A: ${'a'.repeat(1024 * 1024)}\r\nContent-Length: 2\r\n\r\n{}`),
  bareLF: (s, id) => { const b = rpcAnswer(id, '0x1'); s.write(`HTTP/1.1 200 OK\nContent-Length: ${b.length}\n\n${b}`); },
  nulInHeader: (s, id) => { const b = rpcAnswer(id, '0x1'); s.write(`HTTP/1.1 200 OK\r\nX-A: a\0b\r\nContent-Length: ${b.length}\r\n\r\n${b}`); },
  number1MDigits: (s, id) => s.write(ok(`{"jsonrpc":"2.0","id":${id},"result":${'9'.repeat(1_000_000)}}`)),
  id1MDigits: (s) => s.write(ok(`{"jsonrpc":"2.0","id":${'9'.repeat(1_000_000)},"result":"0x1"}`)),
  exponent1MDigits: (s, id) => s.write(ok(`{"jsonrpc":"2.0","id":${id},"result":1e${'9'.repeat(1_000_000)}}`)),
  key1MB: (s, id) => s.write(ok(`{"jsonrpc":"2.0","id":${id},"result":{"${'k'.repeat(1024 * 1024)}":1}}`)),
  keys70k: (s, id) => s.write(ok(JSON.stringify({ jsonrpc: '2.0', id, result: keysAnswer(70_000) }))),
  keys100k: (s, id) => s.write(ok(JSON.stringify({ jsonrpc: '2.0', id, result: keysAnswer(100_000) }))),
  floats50k: (s, id) => s.write(ok(`{"jsonrpc":"2.0","id":${id},"result":[${'1.0,'.repeat(49_999)}1.0]}`)),
  floats15M: (s, id) => { const head = `{"jsonrpc":"2.0","id":${id},"result":[`; const n = 15_000_000; s.write(`HTTP/1.1 200 OK\r\nContent-Length: ${head.length + n * 4 + 1}\r\n\r\n${head}`); const chunk = '1.0,'.repeat(250_000); let left = n; const more = () => { while (left > 250_000) { left -= 250_000; if (!s.write(chunk)) return s.once('drain', more); } s.write(`${'1.0,'.repeat(left - 1)}1.0]}`); }; more(); },
  deep250: (s, id) => s.write(ok(`{"jsonrpc":"2.0","id":${id},"result":${'['.repeat(250)}${']'.repeat(250)}}`)),
  nulEscapes: (s, id) => s.write(ok(`{"jsonrpc":"2.0","id":${id},"result":"${'\\u0000'.repeat(1_000_000)}"}`)),
  escapeRun: (s, id) => s.write(ok(`{"jsonrpc":"2.0","id":${id},"result":"${'\\\\'.repeat(5_000_000)}"}`)),
  garbageAfter: (s, id) => s.write(ok(`${rpcAnswer(id, '0x1')}garbage`)),
  twoDocuments: (s, id) => s.write(ok(rpcAnswer(id, '0x1') + rpcAnswer(id, '0x2'))),
  otherId: (s, id) => s.write(ok(rpcAnswer(typeof id === 'number' ? id + 1000 : 'x', '0x1'))),
  redirectWithKey: (s) => s.write(`HTTP/1.1 302 Found\r\nLocation: http://elsewhere.invalid/?key=${key}\r\nContent-Length: 0\r\n\r\n`),
  retryAfter1e12: (s) => s.write('HTTP/1.1 429 Too Many Requests\r\nRetry-After: 1000000000000\r\nContent-Length: 0\r\n\r\n'),
  unavailable1e12: (s) => s.write('HTTP/1.1 503 Busy\r\nRetry-After: 1000000000000\r\nContent-Length: 0\r\n\r\n'),
  unauthorized401: (s) => s.write('HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n'),
  neverAnswers: () => {},
  stallMidBody: (s) => s.write('HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n{"jsonrpc"'),
};

const frame = (op, payload, fin = true, rsv1 = false) => {
  const first = (fin ? 0x80 : 0) | (rsv1 ? 0x40 : 0) | op;
  const len = payload.length;
  if (len < 126) return Buffer.concat([Buffer.from([first, len]), payload]);
  if (len < 65536) { const h = Buffer.from([first, 126, 0, 0]); h.writeUInt16BE(len, 2); return Buffer.concat([h, payload]); }
  const h = Buffer.alloc(10); h[0] = first; h[1] = 127; h.writeBigUInt64BE(BigInt(len), 2); return Buffer.concat([h, payload]);
};
const deflateBomb = once(() => zlib.deflateRawSync(Buffer.alloc(50_000_000, 0x20)));
/** WebSocket attacks (the upgrade is answered; `wsNoUpgrade` never answers it). */
const wsAttacks = {
  wsHonest: (s, id) => s.write(frame(1, Buffer.from(rpcAnswer(id, '0x1')))),
  wsDeflateBomb: (s) => s.write(frame(1, deflateBomb(), true, true)),
  wsLength2e63: (s) => { const h = Buffer.alloc(10); h[0] = 0x81; h[1] = 127; h.writeBigUInt64BE(2n ** 63n - 1n, 2); s.write(h); s.write('{"jsonrpc"'); },
  wsFragmentsNeverEnd: (s) => { s.write(frame(1, Buffer.from('{"jsonrpc":"2.0",'), false)); every(s, 5, () => s.write(frame(0, Buffer.from('   '), false))); },
  wsPingFlood: (s) => every(s, 1, () => { for (let i = 0; i < 2000; i++) s.write(frame(9, Buffer.from('x'))); }),
  wsUnaskedIds: (s) => every(s, 1, () => { for (let i = 0; i < 500; i++) s.write(frame(1, Buffer.from(rpcAnswer(1e6 + i, '0x1')))); }),
  wsClose1005: (s) => s.write(frame(8, Buffer.from([0x03, 0xed]))),
  wsClose4999: (s) => s.write(frame(8, Buffer.from([0x13, 0x87, 0x62, 0x79, 0x65]))),
  wsBadUtf8: (s) => s.write(frame(1, Buffer.from([0xff, 0xfe, 0xfd]))),
  wsBinary: (s, id) => s.write(frame(2, Buffer.from(rpcAnswer(id, '0x1')))),
  wsNeverAnswers: () => {},
  wsNoUpgrade: () => {},
};

const healthMethods = new Set(['eth_chainId', 'eth_blockNumber', 'net_version', 'eth_syncing', 'web3_clientVersion', 'eth_getBlockByNumber']);
const healthResult = (method) =>
  method === 'eth_chainId' ? '0x539' : method === 'eth_blockNumber' ? '0x10' : method === 'eth_syncing' ? false
    : method === 'eth_getBlockByNumber' ? { number: '0x10', hash: `0x${'1'.repeat(64)}`, parentHash: `0x${'2'.repeat(64)}`, timestamp: '0x1', transactions: [] } : '1337';

/** One client frame off `buf`: [opcode, unmasked payload, the rest], or null while incomplete. */
function clientFrame(buf) {
  if (buf.length < 2) return null;
  let len = buf[1] & 0x7f;
  let off = 2;
  if (len === 126) { if (buf.length < 4) return null; len = buf.readUInt16BE(2); off = 4; } else if (len === 127) { if (buf.length < 10) return null; len = Number(buf.readBigUInt64BE(2)); off = 10; }
  const mask = buf[1] & 0x80 ? buf.subarray(off, off + 4) : undefined;
  if (mask) off += 4;
  if (buf.length < off + len) return null;
  const p = Buffer.from(buf.subarray(off, off + len));
  if (mask) for (let i = 0; i < p.length; i++) p[i] ^= mask[i & 3];
  return [buf[0] & 0x0f, p, buf.subarray(off + len)];
}

function upstreamChild(name) {
  const ws = name in wsAttacks;
  const attack = ws ? wsAttacks[name] : httpAttacks[name];
  const server = net.createServer((s) => {
    s.on('error', () => {});
    let buf = Buffer.alloc(0);
    let upgraded = false;
    s.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      if (ws) {
        if (!upgraded) {
          const end = buf.indexOf('\r\n\r\n');
          if (end < 0 || name === 'wsNoUpgrade') return;
          const k = /sec-websocket-key: *(\S+)/i.exec(buf.subarray(0, end).toString())[1];
          const accept = crypto.createHash('sha1').update(`${k}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');
          s.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`);
          upgraded = true;
          buf = buf.subarray(end + 4);
        }
        for (let f = clientFrame(buf); f; f = clientFrame(buf)) {
          buf = f[2];
          if (f[0] !== 1) continue;
          const call = JSON.parse(f[1].toString());
          if (healthMethods.has(call.method)) s.write(frame(1, Buffer.from(rpcAnswer(call.id, healthResult(call.method)))));
          else attack(s, call.id);
        }
        return;
      }
      for (;;) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const length = Number(/content-length: *(\d+)/i.exec(buf.subarray(0, end).toString())?.[1] ?? 0);
        if (buf.length < end + 4 + length) return;
        const call = JSON.parse(buf.subarray(end + 4, end + 4 + length).toString());
        buf = buf.subarray(end + 4 + length);
        if (!Array.isArray(call) && healthMethods.has(call.method)) s.write(ok(rpcAnswer(call.id, healthResult(call.method))));
        else attack(s, (Array.isArray(call) ? call[0] : call).id);
      }
    });
  });
  server.listen(0, '127.0.0.1', () => process.send(`${ws ? 'ws' : 'http'}://127.0.0.1:${server.address().port}/${key}`));
}

function post(port, body, timeoutMs) {
  return new Promise((done) => {
    const t0 = performance.now();
    const end = (status, text) => done({ status, text, ms: Math.round(performance.now() - t0) });
    const req = http.request({ host: '127.0.0.1', port, path: '/rpc/1337', method: 'POST', agent: false, timeout: timeoutMs, headers: { 'content-type': 'application/json' } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => end(res.statusCode, Buffer.concat(chunks).toString()));
      res.on('error', (e) => end(0, e.message));
    });
    req.on('timeout', () => req.destroy(new Error('no answer')));
    req.on('error', (e) => end(0, e.message));
    req.end(body);
  });
}
const healthMs = (port) =>
  new Promise((done) => {
    const t0 = performance.now();
    http.get({ host: '127.0.0.1', port, path: '/health', agent: false, timeout: 60_000 }, (res) => res.resume().on('end', () => done(res.statusCode === 200 ? performance.now() - t0 : Infinity))).on('error', () => done(Infinity));
  });
const rssMb = (pid) => { try { return Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) >> 10; } catch { return 0; } };

async function attackOnce(name, dist, client, deadline, requests) {
  const up = fork(fileURLToPath(import.meta.url), ['upstream', name], { stdio: 'ignore' });
  const url = await new Promise((r) => up.once('message', r));
  const dir = mkdtempSync(join(tmpdir(), 'omnigate-hostile-'));
  const file = join(dir, 'omnigate.yaml');
  writeFileSync(file, ['chains:', '  1337:', '    rpcs:', `      - ${url}`, '    confirmations: 1', 'upstreams:', `  client: ${client}`, 'timeouts:', `  upstreamMs: ${deadline}`, `  requestMs: ${deadline + 500}`, '  hedgeMs: 0'].join('\n'));
  const gw = spawn(process.execPath, [resolve(dist, 'lib/cli/index.js'), 'serve', '--config', file, '--port', '0', '--no-indexer'], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LOG_LEVEL: 'info' } });
  let out = '';
  gw.stdout.on('data', (d) => (out += d));
  gw.stderr.on('data', (d) => (out += d));
  const port = await new Promise((r, reject) => {
    gw.stdout.on('data', () => { const m = /"port":(\d+)[^\n]*"msg":"omnigate listening"/.exec(out); if (m) r(Number(m[1])); });
    gw.once('exit', () => reject(new Error(out)));
  });
  const rss0 = rssMb(gw.pid);
  let peak = rss0;
  let healthMax = 0;
  let stop = false;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(gw.pid))), 20);
  const poller = (async () => { while (!stop) { healthMax = Math.max(healthMax, await healthMs(port)); await new Promise((r) => setTimeout(r, 50)); } })();
  const answers = [];
  const read = (i) => post(port, JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'eth_getBalance', params: [`0x${'1'.repeat(40)}`, `0x${(5 + i).toString(16)}`] }), deadline * 20);
  if (process.env.AT_ONCE === '1') answers.push(...(await Promise.all(Array.from({ length: requests }, (_, i) => read(i)))));
  else for (let i = 0; i < requests; i++) answers.push(await read(i));
  stop = true;
  await poller;
  clearInterval(sampler);
  const alive = gw.exitCode === null && gw.signalCode === null;
  const first = answers[0];
  const reason = /"reason":"([^"]*)"/.exec(first.text)?.[1] ?? (first.status === 200 ? 'answered' : first.text.slice(0, 80));
  console.log(JSON.stringify({ attack: name, client, status: first.status, ms: first.ms, reason: reason.slice(0, 90), restMs: answers.slice(1).reduce((a, r) => a + r.ms, 0), maxMs: Math.max(...answers.map((r) => r.ms)), restStatus: [...new Set(answers.slice(1).map((r) => r.status))], healthMaxMs: Math.round(healthMax), rssMb: rss0, peakMb: peak, alive, keyShown: out.includes(key) || answers.some((r) => r.text.includes(key)) }));
  if (!alive) console.log(out.split('\n').filter((l) => !l.startsWith('{')).join('\n').slice(-1500));
  gw.kill('SIGKILL');
  up.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
}

if (process.argv[2] === 'upstream') upstreamChild(process.argv[3]);
else {
  const names = process.argv.length > 2 ? process.argv.slice(2) : [...Object.keys(httpAttacks), ...Object.keys(wsAttacks)];
  for (const name of names) {
    if (!(name in httpAttacks) && !(name in wsAttacks)) throw new Error(`no attack ${name}`);
    await attackOnce(name, process.env.DIST_DIR ?? 'dist', process.env.CLIENT ?? 'auto', Number(process.env.DEADLINE ?? 2000), Number(process.env.REQUESTS ?? 3));
  }
  process.exit(0);
}
