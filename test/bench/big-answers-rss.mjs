/**
 * Measures what large upstream answers cost the gateway (issue 16): peak RSS and how long a
 * small request on another chain waits while they are handled.
 *
 *   node test/bench/big-answers-rss.mjs [DIST_DIR] [--mb 46] [--n 3] [--concurrent 3] [--rounds 3] [--chunked]
 *
 * DIST_DIR is a build of omnigate (default ./dist), so two builds can be compared. Three
 * upstreams in a child process (so their buffers are not in the measured RSS) answer
 * `eth_getLogs` with a ~`mb` MB array of logs; the gateway (startServer, defaults unless
 * `--budget` MiB is given; `limits.responseBytes` raised for answers past its default) runs in
 * this process at N=`n`. Each round sends `concurrent` such requests
 * at once while a small request on chain 2 is sent every 20 ms; RSS is sampled every 10 ms, and
 * the event loop's delay is monitored (loopMaxMs: its longest stall; this process also runs the
 * bench's own client, which reads the big answers). `--chunked`: the upstreams send the answers
 * without a Content-Length (chunked, as geth's HTTP server sends a large answer).
 */
import { fork } from 'node:child_process';
import http from 'node:http';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i === -1 ? fallback : Number(args[i + 1]);
};

if (args[0] === 'upstreams') {
  // child: three upstreams sharing one prebuilt answer (the id is spliced in per call)
  const mb = Number(args[1]);
  const chunked = args[2] === 'chunked';
  const log = (i) =>
    `{"address":"0x5523d3c98809dddb82c686e152f5c58b1b0fb59e","topics":["0x${'12'.repeat(32)}","0x${i.toString(16).padStart(64, '0')}"],"data":"0x${'00'.repeat(256)}","blockNumber":"0x1312d00","blockHash":"0x${'34'.repeat(32)}","transactionHash":"0x${i.toString(16).padStart(64, '5')}","transactionIndex":"0x0","logIndex":"0x${i.toString(16)}","removed":false}`;
  const one = Buffer.byteLength(log(0)) + 1;
  const count = Math.floor((mb * 1e6) / one);
  const result = Buffer.from(`[${Array.from({ length: count }, (_, i) => log(i)).join(',')}]}`);
  const ports = [];
  for (let k = 0; k < 3; k++) {
    const server = http.createServer((req, res) => {
      const chunks = [];
      req.on('data', (c) => chunks.push(c));
      req.on('end', () => {
        const { id, method } = JSON.parse(Buffer.concat(chunks).toString());
        if (method !== 'eth_getLogs') {
          const value = method === 'eth_chainId' ? (req.url === '/small' ? '0x2' : '0x1') : '0x10';
          res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id, result: value }));
          return;
        }
        const head = Buffer.from(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":`);
        res.writeHead(200, chunked ? { 'content-type': 'application/json' } : { 'content-type': 'application/json', 'content-length': head.length + result.length });
        res.write(head);
        res.end(result);
      });
    });
    await new Promise((r) => server.listen(0, '127.0.0.1', r));
    ports.push(server.address().port);
  }
  process.send({ ports, bytes: result.length });
} else {
  const dist = resolve(args[0] && !args[0].startsWith('--') ? args[0] : 'dist');
  const mb = opt('mb', 46);
  const n = opt('n', 3);
  const concurrent = opt('concurrent', 3);
  const rounds = opt('rounds', 3);
  const budget = opt('budget', 0);
  const child = fork(new URL(import.meta.url).pathname, ['upstreams', String(mb), args.includes('--chunked') ? 'chunked' : 'declared']);
  const { ports, bytes } = await new Promise((r) => child.once('message', r));
  const { validateConfig } = await import(pathToFileURL(`${dist}/config/schema.js`).href);
  const { startServer } = await import(pathToFileURL(`${dist}/lib/server/app.js`).href);
  const raw = {
    timeouts: { upstreamMs: 60_000, requestMs: 120_000, hedgeMs: 0 },
    // An answer over the default limits.responseBytes (64 MiB) is let through: the size is the point.
    limits: { ...(budget && { bufferedBytes: budget * 1024 * 1024 }), ...(bytes > 64 * 1024 * 1024 && { responseBytes: Math.ceil((bytes + 1024) / 1048576) * 1048576 }) },
    chains: {
      1: { rpcs: ports.map((p) => `http://127.0.0.1:${p}/`), confirmations: n },
      2: { rpcs: [`http://127.0.0.1:${ports[0]}/small`] },
    },
  };
  const checked = validateConfig(raw);
  if ('problems' in checked) throw new Error(JSON.stringify(checked.problems));
  const running = await startServer(checked.config, 0);
  const base = `http://127.0.0.1:${running.port}`;
  const post = (path, body) =>
    new Promise((res, rej) => {
      const req = http.request(`${base}${path}`, { method: 'POST', agent: false, headers: { 'content-type': 'application/json' } }, (r) => {
        let size = 0;
        r.on('data', (c) => (size += c.length));
        r.on('end', () => res({ status: r.statusCode, size }));
      });
      req.on('error', rej);
      req.end(JSON.stringify(body));
    });
  global.gc?.();
  const baseline = process.memoryUsage().rss;
  let peak = baseline;
  const loop = monitorEventLoopDelay({ resolution: 5 });
  loop.enable();
  let atPeak = process.memoryUsage();
  const sampler = setInterval(() => {
    const m = process.memoryUsage();
    if (m.rss > peak) {
      peak = m.rss;
      atPeak = m;
    }
  }, 10);
  const smallMs = [];
  let probing = true;
  const probe = (async () => {
    while (probing) {
      const t0 = performance.now();
      await post('/rpc/2', { jsonrpc: '2.0', id: 1, method: 'eth_blockNumber', params: [] });
      smallMs.push(performance.now() - t0);
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  const statuses = {};
  const t0 = performance.now();
  for (let round = 0; round < rounds; round++) {
    const answers = await Promise.all(
      Array.from({ length: concurrent }, (_, i) => post('/rpc/1', { jsonrpc: '2.0', id: i, method: 'eth_getLogs', params: [{ fromBlock: '0x1', toBlock: '0x2' }] })),
    );
    for (const a of answers) statuses[a.status] = (statuses[a.status] ?? 0) + 1;
  }
  const wall = performance.now() - t0;
  probing = false;
  await probe;
  clearInterval(sampler);
  loop.disable();
  smallMs.sort((a, b) => a - b);
  const q = (p) => smallMs[Math.min(smallMs.length - 1, Math.floor(p * smallMs.length))].toFixed(1);
  const mbOf = (b) => (b / 1048576).toFixed(0);
  console.log(
    JSON.stringify({
      dist,
      answerMB: (bytes / 1e6).toFixed(1),
      n,
      concurrent,
      rounds,
      statuses,
      wallMs: Math.round(wall),
      rssBaselineMiB: mbOf(baseline),
      rssPeakMiB: mbOf(peak),
      rssAddedMiB: mbOf(peak - baseline),
      // at the peak: this thread's JS heap, and the memory of ArrayBuffers (answer bodies, socket chunks)
      atPeakHeapMiB: mbOf(atPeak.heapTotal),
      atPeakArrayBuffersMiB: mbOf(atPeak.arrayBuffers),
      smallRequests: smallMs.length,
      smallP50ms: q(0.5),
      smallP99ms: q(0.99),
      smallMaxMs: smallMs.at(-1).toFixed(1),
      loopP99ms: (loop.percentile(99) / 1e6).toFixed(1),
      loopMaxMs: (loop.max / 1e6).toFixed(1),
    }),
  );
  await running.close();
  child.kill();
}
