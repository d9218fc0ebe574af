/**
 * What omnigate's pipeline costs per N=1 answer with no network at all, for two builds in one
 * process: `BEFORE_DIST` (e.g. a build of the base commit) and this worktree's dist/ (AFTER_DIST
 * to change). Each build's rpcPipeline serves eth_blockNumber on one chain of one upstream whose
 * transport answers at once (its `send`, and its `call` on a build whose transports have one,
 * replaced: no socket, no HTTP client), to requests made of node's own IncomingMessage and
 * ServerResponse over a socket that drops what is written. What is measured is then the pipeline alone (parse, classify, select, the agreement loop, judging and
 * hashing the answer, metrics, emit with node's header writing), the part that the saturated
 * bench's N=1 ÷ relay is about, without the kernel, the HTTP parsers and the other processes that
 * make those figures swing on a shared machine. Rounds alternate between the builds (the order
 * reversed each round), each one `BENCH_CALLS` answers at `BENCH_CONCURRENCY` in flight; the
 * process's CPU time per answer is compared within a round.
 *
 *   BEFORE_DIST=<a copy of the base commit's dist/> node --import tsx test/bench/pipeline-cost.ts
 *
 * Knobs: BENCH_ROUNDS (default 12), BENCH_CALLS (per round, default 20000), BENCH_CONCURRENCY (32),
 * BENCH_N (1): with N above 1, the chain has N upstreams (each its own provider) and N
 * confirmations, and the request is eth_getBalance at a fixed block (confirmable: N agreeing
 * answers, judged and compared), as the peers' N=3 row asks. BENCH_ALLOC=1: after the rounds,
 * one more round of each build under V8's sampling heap profiler (objects the young and the old
 * collections freed included), and the bytes allocated per answer by the functions of each
 * build's dist/, by file, then the whole process's (harness and node included); with
 * BENCH_ALLOC_FUNCTIONS=1 also the functions that allocate most, the whole process's (BENCH_ALLOC_TOP of them, 40).
 * BENCH_CONFIRMABLE=1: at N=1, the confirmable eth_getBalance at a fixed block (the peers' N=1 row).
 * BENCH_FLOOR=1: each round also measures a floor, what a plain relay pays in this harness: the
 * request's body read, the node's answer made from a microtask as for the builds, and written with
 * the same nine headers by one writeHead and end (no parse, no checks, no hash, no metrics); each
 * build's median less the floor's is what its pipeline costs on top of node's own.
 * Prints each round's µs per answer for both builds, then the medians and the median of the
 * per-round differences (after − before).
 */
import http from 'node:http';
import { Duplex } from 'node:stream';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

const rounds = Number(process.env.BENCH_ROUNDS ?? 12);
const calls = Number(process.env.BENCH_CALLS ?? 20_000);
const concurrency = Number(process.env.BENCH_CONCURRENCY ?? 32);
const required = Number(process.env.BENCH_N ?? 1);
const beforeDist = process.env.BEFORE_DIST;
const afterDist = resolve(process.env.AFTER_DIST ?? 'dist');
if (!beforeDist) throw new Error('set BEFORE_DIST to the dist/ of the build to compare with (e.g. a build of the base commit)');

type Handler = (req: http.IncomingMessage, res: http.ServerResponse, next: (err?: unknown) => void) => void;

interface Build {
  name: string;
  handle: Handler;
  close(): Promise<void>;
}

async function build(name: string, dist: string): Promise<Build> {
  const { validateConfig } = (await import(pathToFileURL(`${dist}/config/schema.js`).href)) as typeof import('../../config/schema.js');
  const { rpcPipeline } = (await import(pathToFileURL(`${dist}/middleware/index.js`).href)) as typeof import('../../middleware/index.js');
  const rpcs = Array.from({ length: required }, (_, i) => `http://127.0.0.${i + 1}:9/`);
  const result = validateConfig({ chains: { 1: { rpcs, confirmations: required } }, timeouts: { hedgeMs: 0 }, mergeRequests: false, cache: { memoryBytes: 0 } });
  if ('problems' in result) throw new Error(`config: ${JSON.stringify(result.problems)}`);
  const rpc = rpcPipeline(result.config);
  for (const chain of rpc.registry.chains.values()) {
    for (const upstream of chain.upstreams) {
      // The node answers at once, echoing the call's id, as the bench's fake nodes do; from a
      // microtask, through `call` on a build whose transports have it (the loop's reads use it
      // then), else through `send`'s promise.
      const answer = (request: { payload: { calls: readonly { id: unknown }[] } }) => ({
        body: Buffer.from(`{"jsonrpc":"2.0","id":${JSON.stringify(request.payload.calls[0]!.id)},"result":"0x1312d00"}`),
      });
      upstream.transport.send = (request) => Promise.resolve(answer(request));
      if (upstream.transport.call) upstream.transport.call = (request, sink) => queueMicrotask(() => sink.answered(answer(request)));
    }
  }
  return { name, handle: rpc as unknown as Handler, close: () => rpc.close() };
}

/** The floor (BENCH_FLOOR=1): a relay with nothing of omnigate's pipeline, through the same requests and responses. */
function floorBuild(): Build {
  const head = (length: number): string[] => [
    'Content-Type', 'application/json', 'Content-Length', String(length),
    'X-Checked-URLS', 'upstream-1', 'X-Confirmable', 'true', 'X-Forwarded-From', 'upstream-1',
    'X-Json-Hash', 'bd3c8d2b4fd6bd1ab3eb49b5c0b0f6b9d3c5b2ab5a2e4a4d6c1e3a7b9e5e3d11', 'X-Request-Id', 'a4b1c2d3-0000-4000-8000-000000000000',
    'X-Required-Confirmations', '1', 'X-Verified-By', 'agreement',
  ];
  const handle: Handler = (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const asked = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
      queueMicrotask(() => {
        const body = Buffer.from(`{"jsonrpc":"2.0","id":${asked.length},"result":"0x1312d00"}`);
        res.writeHead(200, head(body.length));
        res.end(body);
      });
    });
  };
  return { name: 'floor', handle, close: async () => {} };
}

/** BENCH_CONFIRMABLE=1: at N=1 too, the confirmable eth_getBalance at a fixed block (the peers' N=1 row), not eth_blockNumber. */
const confirmableAtOne = process.env.BENCH_CONFIRMABLE === '1';
const question =
  required === 1 && !confirmableAtOne ? '"method":"eth_blockNumber","params":[]' : '"method":"eth_getBalance","params":["0xC02aaA39b223FE8D0A0e5C4F27eAD9083C756Cc2","0x1312d00"]';

/** A socket that takes every write and says nothing. */
function sink(): Duplex {
  const socket = new Duplex({
    read() {},
    write(_chunk, _encoding, callback) {
      callback();
    },
    writev(_chunks, callback) {
      callback();
    },
  });
  return socket;
}

const emitClose = (res: http.ServerResponse): boolean => res.emit('close');

/** One request through `handle`, resolved once its answer is ended (a non-200 throws). */
function one(b: Build, socket: Duplex, id: number): Promise<void> {
  return new Promise((done, fail) => {
    const req = new http.IncomingMessage(socket as never);
    const body = Buffer.from(`{"jsonrpc":"2.0","id":${id},${question}}`);
    req.method = 'POST';
    req.url = '/rpc/1';
    req.httpVersionMajor = 1;
    req.httpVersionMinor = 1;
    req.headers = { host: 'bench', 'content-type': 'application/json', 'content-length': String(body.length) };
    const res = new http.ServerResponse(req);
    res.assignSocket(socket as never);
    const end = res.end;
    res.end = function (this: http.ServerResponse, ...args: unknown[]) {
      const out = (end as (...a: unknown[]) => http.ServerResponse).apply(this, args);
      // As node's server does once an answer is written: the socket freed, then 'close'.
      res.detachSocket(socket as never);
      process.nextTick(emitClose, res);
      if (res.statusCode !== 200) fail(new Error(`${b.name}: HTTP ${res.statusCode}`));
      else done();
      return out;
    } as typeof res.end;
    b.handle(req, res, (err) => fail(err ?? new Error(`${b.name}: not handled`)));
    req.push(body);
    req.complete = true; // as node's parser marks a request read to its end
    req.push(null);
  });
}

/** `calls` answers at `concurrency` in flight; the process's CPU µs per answer. */
async function round(b: Build): Promise<number> {
  const sockets = Array.from({ length: concurrency }, sink);
  let next = 0;
  const started = process.cpuUsage();
  await Promise.all(
    sockets.map(async (socket) => {
      while (next < calls) await one(b, socket, next++);
    }),
  );
  const used = process.cpuUsage(started);
  for (const s of sockets) s.destroy();
  return (used.user + used.system) / calls;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

const before = await build('before', resolve(beforeDist));
const after = await build('after', afterDist);
const floor = process.env.BENCH_FLOOR === '1' ? floorBuild() : undefined;
// Warm-up: both builds optimised before anything is counted.
await round(before);
await round(after);
if (floor) await round(floor);
const a: number[] = [];
const b: number[] = [];
const f: number[] = [];
for (let r = 0; r < rounds; r++) {
  const order = r % 2 === 0 ? [before, after] : [after, before];
  if (floor) order.splice(1, 0, floor);
  for (const x of order) (x === before ? a : x === after ? b : f).push(await round(x));
  console.log(`round ${r + 1}: before ${a[r]!.toFixed(2)} µs, after ${b[r]!.toFixed(2)} µs per answer${floor ? `, floor ${f[r]!.toFixed(2)} µs` : ''}`);
}
if (floor) {
  const over = (xs: number[]) => median(xs.map((x, i) => x - f[i]!)).toFixed(2);
  console.log(`floor: median ${median(f).toFixed(2)} µs; over the floor (median of rounds): before ${over(a)} µs, after ${over(b)} µs`);
}
const diffs = a.map((x, i) => b[i]! - x);
console.log(
  `median: before ${median(a).toFixed(2)} µs, after ${median(b).toFixed(2)} µs; after − before ${median(diffs).toFixed(2)} µs ` +
    `(rounds ${Math.min(...diffs).toFixed(2)} to ${Math.max(...diffs).toFixed(2)}), after ÷ before ${(median(b) / median(a)).toFixed(3)}`,
);
if (process.env.BENCH_ALLOC === '1') for (const x of [before, after]) await allocations(x, x === before ? resolve(beforeDist) : afterDist);
await before.close();
await after.close();

interface HeapNode {
  callFrame: { url: string; functionName: string; lineNumber: number };
  selfSize: number;
  children: HeapNode[];
}

/** One round of `b` under the sampling heap profiler: bytes allocated per answer by its dist/'s files, largest first. */
async function allocations(b: Build, dist: string): Promise<void> {
  const { Session } = await import('node:inspector/promises');
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.startSampling', { samplingInterval: 256, includeObjectsCollectedByMinorGC: true, includeObjectsCollectedByMajorGC: true } as never);
  await round(b);
  const { profile } = (await session.post('HeapProfiler.stopSampling')) as { profile: { head: HeapNode } };
  session.disconnect();
  const prefix = pathToFileURL(`${dist}/`).href;
  const byFile = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let total = 0;
  const walk = (n: HeapNode): void => {
    total += n.selfSize;
    const where = `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.startsWith(prefix) ? n.callFrame.url.slice(prefix.length) : n.callFrame.url.replace(/^.*\//, '')}:${n.callFrame.lineNumber + 1}`;
    byFunction.set(where, (byFunction.get(where) ?? 0) + n.selfSize);
    if (n.callFrame.url.startsWith(prefix)) {
      const file = n.callFrame.url.slice(prefix.length);
      byFile.set(file, (byFile.get(file) ?? 0) + n.selfSize);
    }
    for (const c of n.children) walk(c);
  };
  walk(profile.head);
  const own = [...byFile.values()].reduce((x, y) => x + y, 0);
  console.log(`${b.name}: ${(own / calls).toFixed(0)} bytes per answer allocated in its dist/ (${(total / calls).toFixed(0)} by the whole process)`);
  for (const [file, bytes] of [...byFile].sort((x, y) => y[1] - x[1]).slice(0, 12)) console.log(`  ${(bytes / calls).toFixed(0).padStart(6)}  ${file}`);
  if (process.env.BENCH_ALLOC_FUNCTIONS === '1') {
    console.log(`${b.name}: bytes per answer by allocating function (the whole process), largest first:`);
    for (const [fn, bytes] of [...byFunction].sort((x, y) => y[1] - x[1]).slice(0, Number(process.env.BENCH_ALLOC_TOP || 40))) console.log(`  ${(bytes / calls).toFixed(0).padStart(6)}  ${fn}`);
  }
}
